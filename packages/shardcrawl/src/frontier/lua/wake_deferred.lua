-- wake_deferred.lua: a new run is the operator saying "try again": hosts waiting out a robots.txt
-- outage get their next try now instead of at the back-off's (possibly hours away) time -- but not
-- hosts that asked for the wait themselves (Retry-After: last error "retry-after: ..."). At most
-- ARGV[5] hosts per call (the caller loops until fewer come back). Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] batch size
-- Touches: P rdefer, P ro:<host>, P h:<host>, P ready, P held, P d:<domain>, P dw:<domain>
--          and through lib.lua: P flowcfg (read)
-- Returns: {hosts looked at, hosts woken}
local K_RDEFER = P .. 'rdefer'
local hosts = redis.call('ZRANGEBYSCORE', K_RDEFER, '(' .. int(NOW), '+inf', 'LIMIT', 0, tonumber(ARGV[5]))
local woken = 0
for _, h in ipairs(hosts) do
  local e = redis.call('HGET', P .. 'ro:' .. h, 'e')
  if not (e and string.sub(e, 1, 13) == 'retry-after: ') then
  woken = woken + 1
  -- Now, but never before the politeness gap after the host's last request (pn, defer_host.lua).
  local at = math.max(NOW, tonumber(redis.call('HGET', P .. 'ro:' .. h, 'pn')) or 0)
  redis.call('ZADD', K_RDEFER, int(at), h)
  if redis.call('EXISTS', P .. 'ro:' .. h) == 1 then redis.call('HSET', P .. 'ro:' .. h, 'nt', int(at)) end
  local hk = hkey(h)
  if redis.call('EXISTS', hk) == 1 then
    redis.call('HSET', hk, 'n', int(at))
    -- Domain politeness: the host's hold ends at the same time (lib.lua held_until, wake_held).
    if at > NOW then redis.call('HSET', hk, 'hh', int(at)) else redis.call('HDEL', hk, 'hh') end
    redis.call('ZREM', P .. 'held', h)
    -- sync_ready never moves an entry earlier: take it out so it is scored again from now.
    redis.call('ZREM', K_READY, h)
    sync_ready(h, hk)
  end
  end
end
-- The caller loops while a full batch came back (skipped hosts count toward it).
return {#hosts, woken}
