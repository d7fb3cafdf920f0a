-- bloom_stages.lua: plans the seen filter's growth (bloom_lib.lua) once per crawl. Standalone.
-- Stores the stage plan if none is stored; creates P bf:grow if missing. A filter built before the
-- filter could grow (a resumed crawl) gets its stage-0 insertions estimated from its bit count:
-- n = -m/k ln(1 - X/m).
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] plan "m,k,n;..."; [3] stage-0 m; [4] stage-0 k; [5] stage-0 capacity n; [6] segment bits
-- Touches: P bf:plan, P bf:grow, reads P bf:<i>
-- Returns: the stored plan
local P = ARGV[1]
redis.call('SET', P .. 'bf:plan', ARGV[2], 'NX')
if redis.call('EXISTS', P .. 'bf:grow') == 0 then
  local m, k, seg = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6])
  local ones, i = 0, 0
  while i * seg < m do
    ones = ones + redis.call('BITCOUNT', P .. 'bf:' .. i)
    i = i + 1
  end
  local est = 0
  if ones > 0 then
    if ones >= m then ones = m - 1 end
    est = math.floor(-m / k * math.log(1 - ones / m) + 0.5)
  end
  redis.call('HSET', P .. 'bf:grow', 's', 1, 'c', string.format('%d', est), 'cap', ARGV[5])
end
return redis.call('GET', P .. 'bf:plan')
