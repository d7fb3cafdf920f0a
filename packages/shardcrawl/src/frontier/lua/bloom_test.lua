-- bloom_test.lua: tests URLs against the seen filter without changing it. Standalone, read-only.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] segment size in bits; [3] k; [4] k positions per URL as big-endian u48
-- Touches (read): P bf:<i>
-- Returns: one 1 (maybe seen) or 0 (certainly not seen) per URL
local P = ARGV[1]
local seg = tonumber(ARGV[2])
local k = tonumber(ARGV[3])
local blob = ARGV[4]
local keys = {}
local out = {}
for j = 1, #blob, 6 * k do
  local hit = 1
  for i = 0, k - 1 do
    local a, b, c, d, e, f = string.byte(blob, j + i * 6, j + i * 6 + 5)
    local pos = ((((a * 256 + b) * 256 + c) * 256 + d) * 256 + e) * 256 + f
    local s = math.floor(pos / seg)
    local key = keys[s]
    if not key then key = P .. 'bf:' .. s; keys[s] = key end
    -- One bit per call: stops at the first clear bit, and positions may lie in different segments.
    if redis.call('GETBIT', key, pos - s * seg) == 0 then hit = 0; break end
  end
  out[#out + 1] = hit
end
return out
