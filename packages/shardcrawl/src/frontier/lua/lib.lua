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

-- Bloom positions travel as 48-bit big-endian integers in one binary argument and are read with
-- string.byte (no Lua strings are created per position: string handling, not the bit commands,
-- dominates the cost of a Lua script over many links).
local function pos48(blob, j)
  local a, b, c, d, e, f = string.byte(blob, j, j + 5)
  return ((((a * 256 + b) * 256 + c) * 256 + d) * 256 + e) * 256 + f
end

local SEG_KEYS = {}
local function seg_key(s)
  local key = SEG_KEYS[s]
  if not key then key = P .. 'bf:' .. s; SEG_KEYS[s] = key end
  return key
end

-- Reused argument tables for BITFIELD: {'SET', 'u1', off, 1, ...} and {'GET', 'u1', off, ...}.
local BF_SET, BF_GET = {}, {}

-- Tests (set_bits false) or tests-and-sets the k positions starting at blob[j]. Returns true when
-- at least one bit was clear, i.e. the URL is new. One BITFIELD per segment touched (one, unless
-- the filter spans several segments and the URL's bits fall into more than one).
local function bloom_check(blob, j, k, seg, set_bits)
  local segs, offs = {}, {}
  local single = true
  for i = 1, k do
    local pos = pos48(blob, j + (i - 1) * 6)
    local s = math.floor(pos / seg)
    segs[i] = s
    offs[i] = pos - s * seg
    if s ~= segs[1] then single = false end
  end
  local fresh = false
  local done = {}
  for i = 1, k do
    local s = segs[i]
    if not done[s] then
      done[s] = true
      local t, n = set_bits and BF_SET or BF_GET, 0
      for x = i, k do
        if single or segs[x] == s then
          if set_bits then
            t[n + 1] = 'SET'; t[n + 2] = 'u1'; t[n + 3] = offs[x]; t[n + 4] = 1; n = n + 4
          else
            t[n + 1] = 'GET'; t[n + 2] = 'u1'; t[n + 3] = offs[x]; n = n + 3
          end
        end
      end
      local old
      if set_bits then old = redis.call('BITFIELD', seg_key(s), unpack(t, 1, n))
      else old = redis.call('BITFIELD_RO', seg_key(s), unpack(t, 1, n)) end
      for _, b in ipairs(old) do
        if b == 0 then
          fresh = true
          if not set_bits then return true end
        end
      end
      if single then break end
    end
  end
  return fresh
end

-- Adds links whose parameters start at ARGV[base] (built by links.ts packLinks):
--   ARGV[base]   Bloom segment size in bits      ARGV[base+1] max queued per host (0 = none)
--   ARGV[base+2] max queued in total (0 = none)   ARGV[base+3] k (Bloom positions per link)
--   ARGV[base+4] binary records, one per link: host index u16, origin index u16 (65535 = none),
--                tier u8, k Bloom positions as u48 (all big-endian)
--   ARGV[base+5] H, ARGV[base+6] O, then H host names, O origins, then one element per link:
--                path+query+suffix when the link has an origin, else full URL+suffix
--                (suffix "\t<depth>[,<hops>]" or "").
-- For each link: Bloom test-and-set; if new and there is room, append it to its host/tier queue,
-- create the host state if new, and put the host into the ready schedule when it has a free slot.
-- A link refused for lack of room is tested only (its bits stay clear), so it can come back later.
-- Host state is read once per host per call and queue pushes / counters are written once per
-- host, so a page's links cost about one BITFIELD each plus a few calls per host.
-- Returns added, seen (already in the filter), dropped (no room).
local function add_links(base)
  local seg = tonumber(ARGV[base])
  local max_host = tonumber(ARGV[base + 1])
  local max_total = tonumber(ARGV[base + 2])
  local k = tonumber(ARGV[base + 3])
  local blob = ARGV[base + 4]
  local nh = tonumber(ARGV[base + 5])
  local no = tonumber(ARGV[base + 6])
  local host_base, origin_base = base + 6, base + 6 + nh
  local el_base = origin_base + no
  local rec = 5 + 6 * k
  local total = tonumber(redis.call('HGET', K_STATS, 'queued') or '0')
  local added, seen, dropped_host, dropped_total = 0, 0, 0, 0
  local hosts, order = {}, {}
  for n = 1, #blob / rec do
    local j = (n - 1) * rec + 1
    local h1, h2, o1, o2, tier = string.byte(blob, j, j + 4)
    local hi = h1 * 256 + h2 + 1
    local h = hosts[hi]
    if not h then
      local host = ARGV[host_base + hi]
      local hk = hkey(host)
      local v = redis.call('HMGET', hk, 'q', 'o')
      h = { host = host, hk = hk, q0 = tonumber(v[1]) or 0, o = v[2], new_o = false, tiers = {}, tier_order = {} }
      h.q = h.q0
      hosts[hi] = h
      order[#order + 1] = hi
    end
    local host_full = max_host > 0 and h.q >= max_host
    local total_full = max_total > 0 and total >= max_total
    if not bloom_check(blob, j + 5, k, seg, not (host_full or total_full)) then
      seen = seen + 1
    elseif host_full then
      dropped_host = dropped_host + 1
    elseif total_full then
      dropped_total = dropped_total + 1
    else
      local el = ARGV[el_base + n]
      local oi = o1 * 256 + o2
      if oi ~= 65535 then
        local origin = ARGV[origin_base + oi + 1]
        if not h.o then h.o = origin; h.new_o = true end
        if h.o ~= origin then el = origin .. el end
      end
      local t = h.tiers[tier]
      if not t then t = {}; h.tiers[tier] = t; h.tier_order[#h.tier_order + 1] = tier end
      t[#t + 1] = el
      h.q = h.q + 1
      total = total + 1
      added = added + 1
    end
  end
  local hosts_became_queued = 0
  for _, hi in ipairs(order) do
    local h = hosts[hi]
    if h.q > h.q0 then
      if h.new_o then redis.call('HSET', h.hk, 'o', h.o) end
      for _, tier in ipairs(h.tier_order) do
        local els = h.tiers[tier]
        -- unpack() is bounded by the Lua C stack: push in chunks.
        for j = 1, #els, 1000 do
          redis.call('RPUSH', qkey(h.host, tier), unpack(els, j, math.min(j + 999, #els)))
        end
      end
      redis.call('HINCRBY', h.hk, 'q', h.q - h.q0)
      if h.q0 <= 0 then hosts_became_queued = hosts_became_queued + 1 end
      sync_ready(h.host, h.hk)
    end
  end
  if added > 0 then stat('queued', added) end
  if hosts_became_queued > 0 then stat('hostsQueued', hosts_became_queued) end
  if seen > 0 then stat('duplicates', seen) end
  if dropped_host > 0 then stat('dropped:host-full', dropped_host) end
  if dropped_total > 0 then stat('dropped:frontier-full', dropped_total) end
  return added, seen, dropped_host + dropped_total
end
