"""Settings of one API process, read from the environment (or a dict in tests)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import Any

_TRUE = {"1", "true", "yes", "on"}
# CANASTA_DURABILITY (api.durability): "fsync", the server fsyncs every write before it
# replies (checked); "waitaof", the server confirms each commit (WAITAOF); "off"
DURABILITY = ("fsync", "waitaof", "off")


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in _TRUE


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    return int(value)


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    return float(value)


def _env_list(name: str) -> tuple[str, ...]:
    value = os.environ.get(name, "")
    return tuple(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True)
class Settings:
    """Everything a process needs; nothing here is state (state lives in Redis)."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    key_prefix: str = "canasta"
    retention_seconds: int = 7 * 24 * 3600  # finished games
    idle_seconds: int = 30 * 24 * 3600  # games nobody touched (waiting or abandoned)
    idempotency_seconds: int = 24 * 3600
    # a change is answered only once it is on the Redis server's disk, else 503 (api.durability):
    # "fsync" (the server is checked to fsync before it replies: appendonly yes, appendfsync
    # always), "waitaof" (each commit confirmed by WAITAOF within the timeout), "off"
    durability: str = "fsync"
    durability_timeout_ms: int = 1000
    test_seeds: bool = False
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 1024 * 1024
    # rate limits: requests per window, per client address and per token; 0 disables one
    rate_limit_enabled: bool = True
    rate_limit_window: int = 10
    rate_limit_per_address: int = 2000
    rate_limit_per_token: int = 300
    # hints (GET /games/{id}/hint) per window per token, counted apart from the rest: a hint
    # may run a search, so its limit is lower; 0 leaves hints to the per-token limit
    rate_limit_hints_per_token: int = 20
    trust_proxy: bool = False
    # hints: the expert's thinking time (wall clock) and how long an answer is kept for the
    # same game version, seat and bot (0: not kept)
    hint_budget_ms: float = 50.0
    hint_cache_seconds: int = 600
    # events
    sse_ping_seconds: float = 15.0
    sse_max_seconds: float = 300.0  # a stream ends after this; EventSource reconnects
    poll_max_wait: float = 30.0
    # the event stream keeps about this many recent events per game (0: all); a reader
    # resuming from an older id gets a snapshot of its view first
    events_keep: int = 100
    # open event readers (SSE streams, long-polls that wait) per process: each holds one of
    # the server's threads, so moves keep the rest (``canasta serve`` sets threads - 4)
    max_event_readers: int = 12
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.durability not in DURABILITY:
            raise ValueError(f"CANASTA_DURABILITY is one of {', '.join(DURABILITY)}, not {self.durability!r}")
        if self.durability_timeout_ms <= 0:
            raise ValueError("CANASTA_DURABILITY_TIMEOUT_MS is a positive number of milliseconds")

    @classmethod
    def from_env(cls, overrides: dict[str, Any] | None = None) -> Settings:
        """Environment variables, then explicit overrides (field names)."""
        s = cls(
            redis_url=os.environ.get("REDIS_URL") or cls.redis_url,
            key_prefix=os.environ.get("CANASTA_KEY_PREFIX") or cls.key_prefix,
            retention_seconds=_env_int("CANASTA_RETENTION_SECONDS", cls.retention_seconds),
            idle_seconds=_env_int("CANASTA_IDLE_SECONDS", cls.idle_seconds),
            idempotency_seconds=_env_int("CANASTA_IDEMPOTENCY_SECONDS", cls.idempotency_seconds),
            durability=(os.environ.get("CANASTA_DURABILITY") or cls.durability).strip().lower(),
            durability_timeout_ms=_env_int("CANASTA_DURABILITY_TIMEOUT_MS", cls.durability_timeout_ms),
            test_seeds=_env_bool("CANASTA_TEST_SEEDS", False),
            cors_origins=_env_list("CANASTA_CORS_ORIGINS"),
            max_body_bytes=_env_int("CANASTA_MAX_BODY_BYTES", cls.max_body_bytes),
            rate_limit_enabled=_env_bool("CANASTA_RATE_LIMIT", True),
            rate_limit_window=_env_int("CANASTA_RATE_LIMIT_WINDOW", cls.rate_limit_window),
            rate_limit_per_address=_env_int("CANASTA_RATE_LIMIT_PER_ADDRESS", cls.rate_limit_per_address),
            rate_limit_per_token=_env_int("CANASTA_RATE_LIMIT_PER_TOKEN", cls.rate_limit_per_token),
            rate_limit_hints_per_token=_env_int("CANASTA_RATE_LIMIT_HINTS_PER_TOKEN", cls.rate_limit_hints_per_token),
            hint_budget_ms=_env_float("CANASTA_HINT_BUDGET_MS", cls.hint_budget_ms),
            hint_cache_seconds=_env_int("CANASTA_HINT_CACHE_SECONDS", cls.hint_cache_seconds),
            trust_proxy=_env_bool("CANASTA_TRUST_PROXY", False),
            sse_ping_seconds=_env_float("CANASTA_SSE_PING_SECONDS", cls.sse_ping_seconds),
            sse_max_seconds=_env_float("CANASTA_SSE_MAX_SECONDS", cls.sse_max_seconds),
            poll_max_wait=_env_float("CANASTA_POLL_MAX_WAIT", cls.poll_max_wait),
            events_keep=_env_int("CANASTA_EVENTS_KEEP", cls.events_keep),
            max_event_readers=_env_int("CANASTA_MAX_EVENT_READERS", cls.max_event_readers),
        )
        if overrides:
            s = s.with_overrides(overrides)
        return s

    def with_overrides(self, overrides: dict[str, Any]) -> Settings:
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
        values = dict(overrides)
        if "cors_origins" in values and isinstance(values["cors_origins"], str):
            values["cors_origins"] = tuple(o.strip() for o in values["cors_origins"].split(",") if o.strip())
        return replace(self, **values)
