-- Rehoming (rebalancing): removes the first COUNT elements of one host's tier queue after the
-- client has written exactly those URLs to an outbox file for the host's new owner, and keeps the
-- host's queued count, the crawl gauges and the ready schedule in step, in one atomic step.
-- Run only on a stopped node (no fetcher or parser running), after leases were recovered.
--
-- Keys (computed from the prefix, as frontier/keys.ts names them; the node's Redis is not a cluster):
--   P q<tier>:<host>  list  the host's queue for the tier (LTRIM)
--   P h:<host>        hash  field q = URLs queued for the host (HINCRBY -count)
--   P stats           hash  gauges queued (-count) and hostsQueued (-1 when the host empties)
--   P ready           zset  the host leaves the schedule when nothing is queued any more
-- ARGV: prefix, host, tier, count
-- Returns: the host's queued count afterwards.
local prefix, host, tier, count = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local qk = prefix .. 'q' .. tier .. ':' .. host
local hk = prefix .. 'h:' .. host
local len = redis.call('LLEN', qk)
if count > len then count = len end
if count <= 0 then return tonumber(redis.call('HGET', hk, 'q') or '0') end
redis.call('LTRIM', qk, count, -1)
local q = redis.call('HINCRBY', hk, 'q', -count)
redis.call('HINCRBY', prefix .. 'stats', 'queued', -count)
if q <= 0 then
  if q + count > 0 then redis.call('HINCRBY', prefix .. 'stats', 'hostsQueued', -1) end
  if q < 0 then redis.call('HSET', hk, 'q', 0) end
  redis.call('ZREM', prefix .. 'ready', host)
end
return q
