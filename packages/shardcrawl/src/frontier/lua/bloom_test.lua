-- bloom_test.lua: tests URLs against the seen filter without changing it. Standalone, read-only.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] k; [3] segment size in bits; then k bit positions per URL
-- Touches (read): P bf:<i>
-- Returns: one 1 (maybe seen) or 0 (certainly not seen) per URL
local P = ARGV[1]
local k = tonumber(ARGV[2])
local seg = tonumber(ARGV[3])
local out = {}
for i = 4, #ARGV, k do
  local hit = 1
  for j = 0, k - 1 do
    local pos = tonumber(ARGV[i + j])
    local s = math.floor(pos / seg)
    if redis.call('GETBIT', P .. 'bf:' .. s, string.format('%d', pos - s * seg)) == 0 then hit = 0; break end
  end
  out[#out + 1] = hit
end
return out
