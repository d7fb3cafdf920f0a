-- robots_set.lua: stores one origin's robots.txt cache entry and keeps the cache under its byte
-- bound in the same step, so the accounting can never disagree with what is stored.
-- KEYS: none. ARGV: [1] prefix P; [2] origin; [3] entry (JSON); [4] PX ttl ms; [5] bytes the entry
-- is charged (entry, key names, per-key overhead); [6] the cache's byte bound (0 = none);
-- [7] most entries removed by this call
-- Touches: P robots:<origin> (and those of evicted origins), P rcb, P rco, P stats (robots:bytes,
-- robots:writes, robots:evicted)
-- Returns: entries evicted
local P, origin, value, ttl, size, max, maxEvict = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local sizes, order, stats = P .. 'rcb', P .. 'rco', P .. 'stats'
local old = tonumber(redis.call('HGET', sizes, origin) or '0')
redis.call('SET', P .. 'robots:' .. origin, value, 'PX', ttl)
redis.call('HSET', sizes, origin, size)
-- Oldest write first out: a rewritten entry (its 24 h refresh) moves to the young end.
redis.call('ZADD', order, redis.call('HINCRBY', stats, 'robots:writes', 1), origin)
local total = redis.call('HINCRBY', stats, 'robots:bytes', size - old)
local evicted, steps = 0, 0
-- Bounded work per write: at most maxEvict entries go; the next writes go on from there.
while max > 0 and total > max and steps < maxEvict do
  steps = steps + 1
  local oldest = redis.call('ZRANGE', order, 0, 0)[1]
  if not oldest or oldest == origin then break end
  redis.call('ZREM', order, oldest)
  local sz = tonumber(redis.call('HGET', sizes, oldest) or '0')
  redis.call('HDEL', sizes, oldest)
  total = redis.call('HINCRBY', stats, 'robots:bytes', -sz)
  -- An entry past its TTL is already gone: only its accounting is dropped, no eviction counted.
  evicted = evicted + redis.call('DEL', P .. 'robots:' .. oldest)
end
if evicted > 0 then redis.call('HINCRBY', stats, 'robots:evicted', evicted) end
return evicted
