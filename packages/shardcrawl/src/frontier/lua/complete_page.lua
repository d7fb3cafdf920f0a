-- complete_page.lua: completes a lease at now (the END of the response) and pushes the fetched
-- page into the parse queue, as ONE step. Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] lease id; [6] host (used only if the lease is gone);
--       [7] page metadata JSON; [8] body bytes;
--       [9..12] host feedback (lib.lua feedback: signal, latency ms, start ms, not-before ms; optional)
-- Touches: P lease, P leases, P h:<host>, P ready, P stats, P pageseq, P pg:<id>, P pq, P pqt, P pqb, P flowcfg, P press
-- Returns: {'ok', page id} | {'expired'} (lease already reaped: the URL is queued again, the page is dropped)
local host, hk = release(ARGV[5], ARGV[6])
if not host then return {'expired'} end
local id = tostring(redis.call('INCR', P .. 'pageseq'))
redis.call('HSET', P .. 'pg:' .. id, 'm', ARGV[7], 'b', ARGV[8])
redis.call('LPUSH', P .. 'pq', id)
-- The parse queue's oldest item's age (metrics): enqueue time per page id, removed at ack.
redis.call('HSET', P .. 'pqt', id, int(NOW))
-- Bytes held by the parse stage (queued or being parsed), for its byte bound (lease.lua).
redis.call('HSET', P .. 'pqb', id, #ARGV[8])
stat('parseBytes', #ARGV[8])
redis.call('HINCRBY', hk, 'x', 1)
stat('fetched', 1)
feedback(host, hk, 9)
sync_ready(host, hk)
return {'ok', id}
