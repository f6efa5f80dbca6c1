"""A per-game lease: at most one job plays a game's bots, and a dead job's lease expires.

``SET NX PX`` to take it, compare-and-renew and compare-and-delete in Lua so that a job
whose lease expired never extends or frees the lease of the job that took over.

The calls go straight to a pooled connection (:func:`service.redis_io.execute`), without
redis-py's per-command layers, and the release that ends a run also answers the game's
version, read atomically with the release, and forgets the game's wait in the awaiting set
in the same round trip (:meth:`Lease.release_and_version`).
"""

from __future__ import annotations

from typing import Any

from service.redis_io import Script, execute

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
# release (if still ours) and answer the game's version as of the release (KEYS[2]: the
# game's state hash, in the same hash slot as the lease)
_RELEASE_VERSION = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return redis.call('HGET', KEYS[2], 'version')
"""

RENEW = Script(_RENEW)
RELEASE = Script(_RELEASE)
RELEASE_VERSION = Script(_RELEASE_VERSION)


class Lease:
    """The lease of one game, under ``key``, held by ``token`` (the job's id) for ``ttl_ms``."""

    def __init__(self, redis: Any, key: str, token: str, ttl_ms: int) -> None:
        self.redis = redis
        self.key = key
        self.token = token
        self.ttl_ms = ttl_ms
        self.held = False

    def acquire(self) -> bool:
        (reply,) = execute(self.redis, ("SET", self.key, self.token, "NX", "PX", int(self.ttl_ms)))
        self.held = reply is not None
        return self.held

    def renew(self) -> bool:
        """Extend the lease; False if it expired and may belong to another job now."""
        (reply,) = execute(self.redis, RENEW.command([self.key], [self.token, int(self.ttl_ms)]), scripts=(RENEW,))
        self.held = bool(reply)
        return self.held

    def release(self) -> None:
        if self.held:
            execute(self.redis, RELEASE.command([self.key], [self.token]), scripts=(RELEASE,))
            self.held = False

    def release_and_version(self, state_key: str, *also: tuple[Any, ...],
                            scripts: tuple[Script, ...] = ()) -> tuple[int | None, list[Any]]:
        """Release the lease (if held) and read the game's version atomically with it: a
        move committed before the release shows in the version, and one after it finds no
        lease (so its own enqueue goes ahead). ``also``: commands sent in the same round trip,
        after the release; their replies are returned. ``state_key`` must share the lease's
        hash slot (``{game}``)."""
        token = self.token if self.held else ""
        replies = execute(self.redis, RELEASE_VERSION.command([self.key, state_key], [token]), *also,
                          scripts=(RELEASE_VERSION, *scripts))
        self.held = False
        version = replies[0]
        return (int(version) if version is not None else None), replies[1:]
