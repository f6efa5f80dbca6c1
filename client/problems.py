"""What goes wrong, as the client raises it: problem+json answers (:class:`ApiProblem`), a
stale version (:class:`StaleVersion`), a server out of reach (:class:`Unreachable`), and
which of them a retry cannot make worse (:class:`RetryPolicy`)."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


# -- errors -------------------------------------------------------------------------------
class ApiProblem(Exception):
    """An error answer (``application/problem+json``, RFC 9457).

    ``code`` is stable and meant for programs (``pile_frozen``, ``not_your_turn``,
    ``rate_limited``); ``detail`` is a sentence for people; ``body`` is the whole problem
    (some carry more members: ``version``, ``to_act``, ``errors``)."""

    def __init__(self, status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        self.body = dict(body)
        self.code = str(body.get("code", "") or "")
        self.detail = str(body.get("detail", "") or "")
        self.title = str(body.get("title", "") or "")
        self.headers: Mapping[str, str] = headers if headers is not None else {}
        super().__init__(f"{status} {self.code}: {self.detail}")

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asks to wait before trying again (429, 503), if it said."""
        return parse_retry_after(self.headers.get("Retry-After"))


class StaleVersion(ApiProblem):
    """412: the move was decided on version ``expected`` but the game is at ``version``.

    Read the view again (:meth:`Seat.view`) and decide again: the move may have become
    illegal, or pointless, since."""

    @property
    def version(self) -> int:
        return int(self.body.get("version", 0))


class Unreachable(Exception):
    """The server could not be reached, or the connection broke before an answer, after
    every retry the policy allows. A move may or may not have been applied: send the same
    move again (a :class:`Seat` reuses its Idempotency-Key), or read the view."""


def problem_of(status: int, body: Any, headers: Mapping[str, str]) -> ApiProblem:
    """The exception for an error answer (a body that is not a problem still gives one)."""
    if not isinstance(body, dict):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        body = {"code": "http_error", "detail": text.strip()[:500] or f"HTTP {status}"}
    cls = StaleVersion if status == 412 else ApiProblem
    return cls(status, body, headers)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (RFC 9110 10.2.3)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit takes any script's digits; float() does not
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# -- retries ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a request whose outcome a retry cannot change.

    ``attempts`` retries after the first try; waits start at ``backoff`` seconds and double
    (with jitter, so that many clients refused at once do not come back at once) up to
    ``max_backoff``. A ``Retry-After`` from the server is honoured instead, up to
    ``max_retry_after``: a longer one is raised to the caller rather than slept through."""

    attempts: int = 4
    backoff: float = 0.25
    max_backoff: float = 8.0
    max_retry_after: float = 30.0

    def wait(self, failures: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry number ``failures`` (1-based); None: give up."""
        if failures > self.attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        base = min(self.max_backoff, self.backoff * 2 ** (failures - 1))
        return base / 2 + random.random() * base / 2


NO_RETRY = RetryPolicy(attempts=0)
DEFAULT_RETRY = RetryPolicy()


def retryable(problem: ApiProblem, idempotent: bool) -> bool:
    if problem.status == 429:
        return True
    if problem.status == 409:
        return problem.code == "conflict"  # the server's compare-and-set gave up; nothing changed
    return problem.status == 503 and idempotent


