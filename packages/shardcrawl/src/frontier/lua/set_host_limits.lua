-- set_host_limits.lua: sets a host's delay override (robots Crawl-delay) and/or concurrency, and
-- fixes its place in the ready schedule (a lower concurrency may leave no free slot). Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] host; [6] delay override ms ("" = keep, "-" = clear);
--       [7] concurrency ("" = keep, "-" = clear)
-- Touches: P h:<host>, P ready
--          and through lib.lua: P d:<domain>, P dw:<domain>, P flowcfg (read), P held
-- Returns: 1
local host = ARGV[5]
local hk = hkey(host)
if ARGV[6] == '-' then redis.call('HDEL', hk, 'd') elseif ARGV[6] ~= '' then redis.call('HSET', hk, 'd', ARGV[6]) end
-- Concurrency belongs to the clock: the domain's under domain politeness (lib.lua clock_key).
local ck = clock_key(hk)
if ARGV[7] == '-' then redis.call('HDEL', ck, 'c') elseif ARGV[7] ~= '' then redis.call('HSET', ck, 'c', ARGV[7]) end
sync_ready(host, hk)
return 1
