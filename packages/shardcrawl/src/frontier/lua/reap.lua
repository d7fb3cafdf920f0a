-- reap.lua: returns leases that expired by a given time to the HEAD of their queues (in-flight--,
-- politeness gap from now, host re-readied). Used by the periodic reaper (expired at now) and by
-- recovery at node start (every lease: max = "+inf"). Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] max expiry to reap (ms, or "+inf"); [6] max leases this call;
--       [7] "1" to count the expiry as an attempt, else "0"; [8] stats counter ("reaped" | "recovered")
-- Touches: P leases, P lease, P lo:<owner>, P h:<host>, P q<tier>:<host>, P ready, P stats
--          and through lib.lua: P d:<domain>, P dw:<domain>, P flowcfg (read), P held
-- Returns: number of leases returned
local ids = redis.call('ZRANGEBYSCORE', K_LEASES, '-inf', ARGV[5], 'LIMIT', 0, tonumber(ARGV[6]))
for _, id in ipairs(ids) do
  if redis.call('HEXISTS', K_LEASE, id) == 0 then
    redis.call('ZREM', K_LEASES, id)
    forget_owner(id)
  else
    local host, hk, tier, el = release(id, '')
    if ARGV[7] == '1' then el = bump_attempt(el) end
    put_back(host, hk, tier, el)
    sync_ready(host, hk)
  end
end
if #ids > 0 then stat(ARGV[8], #ids) end
return #ids
