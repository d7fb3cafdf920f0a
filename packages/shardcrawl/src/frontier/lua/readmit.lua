-- readmit.lua: puts URLs that were shed to disk (spill mode) back into their host queues, at the
-- tail of their tier, without the seen filter (their bits were set when first admitted). Those
-- that do not fit under the caps go back to P spill. Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] max queued per host (0 = none); [6] max queued in total (0 = none);
--       [7..] spilled entries "<host>\t<tier>\t<full url + suffix>"
-- Touches: P h:<host>, P q<tier>:<host>, P ready, P stats, P spill, P flow (read)
-- Returns: {readmitted, returned to P spill}
local max_host = tonumber(ARGV[5])
local max_total = tonumber(ARGV[6])
local tcap = tonumber(redis.call('HGET', P .. 'flow', 'tcap') or '0') or 0
if tcap > 0 and (max_total <= 0 or tcap < max_total) then max_total = tcap end
local total = tonumber(redis.call('HGET', K_STATS, 'queued') or '0')
local back, done = 0, 0
for i = 7, #ARGV do
  local host, tier, el = split_lease(ARGV[i])
  local hk = hkey(host)
  local v = redis.call('HMGET', hk, 'q', 'o')
  local q = tonumber(v[1]) or 0
  if (max_host > 0 and q >= max_host) or (max_total > 0 and total >= max_total) then
    redis.call('LPUSH', K_SPILL, ARGV[i])
    back = back + 1
  else
    local o = v[2]
    if o and string.sub(el, 1, #o + 1) == o .. '/' then el = string.sub(el, #o + 1) end
    redis.call('RPUSH', qkey(host, tier), el)
    queued_add(hk, 1)
    sync_ready(host, hk)
    total = total + 1
    done = done + 1
  end
end
if done > 0 then stat('readmitted', done) end
return {done, back}
