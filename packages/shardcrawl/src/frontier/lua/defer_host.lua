-- defer_host.lua: a host's robots.txt could not be fetched (an outage: 5xx, 429, timeout, reset,
-- transient DNS): completes the lease that fetched it and puts its URL back at the HEAD of its
-- queue uncounted (the URL was never attempted), moves the host's next allowed start to the next
-- robots.txt try, and records the outage. ONE step. Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] lease id; [6] host; [7] next try epoch ms; [8] origin;
--       [9] first failed try epoch ms (kept if the outage is already recorded); [10] failed tries;
--       [11] last error text
-- Touches: P lease, P leases, P lo:<owner>, P h:<host>, P q<tier>:<host>, P ready, P stats,
--          P ro:<host>, P rdefer, P held, P d:<domain>, P dw:<domain>
--          and through lib.lua: P flowcfg (read)
-- Returns: 'ok' | 'expired' (lease already reaped; the reaper put the URL back already)
local host, hk, tier, el = release(ARGV[5], ARGV[6])
local h = host or ARGV[6]
local hkh = hkey(h)
if host then put_back(host, hk, tier, el) end
local nt = tonumber(ARGV[7])
local rk = P .. 'ro:' .. h
-- pn: the host's politeness clock as this request left it, so a new run that tries the host
-- early (wake_deferred.lua) still keeps the gap after this request.
local pn = tonumber(redis.call('HGET', hkh, 'n')) or NOW
redis.call('HSET', rk, 'pn', int(pn))
if redis.call('EXISTS', hkh) == 1 then
  if nt > pn then redis.call('HSET', hkh, 'n', int(nt)) end
  -- Domain politeness ignores the host's own n: the hold takes it out of its domain's line.
  redis.call('HSET', hkh, 'hh', int(nt))
end
redis.call('HSETNX', rk, 'f', ARGV[9])
redis.call('HSET', rk, 'o', ARGV[8], 't', ARGV[10], 'nt', int(nt), 'l', int(NOW), 'e', ARGV[11])
redis.call('ZADD', P .. 'rdefer', int(nt), h)
stat('robotsDeferred', 1)
if redis.call('EXISTS', hkh) == 1 then sync_ready(h, hkh) end
if host then return 'ok' end
return 'expired'
