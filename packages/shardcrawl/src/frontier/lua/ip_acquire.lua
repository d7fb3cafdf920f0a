-- ip_acquire.lua: takes one of an IP address's in-flight slots for a lease (--ip-concurrency), or
-- says the address is full. Slots of one address are members of P ip:<addr> scored by the lease's
-- expiry, so a slot whose holder vanished frees itself at that expiry; a dead fetcher's slots are
-- returned at once with its leases (release_owner.lua reads P ipo:<owner>).
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] now (epoch ms); [3] address; [4] lease id; [5] expiry (epoch ms); [6] slots per address
-- Touches: P ip:<addr>, P ipo:<owner>
-- Returns: 1 taken (or already held), 0 full
local P, now, addr, id, exp, max = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local key = P .. 'ip:' .. addr
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZSCORE', key, id) then return 1 end
if redis.call('ZCARD', key) >= max then return 0 end
redis.call('ZADD', key, exp, id)
local at = string.find(id, '@', 1, true)
if at then redis.call('SADD', P .. 'ipo:' .. string.sub(id, at + 1), addr .. '\t' .. id) end
return 1
