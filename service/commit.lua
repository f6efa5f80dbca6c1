-- One atomic compare-and-set of a game: the only way any game key is written.
-- KEYS[1] state hash (fields: version, meta, state)
-- KEYS[2] events stream        KEYS[3] log list
-- KEYS[4] idempotency key (optional)
-- ARGV[1] expected version ("0": the game must not exist yet)
-- ARGV[2] meta JSON ("" = unchanged)      ARGV[3] engine state JSON ("" = unchanged)
-- ARGV[4] expiry of the game's keys, seconds
-- ARGV[5] idempotency record ("" = none)  ARGV[6] its expiry, seconds
-- ARGV[7] wake-up channel (sharded pub/sub: SPUBLISH, the game's hash tag, Redis >= 7): the
--         new version, its event id and the event's field w (the version alone without one)
-- ARGV[8] events kept: the stream is trimmed to about this many (0: all are kept)
-- ARGV[9] "1": start the turn clock: field turn_at = this server's TIME in ms (the seat to
--         act has been to act since then; every API process reads the same clock)
-- ARGV[10] the commit id (field cid) the caller read with the expected version ("": not
--         checked): a version the store lost and made again is another commit, with another id
-- ARGV[11] n: number of event field/value pairs; ARGV[12 .. 11+2n] the pairs
-- ARGV[12+2n ..] log lines to append
-- The commit id of a change is its event's id (field cid).
-- Returns {"ok", version, event id, plain log lines, log chunks} | {"stale", current version}
--   | {"replay", record}
local idem = KEYS[4]
if idem then
  local record = redis.call('GET', idem)
  if record then
    -- renew its expiry: a write, so that a WAITAOF behind this call confirms the record
    -- (written earlier, maybe by another connection) is on disk before it is replayed
    redis.call('EXPIRE', idem, tonumber(ARGV[6]))
    return {'replay', record}
  end
end

local got = redis.call('HMGET', KEYS[1], 'version', 'logc', 'cid')
local current = got[1] or '0'
if current ~= ARGV[1] or (ARGV[10] ~= '' and ARGV[10] ~= (got[3] or '')) then
  return {'stale', current}
end
local version = tostring(tonumber(current) + 1)

local n = tonumber(ARGV[11])
local entry = {'v', version}
for i = 12, 11 + 2 * n do
  entry[#entry + 1] = ARGV[i]
end
local id
if ARGV[8] ~= '0' then
  id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[8], '*', unpack(entry))
else
  id = redis.call('XADD', KEYS[2], '*', unpack(entry))
end

local fields = {'version', version, 'cid', id}
if ARGV[2] ~= '' then
  fields[#fields + 1] = 'meta'
  fields[#fields + 1] = ARGV[2]
end
if ARGV[3] ~= '' then
  fields[#fields + 1] = 'state'
  fields[#fields + 1] = ARGV[3]
end
if ARGV[9] == '1' then
  local now = redis.call('TIME')
  fields[#fields + 1] = 'turn_at'
  fields[#fields + 1] = now[1] .. string.format('%03d', math.floor(tonumber(now[2]) / 1000))
end
redis.call('HSET', KEYS[1], unpack(fields))

local length = 0
for i = 12 + 2 * n, #ARGV, 500 do
  local last = math.min(i + 499, #ARGV)
  length = redis.call('RPUSH', KEYS[3], unpack(ARGV, i, last))
end
local chunks = tonumber(got[2] or '0')
if length == 0 then
  length = redis.call('LLEN', KEYS[3])
end

local ttl = tonumber(ARGV[4])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)

if idem and ARGV[5] ~= '' then
  redis.call('SET', idem, ARGV[5], 'EX', tonumber(ARGV[6]))
end

-- the wake-up carries the event ("<version> <event id> <field w>"): a listener at the version
-- before takes it from the message; one further behind, or a reader of an older entry
-- format, reads the stream
local w
for i = 12, 11 + 2 * n, 2 do
  if ARGV[i] == 'w' then
    w = ARGV[i + 1]
  end
end
if w then
  redis.call('SPUBLISH', ARGV[7], version .. ' ' .. id .. ' ' .. w)
else
  redis.call('SPUBLISH', ARGV[7], version)
end
return {'ok', version, id, length - chunks, chunks}
