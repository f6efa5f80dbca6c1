-- One atomic compare-and-set of a game: the only way any game key is written.
-- KEYS[1] state hash (fields: version, meta, state)
-- KEYS[2] events stream        KEYS[3] log list
-- KEYS[4] idempotency key (optional)
-- ARGV[1] expected version ("0": the game must not exist yet)
-- ARGV[2] meta JSON ("" = unchanged)      ARGV[3] engine state JSON ("" = unchanged)
-- ARGV[4] expiry of the game's keys, seconds
-- ARGV[5] idempotency record ("" = none)  ARGV[6] its expiry, seconds
-- ARGV[7] wake-up channel
-- ARGV[8] n: number of event field/value pairs; ARGV[9 .. 8+2n] the pairs
-- ARGV[9+2n ..] log lines to append
-- Returns {"ok", version, event id} | {"stale", current version} | {"replay", record}
local idem = KEYS[4]
if idem then
  local record = redis.call('GET', idem)
  if record then
    return {'replay', record}
  end
end

local current = redis.call('HGET', KEYS[1], 'version') or '0'
if current ~= ARGV[1] then
  return {'stale', current}
end
local version = tostring(tonumber(current) + 1)

local fields = {'version', version}
if ARGV[2] ~= '' then
  fields[#fields + 1] = 'meta'
  fields[#fields + 1] = ARGV[2]
end
if ARGV[3] ~= '' then
  fields[#fields + 1] = 'state'
  fields[#fields + 1] = ARGV[3]
end
redis.call('HSET', KEYS[1], unpack(fields))

local n = tonumber(ARGV[8])
local entry = {'v', version}
for i = 9, 8 + 2 * n do
  entry[#entry + 1] = ARGV[i]
end
local id = redis.call('XADD', KEYS[2], '*', unpack(entry))

local first_line = 9 + 2 * n
for i = first_line, #ARGV, 500 do
  local last = math.min(i + 499, #ARGV)
  redis.call('RPUSH', KEYS[3], unpack(ARGV, i, last))
end

local ttl = tonumber(ARGV[4])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)

if idem and ARGV[5] ~= '' then
  redis.call('SET', idem, ARGV[5], 'EX', tonumber(ARGV[6]))
end

redis.call('PUBLISH', ARGV[7], version)
return {'ok', version, id}
