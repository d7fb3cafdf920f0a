-- take_pages.lua: moves up to N page ids from the parse queue into the consumer's in-flight list
-- and returns them with their pages. Standalone (no lib.lua).
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] consumer; [3] max pages
-- Touches: P pc, P pq, P pi:<consumer>, P pg:<id> (read), P stats
-- Returns: {id, metadata JSON, body, spool reference, id, ...} (body or spool reference is "");
--          an id whose page hash is missing is dropped and counted.
local P = ARGV[1]
local pi = P .. 'pi:' .. ARGV[2]
redis.call('SADD', P .. 'pc', ARGV[2])
local out = {}
for _ = 1, tonumber(ARGV[3]) do
  local id = redis.call('LMOVE', P .. 'pq', pi, 'RIGHT', 'LEFT')
  if not id then break end
  local v = redis.call('HMGET', P .. 'pg:' .. id, 'm', 'b', 's')
  if v[1] and (v[2] or v[3]) then
    out[#out + 1] = id
    out[#out + 1] = v[1]
    out[#out + 1] = v[2] or ''
    out[#out + 1] = v[3] or ''
  else
    redis.call('LREM', pi, 1, id)
    redis.call('HINCRBY', P .. 'stats', 'parseMissing', 1)
  end
end
return out
