"""Settings of one API process, read from the environment (or a dict in tests)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import Any

from bots import BUDGET_LIMITS_MS

_TRUE = {"1", "true", "yes", "on"}
# CANASTA_DURABILITY (service.durability): "fsync", the server fsyncs every write before it
# replies (checked); "waitaof", the server confirms each commit (WAITAOF); "off"
DURABILITY = ("fsync", "waitaof", "off")


# Every setting is read from CANASTA_<FIELD NAME> unless named here (None: not read).
ENV_NAMES: dict[str, str | None] = {"redis_url": "REDIS_URL", "rate_limit_enabled": "CANASTA_RATE_LIMIT",
                                    "extra": None}


def queue_url(redis_url: str, queue: str | None) -> str:
    """The Redis of the bot queue (RQ): ``CANASTA_QUEUE_URL`` (``queue``), else ``redis_url``
    when that is one server. RQ does not run on a Redis Cluster, so with a cluster's
    ``REDIS_URL`` the queue's own Redis must be named (ValueError otherwise)."""
    from service.redis_io import is_cluster_url

    if queue and queue.strip():
        if is_cluster_url(queue):
            raise ValueError("CANASTA_QUEUE_URL names a Redis Cluster; the bot queue (RQ) needs one server")
        return queue.strip()
    if is_cluster_url(redis_url):
        raise ValueError("REDIS_URL names a Redis Cluster: set CANASTA_QUEUE_URL (or --queue-url) to a single Redis "
                         "server for the bot queue (RQ does not run on a cluster)")
    return redis_url


QUEUE_URL_HELP = ("the bot queue's Redis, one server (default: $CANASTA_QUEUE_URL, else the games' one; "
                  "required with a cluster)")


def add_queue_url_option(parser: Any) -> None:
    """``--queue-url``, the same for every command that reaches the bot queue."""
    parser.add_argument("--queue-url", default=None, help=QUEUE_URL_HELP)


def queue_url_for(redis_url: str, option: str | None = None) -> str:
    """The bot queue's Redis of a command that talks to ``redis_url``: its ``--queue-url``
    (``option``), else ``$CANASTA_QUEUE_URL``, else ``redis_url`` (:func:`queue_url`: ValueError
    when ``redis_url`` is a cluster and neither names a queue, so a command refuses before it
    starts anything)."""
    return queue_url(redis_url, option or os.environ.get("CANASTA_QUEUE_URL"))


def env_name(setting: str) -> str | None:
    """The environment variable of ``setting`` (a field of :class:`Settings`)."""
    return ENV_NAMES.get(setting, f"CANASTA_{setting.upper()}")


def _from_env(name: str, default: Any) -> Any:
    """The value of variable ``name`` as the type of ``default``; None: unset, or blank
    (a blank flag is off). Lists are comma-separated; words are trimmed."""
    value = os.environ.get(name)
    if value is None:
        return None
    if isinstance(default, bool):
        return value.strip().lower() in _TRUE
    if not value.strip():
        return None
    if isinstance(default, tuple):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(default, str):
        return value.strip()
    return type(default)(value)


@dataclass(frozen=True)
class Settings:
    """Everything a process needs; nothing here is state (state lives in Redis)."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    key_prefix: str = "canasta"
    retention_seconds: int = 7 * 24 * 3600  # finished games
    # an unfinished game nobody joined or moved for this long expires (every change renews it)
    idle_seconds: int = 3600
    idempotency_seconds: int = 24 * 3600
    # a change is answered only once it is on the Redis server's disk, else 503 (service.durability):
    # "fsync" (the server is checked to fsync before it replies: appendonly yes, appendfsync
    # always), "waitaof" (each commit confirmed by WAITAOF within the timeout), "off"
    durability: str = "fsync"
    durability_timeout_ms: int = 1000
    # replicas of the game's node that must also have each change on disk before it is
    # answered (WAITAOF): what a failover after a killed primary keeps (0: not waited for)
    durability_replicas: int = 0
    # the Redis of the bot queue (RQ and its bookkeeping); "": REDIS_URL's, which must then be
    # one server (service.config.queue_url)
    queue_url: str = ""
    test_seeds: bool = False
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 1024 * 1024
    # a request's body must arrive within this (408 body_timeout); its headers within
    # CANASTA_HEADER_READ_SECONDS (granian's own timeout, set by canasta serve)
    body_read_seconds: float = 10.0
    # rate limits: requests per window, per client address and per token; 0 disables one
    rate_limit_enabled: bool = True
    rate_limit_window: int = 10
    rate_limit_per_address: int = 2000
    rate_limit_per_token: int = 300
    # hints (GET /games/{id}/hint) per window per token, counted apart from the rest: a hint
    # may run a search, so its limit is lower; 0 leaves hints to the per-token limit
    rate_limit_hints_per_token: int = 20
    # replays (POST /replay) per window per client address, counted apart: a replay runs a
    # whole game through the engine (a log of the 10 000 moves allowed takes about a second
    # of CPU), and needs no token; 0 leaves replays to the per-address limit
    rate_limit_replays_per_address: int = 10
    trust_proxy: bool = False
    # hints: the expert's thinking time (wall clock) and how long an answer is kept for the
    # same game version, seat and bot (0: not kept)
    hint_budget_ms: float = 50.0
    # the bot worker's expert budget for a seat that set none (the worker reads the same
    # variable, CANASTA_BOT_BUDGET_MS); GET /bots shows it
    bot_budget_ms: float = 75.0
    hint_cache_seconds: int = 600
    # events
    sse_ping_seconds: float = 15.0
    sse_max_seconds: float = 300.0  # a stream ends after this; EventSource reconnects
    poll_max_wait: float = 30.0
    # the event stream keeps about this many recent events per game (0: all); a reader
    # resuming from an older id gets a snapshot of its view first
    events_keep: int = 100
    # open event streams (SSE streams, long-polls that wait) per token and per client address
    # in one API process (0: no limit); beyond, 429 too_many_streams
    max_streams_per_token: int = 8
    max_streams_per_address: int = 1000
    # moves and game reads answered on the event loop, where they can be (web.loop_routes);
    # off: every request goes through Flask's threads
    loop_routes: bool = True
    # quotas per client (an address, or an API key an operator issued: ``canasta keys``), apart
    # from the rate limits: games created per window (429 creation_quota beyond), unfinished
    # games of bots only at once (429 too_many_bot_games), and bot runs queued or playing at
    # once per kind of game (the bots' fair share: service.botqueue); 0: no limit
    create_per_address: int = 30
    create_window: int = 3600
    bot_games_per_address: int = 2
    bot_runs_per_client: int = 1
    # new games are refused (503 store_full) once the game store's memory use reaches this
    # share of its maxmemory (or of store_max_bytes, for a server without maxmemory); games in
    # progress go on. 0: no check
    store_full_ratio: float = 0.8
    store_max_bytes: int = 0
    # observability (web.observe, service.metrics, docs/operations.md): one JSON line per request
    # (canasta.access), the request metrics, and who may read GET /metrics: with a token, only
    # Authorization: Bearer <token>; without, only loopback clients no proxy forwarded
    access_log: bool = True
    metrics: bool = True
    metrics_token: str = field(default="", repr=False)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "durability", self.durability.strip().lower())
        if self.durability not in DURABILITY:
            raise ValueError(f"CANASTA_DURABILITY is one of {', '.join(DURABILITY)}, not {self.durability!r}")
        if self.durability_timeout_ms <= 0:
            raise ValueError("CANASTA_DURABILITY_TIMEOUT_MS is a positive number of milliseconds")
        if self.durability_replicas < 0:
            raise ValueError("CANASTA_DURABILITY_REPLICAS is a number of replicas, 0 or more")
        if not 0 <= self.store_full_ratio <= 1:
            raise ValueError("CANASTA_STORE_FULL_RATIO is a share of the store's memory, from 0 (no check) to 1")
        low, high = BUDGET_LIMITS_MS
        for name in ("hint_budget_ms", "bot_budget_ms"):  # a thinking time is CPU: capped as a seat's is
            if not 0 < getattr(self, name) <= high:
                raise ValueError(f"{env_name(name)} is a thinking time of at most {high} ms")
        if self.create_window < 1:
            raise ValueError("CANASTA_CREATE_WINDOW is a number of seconds, 1 or more")
        for name in ("create_per_address", "bot_games_per_address", "bot_runs_per_client",
                     "store_max_bytes", "idle_seconds", "retention_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"{env_name(name)} must not be negative")

    @property
    def bot_queue_url(self) -> str:
        """The bot queue's Redis (:func:`queue_url`; ValueError when it must be named)."""
        return queue_url(self.redis_url, self.queue_url)

    @classmethod
    def from_env(cls, overrides: dict[str, Any] | None = None) -> Settings:
        """Environment variables (:func:`env_name`), then explicit overrides (field names)."""
        values = {}
        for f in fields(cls):
            name = env_name(f.name)
            if name is not None and (value := _from_env(name, f.default)) is not None:
                values[f.name] = value
        s = cls(**values)
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
