-- add_links.lua: seeds or discovered links -> seen filter + host queues + ready schedule, as ONE
-- step, so "new link" and "queued" can never disagree after a crash. Prepended with lib.lua.
-- KEYS: none (names are computed from the prefix; the node's Redis is not a cluster)
-- ARGV: [1..4] common (lib.lua: prefix, now, default delay, default concurrency)
--       [5] stats counter credited with the new links ("seeds" | "discovered")
--       [6..] add_links parameters (lib.lua: segment bits, caps, k, binary link records, hosts, origins, elements)
--       [last] optional: "pk\n" then "<host>\t<domain>\n" per host of the call (domain politeness)
-- Touches: P bf:<i>, P bf:grow, P bf:plan, P bf<s>:<i> (bloom_lib.lua), P h:<host>, P q<tier>:<host>, P ready, P stats,
--          P d:<domain>, P dw:<domain>, P dh
--          and through lib.lua: P big, P flow, P flowcfg (read), P held, P shedlog, P spill
-- Returns: {added, seen, dropped}
local added, seen, dropped = add_links(6)
if added > 0 then stat(ARGV[5], added) end
-- Domain politeness: the last argument (when it starts with "pk\n"); lib.lua key_hosts_by_domain.
key_hosts_by_domain(ARGV[#ARGV])
return {added, seen, dropped}
