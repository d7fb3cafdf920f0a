-- ip_release.lua: returns a lease's slot of an IP address (ip_acquire.lua).
-- KEYS: none. ARGV: [1] prefix P; [2] address; [3] lease id
-- Touches: P ip:<addr>, P ipo:<owner>
-- Returns: 1 released, 0 not held
local P, addr, id = ARGV[1], ARGV[2], ARGV[3]
local at = string.find(id, '@', 1, true)
if at then redis.call('SREM', P .. 'ipo:' .. string.sub(id, at + 1), addr .. '\t' .. id) end
return redis.call('ZREM', P .. 'ip:' .. addr, id)
