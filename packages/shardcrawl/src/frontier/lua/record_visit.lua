-- record_visit.lua: stores one URL's re-crawl record (history-codec.ts, format 3) and counts the
-- visit in the host's and the node's re-crawl metrics as ONE step, so the history and the
-- metrics never disagree after a crash, and a stale writer (an expired lease whose fetch
-- finished late, a retried call) cannot overwrite a newer record or count a visit twice.
-- A page with only a record from before format 3 (KEYS[5], keyed by its path) is read from there
-- and moved: the compare-and-set and the next due apply to it, and the old field is deleted.
-- KEYS[1] P rp:<host>  hash: field = the path's 8-byte hash, value = binary record (format 3: byte 7 = the
--                      last visit's fraction in 1/256 s, bytes 8..11 = its seconds, u32 BE)
-- KEYS[2] P rm:<host>  hash: per-host counters
-- KEYS[3] P rm         hash: node-wide counters
-- KEYS[4] P rv         stream of visit outcomes (url, changed, time, cost) for the node's scheduler, capped
-- KEYS[5] P rh:<host>  hash: path -> record of format 1/2 (byte 4 = fraction, bytes 5..8 = seconds)
-- ARGV[1] record key; ARGV[2] new record; ARGV[3] last-visit stamp (seconds x 256 + fraction) of the record the
--         caller read ("-1" = it read none): compare-and-set, so two writers cannot both apply
-- ARGV[4] stream cap (approximate MAXLEN; "0" = no stream entry); ARGV[5] url; ARGV[6] changed
--         ("1", "0", "-" for a first visit); ARGV[7] visit time (ms)
-- ARGV[8] visit cost in the budget unit (for the scheduler, in the stream entry); ARGV[9] path+query
--         (the field of a record before format 3)
-- ARGV[10..] counter name, increment pairs (fetches, changes, unchanged, not_modified, bytes, ...)
-- Touches: P rp:<host>, P rm:<host>, P rm, P rv, P rh:<host>
-- Returns 1 when stored, 0 when the stored record is not the one the caller read (nothing changed).
local old = redis.call('HGET', KEYS[1], ARGV[1])
local legacy = false
if not old then
  old = redis.call('HGET', KEYS[5], ARGV[9])
  legacy = old and true or false
end
local seen = -1
local due = '\0\0\0\0'
if old and #old >= 19 and string.byte(old, 1) == 3 then
  local f, b1, b2, b3, b4 = string.byte(old, 7, 11)
  seen = (((b1 * 256 + b2) * 256 + b3) * 256 + b4) * 256 + f
  due = string.sub(old, 3, 6)
elseif old and #old >= 8 then
  local f, b1, b2, b3, b4 = string.byte(old, 4, 8)
  seen = (((b1 * 256 + b2) * 256 + b3) * 256 + b4) * 256 + f
  if #old >= 59 and string.byte(old, 1) == 2 then due = string.sub(old, 56, 59) end
end
if seen ~= tonumber(ARGV[3]) then return 0 end
-- The next-due field belongs to the schedule (recrawl_*.lua in frontier/lua/): a visit keeps the
-- stored one, the supervisor sets the next when it reads the outcome.
local rec = ARGV[2]
if string.byte(rec, 1) ~= 3 or #rec < 19 then return redis.error_reply('record_visit: not a format-3 record') end
rec = string.sub(rec, 1, 2) .. due .. string.sub(rec, 7)
redis.call('HSET', KEYS[1], ARGV[1], rec)
if legacy then redis.call('HDEL', KEYS[5], ARGV[9]) end
if tonumber(ARGV[4]) > 0 then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'u', ARGV[5], 'c', ARGV[6], 't', ARGV[7], 'k', ARGV[8])
end
for i = 10, #ARGV - 1, 2 do
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('HINCRBY', KEYS[3], ARGV[i], ARGV[i + 1])
end
return 1
