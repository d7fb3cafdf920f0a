-- recrawl_take_due.lua: takes the pages of the continuous re-crawl schedule that are due (their
-- slot started at or before now), oldest slot first, at most N, and returns them with their
-- records (format 3: the record holds the path). Each page taken is put back at a safety time (its
-- record's due field and an entry in that slot) so a supervisor that dies before it plans or
-- reschedules them loses nothing; the caller then sets the real next due (recrawl_set_due.lua),
-- which makes the safety entry void.
-- Entries whose record's due field points elsewhere (the page moved) are dropped on the way.
-- Keys: see frontier/keys.ts ("Continuous re-crawl schedule").
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] slot length ms; [3] now (epoch ms); [4] max pages; [5] safety due (epoch ms,
--       must lie beyond the current slot)
-- Touches: P rqs, P rq:<slot>, P rhost (read), P rp:<host>
-- Returns: {more, host, origin, record key, record, host, ...}; more = '1' when it stopped at its scan
--          bound (old entries) with due slots left, so the caller asks again, else '0'.
local P = ARGV[1]
local slotMs = tonumber(ARGV[2])
local nowSlot = math.floor(tonumber(ARGV[3]) / slotMs)
local max = tonumber(ARGV[4])
local safeSec = math.floor(tonumber(ARGV[5]) / 1000)
local safeSlot = math.floor(safeSec * 1000 / slotMs)
if safeSlot <= nowSlot then return redis.error_reply('recrawl_take_due: the safety time must lie beyond the current slot') end
local safe4 = string.char(math.floor(safeSec / 16777216) % 256, math.floor(safeSec / 65536) % 256, math.floor(safeSec / 256) % 256, safeSec % 256)
local out = {'0'}
local hosts = {}
local taken, scanned = 0, 0
while taken < max and scanned < 4 * max + 1000 do
  local s = redis.call('ZRANGEBYSCORE', P .. 'rqs', '-inf', nowSlot, 'LIMIT', 0, 1)[1]
  if not s then break end
  local lk = P .. 'rq:' .. s
  local items = redis.call('LPOP', lk, math.min(max - taken, 512))
  if not items or redis.call('EXISTS', lk) == 0 then redis.call('ZREM', P .. 'rqs', s) end
  if items then
    local slot = tonumber(s)
    for _, m in ipairs(items) do
      scanned = scanned + 1
      local a, b, c, d = string.byte(m, 1, 4)
      local id = ((a * 256 + b) * 256 + c) * 256 + d
      local hv = hosts[id]
      if hv == nil then
        hv = redis.call('HGET', P .. 'rhost', id) or false
        hosts[id] = hv
      end
      if hv then
        local tab = string.find(hv, '\t', 1, true)
        local host, origin = string.sub(hv, 1, tab - 1), string.sub(hv, tab + 1)
        local key = string.sub(m, 5)
        local rk = P .. 'rp:' .. host
        local rec = redis.call('HGET', rk, key)
        if rec and #rec >= 19 and string.byte(rec, 1) == 3 then
          local e, f, g, h = string.byte(rec, 3, 6)
          local due = ((e * 256 + f) * 256 + g) * 256 + h
          if due > 0 and math.floor(due * 1000 / slotMs) == slot then
            redis.call('HSET', rk, key, string.sub(rec, 1, 2) .. safe4 .. string.sub(rec, 7))
            redis.call('RPUSH', P .. 'rq:' .. safeSlot, m)
            redis.call('ZADD', P .. 'rqs', safeSlot, safeSlot)
            out[#out + 1] = host
            out[#out + 1] = origin
            out[#out + 1] = key
            out[#out + 1] = rec
            taken = taken + 1
          end
        end
      end
    end
  end
end
if taken < max and scanned >= 4 * max + 1000 and redis.call('ZRANGEBYSCORE', P .. 'rqs', '-inf', nowSlot, 'LIMIT', 0, 1)[1] then out[1] = '1' end
return out
