-- bloom_lib.lua: the seen filter grows (a scalable Bloom filter, Almeida et al. 2007). scripts.ts
-- prepends it to every script that tests or sets the filter (before lib.lua). See bloom.ts.
-- Stage 0 is the filter sized at init; its k positions come from the client (BloomHasher). When
-- the insertions into the newest stage reach its capacity, the next planned stage is allocated
-- (twice the URLs at a tenth of the rate, P bf:plan). A URL is seen when any stage holds it and is
-- inserted into the newest stage only. A later stage's positions are derived here from the URL's
-- stage-0 positions (SHA-1 of the stage number and those bytes, then enhanced double hashing as in
-- bloom-filters), so the client's hashing and the link records stay the same as the filter grows.
-- Keys (names computed from the prefix): P bf:grow (hash: s stages in use, c insertions into the
-- newest, cap its capacity, c<i> insertions of an earlier stage), P bf:plan (string
-- "m,k,n;m,k,n;..." per stage), P bf<i>:<seg> (segments of stage i >= 1), P stats (bloom:grown,
-- counted when a stage is added).
-- A crawl without P bf:grow (a filter no code has planned yet) behaves as a fixed filter.
-- Two layouts (bloom.ts): classic (k u48 positions per URL, bits flipped with BITFIELD) and
-- blocked (a u48 block index and k u8 offsets: one GETRANGE per stage, one SETRANGE for a new URL).
-- A blocked stage's plan entry carries its block size ("m,k,n,B"); a later stage's block and
-- offsets come from SHA-1 of the stage number and the URL's stage-0 record.

-- Library functions as locals: an upvalue read instead of two table lookups (the globals, then
-- string) per call, on paths that run once per link. Globals cannot be read while a function
-- library loads: bloom_begin sets these at the start of each call.
local sbyte, schar, sformat, ssub, sfind, srep, sunpack, spack, rcall

local BF = nil
-- Bits per stage-0 block of this call's records (0: classic), set by bf_layout.
local BF_BLOCK = 0

-- The layout argument: "7" (classic, k = 7) or "6b256" (blocked, k = 6, 256-bit blocks).
-- Returns k and the bytes of one URL's record.
local function bf_layout(arg)
  local k, b = string.match(arg, '^(%d+)b(%d+)$')
  if k then
    BF_BLOCK = tonumber(b)
    return tonumber(k), 6 + tonumber(k)
  end
  BF_BLOCK = 0
  k = tonumber(arg)
  return k, 6 * k
end

local function bf_state(P)
  if not BF then
    local v = rcall('HMGET', P .. 'bf:grow', 's', 'c', 'cap')
    local c = tonumber(v[2]) or 0
    BF = { P = P, tracked = v[1] ~= false, s = tonumber(v[1]) or 1, c = c, c0 = c, cap = tonumber(v[3]) or 0, stages = nil }
  end
  return BF
end

-- The planned stages, 1-based (stages[1] is stage 0), parsed once per script call.
local function bf_stages(bf)
  if not bf.stages then
    bf.stages = {}
    local plan = rcall('GET', bf.P .. 'bf:plan')
    if plan then
      for m, k, n, b in string.gmatch(plan, '(%d+),(%d+),(%d+),?(%d*)') do
        bf.stages[#bf.stages + 1] = { m = tonumber(m), k = tonumber(k), n = tonumber(n), b = tonumber(b) or 0 }
      end
    end
  end
  return bf.stages
end

-- Allocates the next stage up front (no reallocations while it fills). Without a planned next
-- stage the newest one keeps filling (its rate climbs: the metrics warn).
local function bf_grow(bf, seg)
  local nxt = bf_stages(bf)[bf.s + 1]
  if not nxt then bf.cap = 0; return end
  local i = bf.s
  local x = 0
  while x * seg < nxt.m do
    local key = bf.P .. 'bf' .. i .. ':' .. x
    if rcall('EXISTS', key) == 0 then rcall('SETBIT', key, sformat('%d', math.min(seg, nxt.m - x * seg) - 1), 0) end
    x = x + 1
  end
  rcall('HSET', bf.P .. 'bf:grow', 'c' .. (i - 1), sformat('%d', bf.c), 's', i + 1, 'c', 0, 'cap', sformat('%d', nxt.n))
  rcall('HINCRBY', bf.P .. 'stats', 'bloom:grown', 1)
  bf.s, bf.c, bf.c0, bf.cap = i + 1, 0, 0, nxt.n
end

-- Positions of stage i (>= 1) of the URL whose stage-0 positions are blob[j .. j+6k-1]. The
-- 48-bit halves of the digest and a + n*b + (n^3-n)/6 stay exact in doubles (below 2^53).
local function bf_positions(blob, j, k, i, st)
  local hex = redis.sha1hex(i .. ':' .. ssub(blob, j, j + 6 * k - 1))
  local m = st.m
  local a = tonumber(ssub(hex, 1, 12), 16) % m
  local b = tonumber(ssub(hex, 13, 24), 16) % m
  local pos = {}
  for n = 0, st.k - 1 do pos[n + 1] = (a + n * b + math.floor((n * n * n - n) / 6)) % m end
  return pos
end

-- Tests or tests-and-sets positions of stage i; one BITFIELD per segment touched. True when a bit was clear.
-- Offsets and values go in as strings (lib.lua bloom_check says why).
local function bf_stage_bits(P, i, pos, seg, set_bits)
  local groups, order = {}, {}
  for _, p in ipairs(pos) do
    local s = math.floor(p / seg)
    local g = groups[s]
    if not g then g = {}; groups[s] = g; order[#order + 1] = s end
    local n = #g
    if set_bits then
      g[n + 1] = 'SET'; g[n + 2] = 'u1'; g[n + 3] = sformat('%d', p - s * seg); g[n + 4] = '1'
    else
      g[n + 1] = 'GET'; g[n + 2] = 'u1'; g[n + 3] = sformat('%d', p - s * seg)
    end
  end
  local fresh = false
  for _, s in ipairs(order) do
    local old = rcall(set_bits and 'BITFIELD' or 'BITFIELD_RO', P .. 'bf' .. i .. ':' .. s, unpack(groups[s]))
    for _, b in ipairs(old) do
      if b == 0 then
        fresh = true
        if not set_bits then return true end
      end
    end
  end
  return fresh
end

-- A later stage's offsets (reused table).
local BF_OFF = {}
-- Segment key names by stage (1 = stage 0) and segment number.
local BF_KEYS = {}

-- Tests (set_bits false) or tests-and-sets offsets offs[o0 + 1 .. o0 + k] of the block of `nb` bytes at byte
-- `at` of `key`: one GETRANGE, and for a new URL one SETRANGE of the whole block (its start's text is
-- the GETRANGE's: a string.format less); a URL found seen writes nothing. True when a bit was clear.
-- Bits are tested with arithmetic (v % 2m >= m), not bit.band: the VM's % costs no C call.
-- The block is read as big-endian 32-bit words by one struct call and written back by another; a
-- 256-bit block (stage 0, every link) into a reused table: a new table of 32 bytes per URL, its
-- garbage and the unpack into string.char cost ~3.5 k redis-server instructions a link more
-- (callgrind). A bigger block (a later stage) gets a table of its own.
local BF_W = {}
-- 2^(31 - b): the mask of bit b of a big-endian 32-bit word (Redis numbers a string's bits from the
-- top bit of byte 0).
local BF_POW = {}
for b = 0, 31 do BF_POW[b] = 2 ^ (31 - b) end
-- The struct format of a block of nb bytes: stage 0's, and later stages' by nb.
local BF_FMT32 = '>I4I4I4I4I4I4I4I4'
local BF_FMT = {}
local function bf_block(key, at, nb, offs, o0, k, set_bits)
  local from = sformat('%d', at)
  local blk = rcall('GETRANGE', key, from, sformat('%d', at + nb - 1))
  -- (A segment shorter than planned, never allocated, reads as zeros.)
  if #blk < nb then blk = blk .. srep('\0', nb - #blk) end
  local W, fmt
  if nb == 32 then
    W, fmt = BF_W, BF_FMT32
    W[1], W[2], W[3], W[4], W[5], W[6], W[7], W[8] = sunpack(fmt, blk)
  else
    fmt = BF_FMT[nb]
    if not fmt then fmt = '>' .. srep('I4', nb / 4); BF_FMT[nb] = fmt end
    W = { sunpack(fmt, blk) }
  end
  local fresh = false
  for i = o0 + 1, o0 + k do
    local o = offs[i]
    local b = o % 32
    local x = (o - b) / 32 + 1
    local m = BF_POW[b]
    local v = W[x]
    if v % (m + m) < m then
      if not set_bits then return true end
      W[x] = v + m
      fresh = true
    end
  end
  if not fresh then return false end
  if nb == 32 then
    rcall('SETRANGE', key, from, spack(fmt, W[1], W[2], W[3], W[4], W[5], W[6], W[7], W[8]))
  else
    rcall('SETRANGE', key, from, spack(fmt, unpack(W, 1, nb / 4)))
  end
  return true
end

-- Checks the block holding bit `first` of stage `i` (0: keys P bf:<seg>; else P bf<i>:<seg>).
local function bf_block_at(P, i, first, nb, offs, o0, k, seg, set_bits)
  local s = (first - first % seg) / seg
  local keys = BF_KEYS[i + 1]
  if not keys then keys = {}; BF_KEYS[i + 1] = keys end
  local key = keys[s]
  if not key then
    key = P .. 'bf' .. (i > 0 and i or '') .. ':' .. s
    keys[s] = key
  end
  return bf_block(key, (first - s * seg) / 8, nb, offs, o0, k, set_bits)
end

-- Stage 0 of a blocked filter: the record at blob[j] is the u48 block index and k u8 offsets
-- (read into a reused table: with the usual k = 6 by one C call and no new table).
local BF_R = {}
local function bf_block0(P, blob, j, k, seg, set_bits)
  local a, b, c, d, e, f = sbyte(blob, j, j + 5)
  local blk = ((((a * 256 + b) * 256 + c) * 256 + d) * 256 + e) * 256 + f
  local R = BF_R
  if k == 6 then
    R[1], R[2], R[3], R[4], R[5], R[6] = sbyte(blob, j + 6, j + 11)
  else
    for i = 1, k do R[i] = sbyte(blob, j + 5 + i) end
  end
  return bf_block_at(P, 0, blk * BF_BLOCK, BF_BLOCK / 8, R, 0, k, seg, set_bits)
end

-- Stage i (>= 1) of a blocked filter: block and offsets from SHA-1 of the stage number and the
-- URL's stage-0 record (12 hex digits of block index, then 3 per offset; more SHA-1 rounds when
-- they run out). A block of st.b bits divides 4096, so an offset's 12 bits reduce without bias.
local function bf_block_stage(P, blob, j, k, i, st, seg, set_bits)
  local hex = redis.sha1hex(i .. ':' .. ssub(blob, j, j + 5 + k))
  local b = st.b
  local blk = tonumber(ssub(hex, 1, 12), 16) % (st.m / b)
  local at = 13
  for n = 1, st.k do
    if at > 38 then hex = redis.sha1hex(hex); at = 1 end
    BF_OFF[n] = tonumber(ssub(hex, at, at + 2), 16) % b
    at = at + 3
  end
  return bf_block_at(P, i, blk * b, b / 8, BF_OFF, 0, st.k, seg, set_bits)
end

-- Tests (set_bits false) or tests-and-sets one URL against every stage; `stage0(blob, j, k, seg,
-- set_bits)` is the caller's stage-0 check (true when a bit was clear). True when the URL is new.
local function seen_check(P, blob, j, k, seg, set_bits, stage0)
  local bf = bf_state(P)
  if set_bits and bf.tracked and bf.cap > 0 and bf.c >= bf.cap then bf_grow(bf, seg) end
  local last = bf.s - 1
  local fresh
  if BF_BLOCK > 0 then
    if last <= 0 then
      fresh = bf_block0(P, blob, j, k, seg, set_bits)
    else
      if not bf_block0(P, blob, j, k, seg, false) then return false end
      local st = bf_stages(bf)
      for i = 1, last - 1 do
        if not bf_block_stage(P, blob, j, k, i, st[i + 1], seg, false) then return false end
      end
      fresh = bf_block_stage(P, blob, j, k, last, st[last + 1], seg, set_bits)
    end
  elseif last <= 0 then
    fresh = stage0(blob, j, k, seg, set_bits)
  else
    if not stage0(blob, j, k, seg, false) then return false end
    local st = bf_stages(bf)
    for i = 1, last - 1 do
      if not bf_stage_bits(P, i, bf_positions(blob, j, k, i, st[i + 1]), seg, false) then return false end
    end
    fresh = bf_stage_bits(P, last, bf_positions(blob, j, k, last, st[last + 1]), seg, set_bits)
  end
  if fresh and set_bits then bf.c = bf.c + 1 end
  return fresh
end

-- The common case in one call: stage 0 of a blocked filter with 256-bit blocks and k = 6, before
-- any growth (every link of a crawl within its planned size). seen_check reaches the same test
-- through four more Lua calls (bf_state, bf_block0, bf_block_at, bf_block), ~6% of redis-server's
-- instructions per new link (callgrind); add_links calls seen0 per link once seen0_begin said yes.
local F0_P, F0_SEG, F0_CAP = nil, 0, 0
local function seen0_begin(P, k, seg)
  local bf = bf_state(P)
  if BF_BLOCK ~= 256 or k ~= 6 or bf.s ~= 1 then return false end
  F0_P, F0_SEG = P, seg
  F0_CAP = (bf.tracked and bf.cap > 0) and bf.cap or math.huge
  return true
end

-- seen_check(F0_P, blob, j, 6, seg, set_bits) for the case seen0_begin accepted (bf_block0 and
-- bf_block say how the record and the block are read); the filter's growth takes seen_check.
-- bf_block's bit loop is repeated here on purpose: a helper call per link costs ~1k instructions.
local function seen0(blob, j, set_bits)
  local bf = BF
  if bf.s ~= 1 or (set_bits and bf.c >= F0_CAP) then return seen_check(F0_P, blob, j, 6, F0_SEG, set_bits, nil) end
  local a, b, c, d, e, f, o1, o2, o3, o4, o5, o6 = sbyte(blob, j, j + 11)
  local first = (((((a * 256 + b) * 256 + c) * 256 + d) * 256 + e) * 256 + f) * 256
  local seg = F0_SEG
  local s = (first - first % seg) / seg
  -- Stage 0's key names, the table bf_block_at fills (bloom_begin resets it when P changes).
  local keys = BF_KEYS[1]
  if not keys then keys = {}; BF_KEYS[1] = keys end
  local key = keys[s]
  if not key then key = F0_P .. 'bf:' .. s; keys[s] = key end
  local at = (first - s * seg) / 8
  local from = sformat('%d', at)
  local blk = rcall('GETRANGE', key, from, sformat('%d', at + 31))
  if #blk < 32 then blk = blk .. srep('\0', 32 - #blk) end
  local W, R = BF_W, BF_R
  W[1], W[2], W[3], W[4], W[5], W[6], W[7], W[8] = sunpack(BF_FMT32, blk)
  R[1], R[2], R[3], R[4], R[5], R[6] = o1, o2, o3, o4, o5, o6
  local fresh = false
  for i = 1, 6 do
    local o = R[i]
    local bit = o % 32
    local x = (o - bit) / 32 + 1
    local m = BF_POW[bit]
    local v = W[x]
    if v % (m + m) < m then
      if not set_bits then return true end
      W[x] = v + m
      fresh = true
    end
  end
  if not fresh then return false end
  rcall('SETRANGE', key, from, spack(BF_FMT32, W[1], W[2], W[3], W[4], W[5], W[6], W[7], W[8]))
  bf.c = bf.c + 1
  return true
end

-- Writes the newest stage's insertion count back (once per script call).
local function seen_flush()
  if BF and BF.tracked and BF.c ~= BF.c0 then
    rcall('HINCRBY', BF.P .. 'bf:grow', 'c', BF.c - BF.c0)
    BF.c0 = BF.c
  end
end

-- Starts a call (scripts.ts loads this file once into a Redis function library, so its locals
-- outlive a call): forgets the growth state read by the last call; key names stay while P does.
local BF_KEYS_P = nil
local function bloom_begin(P)
  sbyte, schar, sformat, ssub, sfind, srep = string.byte, string.char, string.format, string.sub, string.find, string.rep
  sunpack, spack = struct.unpack, struct.pack
  rcall = redis.call
  BF, BF_BLOCK = nil, 0
  if BF_KEYS_P ~= P then BF_KEYS, BF_KEYS_P = {}, P end
end
