-- snapshot.lua: a consistent read of the crawl's gauges and counters (one script, so e.g. a page
-- acknowledged between two reads can never make a busy crawl look done). Standalone, read-only.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] now (epoch ms)
-- Touches (read): P stats, P ready, P leases, P pq, P pc, P pi:<consumer>
-- Returns: {stats as [field, value, ...], ready hosts, due-now hosts, leases, parse queue depth, parse in-flight}
local P = ARGV[1]
local inflight = 0
for _, c in ipairs(redis.call('SMEMBERS', P .. 'pc')) do inflight = inflight + redis.call('LLEN', P .. 'pi:' .. c) end
return {
  redis.call('HGETALL', P .. 'stats'),
  redis.call('ZCARD', P .. 'ready'),
  redis.call('ZCOUNT', P .. 'ready', '-inf', ARGV[2]),
  redis.call('ZCARD', P .. 'leases'),
  redis.call('LLEN', P .. 'pq'),
  inflight,
}
