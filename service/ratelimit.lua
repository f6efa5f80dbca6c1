-- Fixed-window counters, one per key, counted in one call (one round trip).
-- KEYS[i] the counters; ARGV[1] window, ms; ARGV[1 + i] the limit of KEYS[i].
-- Returns 0 when every counter is within its limit, else the most milliseconds until a
-- window that is over its limit resets.
local window = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, window)
    ttl = window
  end
  if count > tonumber(ARGV[1 + i]) and ttl > wait then
    wait = ttl
  end
end
return wait
