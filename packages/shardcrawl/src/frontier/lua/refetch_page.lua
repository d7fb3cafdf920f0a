-- refetch_page.lua: a taken page whose spooled body is lost (missing, short or corrupt file) goes
-- back to be fetched again: removed from the consumer's in-flight list and deleted, its URL put at
-- the HEAD of its host's queue, and its fetch uncounted -- ONE step, so the URL is never lost.
-- Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] consumer; [6] page id
-- Touches: P pi:<consumer>, P pg:<id>, P pqt, P pqb, P stats, P h:<host>, P q<tier>:<host>, P ready
--          and through lib.lua: P d:<domain>, P dw:<domain>, P flowcfg (read), P held
-- Returns: 1 | 0 when the page was not in this consumer's in-flight list (nothing is changed) |
--          -1 when the page kept no queue element (its body was in Redis): it is deleted.
if redis.call('LREM', P .. 'pi:' .. ARGV[5], 1, ARGV[6]) == 0 then return 0 end
local v = redis.call('HMGET', P .. 'pg:' .. ARGV[6], 'h', 't', 'e')
forget_page(ARGV[6])
stat('spoolLost', 1)
if not (v[1] and v[2] and v[3]) then return -1 end
local host, tier, el = v[1], v[2], v[3]
local hk = hkey(host)
put_back(host, hk, tier, el)
stat('fetched', -1)
if redis.call('HINCRBY', hk, 'x', -1) < 0 then redis.call('HSET', hk, 'x', 0) end
sync_ready(host, hk)
return 1
