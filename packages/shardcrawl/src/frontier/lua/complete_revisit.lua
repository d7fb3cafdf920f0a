-- complete_revisit.lua: continuous mode (--continuous): completes a lease at now (the END of the
-- response) whose revisit was answered 304 Not Modified: there is no body to parse, so nothing
-- goes to the parse queue; the fetch is counted (fetched, notModified) and the host's politeness
-- clock and flow-control feedback are applied exactly as for a page. Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] lease id; [6] host (used only if the lease is gone);
--       [7..10] host feedback (lib.lua feedback: signal, latency ms, start ms, not-before ms; optional)
-- Touches: P lease, P leases, P h:<host>, P ready, P stats, P flowcfg, P press
--          and through lib.lua: P d:<domain>, P dw:<domain>, P held, P lo:<owner>
-- Returns: 'ok' | 'expired'
local host, hk = release(ARGV[5], ARGV[6])
if not host then return 'expired' end
redis.call('HINCRBY', hk, 'x', 1)
stat('fetched', 1)
stat('notModified', 1)
feedback(host, hk, 7)
sync_ready(host, hk)
return 'ok'
