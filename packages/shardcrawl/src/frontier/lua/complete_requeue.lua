-- complete_requeue.lua: completes a lease at now and puts its URL back at the HEAD of its queue
-- (after fetching robots.txt first, or for a retry), as ONE step. Prepended with lib.lua.
-- A retry therefore passes the same admission control as a first attempt: the host's schedule,
-- concurrency and not-before (back-off, Retry-After) decide when it goes out again.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] lease id; [6] host (used only if the lease is gone);
--       [7] "1" to count one more attempt, else "0"; [8] host not-before epoch ms (0 = none);
--       [9] reason counted as stats "retry:<reason>" ("" = none);
--       [10..13] host feedback (lib.lua feedback: signal, latency ms, start ms, not-before ms; optional)
-- Touches: P lease, P leases, P h:<host>, P q<tier>:<host>, P ready, P stats, P flowcfg, P press
--          and through lib.lua: P d:<domain>, P dw:<domain>, P held, P lo:<owner>
-- Returns: 'ok' | 'expired' (lease already reaped; the reaper put the URL back already)
local host, hk, tier, el = release(ARGV[5], ARGV[6])
if not host then return 'expired' end
if ARGV[7] == '1' then el = bump_attempt(el) end
put_back(host, hk, tier, el)
local nb = tonumber(ARGV[8])
local ck = clock_key(hk)
if nb > NOW and nb > (tonumber(redis.call('HGET', ck, 'n')) or 0) then redis.call('HSET', ck, 'n', int(nb)) end
redis.call('HINCRBY', hk, 'r', 1)
stat('requeued', 1)
if ARGV[9] ~= '' then
  stat('retry:' .. ARGV[9], 1)
  stat('retries', 1)
  -- Per-host retry count (field R) for the per-host retry ratio R / (x + e).
  redis.call('HINCRBY', hk, 'R', 1)
end
feedback(host, hk, 10)
sync_ready(host, hk)
return 'ok'
