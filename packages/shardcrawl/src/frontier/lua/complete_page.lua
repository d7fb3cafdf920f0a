-- complete_page.lua: completes a lease at now (the END of the response) and pushes the fetched
-- page into the parse queue, as ONE step. Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] lease id; [6] host (used only if the lease is gone);
--       [7] page metadata JSON; [8] body bytes ("" when spooled); [9] spool reference ("" when the
--       body is in [8]); [10] body size (the page's share of the parse stage's byte bound);
--       [11..14] host feedback (lib.lua feedback: signal, latency ms, start ms, not-before ms; optional)
-- The page hash also keeps the lease's host, tier and queue element (h, t, e), so a page whose
-- spooled body is lost can be put back in its queue (refetch_page.lua).
-- Touches: P lease, P leases, P h:<host>, P ready, P stats, P pageseq, P pg:<id>, P pq, P flowcfg, P press
--          and through lib.lua: P d:<domain>, P dw:<domain>, P held, P lo:<owner>
-- Returns: {'ok', page id} | {'expired'} (lease already reaped: the URL is queued again, the page is dropped)
local host, hk, tier, el = release(ARGV[5], ARGV[6])
if not host then return {'expired'} end
local id = tostring(rcall('INCR', P .. 'pageseq'))
local bytes = tonumber(ARGV[10])
-- w: enqueue time (the parse queue's oldest item's age, metrics); z: bytes held by the parse stage
-- (queued or being parsed) until the ack, for its byte bound (lease.lua).
if ARGV[9] ~= '' then
  rcall('HSET', P .. 'pg:' .. id, 'm', ARGV[7], 's', ARGV[9], 'h', host, 't', tier, 'e', el, 'w', int(NOW), 'z', ARGV[10])
else
  rcall('HSET', P .. 'pg:' .. id, 'm', ARGV[7], 'b', ARGV[8], 'w', int(NOW), 'z', ARGV[10])
end
rcall('LPUSH', P .. 'pq', id)
stat('parseBytes', bytes)
rcall('HINCRBY', hk, 'x', '1')
stat('fetched', 1)
feedback(host, hk, 11)
sync_ready(host, hk)
return {'ok', id}
