-- ack_page.lua: acknowledges a parsed page: removes it from the consumer's in-flight list, deletes
-- the page, adds its links (Bloom + queues, see lib.lua add_links) and bumps counters -- ONE step,
-- so a crash either keeps the page in flight (it will be parsed again) or has done all of it.
-- Prepended with lib.lua.
-- KEYS: none (names computed from the prefix)
-- ARGV: [1..4] common (lib.lua); [5] consumer; [6] page id; [7] parse error class ("" = none);
--       [8..] add_links parameters (lib.lua: segment bits, caps, Bloom layout, binary link records, hosts, origins, elements)
--       [last] optional: "pk\n" then "<host>\t<domain>\n" per host of the page's links (domain politeness)
-- Touches: P pi:<consumer>, P pg:<id>, P pqt, P pqb, P stats, P bf:<i>, P bf:grow, P bf<s>:<i>, P h:<host>, P q<tier>:<host>, P ready
--          and through lib.lua: P bf:plan, P big, P d:<domain>, P dh, P dw:<domain>, P flow, P flowcfg (read), P held, P shedlog, P spill
-- Returns: {1, added, seen, dropped} | {-1, 0, 0, 0} when the page was not in this consumer's
--          in-flight list (recovered and handed to someone else): nothing is changed.
if rcall('LREM', P .. 'pi:' .. ARGV[5], 1, ARGV[6]) == 0 then
  stat('staleAcks', 1)
  return {-1, 0, 0, 0}
end
stats_batch()
forget_page(ARGV[6])
stat('parsed', 1)
if ARGV[7] ~= '' then stat('parseErr:' .. ARGV[7], 1) end
local added, seen, dropped = add_links(8)
if added > 0 then stat('discovered', added) end
key_hosts_by_domain(ARGV[#ARGV])
stats_flush()
return {1, added, seen, dropped}
