-- record_visit.lua: stores one URL's re-crawl history record (history-codec.ts) and counts the
-- visit in the host's and the node's re-crawl metrics as ONE step, so the history and the
-- metrics never disagree after a crash, and a stale writer (an expired lease whose fetch
-- finished late, a retried call) cannot overwrite a newer record or count a visit twice.
-- KEYS[1] P rh:<host>  hash: field = path+query, value = binary record (bytes 5..8 = last visit, u32 BE
--                      seconds; byte 4 = its fraction in 1/256 s)
-- KEYS[2] P rm:<host>  hash: per-host counters
-- KEYS[3] P rm         hash: node-wide counters
-- KEYS[4] P rv         stream of visit outcomes (url, changed, time, cost) for the node's scheduler, capped
-- ARGV[1] field; ARGV[2] new record; ARGV[3] last-visit stamp (seconds x 256 + fraction) of the record the caller read
--         ("-1" = it read none): compare-and-set, so two writers cannot both apply
-- ARGV[4] stream cap (approximate MAXLEN; "0" = no stream entry); ARGV[5] url; ARGV[6] changed
--         ("1", "0", "-" for a first visit); ARGV[7] visit time (ms)
-- ARGV[8] visit cost in the budget unit (for the scheduler, in the stream entry)
-- ARGV[9..] counter name, increment pairs (fetches, changes, unchanged, not_modified, bytes, ...)
-- Returns 1 when stored, 0 when the stored record is not the one the caller read (nothing changed).
local old = redis.call('HGET', KEYS[1], ARGV[1])
local seen = -1
if old and #old >= 8 then
  local f, b1, b2, b3, b4 = string.byte(old, 4, 8)
  seen = (((b1 * 256 + b2) * 256 + b3) * 256 + b4) * 256 + f
end
if seen ~= tonumber(ARGV[3]) then return 0 end
-- The next-due field (bytes 56..59 of a version-2 record) belongs to the schedule (recrawl_*.lua in
-- frontier/lua/): a visit keeps the stored one, the supervisor sets the next when it reads the outcome.
local rec = ARGV[2]
if old and #old >= 59 and string.byte(old, 1) == 2 and string.byte(rec, 1) == 2 then
  rec = string.sub(rec, 1, 55) .. string.sub(old, 56, 59) .. string.sub(rec, 60)
end
redis.call('HSET', KEYS[1], ARGV[1], rec)
if tonumber(ARGV[4]) > 0 then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'u', ARGV[5], 'c', ARGV[6], 't', ARGV[7], 'k', ARGV[8])
end
for i = 9, #ARGV - 1, 2 do
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('HINCRBY', KEYS[3], ARGV[i], ARGV[i + 1])
end
return 1
