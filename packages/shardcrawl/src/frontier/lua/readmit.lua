-- readmit.lua: puts URLs that were shed to disk (spill mode) back into their host queues, at the
-- tail of their tier, without the seen filter (their bits were set when first admitted). Those
-- that do not fit under the caps go back to P spill. Prepended with lib.lua.
-- Crash safety: entries from a spill file carry the file's name and their index in it; the script
-- admits them only if P spillpos[file] is exactly that index, and advances it (and lowers P flow
-- ondisk) in the same step, so a crash between re-admission and deleting the file never admits
-- an entry twice: the next run skips what P spillpos says is done.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] max queued per host (0 = none); [6] max queued in total (0 = none);
--       [7] spill file name ("" = entries not from a file); [8] index of the first entry in that file;
--       [9..] spilled entries "<host>\t<tier>\t<full url + suffix>"
-- Touches: P h:<host>, P q<tier>:<host>, P ready, P stats, P spill, P flow, P spillpos
--          and through lib.lua: P d:<domain>, P dw:<domain>, P flowcfg (read), P held
-- Returns: {readmitted, returned to P spill, file position after the call (-1 = refused: stale index)}
local max_host = tonumber(ARGV[5])
local max_total = tonumber(ARGV[6])
local file = ARGV[7]
local first = tonumber(ARGV[8]) or 0
local K_SPILLPOS = P .. 'spillpos'
local pos = 0
if file ~= '' then
  pos = tonumber(redis.call('HGET', K_SPILLPOS, file) or '0') or 0
  -- Not where this file's admission stands: done before (a crash, a retry); change nothing.
  if pos ~= first then return {0, 0, -1} end
end
local tcap = tonumber(redis.call('HGET', P .. 'flow', 'tcap') or '0') or 0
if tcap > 0 and (max_total <= 0 or tcap < max_total) then max_total = tcap end
local total = tonumber(redis.call('HGET', K_STATS, 'queued') or '0')
local back, done = 0, 0
for i = 9, #ARGV do
  local host, tier, el = split_lease(ARGV[i])
  local hk = hkey(host)
  local v = redis.call('HMGET', hk, 'q', 'o')
  local q = tonumber(v[1]) or 0
  if (max_host > 0 and q >= max_host) or (max_total > 0 and total >= max_total) then
    redis.call('LPUSH', K_SPILL, ARGV[i])
    back = back + 1
  else
    redis.call('RPUSH', qkey(host, tier), el_for(el, v[2]))
    queued_add(hk, 1)
    sync_ready(host, hk)
    total = total + 1
    done = done + 1
  end
end
if done > 0 then stat('readmitted', done) end
local n = #ARGV - 8
if file ~= '' and n > 0 then
  pos = first + n
  redis.call('HSET', K_SPILLPOS, file, pos)
  redis.call('HINCRBY', P .. 'flow', 'ondisk', -n)
end
return {done, back, pos}
