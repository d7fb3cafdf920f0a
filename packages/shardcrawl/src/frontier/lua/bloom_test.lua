-- bloom_test.lua: tests URLs against the seen filter (every stage) without changing it.
-- Prepended with bloom_lib.lua only. Read-only.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] segment size in bits; [3] layout "k" or "kbB" (bloom_lib.lua bf_layout);
--       [4] per URL its stage-0 record: k big-endian u48 positions, or (blocked) a u48 block index and k u8 offsets
-- Touches (read): P bf:<i>, P bf:grow, P bf:plan, P bf<stage>:<i>
--          P stats only through bloom_lib.lua bf_grow, which a test (no bits set) never reaches
-- Returns: one 1 (maybe seen) or 0 (certainly not seen) per URL
local P = ARGV[1]
local seg = tonumber(ARGV[2])
local k, rec = bf_layout(ARGV[3])
local blob = ARGV[4]
local keys = {}

-- Stage 0, one bit per call: stops at the first clear bit, and positions may lie in different segments.
local function stage0(b, j, kk, sg)
  for i = 0, kk - 1 do
    local a, c, d, e, f, g = string.byte(b, j + i * 6, j + i * 6 + 5)
    local pos = ((((a * 256 + c) * 256 + d) * 256 + e) * 256 + f) * 256 + g
    local s = math.floor(pos / sg)
    local key = keys[s]
    if not key then key = P .. 'bf:' .. s; keys[s] = key end
    if redis.call('GETBIT', key, pos - s * sg) == 0 then return true end
  end
  return false
end

local out = {}
for j = 1, #blob, rec do
  out[#out + 1] = seen_check(P, blob, j, k, seg, false, stage0) and 0 or 1
end
return out
