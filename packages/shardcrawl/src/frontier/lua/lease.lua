-- lease.lua: leases up to N URLs at time now, one per due host, oldest ready score first; each
-- from the host's lowest non-empty tier (FIFO within a tier). Prepended with lib.lua.
-- Politeness: every lease sets the host's next start to now + delay/c (c = concurrency). With
-- concurrency 1 the host leaves the ready schedule until the lease completes; with c > 1 and a
-- free slot it stays, rescheduled at now + delay/c. A host is never leased
-- before its next allowed time (its score) nor beyond its concurrency.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] max leases; [6] lease TTL ms;
--       [7] max pages budget (0 = none; counts fetched + failed + active leases);
--       [8] parse queue bound (0 = none; no leasing while the parse queue is at or above it)
--       [9] parse stage byte bound (0 = none; no leasing while the bodies queued or being parsed,
--           stats parseBytes, are at or above it)
--       [10] owner ("" = none): the leasing fetcher's id; ids become "<seq>@<owner>" and are listed
--           in P lo:<owner>, so a dead owner's leases can be returned at once (release_owner.lua)
-- Global signals, checked before any host (they describe us, not a site):
--   P flow stop   set when our upstream quota is exhausted: no leasing at all ({'quota', message})
--   P flow gnb    epoch ms before which our upstream plan asked us to pause ({'upstream'})
--   P flow mem    epoch ms before which the memory governor holds leasing: Redis would pass its budget ({'memory'})
--   P flow disk   set while the node's output disk is full (ENOSPC): no leasing ({'disk-full', message});
--                 cleared by the supervisor once a probe write succeeds again (node/disk-pause.ts)
--   P flowcfg gmax  global concurrency cap (0 = none): active leases never exceed it ({'global-full'})
--   P flow storage  epoch ms until which a parser's write buffer is full: a full parse queue then
--                   means slow storage ({'storage'}), not slow parsing ({'parse-full'})
-- Touches: P aff, P affv (host affinity, below), P ready, P h:<host>, P d:<domain>, P dw:<domain>, P held (domain politeness, lib.lua), P q<tier>:<host>, P leases, P lease, P lo:<owner>, P leaseseq, P stats, P pq (read),
--          P flow (read), P flowcfg (read)
-- Returns: {status, id, host, tier, url-with-suffix, expiresAt, id, ...};
--          status ok | budget | parse-full | storage | global-full | upstream | quota | disk-full
--          (quota and disk-full then {status, message})
local want = tonumber(ARGV[5])
local owner = ARGV[10] or ''
local ttl = tonumber(ARGV[6])
local max_pages = tonumber(ARGV[7])
local parse_max = tonumber(ARGV[8])
-- Host affinity (below): a call that is then blocked still says its fetcher is alive and asking,
-- so that its hosts wait for it once the block clears rather than go to whoever asks first.
local aff_grace = tonumber(flowcfg().affgrace or '') or 1000
local my_slot = nil
if owner ~= '' and aff_grace > 0 then my_slot = string.match(owner, '^f(%d+)%.') or owner end
local slot_added = my_slot ~= nil and rcall('HSET', P .. 'aff', my_slot, int(NOW)) == 1
local flow = rcall('HMGET', P .. 'flow', 'stop', 'gnb', 'disk', 'storage', 'mem')
if flow[1] then return {'quota', flow[1]} end
if flow[3] then return {'disk-full', flow[3]} end
if (tonumber(flow[2]) or 0) > NOW then return {'upstream'} end
if (tonumber(flow[5]) or 0) > NOW then return {'memory'} end
-- A full parse stage is routed to its cause: storage when a parser says its write buffer is full.
local parse_full = (tonumber(flow[4]) or 0) > NOW and 'storage' or 'parse-full'
if parse_max > 0 and rcall('LLEN', P .. 'pq') >= parse_max then return {parse_full} end
local parse_bytes_max = tonumber(ARGV[9] or '0') or 0
if parse_bytes_max > 0 and (tonumber(rcall('HGET', K_STATS, 'parseBytes') or '0') or 0) >= parse_bytes_max then return {parse_full} end
local gmax = tonumber(flowcfg().gmax or '0') or 0
if gmax > 0 then
  local room = gmax - rcall('ZCARD', K_LEASES)
  if room <= 0 then return {'global-full'} end
  if room < want then want = room end
end
if max_pages > 0 then
  local s = rcall('HMGET', K_STATS, 'fetched', 'failed')
  local used = (tonumber(s[1]) or 0) + (tonumber(s[2]) or 0) + rcall('ZCARD', K_LEASES)
  if used >= max_pages then return {'budget'} end
  if max_pages - used < want then want = max_pages - used end
end
local out = {'ok'}
if want <= 0 then return out end
local leased = 0
-- Lease data of this call's leases, in order ("<host>\t<tier>\t<element>"), and their expiry.
local taken = {}
local exp_s = int(NOW + ttl)
stats_batch()
wake_held(32)
-- Host affinity: a politeness key (the host, or its registrable domain in domain mode) is leased
-- by one fetcher, chosen by rendezvous hashing of the key over the live fetcher slots, so that
-- fetcher's DNS cache, TLS sessions and compiled robots.txt serve every visit to it whatever the
-- delay. Slots are the fetcher indices (owner "f<index>.<pid>"): a restarted fetcher keeps its
-- keys, and a slot that dies or is added moves only its own keys. Work-conserving: the keys of a
-- slot that has made no lease call within the grace (dead, stopped, or saturated: a fetcher with
-- no free request slot does not ask) are taken by any fetcher. How long a key has been due does
-- not matter: a backlog (seeds at start, a resumed crawl, a loaded machine) stays with its owners
-- as long as they keep asking. The cost is bounded: at most want x live slots (capped) due
-- entries are read, each owner cached per key and slot-list version.
--   P aff      hash    slot -> last time that fetcher asked (epoch ms): a lease call, its start-up
--                      join, or its heartbeat while it has a free request slot (Frontier.joinAffinity);
--                      slots silent for AFF_STALE_MS are dropped, so a dead fetcher's keys move to the others
--   P affv     string  version of the live slot list; P h:<host> / P d:<domain> cache their
--                      owner under ao and the version it was computed for under av
--   P flowcfg affgrace  grace in ms (Frontier.open: a quarter of the delay, 1-15 s; 0 = no affinity)
local AFF_STALE_MS = 60000
local live, live_v = {}, '0'
-- Slots that made a lease call within the grace: their keys wait for them.
local asking = {}
if my_slot then
  local changed = slot_added
  local all = rcall('HGETALL', P .. 'aff')
  for i = 1, #all, 2 do
    local last = tonumber(all[i + 1]) or 0
    if all[i] ~= my_slot and last < NOW - AFF_STALE_MS then
      rcall('HDEL', P .. 'aff', all[i])
      changed = true
    else
      live[#live + 1] = all[i]
      if last >= NOW - aff_grace then asking[all[i]] = true end
    end
  end
  if changed then live_v = tostring(rcall('INCR', P .. 'affv'))
  else live_v = rcall('GET', P .. 'affv') or '0' end
  if #live < 2 then my_slot = nil end
end
-- The slot that owns a ready host's politeness key, cached in the key's clock hash.
local function aff_owner(host)
  local hk = hkey(host)
  local dom = pk_of(hk)
  local ck = dom and dkey(dom) or hk
  local c = rcall('HMGET', ck, 'ao', 'av')
  if c[1] and c[2] == live_v then return c[1] end
  local key = dom or host
  local best, best_h = nil, -1
  for _, s in ipairs(live) do
    local h = tonumber(string.sub(redis.sha1hex(key .. '#' .. s), 1, 12), 16)
    if h > best_h then best, best_h = s, h end
  end
  rcall('HSET', ck, 'ao', best, 'av', live_v)
  return best
end
local hosts
if my_slot then
  hosts = {}
  local cand = rcall('ZRANGEBYSCORE', K_READY, '-inf', int(NOW), 'LIMIT', 0, math.min(want * #live, want + 1024))
  for i = 1, #cand do
    if #hosts >= want then break end
    local o = aff_owner(cand[i])
    if o == my_slot or not asking[o] then hosts[#hosts + 1] = cand[i] end
  end
else
  hosts = rcall('ZRANGEBYSCORE', K_READY, '-inf', int(NOW), 'LIMIT', 0, want)
end
for _, host in ipairs(hosts) do
  local hk = hkey(host)
  local v = rcall('HMGET', hk, 'o', 'f', 'n', 'd', 'c', 'a', 'm', 'hh', 'k')
  -- Domain mode (lib.lua domain_fill): the clock, limits and slots are the domain's (P d:<domain>),
  -- and only the domain's representative may lease. (Field k read here saves pk_of its HGET.)
  if PK_OF[hk] == nil then PK_OF[hk] = v[9] end
  local dom = pk_of(hk)
  local dk = dom and dkey(dom)
  local skip = false
  if dom then
    local w = rcall('HMGET', dk, 'f', 'n', 'c', 'a', 'm', 'r')
    local held = (tonumber(v[8] or '0') or 0) > NOW
    if w[6] ~= host or tonumber(w[1] or '0') >= conc_of(w[3], w[4]) or held then
      sync_domain(host, hk, dom)
      skip = true
    end
    v = {v[1], w[1], w[2], v[4], w[3], w[4], w[5]}
  end
  local n = tonumber(v[3]) or 0
  if skip then
    -- (not this host's turn: it waits in P dw:<domain>)
  elseif n > NOW then
    -- Repair: a ready score must never be earlier than the host's next allowed start.
    rcall('ZADD', K_READY, int(n), host)
  else
    local el, tier = nil, 0
    for t = 0, MAX_TIER do
      el = rcall('LPOP', qkey(host, t))
      if el then tier = t; break end
    end
    if not el then
      -- Repair: the host had nothing queued after all.
      local q = tonumber(rcall('HGET', hk, 'q') or '0')
      if q > 0 then queued_add(hk, -q) end
      rcall('ZREM', K_READY, host)
      if dom then sync_domain(host, hk, dom) end
    else
      local q = queued_add(hk, -1)
      local f = rcall('HINCRBY', hk, 'f', '1')
      if dom then f = rcall('HINCRBY', dk, 'f', '1') end
      local c = conc_of(v[5], v[6])
      -- Lease data (and the page record made from it) keeps the long, text-only form of the element.
      el = el_long(el)
      taken[#taken + 1] = host .. '\t' .. tier .. '\t' .. el
      -- Every start pushes the next one out by delay/c, so any c+1 starts span at least the delay
      -- even when the host leaves the schedule now (slots full) and a completion re-readies it.
      local nx = NOW + gap_of(v[4], c, v[7])
      if dom then
        -- The domain's next start; this host goes to the end of the domain's line (round robin).
        rcall('HSET', dk, 'n', int(nx))
        rcall('ZREM', K_READY, host)
        if q > 0 and f >= c and rcall('EXISTS', dwkey(dom)) == 0 then
          -- Nobody else waits (a one-host domain, the common case): the host stays the
          -- representative while the slots are full, out of P ready, and the completion's
          -- domain_fill readies it again -- the same outcome as going through the empty line,
          -- without its ~10 calls. A host that joins meanwhile sends it to the end of the line
          -- (domain_fill: a representative without a free slot), so the clock stays shared.
        else
          rcall('HDEL', dk, 'r')
          if q > 0 then rcall('ZADD', dwkey(dom), rcall('HINCRBY', dk, 's', '1'), host) end
          if f < c then domain_fill(dom, dk) end
        end
      else
      rcall('HSET', hk, 'n', int(nx))
      if q <= 0 or f >= c then
        rcall('ZREM', K_READY, host)
      else
        rcall('ZADD', K_READY, int(nx), host)
      end
      end
      -- The full URL + suffix (element.ts decodeElement reads it); the id is filled in below.
      out[#out + 1] = false
      out[#out + 1] = host
      out[#out + 1] = tostring(tier)
      out[#out + 1] = el_full(el, v[1])
      out[#out + 1] = exp_s
      leased = leased + 1
    end
  end
end
if leased > 0 then
  -- The call's leases are recorded together: one id counter step, and one write each to the lease
  -- set, the lease data and the owner's list (a lease costs ~13 Redis calls; these were 4 of them).
  local last = rcall('INCRBY', P .. 'leaseseq', leased)
  local ids, exps, data = {}, {}, {}
  for i = 1, leased do
    local id = int(last - leased + i)
    if owner ~= '' then id = id .. '@' .. owner end
    ids[i] = id
    out[5 * i - 3] = id
    exps[2 * i - 1] = exp_s; exps[2 * i] = id
    data[2 * i - 1] = id; data[2 * i] = taken[i]
  end
  -- (unpack() is bounded by the Lua C stack: a call may lease up to 10,000, so chunks of 1,000.)
  for j = 1, leased, 1000 do
    local k = math.min(j + 999, leased)
    if owner ~= '' then rcall('SADD', owner_key(owner), unpack(ids, j, k)) end
    rcall('ZADD', K_LEASES, unpack(exps, 2 * j - 1, 2 * k))
    rcall('HSET', K_LEASE, unpack(data, 2 * j - 1, 2 * k))
  end
  stat('leased', leased)
end
stats_flush()
return out
