"""A per-game lease: at most one job plays a game's bots, and a dead job's lease expires.

``SET NX PX`` to take it, compare-and-renew and compare-and-delete in Lua so that a job
whose lease expired never extends or frees the lease of the job that took over.
"""

from __future__ import annotations

from typing import Any

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Lease:
    def __init__(self, redis: Any, key: str, token: str, ttl_ms: int) -> None:
        self.redis = redis
        self.key = key
        self.token = token
        self.ttl_ms = ttl_ms
        self.held = False
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    def acquire(self) -> bool:
        self.held = bool(self.redis.set(self.key, self.token, nx=True, px=self.ttl_ms))
        return self.held

    def renew(self) -> bool:
        """Extend the lease; False if it expired and may belong to another job now."""
        ok = bool(self._renew(keys=[self.key], args=[self.token, self.ttl_ms]))
        self.held = ok
        return ok

    def release(self) -> None:
        if self.held:
            self._release(keys=[self.key], args=[self.token])
            self.held = False
