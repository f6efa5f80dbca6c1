-- Fold the oldest plain lines of a game's log into one chunk (service/logcodec.py).
-- KEYS[1] state hash (field logc: how many chunks lead the log)   KEYS[2] log list
-- ARGV[1] the logc the caller read   ARGV[2] n: plain lines folded   ARGV[3] the chunk
-- Returns 1 when folded, 0 when the log changed shape meanwhile (nothing is written).
local chunks = tonumber(redis.call('HGET', KEYS[1], 'logc') or '0')
local n = tonumber(ARGV[2])
if chunks ~= tonumber(ARGV[1]) or redis.call('LLEN', KEYS[2]) - chunks < n then
  return 0
end
local rest = redis.call('LRANGE', KEYS[2], chunks + n, -1)
local ttl = redis.call('PTTL', KEYS[2])
if chunks == 0 then
  redis.call('DEL', KEYS[2])
else
  redis.call('LTRIM', KEYS[2], 0, chunks - 1)
end
redis.call('RPUSH', KEYS[2], ARGV[3])
for i = 1, #rest, 500 do
  redis.call('RPUSH', KEYS[2], unpack(rest, i, math.min(i + 499, #rest)))
end
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
redis.call('HSET', KEYS[1], 'logc', chunks + 1)
return 1
