-- bloom_init.lua: stores the seen filter's parameters once (first init wins) and allocates its
-- segments, so memory is taken up front rather than by reallocations in the middle of a crawl.
-- A segment that already exists is left alone (never clears a bit). Standalone.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] parameters JSON; [3] m (total bits); [4] segment size in bits
-- Touches: P bf:params, P bf:<i>
-- Returns: the stored parameters JSON (the caller compares it with what it asked for)
local P = ARGV[1]
local m = tonumber(ARGV[3])
local seg = tonumber(ARGV[4])
if redis.call('SET', P .. 'bf:params', ARGV[2], 'NX') then
  local i = 0
  while i * seg < m do
    local len = math.min(seg, m - i * seg)
    local key = P .. 'bf:' .. i
    if redis.call('EXISTS', key) == 0 then redis.call('SETBIT', key, string.format('%d', len - 1), 0) end
    i = i + 1
  end
end
return redis.call('GET', P .. 'bf:params')
