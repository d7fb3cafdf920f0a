-- add_revisits.lua: continuous mode (--continuous): puts URLs the node already fetched back into their
-- host queues for a planned revisit, as ONE step. Unlike add_links it does NOT test the seen
-- filter (these URLs are in it by definition) and applies no queue caps (the re-crawl scheduler's
-- budget bounds how many it plans per cycle). The URLs go through the same host queues, ready
-- schedule and leases as any other, so politeness and the host limits apply to revisits too.
-- Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] tier; [6] 1 = to the front of the queue (a visit that must not
--       wait behind the tier's backlog: a new feed entry, a page a listing showed changed), else 0;
--       [7..] host, full URL pairs
-- Touches: P h:<host>, P q<tier>:<host>, P ready, P stats
--          and through lib.lua: P d:<domain>, P dw:<domain>, P flowcfg (read), P held
-- Returns: the number of URLs queued
local tier = tonumber(ARGV[5])
if not tier or tier < 0 or tier > MAX_TIER then return redis.error_reply('add_revisits: bad tier ' .. tostring(ARGV[5])) end
local push = ARGV[6] == '1' and 'LPUSH' or 'RPUSH'
local n = 0
for i = 7, #ARGV - 1, 2 do
  local host, url = ARGV[i], ARGV[i + 1]
  local hk = hkey(host)
  -- Same element form as add_links: path+query when the URL has the host's stored origin.
  local el = el_for(url, redis.call('HGET', hk, 'o'))
  redis.call(push, qkey(host, tier), el)
  queued_add(hk, 1)
  sync_ready(host, hk)
  n = n + 1
end
if n > 0 then stat('revisitsQueued', n) end
return n
