-- recrawl_set_due.lua: puts pages of the continuous re-crawl schedule at a due time: writes the
-- next-due field (and the plan/hint flags) of each page's record and appends a due entry to the
-- time slot's list. Keys: see frontier/keys.ts ("Continuous re-crawl schedule").
-- Old entries are not searched for: an entry counts only while its record's due field points at
-- its slot (recrawl_take_due.lua skips the rest), so moving a page is O(1).
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] slot length ms; then per page 6 values: host, origin, record key (8 bytes:
--       the path's hash), due (epoch ms; 0 = out of the schedule), plans since the last visit
--       (0-3, -1 = keep), hint pending (1/0, -1 = keep)
-- Touches: P rp:<host> (the page's record, format 3; pages without one are skipped), P rhid, P rhost,
--          P rhostn, P rq:<slot>, P rqs
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
  local host, origin, key = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local dueSec = math.floor(tonumber(ARGV[i + 3]) / 1000)
  local missed, hint = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5])
  local rk = P .. 'rp:' .. host
  local rec = redis.call('HGET', rk, key)
  if rec and #rec >= 19 and string.byte(rec, 1) == 3 then
    local flags = string.byte(rec, 2)
    if missed >= 0 then flags = bit.bor(bit.band(flags, 249), missed * 2) end
    if hint >= 0 then flags = bit.bor(bit.band(flags, 247), hint * 8) end
    redis.call('HSET', rk, key, string.sub(rec, 1, 1) .. string.char(flags) .. u32(dueSec) .. string.sub(rec, 7))
    if dueSec > 0 then
      local slot = math.floor(dueSec * 1000 / slotMs)
      redis.call('RPUSH', P .. 'rq:' .. slot, u32(host_id(host, origin)) .. key)
      redis.call('ZADD', P .. 'rqs', slot, slot)
    end
    n = n + 1
  end
end
return n
