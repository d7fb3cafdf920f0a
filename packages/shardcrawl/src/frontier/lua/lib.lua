-- lib.lua: helpers shared by every script that touches host state. scripts.ts prepends this file
-- to those scripts (and replaces the MAX_TIER placeholder with MAX_TIER from shared/types.ts), so each
-- operation stays ONE atomic script. See keys.ts for the whole keyspace.
--
-- Common ARGV of every script that includes this file:
--   ARGV[1] key prefix P   ARGV[2] now (epoch ms)   ARGV[3] default delay ms   ARGV[4] default concurrency
-- Keys these helpers touch (names computed from P):
--   P h:<host> (hash), P q<tier>:<host> (list), P ready (zset), P stats (hash),
--   P leases (zset), P lease (hash), P bf:<i> (Bloom segment strings)

local P = ARGV[1]
local NOW = tonumber(ARGV[2])
local DEFAULT_DELAY = tonumber(ARGV[3])
local DEFAULT_CONC = tonumber(ARGV[4])
local MAX_TIER = __MAX_TIER__
local K_READY = P .. 'ready'
local K_STATS = P .. 'stats'
local K_LEASES = P .. 'leases'
local K_LEASE = P .. 'lease'

local function hkey(host) return P .. 'h:' .. host end
local function qkey(host, tier) return P .. 'q' .. tier .. ':' .. host end
-- Integers as plain decimal strings (never exponent notation) for scores, offsets and fields.
local function int(x) return string.format('%d', x) end
local function stat(field, by) redis.call('HINCRBY', K_STATS, field, by) end

local function conc_of(c)
  local v = tonumber(c)
  if v and v >= 1 then return v end
  return DEFAULT_CONC
end

-- Gap between request starts: the effective delay (crawl default or the host's larger override,
-- e.g. robots Crawl-delay) spread over the host's concurrency slots.
local function gap_of(d, c)
  local delay = DEFAULT_DELAY
  local o = tonumber(d)
  if o and o > delay then delay = o end
  return math.ceil(delay / c)
end

-- Changes a host's queued count and the crawl gauges (queued URLs, hosts with queued URLs).
local function queued_add(hk, delta)
  local q = redis.call('HINCRBY', hk, 'q', delta)
  stat('queued', delta)
  if delta > 0 and q == delta then stat('hostsQueued', 1)
  elseif delta < 0 and q <= 0 and q - delta > 0 then stat('hostsQueued', -1) end
  return q
end

-- Puts the host into the ready schedule iff it has queued URLs and a free concurrency slot.
-- A new entry is scored max(now, next); an existing one keeps its place unless next moved later.
local function sync_ready(host, hk)
  local v = redis.call('HMGET', hk, 'f', 'n', 'c', 'q')
  local f = tonumber(v[1]) or 0
  local n = tonumber(v[2]) or 0
  local q = tonumber(v[4]) or 0
  if q > 0 and f < conc_of(v[3]) then
    local s = redis.call('ZSCORE', K_READY, host)
    if not s then
      redis.call('ZADD', K_READY, int(math.max(NOW, n)), host)
    elseif n > tonumber(s) then
      redis.call('ZADD', K_READY, int(n), host)
    end
  else
    redis.call('ZREM', K_READY, host)
  end
end

-- Raises the host's next allowed start to now + gap (never lowers it).
local function push_next(hk)
  local v = redis.call('HMGET', hk, 'n', 'd', 'c')
  local nx = NOW + gap_of(v[2], conc_of(v[3]))
  if nx > (tonumber(v[1]) or 0) then redis.call('HSET', hk, 'n', int(nx)) end
end

-- "<host>\t<tier>\t<element>" -> host, tier, element
local function split_lease(data)
  local t1 = string.find(data, '\t', 1, true)
  local t2 = string.find(data, '\t', t1 + 1, true)
  return string.sub(data, 1, t1 - 1), string.sub(data, t1 + 1, t2 - 1), string.sub(data, t2 + 1)
end

-- Ends lease `id` at NOW: removes it, frees the host's slot and starts the politeness gap from
-- now (the end of the response). Returns host, hk, tier, element; or nil when the lease is gone
-- (already reaped) -- then the request still happened, so the hinted host's gap is still applied.
local function release(id, host_hint)
  local data = redis.call('HGET', K_LEASE, id)
  if not data then
    local hk = hkey(host_hint)
    if redis.call('EXISTS', hk) == 1 then
      push_next(hk)
      sync_ready(host_hint, hk)
    end
    stat('lateCompletions', 1)
    return nil
  end
  redis.call('HDEL', K_LEASE, id)
  redis.call('ZREM', K_LEASES, id)
  local host, tier, el = split_lease(data)
  local hk = hkey(host)
  if redis.call('HINCRBY', hk, 'f', -1) < 0 then redis.call('HSET', hk, 'f', 0) end
  push_next(hk)
  return host, hk, tier, el
end

-- Puts an element back at the HEAD of its tier queue (it was taken first, it goes first again).
local function put_back(host, hk, tier, el)
  redis.call('LPUSH', qkey(host, tier), el)
  queued_add(hk, 1)
end

-- "path\t2,0,1" -> "path\t2,0,2"; "path" -> "path\t0,0,1"
local function bump_attempt(el)
  local base, suf = string.match(el, '^(.-)\t([%d,]+)$')
  if not base then return el .. '\t0,0,1' end
  local d, h, a = string.match(suf .. ',,', '^(%d*),(%d*),(%d*)')
  return base .. '\t' .. (tonumber(d) or 0) .. ',' .. (tonumber(h) or 0) .. ',' .. ((tonumber(a) or 0) + 1)
end

-- Adds links whose parameters start at ARGV[base]:
--   ARGV[base]   k (Bloom positions per link)     ARGV[base+1] Bloom segment size in bits
--   ARGV[base+2] max queued per host (0 = none)   ARGV[base+3] max queued in total (0 = none)
--   then per link (stride 5+k): host, origin ("" = unknown), rest (path+query or full URL),
--   tier, suffix ("\t<depth>[,<hops>]" or ""), k Bloom bit positions (decimal).
-- For each link: Bloom test-and-set; if new and there is room, RPUSH it to its host/tier queue,
-- create the host state if new, and put the host into the ready schedule when it has a free slot.
-- A link refused for lack of room is tested only (its bits stay clear), so it can come back later.
-- Returns added, seen (already in the filter), dropped (no room).
local function add_links(base)
  local k = tonumber(ARGV[base])
  local seg = tonumber(ARGV[base + 1])
  local max_host = tonumber(ARGV[base + 2])
  local max_total = tonumber(ARGV[base + 3])
  local stride = 5 + k
  local total = tonumber(redis.call('HGET', K_STATS, 'queued') or '0')
  local added, seen, dropped_host, dropped_total = 0, 0, 0, 0
  local touched, touched_list = {}, {}
  for i = base + 4, #ARGV, stride do
    local host = ARGV[i]
    local hk = hkey(host)
    local q = tonumber(redis.call('HGET', hk, 'q') or '0')
    local host_full = max_host > 0 and q >= max_host
    local total_full = max_total > 0 and total >= max_total
    local fresh = false
    if host_full or total_full then
      for j = 1, k do
        local pos = tonumber(ARGV[i + 4 + j])
        local s = math.floor(pos / seg)
        if redis.call('GETBIT', P .. 'bf:' .. s, int(pos - s * seg)) == 0 then fresh = true; break end
      end
    else
      for j = 1, k do
        local pos = tonumber(ARGV[i + 4 + j])
        local s = math.floor(pos / seg)
        if redis.call('SETBIT', P .. 'bf:' .. s, int(pos - s * seg), 1) == 0 then fresh = true end
      end
    end
    if not fresh then
      seen = seen + 1
    elseif host_full then
      dropped_host = dropped_host + 1
    elseif total_full then
      dropped_total = dropped_total + 1
    else
      local origin, rest, tier, suffix = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
      local o = redis.call('HGET', hk, 'o')
      if not o and origin ~= '' then
        redis.call('HSET', hk, 'o', origin)
        o = origin
      end
      local el
      if origin ~= '' and o == origin then el = rest .. suffix else el = origin .. rest .. suffix end
      redis.call('RPUSH', qkey(host, tier), el)
      queued_add(hk, 1)
      total = total + 1
      added = added + 1
      if not touched[host] then
        touched[host] = true
        touched_list[#touched_list + 1] = host
      end
    end
  end
  for _, host in ipairs(touched_list) do sync_ready(host, hkey(host)) end
  if seen > 0 then stat('duplicates', seen) end
  if dropped_host > 0 then stat('dropped:host-full', dropped_host) end
  if dropped_total > 0 then stat('dropped:frontier-full', dropped_total) end
  return added, seen, dropped_host + dropped_total
end
