"""A per-game lease: at most one job plays a game's bots, and a dead job's lease expires.

``SET NX PX`` to take it, compare-and-renew and compare-and-delete in Lua so that a job
whose lease expired never extends or frees the lease of the job that took over.

The calls go straight to a pooled connection (:func:`execute`), without redis-py's
per-command layers, and the release that ends a run also answers the game's version, read
atomically with the release, and forgets the game's wait in the awaiting set in the same
round trip (:meth:`Lease.release_and_version`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import redis as redis_lib

from api.store import pack

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


class Script:
    """A Lua script run by EVALSHA, loaded again when the server has lost it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def command(self, keys: list[str], args: list[Any]) -> tuple[Any, ...]:
        return ("EVALSHA", self.sha, len(keys), *keys, *args)


def execute(redis: Any, *commands: tuple[Any, ...], scripts: tuple[Script, ...] = ()) -> list[Any]:
    """``commands`` in one round trip (pipelined, no MULTI); the raw replies, in order.

    An error reply raises (after every reply was read, so the connection stays in step);
    a NOSCRIPT reply loads ``scripts`` and sends everything again (the commands here are
    idempotent). Connection errors are retried as the client's retry policy says.
    """
    for attempt in (0, 1):
        replies = _pipelined(redis, commands)
        errors = [r for r in replies if isinstance(r, Exception)]
        if not errors:
            return replies
        if attempt == 0 and scripts and all(isinstance(e, redis_lib.exceptions.NoScriptError) for e in errors):
            for s in scripts:
                redis.script_load(s.source)
            continue
        raise errors[0]
    raise AssertionError("unreachable")


def _pipelined(redis: Any, commands: tuple[tuple[Any, ...], ...]) -> list[Any]:
    packed = [b"".join(pack(c) for c in commands)]
    pool = redis.connection_pool
    conn = pool.get_connection()

    def send_read() -> list[Any]:
        conn.send_packed_command(packed)
        out: list[Any] = []
        for _ in commands:
            try:
                out.append(conn.read_response())
            except redis_lib.exceptions.ResponseError as e:
                out.append(e)
        return out

    try:
        return conn.retry.call_with_retry(send_read, lambda _error: conn.disconnect())
    finally:
        try:
            if conn.should_reconnect():
                conn.disconnect()
                conn.connect()
        finally:
            pool.release(conn)


RENEW = Script(_RENEW)
RELEASE = Script(_RELEASE)
RELEASE_VERSION = Script(_RELEASE_VERSION)


class Lease:
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
