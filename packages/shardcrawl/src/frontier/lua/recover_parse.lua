-- recover_parse.lua: returns parse consumers' in-flight pages to the taking end of the parse
-- queue, oldest taken first, so they are parsed again. Standalone (no lib.lua).
-- KEYS: none (names computed from the prefix)
-- ARGV: [1] prefix P; [2] consumer ("" = every consumer listed in P pc)
-- Touches: P pc, P pi:<consumer>, P pq, P stats
-- Returns: number of pages returned
local P = ARGV[1]
local consumers
if ARGV[2] ~= '' then consumers = {ARGV[2]} else consumers = redis.call('SMEMBERS', P .. 'pc') end
local n = 0
for _, c in ipairs(consumers) do
  -- The in-flight list has the newest at the left: moving left-first onto the queue's right end
  -- leaves the oldest rightmost, i.e. taken first again.
  while redis.call('LMOVE', P .. 'pi:' .. c, P .. 'pq', 'LEFT', 'RIGHT') do n = n + 1 end
  redis.call('SREM', P .. 'pc', c)
end
if n > 0 then redis.call('HINCRBY', P .. 'stats', 'parseRecovered', n) end
return n
