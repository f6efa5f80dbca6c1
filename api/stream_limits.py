"""Open event streams (SSE streams and waiting long-polls) per token and per client address,
counted in this process: a listener costs no thread, but each holds a socket and memory, so
one token or one address may not hold more than its share (429 ``too_many_streams``). Every
slot held is one in ``canasta_open_listeners`` (:mod:`api.metrics`)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from api import metrics
from api.errors import ApiError


class StreamLimits:
    """Thread-safe counts; :meth:`acquire` returns the function that gives the slot back
    (idempotent: a stream's several ways of ending may all call it)."""

    def __init__(self, per_token: int, per_address: int) -> None:
        self.per_token, self.per_address = per_token, per_address
        self._tokens: Counter[str] = Counter()
        self._addresses: Counter[str] = Counter()
        self._lock = threading.Lock()

    def acquire(self, token: str | None, address: str) -> Callable[[], None]:
        with self._lock:
            if token is not None and 0 < self.per_token <= self._tokens[token]:
                raise _refusal("token", self.per_token)
            if 0 < self.per_address <= self._addresses[address]:
                raise _refusal("address", self.per_address)
            if token is not None:
                self._tokens[token] += 1
            self._addresses[address] += 1
        metrics.listener_opened()
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                if token is not None:
                    _decrement(self._tokens, token)
                _decrement(self._addresses, address)
            metrics.listener_closed()

        return release

    def open_streams(self) -> int:
        with self._lock:
            return sum(self._addresses.values())


def _decrement(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


STREAM_RETRY_SECONDS = 5


def _refusal(kind: str, limit: int) -> ApiError:
    return ApiError(429, "too_many_streams",
                    f"This {kind} already holds {limit} open event streams or waiting polls on this server; "
                    "close one (or poll without waiting).", headers={"Retry-After": str(STREAM_RETRY_SECONDS)})
