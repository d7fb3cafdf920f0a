-- exclude_purge.lua: removes a host's queued URLs that an exclusion covers (frontier/exclusions.ts),
-- as ONE step, and counts them (stats excluded). Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] host; [6] URL prefix ("" = every queued URL of the host)
-- A prefix is matched against each element's full URL (el_full), read in chunks into a temporary
-- list that replaces the queue, so memory stays bounded per call of Redis.
-- Touches: P h:<host>, P q<tier>:<host>, P tmp:excl, P ready, P big, P stats, P d:<domain>, P dw:<domain>
--          and through lib.lua: P flowcfg (read), P held
-- Returns: URLs removed
local host = ARGV[5]
local prefix = ARGV[6]
local hk = hkey(host)
if redis.call('EXISTS', hk) == 0 then return 0 end
local origin = redis.call('HGET', hk, 'o')
local removed = 0
local tmp = P .. 'tmp:excl'
for t = 0, MAX_TIER do
  local qk = qkey(host, t)
  local len = redis.call('LLEN', qk)
  if len > 0 then
    if prefix == '' then
      redis.call('DEL', qk)
      removed = removed + len
    else
      redis.call('DEL', tmp)
      local kept = 0
      for i = 0, len - 1, 1000 do
        local els = redis.call('LRANGE', qk, i, i + 999)
        local keep = {}
        for _, el in ipairs(els) do
          if string.sub(el_full(el, origin), 1, #prefix) == prefix then removed = removed + 1
          else keep[#keep + 1] = el end
        end
        if #keep > 0 then
          redis.call('RPUSH', tmp, unpack(keep))
          kept = kept + #keep
        end
      end
      if kept > 0 then redis.call('RENAME', tmp, qk) else redis.call('DEL', qk) end
    end
  end
end
if removed > 0 then
  local q = queued_add(hk, -removed)
  if q < BIG_MIN then redis.call('ZREM', K_BIG, host) end
  stat('excluded', removed)
end
sync_ready(host, hk)
return removed
