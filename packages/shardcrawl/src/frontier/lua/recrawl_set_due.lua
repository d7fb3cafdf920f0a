-- recrawl_set_due.lua: puts pages of the continuous re-crawl schedule at a due time: writes the
-- next-due field (and the plan/hint flags) of each page's history record and appends a due entry
-- to the time slot's list. Keys: see frontier/keys.ts ("Continuous re-crawl schedule").
-- Old entries are not searched for: an entry counts only while its record's due field points at
-- its slot (recrawl_take_due.lua skips the rest), so moving a page is O(1).
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] slot length ms; then per page 6 values: host, origin, path+query,
--       due (epoch ms; 0 = out of the schedule), plans since the last visit (0-3, -1 = keep),
--       hint pending (1/0, -1 = keep)
-- Touches: P rh:<host> (the page's record; pages without one are skipped), P rhid, P rhost, P rhostn,
--          P rdue:<slot>, P rslots
-- Returns: how many pages were updated.
local P = ARGV[1]
local slotMs = tonumber(ARGV[2])
local n = 0
local ids = {}
local function host_id(host, origin)
  local id = ids[host] or redis.call('HGET', P .. 'rhid', host)
  if not id then
    id = redis.call('INCR', P .. 'rhostn')
    redis.call('HSET', P .. 'rhid', host, id)
    redis.call('HSET', P .. 'rhost', id, host .. '\t' .. origin)
  end
  ids[host] = id
  return tonumber(id)
end
local function u32(x)
  return string.char(math.floor(x / 16777216) % 256, math.floor(x / 65536) % 256, math.floor(x / 256) % 256, x % 256)
end
for i = 3, #ARGV - 5, 6 do
  local host, origin, field = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local dueSec = math.floor(tonumber(ARGV[i + 3]) / 1000)
  local missed, hint = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5])
  local rk = P .. 'rh:' .. host
  local rec = redis.call('HGET', rk, field)
  if rec and #rec >= 55 and (string.byte(rec, 1) == 1 or string.byte(rec, 1) == 2) then
    if string.byte(rec, 1) == 1 then -- a record from before the schedule lived in Redis: add the field
      rec = '\2' .. string.sub(rec, 2, 55) .. '\0\0\0\0' .. string.sub(rec, 56)
    end
    local flags = string.byte(rec, 2)
    if missed >= 0 then flags = bit.bor(bit.band(flags, 249), missed * 2) end
    if hint >= 0 then flags = bit.bor(bit.band(flags, 247), hint * 8) end
    rec = string.sub(rec, 1, 1) .. string.char(flags) .. string.sub(rec, 3, 55) .. u32(dueSec) .. string.sub(rec, 60)
    redis.call('HSET', rk, field, rec)
    if dueSec > 0 then
      local slot = math.floor(dueSec * 1000 / slotMs)
      redis.call('RPUSH', P .. 'rdue:' .. slot, u32(host_id(host, origin)) .. field)
      redis.call('ZADD', P .. 'rslots', slot, slot)
    end
    n = n + 1
  end
end
return n
