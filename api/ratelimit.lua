-- Fixed-window counter. KEYS[1] the counter; ARGV[1] limit; ARGV[2] window, ms.
-- Returns 0 when allowed, else the milliseconds until the window resets.
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  ttl = tonumber(ARGV[2])
end
if count > tonumber(ARGV[1]) then
  return ttl
end
return 0
