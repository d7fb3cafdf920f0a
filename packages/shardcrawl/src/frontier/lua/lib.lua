-- lib.lua: helpers shared by every script that touches host state. scripts.ts prepends this file
-- to those scripts (and replaces the MAX_TIER placeholder with MAX_TIER from shared/types.ts), so each
-- operation stays ONE atomic script. See keys.ts for the whole keyspace.
--
-- Common ARGV of every script that includes this file:
--   ARGV[1] key prefix P   ARGV[2] now (epoch ms)   ARGV[3] default delay ms   ARGV[4] default concurrency
-- Keys these helpers touch (names computed from P):
--   P h:<host> (hash), P q<tier>:<host> (list), P ready (zset), P stats (hash),
--   P leases (zset), P lease (hash), P lo:<owner> (set: lease ids of one owner), P bf:<i> (Bloom segment strings),
--   P flowcfg (hash, read: flow-control settings written at open), P press (zset: hosts under
--   back-off, scored by pressure), P spill (list: URLs shed in spill mode, drained to disk),
--   P big (zset: shedding victims), P shedlog (list), P flow (hash: node-wide signals),
--   P d:<domain>, P dw:<domain>, P held (domain politeness), P dh (hosts per domain),
--   P pg:<id>, P pqt, P pqb (a page forgotten: forget_page)

-- Per-call values: scripts.ts loads this file once into a Redis function library, so these are
-- set at the start of every call by lib_begin (at the end of this file) from the call's ARGV.
local ARGV, P, NOW, DEFAULT_DELAY, DEFAULT_CONC
local K_READY, K_STATS, K_LEASES, K_LEASE, K_FLOWCFG, K_PRESS, K_SPILL, K_BIG, K_SHEDLOG, K_HELD
local MAX_TIER = __MAX_TIER__
-- P big: hosts with big queues, scored by queued URLs as of their last add_links (stale scores are
-- only used to pick a victim for shedding, and checked against the lists).
-- Hosts enter P big once their queue holds this many URLs (keeps the index small).
local BIG_MIN = 100
-- P big keeps only the BIG_MAX biggest (its top is all shedding needs): ~120 bytes per entry were
-- ~0.3 bytes per queued URL with 10^4 hosts of ~100 URLs. A host trimmed out re-enters once its
-- count has moved by BIG_STEP since it was last written.
local BIG_MAX = 256
-- add_links rewrites a host's score (remembered in its hash as bq) only when its count has moved by
-- more than 1/BIG_STEP of it: a host with a queue to shed from gains links on nearly every page, and
-- rewriting its score each time was two Redis calls per page for an index that only ranks.
local BIG_STEP = 8
-- A host in rate back-off (delay multiplier m > 1) with a crawl delay below this still gets gaps:
-- multiplying a zero delay would not slow anything down.
local BACKOFF_BASE_MS = 100

-- Recently shed or refused URLs, newest first, capped (see shed_note).
local SHEDLOG_MAX = __SHEDLOG_MAX__

local function hkey(host) return P .. 'h:' .. host end
local function qkey(host, tier) return P .. 'q' .. tier .. ':' .. host end
-- Integers as plain decimal strings (never exponent notation) for scores, offsets and fields.
local function int(x) return sformat('%d', x) end
-- Counters (P stats). A script on the per-page path (lease, ack_page) opens a batch and writes its
-- deltas once at the end (stats_flush): one HINCRBY per field instead of one per event, and one
-- HMGET + HSET when three or more fields changed. Inside one atomic script the result is the same.
local STAT_BATCH = nil
local function stat(field, by)
  if STAT_BATCH then STAT_BATCH[field] = (STAT_BATCH[field] or 0) + by
  -- (A Lua number argument is formatted by snprintf("%.17g") in Redis: the common 1 goes as text.)
  else rcall('HINCRBY', K_STATS, field, by == 1 and '1' or int(by)) end
end
local function stats_batch() STAT_BATCH = {} end
local function stats_flush()
  local b = STAT_BATCH
  STAT_BATCH = nil
  if not b then return end
  local names = {}
  for field, d in pairs(b) do
    if d ~= 0 then names[#names + 1] = field end
  end
  if #names < 3 then
    for _, field in ipairs(names) do rcall('HINCRBY', K_STATS, field, int(b[field])) end
    return
  end
  local cur = rcall('HMGET', K_STATS, unpack(names))
  local args = {}
  for i, field in ipairs(names) do
    args[#args + 1] = field
    args[#args + 1] = int((tonumber(cur[i]) or 0) + b[field])
  end
  rcall('HSET', K_STATS, unpack(args))
end

-- The P flowcfg fields the per-page scripts read, in one HMGET per script call (frontier.ts writes
-- them between script calls, never a script).
local FLOWCFG_FIELDS = {'pk', 'floor', 'ai', 'md', 'lat', 'latmin', 'probe', 'mcap', 'gmax', 'affgrace', 'hbud', 'shed'}
local FLOWCFG = nil
local function flowcfg()
  if not FLOWCFG then
    local v = rcall('HMGET', K_FLOWCFG, unpack(FLOWCFG_FIELDS))
    FLOWCFG = {}
    for i, field in ipairs(FLOWCFG_FIELDS) do FLOWCFG[field] = v[i] end
  end
  return FLOWCFG
end

-- Politeness key (P flowcfg pk = "domain"): a host whose field k names its registrable domain
-- shares ONE clock and in-flight limit with the other hosts of that domain. The domain's state is
-- P d:<domain> (n next start, f in flight, c/a/m/t/w/b as a host's, r its representative host,
-- s arrival counter) and at most one host of the domain (r) is in P ready at a time; the others
-- wait in P dw:<domain> (zset, arrival order), so a domain with thousands of hosts is one ready
-- entry and lease stays O(leased). Each lease rotates r to the next waiting host (round robin).
-- Hosts without k (host mode, or not yet keyed) keep their own clock as before.
local PK_MODE = nil
local function domain_mode()
  if PK_MODE == nil then PK_MODE = flowcfg().pk == 'domain' end
  return PK_MODE
end
local function dkey(d) return P .. 'd:' .. d end
local function dwkey(d) return P .. 'dw:' .. d end
-- A host held on its own (field hh: epoch ms; a robots.txt outage's next try, defer_host.lua) while
-- its domain's other hosts go on: in domain mode it leaves its domain's line (the domain clock
-- would otherwise lease it at the domain's pace) and waits in P held, scored by hh, until
-- wake_held puts it back. In host mode its own next start n does the same job.
local function held_until(hk)
  local hh = tonumber(rcall('HGET', hk, 'hh') or '0') or 0
  if hh > NOW then return hh end
  return nil
end
-- The host's politeness domain, or nil when it keeps its own clock. Read once per host and script
-- call (a completion asked it four times): field k is written only by key_hosts_by_domain, which
-- updates PK_OF, and never changes once set.
local PK_OF = {}
local function pk_of(hk)
  if not domain_mode() then return nil end
  local k = PK_OF[hk]
  if k == nil then
    k = rcall('HGET', hk, 'k') or false
    PK_OF[hk] = k
  end
  if k then return k end
  return nil
end
-- The hash that holds the host's clock (n, f, c, a, m ...): its domain's, or its own.
local function clock_key(hk)
  local k = pk_of(hk)
  if k then return dkey(k) end
  return hk
end

-- Effective concurrency: the host's adaptive value a (AIMD, see feedback) when set, under the hard
-- limit (the host's c override, else the crawl's --host-concurrency), never below 1.
local function conc_of(c, a)
  local hard = tonumber(c)
  if not (hard and hard >= 1) then hard = DEFAULT_CONC end
  local ad = tonumber(a)
  if ad then
    local e = math.max(1, math.floor(ad))
    if e < hard then return e end
  end
  return hard
end

-- Gap between request starts: the effective delay (crawl default or the host's larger override,
-- e.g. robots Crawl-delay), times the host's rate back-off multiplier m, spread over its
-- concurrency slots.
local function gap_of(d, c, m)
  local delay = DEFAULT_DELAY
  local o = tonumber(d)
  if o and o > delay then delay = o end
  local mult = tonumber(m)
  if mult and mult > 1 then delay = math.max(delay, BACKOFF_BASE_MS) * mult end
  return math.ceil(delay / c)
end

-- Changes a host's queued count and the crawl gauges (queued URLs, hosts with queued URLs).
local function queued_add(hk, delta)
  local q = rcall('HINCRBY', hk, 'q', delta == -1 and '-1' or int(delta))
  stat('queued', delta)
  if delta > 0 and q == delta then stat('hostsQueued', 1)
  elseif delta < 0 and q <= 0 and q - delta > 0 then stat('hostsQueued', -1) end
  return q
end

-- Puts a host in P ready at max(now, n); an entry already there keeps its place unless n is later.
-- (With n in the future -- a completion has just pushed the clock -- that is one ZADD GT.)
local function ready_at(host, n)
  if n > NOW then
    rcall('ZADD', K_READY, 'GT', int(n), host)
    return
  end
  local s = rcall('ZSCORE', K_READY, host)
  if not s then rcall('ZADD', K_READY, int(NOW), host)
  elseif n > tonumber(s) then rcall('ZADD', K_READY, int(n), host) end
end

-- Puts the host into the ready schedule iff it has queued URLs and a free concurrency slot.
-- A new entry is scored max(now, next); an existing one keeps its place unless next moved later.
-- Domain mode: gives the domain a representative in P ready when it has none and a free slot
-- (the first waiting host that still has queued URLs, scored max(now, domain next)), or takes the
-- representative out (back to the end of the line) when the domain's slots are full.
-- v: the domain's f, n, c, a, r when the caller has just read them (else read here).
local function domain_fill(k, dk, v)
  v = v or rcall('HMGET', dk, 'f', 'n', 'c', 'a', 'r')
  local free = (tonumber(v[1]) or 0) < conc_of(v[3], v[4])
  local n = tonumber(v[2]) or 0
  local rep = v[5]
  local dw = dwkey(k)
  if rep then
    if not free then
      rcall('ZREM', K_READY, rep)
      rcall('HDEL', dk, 'r')
      rcall('ZADD', dw, rcall('HINCRBY', dk, 's', '1'), rep)
    else
      ready_at(rep, n)
    end
    return
  end
  if not free then return end
  -- Waiting entries of hosts that have emptied since are dropped on the way (each at most once).
  for _ = 1, 64 do
    local top = rcall('ZRANGE', dw, 0, 0)
    local h = top[1]
    if not h then return end
    rcall('ZREM', dw, h)
    local hh = held_until(hkey(h))
    if hh then
      rcall('ZADD', K_HELD, int(hh), h)
    elseif (tonumber(rcall('HGET', hkey(h), 'q')) or 0) > 0 then
      rcall('HSET', dk, 'r', h)
      rcall('ZADD', K_READY, int(math.max(NOW, n)), h)
      return
    end
  end
end

-- Domain mode sync_ready: a host with queued URLs is the domain's representative or waits in
-- P dw:<domain>; one without leaves both.
local function sync_domain(host, hk, k)
  local dk = dkey(k)
  local hv = rcall('HMGET', hk, 'q', 'hh')
  local q = tonumber(hv[1]) or 0
  local hh = tonumber(hv[2] or '0') or 0
  if hh <= NOW then hh = nil end
  local v = rcall('HMGET', dk, 'f', 'n', 'c', 'a', 'r')
  local rep = v[5]
  if hh then rcall('ZADD', K_HELD, int(hh), host) end
  if q <= 0 or hh then
    rcall('ZREM', dwkey(k), host)
    if rep == host then
      rcall('ZREM', K_READY, host)
      rcall('HDEL', dk, 'r')
      v[5] = false
    end
  elseif rep ~= host then
    rcall('ZREM', K_READY, host)
    if not rcall('ZSCORE', dwkey(k), host) then
      rcall('ZADD', dwkey(k), rcall('HINCRBY', dk, 's', '1'), host)
    end
  end
  domain_fill(k, dk, v)
end

local function sync_ready(host, hk)
  local k = pk_of(hk)
  if k then return sync_domain(host, hk, k) end
  local v = rcall('HMGET', hk, 'f', 'n', 'c', 'q', 'a')
  local f = tonumber(v[1]) or 0
  local n = tonumber(v[2]) or 0
  local q = tonumber(v[4]) or 0
  if q > 0 and f < conc_of(v[3], v[5]) then
    ready_at(host, n)
  else
    rcall('ZREM', K_READY, host)
  end
end

-- Held hosts whose time has come rejoin the schedule (at most `max` per call; lease.lua calls it).
local function wake_held(max)
  local due = rcall('ZRANGEBYSCORE', K_HELD, '-inf', int(NOW), 'LIMIT', 0, max)
  for _, h in ipairs(due) do
    rcall('ZREM', K_HELD, h)
    local hk = hkey(h)
    rcall('HDEL', hk, 'hh')
    if rcall('EXISTS', hk) == 1 then sync_ready(h, hk) end
  end
end

-- Raises the host's next allowed start to now + gap (never lowers it). d: the host's field d when
-- the caller has read it (false = absent), nil to read it here.
local function push_next(hk, d)
  local k = pk_of(hk)
  if k then
    -- Domain mode: the domain's clock, with the delay override (Crawl-delay) of this host.
    local dk = dkey(k)
    local w = rcall('HMGET', dk, 'n', 'c', 'a', 'm')
    if d == nil then d = rcall('HGET', hk, 'd') end
    local nx = NOW + gap_of(d, conc_of(w[2], w[3]), w[4])
    if nx > (tonumber(w[1]) or 0) then rcall('HSET', dk, 'n', int(nx)) end
    return
  end
  local v = rcall('HMGET', hk, 'n', 'd', 'c', 'a', 'm')
  local nx = NOW + gap_of(v[2], conc_of(v[3], v[4]), v[5])
  if nx > (tonumber(v[1]) or 0) then rcall('HSET', hk, 'n', int(nx)) end
end

-- Per-host AIMD and Retry-After: what a completed request says about its host. Only this host's
-- state changes (signals are routed by origin). Settings come from P flowcfg (frontier.ts writes
-- them at open): floor, ai (additive increase), md (multiplicative decrease), lat (latency
-- factor, 0 = off), latmin (ms), probe (ms), mcap (largest delay multiplier).
-- Host fields: a adaptive concurrency (absent = the hard limit), m delay multiplier (absent = 1),
-- t time of the last decrease, w the limit at which it happened, b baseline latency (ms).
-- ARGV[base] signal: 'ok' | 'backoff' | 'none' | '' (nothing to learn); [base+1] latency ms;
-- [base+2] request start epoch ms; [base+3] host not-before epoch ms (Retry-After; 0 = none).
local function feedback(host, hk0, base)
  local sig = ARGV[base]
  if sig == nil or sig == '' then return end
  -- Domain mode: the domain's clock and limits learn (push_next below resolves the domain itself).
  local hk = clock_key(hk0)
  local nb = tonumber(ARGV[base + 3]) or 0
  if nb > NOW and nb > (tonumber(rcall('HGET', hk, 'n')) or 0) then rcall('HSET', hk, 'n', int(nb)) end
  if sig == 'none' then return end
  local lat = tonumber(ARGV[base + 1]) or 0
  local started = tonumber(ARGV[base + 2]) or 0
  local cfg = flowcfg()
  local floor = tonumber(cfg.floor) or 1
  local ai = tonumber(cfg.ai) or 0.1
  local md = tonumber(cfg.md) or 0.5
  local latf = tonumber(cfg.lat) or 0
  local latmin = tonumber(cfg.latmin) or 1000
  local probe = tonumber(cfg.probe) or 60000
  local mcap = tonumber(cfg.mcap) or 16
  local v = rcall('HMGET', hk, 'a', 'm', 't', 'w', 'b', 'c')
  local hard = tonumber(v[6])
  if not (hard and hard >= 1) then hard = DEFAULT_CONC end
  local a = tonumber(v[1])
  local m = tonumber(v[2]) or 1
  local t = tonumber(v[3]) or 0
  local b = tonumber(v[5])
  if sig == 'ok' and latf > 0 and b and lat > b * latf and lat > latmin then sig = 'slow' end
  if sig == 'ok' then
    if lat > 0 then
      -- Baseline: follows drops at once, rises slowly (a slow spell must not become the norm).
      if not b or lat < b then b = lat else b = b + (lat - b) / 16 end
      rcall('HSET', hk, 'b', int(b))
    end
    if m > 1 then
      m = math.max(1, m - ai)
      if m <= 1 then rcall('HDEL', hk, 'm') else rcall('HSET', hk, 'm', tostring(m)) end
    elseif a and a < hard then
      -- Additive increase (ai per window of a requests), but not back to the limit that failed
      -- until a probe interval has passed since the decrease.
      local cap = hard
      local w = tonumber(v[4])
      if w and NOW - t < probe then cap = math.min(hard, math.max(floor, w - 0.01)) end
      if a < cap then
        a = math.min(cap, a + ai / a)
        rcall('HSET', hk, 'a', tostring(a))
      end
    end
  else
    -- One decrease per window: a request started before the last decrease saw the old limit.
    if started > 0 and started < t then return end
    stat('aimd:decrease', 1)
    if sig == 'slow' then stat('aimd:slow', 1) end
    local cur = a or hard
    if cur > floor then
      rcall('HSET', hk, 'a', tostring(math.max(floor, cur * md)), 'w', int(math.floor(cur)), 't', int(NOW))
    else
      if not a then rcall('HSET', hk, 'a', tostring(floor)) end
      m = math.min(mcap, math.max(1, m) * 2)
      rcall('HSET', hk, 'm', tostring(m), 't', int(NOW))
      -- The larger gap applies from this response on, not only after the next one.
      push_next(hk0)
    end
    a = tonumber(rcall('HGET', hk, 'a'))
  end
  if not a and not v[2] and m <= 1 then return end
  -- The pressure index (metrics: top hosts by pressure): hard limit over current limit, times m.
  local cur = a or hard
  local pressure = (hard / math.max(1, math.min(hard, cur))) * m
  if pressure > 1.0001 then rcall('ZADD', K_PRESS, tostring(pressure), host)
  else rcall('ZREM', K_PRESS, host) end
end

-- "<host>\t<tier>\t<element>" -> host, tier, element
local function split_lease(data)
  local t1 = sfind(data, '\t', 1, true)
  local t2 = sfind(data, '\t', t1 + 1, true)
  return ssub(data, 1, t1 - 1), ssub(data, t1 + 1, t2 - 1), ssub(data, t2 + 1)
end

-- A lease taken by a named owner (a fetcher process) has the id "<seq>@<owner>" and is listed in
-- P lo:<owner> until it ends, so the supervisor can return a dead fetcher's leases at once
-- (release_owner.lua) instead of after the lease TTL. Ids without '@' (no owner) are plain "<seq>".
local function owner_key(owner) return P .. 'lo:' .. owner end
local function forget_owner(id)
  local at = sfind(id, '@', 1, true)
  if at then rcall('SREM', owner_key(ssub(id, at + 1)), id) end
end

-- Ends lease `id` at NOW: removes it, frees the host's slot and starts the politeness gap from
-- now (the end of the response). Returns host, hk, tier, element; or nil when the lease is gone
-- (already reaped) -- then the request still happened, so the hinted host's gap is still applied.
local function release(id, host_hint)
  local data = rcall('HGET', K_LEASE, id)
  if not data then
    local hk = hkey(host_hint)
    if rcall('EXISTS', hk) == 1 then
      push_next(hk)
      sync_ready(host_hint, hk)
    end
    stat('lateCompletions', 1)
    return nil
  end
  rcall('HDEL', K_LEASE, id)
  rcall('ZREM', K_LEASES, id)
  forget_owner(id)
  local host, tier, el = split_lease(data)
  local hk = hkey(host)
  if rcall('HINCRBY', hk, 'f', '-1') < 0 then rcall('HSET', hk, 'f', '0') end
  -- Domain mode: the host's domain and delay override in one read (pk_of, push_next).
  local d = nil
  if domain_mode() and PK_OF[hk] == nil then
    local kd = rcall('HMGET', hk, 'k', 'd')
    PK_OF[hk] = kd[1]
    d = kd[2]
  end
  local ck = clock_key(hk)
  if ck ~= hk and rcall('HINCRBY', ck, 'f', '-1') < 0 then rcall('HSET', ck, 'f', '0') end
  push_next(hk, d)
  return host, hk, tier, el
end

-- Puts an element back at the HEAD of its tier queue (it was taken first, it goes first again).
local function put_back(host, hk, tier, el)
  rcall('LPUSH', qkey(host, tier), el)
  queued_add(hk, 1)
end

-- Deletes a page record of the parse queue (ack or refetch), P pg:<id>, whose body bytes (field z)
-- leave the parse stage's byte count (stats parseBytes). A page queued by a version before z kept
-- its enqueue time and bytes in P pqt and P pqb instead (a crawl resumed across the upgrade).
local function forget_page(id)
  local pk = P .. 'pg:' .. id
  local z = rcall('HGET', pk, 'z')
  rcall('DEL', pk)
  if not z then
    rcall('HDEL', P .. 'pqt', id)
    z = rcall('HGET', P .. 'pqb', id)
    if z then rcall('HDEL', P .. 'pqb', id) end
  end
  local bytes = tonumber(z or '0') or 0
  if bytes > 0 then stat('parseBytes', -bytes) end
end

-- Queue element forms (element.ts): packed (first byte >= 0x80: path+query without its "/" as
-- 7-bit chars whose top bits carry the mark, depth-1 and the left-out last chars); a leading
-- byte \1..\8 (the depth) + path+query without its "/"; "/" + path+query + suffix; or a full
-- URL + suffix. The first two
-- mean the host's origin, no hops, first attempt. Suffix: none (all zero), one byte \1..\8 (the
-- depth), or "\t<depth>[,<hops>[,<attempt>]]". Only queues hold the first two forms: lease data
-- and page records get the long form (el_long), which readers can take as text.

-- The one-byte depth suffix of a queue element (element.ts: depth 1..8 as \1..\8), or nil.
local function depth_byte(el)
  local last = sbyte(el, -1)
  if last and last >= 1 and last <= 8 then return last end
  return nil
end

-- Any element in its long form: "/path+query" + suffix for the two compact forms, others unchanged.
local function el_long(el)
  local b1 = sbyte(el, 1)
  if not b1 then return el end
  if b1 >= 128 then
    -- Packed: clear the top bits (the body is 7-bit ASCII), read them as the stream
    -- mark, depth-1 (3 bits), then 7 bits per left-out char until a 0 group or the end.
    local n = #el
    local body, tops = {}, {}
    for i = 1, n, 200 do
      local t = {sbyte(el, i, math.min(i + 199, n))}
      for j = 1, #t do
        if t[j] >= 128 then t[j] = t[j] - 128; tops[i + j - 1] = 1 end
      end
      body[#body + 1] = schar(unpack(t))
    end
    local d = 1 + 4 * (tops[2] or 0) + 2 * (tops[3] or 0) + (tops[4] or 0)
    local k = 0
    while 4 + 7 * (k + 1) <= n do
      local c = 0
      for t = 1, 7 do c = c * 2 + (tops[4 + 7 * k + t] or 0) end
      if c == 0 then break end
      body[#body + 1] = schar(c)
      k = k + 1
    end
    return '/' .. table.concat(body) .. schar(d)
  end
  if b1 >= 1 and b1 <= 8 then return '/' .. ssub(el, 2) .. schar(b1) end
  return el
end

-- The element with its URL made full (origin prefixed to a relative one): full URL + suffix.
-- Without an origin (none stored) the element is returned in its long form.
local function el_full(el, origin)
  el = el_long(el)
  if origin and ssub(el, 1, 1) == '/' then return origin .. el end
  return el
end

-- A full URL + suffix (spill entries, revisits) as an element for a host whose stored origin is
-- `origin`: the depth-byte form when it has that origin and a one-byte depth suffix (not packed:
-- these paths are rare), "/..." + suffix when it has that origin otherwise, the full URL + suffix when not.
local function el_for(url_suffix, origin)
  if not origin or ssub(url_suffix, 1, #origin + 1) ~= origin .. '/' then return url_suffix end
  local rest = ssub(url_suffix, #origin + 1)
  local d = depth_byte(rest)
  if d then return schar(d) .. ssub(rest, 2, -2) end
  return rest
end

-- "path\t2,0,1" -> "path\t2,0,2"; "path" -> "path\t0,0,1"; "path\2" (one depth byte, element.ts) -> "path\t2,0,1";
-- a compact element -> "/path\t<depth>,0,1"
local function bump_attempt(el)
  el = el_long(el)
  local last = depth_byte(el)
  if last then return ssub(el, 1, -2) .. '\t' .. last .. ',0,1' end
  local base, suf = string.match(el, '^(.-)\t([%d,]+)$')
  if not base then return el .. '\t0,0,1' end
  local d, h, a = string.match(suf .. ',,', '^(%d*),(%d*),(%d*)')
  return base .. '\t' .. (tonumber(d) or 0) .. ',' .. (tonumber(h) or 0) .. ',' .. ((tonumber(a) or 0) + 1)
end

-- Bloom positions travel as 48-bit big-endian integers in one binary argument and are read with
-- string.byte (no Lua string is created per position: string handling, not the bit commands,
-- dominates the cost of a Lua script over many links).
local SEG_KEYS = {}
local function seg_key(s)
  local key = SEG_KEYS[s]
  if not key then key = P .. 'bf:' .. s; SEG_KEYS[s] = key end
  return key
end

-- BITFIELD arguments of one URL's k bits, reused by every URL of the call: {'SET', 'u1', offset,
-- '1', ...} and {'GET', 'u1', offset, ...}; the fixed words are written once. Offsets go in as
-- decimal strings (string.format '%d') and the value as the string '1': Redis turns a Lua number
-- argument into text with snprintf("%.17g"), which was a tenth of redis-server's CPU in a crawl.
local BF_SET, BF_GET, BF_POS, BF_K = {}, {}, {}, 0
local function bf_args(k)
  if BF_K == k then return end
  for i = 0, k - 1 do
    BF_SET[4 * i + 1] = 'SET'; BF_SET[4 * i + 2] = 'u1'; BF_SET[4 * i + 4] = '1'
    BF_GET[3 * i + 1] = 'GET'; BF_GET[3 * i + 2] = 'u1'
  end
  BF_K = k
end

-- Tests (set_bits false) or tests-and-sets the k positions starting at blob[j]. Returns true when
-- at least one bit was clear, i.e. the URL is new. One BITFIELD per segment touched (one, unless
-- the filter spans several segments and the URL's bits fall into more than one).
local function bloom_check(blob, j, k, seg, set_bits)
  bf_args(k)
  local first = true
  for i = 1, k do
    local a, b, c, d, e, f = sbyte(blob, j, j + 5)
    local pos = ((((a * 256 + b) * 256 + c) * 256 + d) * 256 + e) * 256 + f
    BF_POS[i] = pos
    if pos >= seg then first = false end
    j = j + 6
  end
  if first then
    -- Every bit in the first segment (always so for filters up to the segment size, 2^31 bits).
    local old
    if set_bits then
      for i = 1, k do BF_SET[4 * i - 1] = sformat('%d', BF_POS[i]) end
      old = rcall('BITFIELD', seg_key(0), unpack(BF_SET, 1, 4 * k))
    else
      for i = 1, k do BF_GET[3 * i] = sformat('%d', BF_POS[i]) end
      old = rcall('BITFIELD_RO', seg_key(0), unpack(BF_GET, 1, 3 * k))
    end
    for i = 1, k do
      if old[i] == 0 then return true end
    end
    return false
  end
  -- Several segments: one BITFIELD per segment, in the order the positions first meet them.
  local fresh = false
  local done = {}
  for i = 1, k do
    local s = math.floor(BF_POS[i] / seg)
    if not done[s] then
      done[s] = true
      local t, n = {}, 0
      for x = i, k do
        local px = BF_POS[x]
        if math.floor(px / seg) == s then
          if set_bits then
            t[n + 1] = 'SET'; t[n + 2] = 'u1'; t[n + 3] = sformat('%d', px - s * seg); t[n + 4] = '1'; n = n + 4
          else
            t[n + 1] = 'GET'; t[n + 2] = 'u1'; t[n + 3] = sformat('%d', px - s * seg); n = n + 3
          end
        end
      end
      local old
      if set_bits then old = rcall('BITFIELD', seg_key(s), unpack(t, 1, n))
      else old = rcall('BITFIELD_RO', seg_key(s), unpack(t, 1, n)) end
      for _, b in ipairs(old) do
        if b == 0 then
          fresh = true
          if not set_bits then return true end
        end
      end
    end
  end
  return fresh
end

-- Notes a URL shed from a queue (drop mode) or refused for want of room in P shedlog as
-- "<epoch ms>\t<reason>\t<host>\t<url>": a shed URL is in the seen filter yet in no queue and a
-- refused one is in neither, which nothing else records, so `shardcrawl inspect url` reads this to
-- say "shed". `el` is a queue element (path or full URL, maybe with its suffix); `origin` is
-- prefixed to a path. The list is trimmed once per add_links call (shed_log_trim).
local shed_noted = 0
local function shed_note(reason, host, origin, el)
  el = el_full(el, origin)
  local tab = sfind(el, '\t', 1, true)
  if tab then el = ssub(el, 1, tab - 1) end
  if depth_byte(el) then el = ssub(el, 1, -2) end
  rcall('LPUSH', K_SHEDLOG, int(NOW) .. '\t' .. reason .. '\t' .. host .. '\t' .. el)
  shed_noted = shed_noted + 1
end
local function shed_log_trim()
  if shed_noted > 0 then
    rcall('LTRIM', K_SHEDLOG, 0, SHEDLOG_MAX - 1)
    shed_noted = 0
  end
end

-- Sheds one queued URL of `h` with a LOWER priority (a higher tier number) than `tier`, to make
-- room for a better one: the newest element of the host's lowest non-empty tier, from this call's
-- pending pushes first, else from Redis. In spill mode it goes to P spill as
-- "<host>\t<tier>\t<full url + suffix>" (a fetcher drains that list to disk and re-admits it
-- later); else it is dropped. Returns true when something was shed.
local function shed_one(h, tier, spill, reason)
  for t = MAX_TIER, tier + 1, -1 do
    local el
    local pend = h.tiers[t]
    if pend and #pend > 0 then
      el = table.remove(pend)
    elseif rcall('LLEN', qkey(h.host, t)) > 0 then
      el = rcall('RPOP', qkey(h.host, t))
      h.popped = h.popped + 1
    end
    if el then
      if spill then
        rcall('LPUSH', K_SPILL, h.host .. '\t' .. t .. '\t' .. el_full(el, h.o))
      else
        shed_note('shed:' .. reason, h.host, h.o, el)
      end
      h.q = h.q - 1
      return true
    end
  end
  return false
end

-- The frontier's total cap is reached: sheds one URL of a lower priority than `tier` from the host
-- with the biggest queue (P big), which is where a hot domain's low-value URLs pile up. A host
-- of this call is shed through shed_one (its pending state is in `byname`). Returns 'local'
-- (counted by the caller), 'remote' (gauges already updated) or nil.
local function shed_biggest(tier, spill, byname)
  local top = rcall('ZREVRANGE', K_BIG, 0, 0)
  local vh = top[1]
  if not vh then return nil end
  local h = byname[vh]
  if h then
    if shed_one(h, tier, spill, 'frontier-full') then return 'local' end
    return nil
  end
  local vk = hkey(vh)
  for t = MAX_TIER, tier + 1, -1 do
    local el = rcall('RPOP', qkey(vh, t))
    if el then
      local o = rcall('HGET', vk, 'o')
      if spill then
        rcall('LPUSH', K_SPILL, vh .. '\t' .. t .. '\t' .. el_full(el, o))
      else
        shed_note('shed:frontier-full', vh, o, el)
      end
      local q = queued_add(vk, -1)
      if q >= BIG_MIN then rcall('ZADD', K_BIG, q, vh) else rcall('ZREM', K_BIG, vh) end
      sync_ready(vh, vk)
      return 'remote'
    end
  end
  -- Nothing of lower priority there: its score is stale or its URLs are as good; drop it from the index.
  rcall('ZREM', K_BIG, vh)
  return nil
end

-- Adds links whose parameters start at ARGV[base] (built by links.ts packLinks):
--   ARGV[base]   Bloom segment size in bits      ARGV[base+1] max queued per host (0 = none)
--   ARGV[base+2] max queued in total (0 = none)   ARGV[base+3] Bloom layout "k" or "kbB" (bloom_lib.lua bf_layout)
--   ARGV[base+4] binary records, one per link: host index u16, origin index u16 (65535 = none),
--                tier u8, element bytes u16, the Bloom record: k positions as u48, or (blocked)
--                a u48 block index and k u8 offsets (all big-endian)
--   ARGV[base+5] H, ARGV[base+6] O
--   ARGV[base+7] text: H host names and O origins, each ended by "\n", then one element per link
--                back to back (lengths in the records): the compact form or "/"+path+query+suffix
--                when the link has an origin, else full URL+suffix (element.ts).
--   ARGV[base+8] hosts admitted per registrable domain (0 or absent = no cap); ARGV[base+9] the
--                registrable domain of each of the H hosts, each ended by "\n" (only with a cap).
--                A host never admitted before whose domain holds that many hosts (P dh) admits
--                nothing (counted dropped:domain-hosts; its links stay out of the filter).
-- Also reads P flowcfg hbud (per-host page budget: URLs ever admitted, host field A; 0 = none)
-- and shed ("drop" | "spill"), and P flow tcap (a lower total cap set by the memory governor).
-- For each link: Bloom test-and-set; if new and there is room, append it to its host/tier queue,
-- create the host state if new, and put the host into the ready schedule when it has a free slot.
-- When the host's cap is reached, a queued URL of the same host with a lower priority is shed to
-- make room (shed_one); when the frontier's total cap is reached, one of the host with the biggest
-- queue (shed_biggest); failing that the new link is refused: it is tested
-- only (its bits stay clear), so it can come back later. A host past its page budget admits nothing.
-- Host state is read once per host per call and queue pushes / counters are written once per
-- host, so a page's links cost about one Bloom read each (plus a write when new) and a few calls per host.
-- Returns added, seen (already in the filter), dropped (no room, or host budget spent).
local function add_links(base)
  -- No links (most pages of a crawl with host locality: the parser's seen cache knew them all).
  if ARGV[base + 4] == '' then return 0, 0, 0 end
  local seg = tonumber(ARGV[base])
  local max_host = tonumber(ARGV[base + 1])
  local max_total = tonumber(ARGV[base + 2])
  local k, brec = bf_layout(ARGV[base + 3])
  local blob = ARGV[base + 4]
  local nh = tonumber(ARGV[base + 5])
  local no = tonumber(ARGV[base + 6])
  local text = ARGV[base + 7]
  -- Host names (names[1..nh]) and origins (names[nh+1..nh+no]); elements start at `pos`.
  local names, pos = {}, 1
  for i = 1, nh + no do
    local e = sfind(text, '\n', pos, true)
    names[i] = ssub(text, pos, e - 1)
    pos = e + 1
  end
  local rec = 7 + brec
  local dcap = tonumber(ARGV[base + 8] or '0') or 0
  local doms, dcount = nil, {}
  if dcap > 0 then
    doms = {}
    local dt, dp = ARGV[base + 9], 1
    for i = 1, nh do
      local e = sfind(dt, '\n', dp, true)
      doms[i] = ssub(dt, dp, e - 1)
      dp = e + 1
    end
  end
  local dropped_domain = 0
  local hbud = tonumber(flowcfg().hbud) or 0
  local spill = flowcfg().shed == 'spill'
  local tcap = tonumber(rcall('HGET', P .. 'flow', 'tcap') or '0') or 0
  if tcap > 0 and (max_total <= 0 or tcap < max_total) then max_total = tcap end
  local total = tonumber(rcall('HGET', K_STATS, 'queued') or '0')
  if STAT_BATCH and STAT_BATCH.queued then total = total + STAT_BATCH.queued end
  local added, seen, dropped_host, dropped_total, dropped_budget, shed, shed_remote = 0, 0, 0, 0, 0, 0, 0
  local hosts, order, byname = {}, {}, {}
  -- The seen filter's common case (bloom_lib.lua seen0).
  local fast0 = seen0_begin(P, k, seg)
  for n = 1, #blob / rec do
    local j = (n - 1) * rec + 1
    local h1, h2, o1, o2, tier, l1, l2 = sbyte(blob, j, j + 6)
    local el_at = pos
    pos = pos + l1 * 256 + l2
    local hi = h1 * 256 + h2 + 1
    local h = hosts[hi]
    if not h then
      local host = names[hi]
      local hk = hkey(host)
      local v = rcall('HMGET', hk, 'q', 'o', 'A', 'k', 'bq')
      h = { host = host, hk = hk, q0 = tonumber(v[1]) or 0, o = v[2], new_o = false, tiers = {}, tier_order = {},
            A = tonumber(v[3]) or 0, A0 = tonumber(v[3]) or 0, popped = 0, bq = tonumber(v[5]) or 0 }
      -- Its politeness domain, for sync_ready and key_hosts_by_domain (lib.lua pk_of).
      if v[4] then PK_OF[hk] = v[4] end
      h.q = h.q0
      if doms and v[1] == false then
        -- A host never admitted: it takes a place among its domain's hosts, if one is left.
        local d = doms[hi]
        local c = dcount[d]
        if c == nil then c = tonumber(rcall('HGET', P .. 'dh', d) or '0') or 0 end
        if c >= dcap then h.domain_out = true else h.dom = d; c = c + 1 end
        dcount[d] = c
      end
      hosts[hi] = h
      byname[host] = h
      order[#order + 1] = hi
    end
    local budget_out = (hbud > 0 and h.A >= hbud) or h.domain_out == true
    local host_full = max_host > 0 and h.q >= max_host
    local total_full = max_total > 0 and total >= max_total
    local room = not (host_full or total_full or budget_out)
    local fresh
    if fast0 then fresh = seen0(blob, j + 7, room) else fresh = seen_check(P, blob, j + 7, k, seg, room, bloom_check) end
    if fresh and not room and not budget_out then
      -- Shed a worse URL (of this host, or of the biggest host when the whole frontier is full):
      -- the new one takes its place.
      local how = nil
      if host_full then
        if shed_one(h, tier, spill, 'host-full') then how = 'local' end
      else
        how = shed_biggest(tier, spill, byname)
      end
      if how then
        if how == 'local' then shed = shed + 1 else shed_remote = shed_remote + 1 end
        total = total - 1
        seen_check(P, blob, j + 7, k, seg, true, bloom_check)
        room = not (max_host > 0 and h.q >= max_host)
        if not room then
          -- Room was made elsewhere but this host is full too: fall back to its own worst URL.
          if shed_one(h, tier, spill, 'host-full') then shed = shed + 1; total = total - 1; room = true end
        end
      end
    end
    if not fresh then
      seen = seen + 1
    elseif h.domain_out then
      dropped_domain = dropped_domain + 1
    elseif budget_out then
      dropped_budget = dropped_budget + 1
    elseif not room then
      -- Refused for want of room (its bits stay clear, so it may come back): noted for inspect.
      -- The host page budget is not noted: inspect recomputes it from the host's counter.
      if host_full then dropped_host = dropped_host + 1 else dropped_total = dropped_total + 1 end
      local oi = o1 * 256 + o2
      shed_note(host_full and 'dropped:host-full' or 'dropped:frontier-full', h.host, oi ~= 65535 and names[nh + oi + 1] or nil, ssub(text, el_at, pos - 1))
    else
      local el = ssub(text, el_at, pos - 1)
      local oi = o1 * 256 + o2
      if oi ~= 65535 then
        local origin = names[nh + oi + 1]
        if not h.o then h.o = origin; h.new_o = true end
        if h.o ~= origin then el = el_full(el, origin) end
      end
      local t = h.tiers[tier]
      if not t then t = {}; h.tiers[tier] = t; h.tier_order[#h.tier_order + 1] = tier end
      t[#t + 1] = el
      h.q = h.q + 1
      h.A = h.A + 1
      total = total + 1
      added = added + 1
    end
  end
  local hosts_became_queued = 0
  local big_added = false
  for _, hi in ipairs(order) do
    local h = hosts[hi]
    if h.A > h.A0 or h.popped > 0 then
      if h.new_o then rcall('HSET', h.hk, 'o', h.o) end
      if h.dom and h.A > h.A0 then rcall('HINCRBY', P .. 'dh', h.dom, '1') end
      for _, tier in ipairs(h.tier_order) do
        local els = h.tiers[tier]
        -- unpack() is bounded by the Lua C stack: push in chunks.
        for j = 1, #els, 1000 do
          rcall('RPUSH', qkey(h.host, tier), unpack(els, j, math.min(j + 999, #els)))
        end
      end
      -- P big's score, and bq with it (0: not in P big).
      local bq = nil
      if h.q >= BIG_MIN then
        local step = h.bq / BIG_STEP
        if h.bq == 0 or h.q0 < BIG_MIN or h.q > h.bq + step or h.q < h.bq - step then
          rcall('ZADD', K_BIG, int(h.q), h.host)
          big_added = true
          bq = int(h.q)
        end
      elseif h.q0 >= BIG_MIN then
        rcall('ZREM', K_BIG, h.host)
        if h.bq ~= 0 then bq = '0' end
      end
      -- (q was read by this script, so it is written absolute, with A and bq in the same command.)
      local new_a = hbud > 0 and h.A > h.A0
      if h.q ~= h.q0 or new_a or bq then
        local w = {'q', int(h.q)}
        if new_a then w[3] = 'A'; w[4] = int(h.A) end
        if bq then w[#w + 1] = 'bq'; w[#w + 1] = bq end
        rcall('HSET', h.hk, unpack(w))
      end
      if h.q0 <= 0 and h.q > 0 then hosts_became_queued = hosts_became_queued + 1 end
      -- Every script leaves a host's schedule entry (ready, or its domain's) consistent with its
      -- queue: a host that had URLs queued and lost none here needs no new entry.
      if h.q0 <= 0 or h.q <= 0 or h.popped > 0 then sync_ready(h.host, h.hk) end
    end
  end
  if big_added and rcall('ZCARD', K_BIG) > BIG_MAX then rcall('ZREMRANGEBYRANK', K_BIG, 0, -BIG_MAX - 1) end
  if added - shed ~= 0 then stat('queued', added - shed) end
  if hosts_became_queued > 0 then stat('hostsQueued', hosts_became_queued) end
  if seen > 0 then stat('duplicates', seen) end
  if dropped_host > 0 then stat('dropped:host-full', dropped_host) end
  if dropped_total > 0 then stat('dropped:frontier-full', dropped_total) end
  if dropped_budget > 0 then stat('dropped:host-budget', dropped_budget) end
  if dropped_domain > 0 then stat('dropped:domain-hosts', dropped_domain) end
  if shed + shed_remote > 0 then stat(spill and 'spilled' or 'shed', shed + shed_remote) end
  shed_log_trim()
  seen_flush()
  return added, seen, dropped_host + dropped_total + dropped_budget + dropped_domain
end

-- Domain politeness for the hosts of one add_links call (add_links.lua: seeds and inbox links;
-- ack_page.lua: links of a parsed page). `map` is "pk\n" then "<host>\t<domain>\n" per host
-- (politeness-key.ts); anything else is ignored. A host gets its domain (field k) once, then rejoins
-- the schedule through it, so every host of a domain -- however it was found -- shares one clock.
local function key_hosts_by_domain(map)
  if not (map and ssub(map, 1, 3) == 'pk\n' and domain_mode()) then return end
  for host, dom in string.gmatch(map, '([^\t\n]+)\t([^\n]+)\n') do
    local hk = hkey(host)
    -- (A host whose domain add_links read is keyed already: k never changes once set.)
    if not PK_OF[hk] and rcall('EXISTS', hk) == 1 and rcall('HSETNX', hk, 'k', dom) == 1 then
      PK_OF[hk] = dom
      rcall('ZREM', K_READY, host)
      sync_ready(host, hk)
    end
  end
end

-- Starts a call: the call's common ARGV and fresh per-call state (the library's locals outlive a call).
local function lib_begin(argv)
  ARGV = argv
  if P ~= argv[1] then
    P = argv[1]
    K_READY = P .. 'ready'
    K_STATS = P .. 'stats'
    K_LEASES = P .. 'leases'
    K_LEASE = P .. 'lease'
    K_FLOWCFG = P .. 'flowcfg'
    K_PRESS = P .. 'press'
    K_SPILL = P .. 'spill'
    K_BIG = P .. 'big'
    K_SHEDLOG = P .. 'shedlog'
    K_HELD = P .. 'held'
    SEG_KEYS = {}
  end
  NOW = tonumber(argv[2])
  DEFAULT_DELAY = tonumber(argv[3])
  DEFAULT_CONC = tonumber(argv[4])
  STAT_BATCH, FLOWCFG, PK_MODE, PK_OF, shed_noted = nil, nil, nil, {}, 0
  bloom_begin(P)
end
