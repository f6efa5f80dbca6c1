"""Open event streams (SSE streams and waiting long-polls) per token and per client address,
counted in Redis across every API process (and every box behind a load balancer): a
listener costs no thread, but each holds a socket and memory, so one token or one address
may not hold more than its share (429 ``too_many_streams``).

Each identity's open streams are a sorted set (``<prefix>:{streams:<kind>:<digest>}``):
member, one stream of one process; score, when its hold lapses. A stream is taken by one
script call per identity that first drops lapsed holds, and given back with ``ZREM``. A
process renews its streams' holds every :data:`RENEW_SECONDS`, so that the holds of a
process killed -9 lapse within :data:`HOLD_SECONDS` and give their slots back by themselves.
A store that cannot count lets the stream open (as the rate limiter does), logged. Every
slot held is one in ``canasta_open_listeners`` (:mod:`service.metrics`).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import redis

from service import metrics
from service.redis_io import Script, execute
from web.problems import ApiError

log = logging.getLogger("canasta.api")

HOLD_SECONDS = 60.0  # a stream's hold lapses this long after its process last renewed it
RENEW_SECONDS = 15.0
STREAM_RETRY_SECONDS = 5
IDENT_HEX = 24  # hex digits of an identity's SHA-256 in its key: tells them apart, names none

# KEYS[1] the identity's holds. ARGV: now (ms), limit, the hold's member, its lapse (ms).
# 1: taken; 0: the identity holds its limit already.
TAKE = Script("""
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
return 1
""")


class StreamLimits:
    """The shared counts of one API process. :meth:`acquire` returns the function that gives
    the stream back (idempotent: a stream's several ways of ending may all call it).

    ``client``: the games' Redis (one server or a cluster)."""

    def __init__(self, per_token: int, per_address: int, client: Any, prefix: str = "canasta",
                 now: Callable[[], float] = time.time) -> None:
        self.per_token, self.per_address = per_token, per_address
        self.client, self.prefix, self._now = client, prefix, now
        self._process = uuid.uuid4().hex[:12]
        self._serial = itertools.count()
        self._held: dict[str, tuple[str, ...]] = {}  # member -> the keys it is held in
        self._lock = threading.Lock()
        self._renewer: threading.Thread | None = None
        self.failures = 0

    def key(self, kind: str, ident: str) -> str:
        digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:IDENT_HEX]
        return f"{self.prefix}:{{streams:{kind}:{digest}}}"

    def acquire(self, token: str | None, address: str) -> Callable[[], None]:
        """Take a stream for ``token`` (None: a spectator) from ``address``, or raise 429."""
        member = f"{self._process}:{next(self._serial)}"
        wanted = [(kind, ident, limit) for kind, ident, limit in
                  (("token", token, self.per_token), ("address", address, self.per_address))
                  if ident is not None and limit > 0]
        taken: list[str] = []
        for kind, ident, limit in wanted:
            key = self.key(kind, ident)
            if not self._take(key, limit, member):
                self._give_back(member, taken)
                raise _refusal(kind, limit)
            taken.append(key)
        with self._lock:
            self._held[member] = tuple(taken)
        self._start_renewing()
        metrics.listener_opened()
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                keys = self._held.pop(member, ())
            self._give_back(member, list(keys))
            metrics.listener_closed()

        return release

    def open_streams(self) -> int:
        """The streams this process holds now."""
        with self._lock:
            return len(self._held)

    def _take(self, key: str, limit: int, member: str) -> bool:
        now_ms = int(self._now() * 1000)
        try:
            (reply,) = execute(self.client, TAKE.command([key], [now_ms, limit, member, now_ms + int(HOLD_SECONDS * 1000)]),
                               scripts=(TAKE,))
        except redis.RedisError:
            self.failures += 1
            log.warning("the stream limits could not be counted (%d failures); the stream opens uncounted",
                        self.failures, exc_info=True)
            return True
        return bool(reply)

    def _give_back(self, member: str, keys: list[str]) -> None:
        for key in keys:
            try:
                execute(self.client, ("ZREM", key, member))
            except redis.RedisError:  # its hold lapses by itself
                log.warning("a stream's hold could not be given back; it lapses in %.0f s", HOLD_SECONDS)

    def _start_renewing(self) -> None:
        with self._lock:
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew_while_held, name="canasta-stream-holds", daemon=True)
                self._renewer.start()

    def _renew_while_held(self) -> None:
        """Renew every :data:`RENEW_SECONDS` while this process holds a stream; then end (the
        next stream starts another): an idle process keeps no thread, and none outlives its
        streams to knock at a store that is gone."""
        while True:
            time.sleep(RENEW_SECONDS)
            with self._lock:
                if not self._held:
                    self._renewer = None
                    return
            self.renew()

    def renew(self) -> None:
        """Push back the lapse of every stream this process holds: one command per identity."""
        with self._lock:
            held = list(self._held.items())
        by_key: dict[str, list[str]] = {}
        for member, keys in held:
            for key in keys:
                by_key.setdefault(key, []).append(member)
        lapse = int((self._now() + HOLD_SECONDS) * 1000)
        for key, members in by_key.items():
            try:
                execute(self.client, ("ZADD", key, "XX", *itertools.chain.from_iterable((lapse, m) for m in members)),
                        ("PEXPIREAT", key, lapse))
            except redis.RedisError:
                log.warning("renewing the streams' holds failed; tried again in %.0f s", RENEW_SECONDS)


def _refusal(kind: str, limit: int) -> ApiError:
    return ApiError(429, "too_many_streams",
                    f"This {kind} already holds {limit} open event streams or waiting polls on this server; "
                    "close one (or poll without waiting).", headers={"Retry-After": str(STREAM_RETRY_SECONDS)})
