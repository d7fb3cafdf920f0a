-- release_owner.lua: returns every lease of one owner (a fetcher process that died) to the HEAD of
-- its queue at once (in-flight--, politeness gap from now, host re-readied), not counted as an
-- attempt: the process died, not the URL. Only that owner's leases are touched, so work other
-- fetchers hold stays theirs. A completion the dead process sent just before it died and that
-- arrives later finds its lease gone and is dropped (lateCompletions), so nothing is handed out twice
-- by the frontier; the page may be fetched again (at most the leases the owner held). Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] owner
-- Touches: P ipo:<owner>, P ip:<addr>, P lo:<owner>, P leases, P lease, P h:<host>, P q<tier>:<host>, P ready, P stats
--          and through lib.lua: P d:<domain>, P dw:<domain>, P flowcfg (read), P held
-- Returns: number of leases returned
local key = owner_key(ARGV[5])
local n = 0
-- An owner holds at most its fetcher's concurrency in leases (thousands), so one call is short.
for _, id in ipairs(redis.call('SMEMBERS', key)) do
  if redis.call('HEXISTS', K_LEASE, id) == 1 then
    local host, hk, tier, el = release(id, '')
    put_back(host, hk, tier, el)
    sync_ready(host, hk)
    n = n + 1
  else
    redis.call('ZREM', K_LEASES, id)
  end
end
redis.call('DEL', key)
-- Its per-IP in-flight slots (ip_acquire.lua) go back too.
local ipo = P .. 'ipo:' .. ARGV[5]
for _, m in ipairs(redis.call('SMEMBERS', ipo)) do
  local tab = string.find(m, '\t', 1, true)
  if tab then redis.call('ZREM', P .. 'ip:' .. string.sub(m, 1, tab - 1), string.sub(m, tab + 1)) end
end
redis.call('DEL', ipo)
if n > 0 then stat('ownerReleased', n) end
return n
