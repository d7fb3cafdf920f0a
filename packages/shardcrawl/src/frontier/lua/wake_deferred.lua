-- wake_deferred.lua: a new run is the operator saying "try again": hosts waiting out a robots.txt
-- outage get their next try now instead of at the back-off's (possibly hours away) time. At most
-- ARGV[5] hosts per call (the caller loops until fewer come back). Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] batch size
-- Touches: P rdefer, P ro:<host>, P h:<host>, P ready, P held, P d:<domain>, P dw:<domain>
-- Returns: hosts woken
local K_RDEFER = P .. 'rdefer'
local hosts = redis.call('ZRANGEBYSCORE', K_RDEFER, '(' .. int(NOW), '+inf', 'LIMIT', 0, tonumber(ARGV[5]))
for _, h in ipairs(hosts) do
  redis.call('ZADD', K_RDEFER, int(NOW), h)
  if redis.call('EXISTS', P .. 'ro:' .. h) == 1 then redis.call('HSET', P .. 'ro:' .. h, 'nt', int(NOW)) end
  local hk = hkey(h)
  if redis.call('EXISTS', hk) == 1 then
    redis.call('HSET', hk, 'n', int(NOW))
    redis.call('HDEL', hk, 'hh')
    redis.call('ZREM', P .. 'held', h)
    -- sync_ready never moves an entry earlier: take it out so it is scored again from now.
    redis.call('ZREM', K_READY, h)
    sync_ready(h, hk)
  end
end
return #hosts
