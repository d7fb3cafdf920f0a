-- complete_failure.lua: completes a lease at now as a recorded failure (no page; the fetch stage
-- writes the page log line). ONE step. Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] lease id; [6] host (used only if the lease is gone); [7] error class;
--       [8..11] host feedback (lib.lua feedback: signal, latency ms, start ms, not-before ms; optional)
-- Touches: P lease, P leases, P h:<host>, P ready, P stats, P flowcfg, P press
--          and through lib.lua: P d:<domain>, P dw:<domain>, P held, P lo:<owner>
-- Returns: 'ok' | 'expired'
local host, hk = release(ARGV[5], ARGV[6])
if not host then return 'expired' end
redis.call('HINCRBY', hk, 'e', 1)
redis.call('HINCRBY', hk, 'e:' .. ARGV[7], 1)
stat('failed', 1)
stat('err:' .. ARGV[7], 1)
feedback(host, hk, 8)
sync_ready(host, hk)
return 'ok'
