"""The bot queue: how a change after which a bot is to act reaches the bot worker.

The API does not import the worker: it enqueues an RQ job by its function's dotted name
(:data:`JOB_FUNC`), which only the worker process imports and runs. One job plays a *run*
of bot turns (every bot move until a person is to act, the game ends or its time slice
runs out); its id is ``bot-<game>-v<version>``, so the same run enqueued twice is dropped
(:func:`enqueue`). Jobs are JSON-serialised (no pickle) and bounded by a timeout; a failed
one is replaced by the sweeper (``worker.recovery``), not retried by RQ.

Besides the queue, Redis holds what makes a lost job visible (``worker.recovery`` says who is
responsible for a game when, ``worker.sweeper`` repairs):

* the sorted set ``<prefix>:bots:awaiting``: every game where a bot is to act, scored by the
  version it was noticed at; added to here, removed (:func:`discard_awaiting`) only if the
  score is not newer, so a removal never hides a newer wait;
* the lease ``<prefix>:{game}:botlease``, held by the job that plays the game now: while it
  is held, :func:`notify` only records the game, the holder plays on.

Two Redis roles: the *queue* Redis holds RQ's keys and the awaiting set (one set across
games: it needs one server); the *games* Redis (a single server or a cluster) holds the
games and their leases (a lease shares its game's hash slot). By default they are one server
(``CANASTA_QUEUE_URL`` unset); RQ cannot run on a cluster, so with a cluster they are two.
Functions here and in the worker take the queue client, and find the games client paired
with it (:func:`pair`, :func:`games_of`); an unpaired client plays both roles.

**The bots' fair share.** One client's many bot games must not delay another client's game:

* two *lanes*, two RQ queues that every worker takes in order: ``persons`` (a game where a
  person sits: someone waits for the bots' turns) before ``bots`` (a game of bots only:
  nobody waits). A run in the ``bots`` lane plays a short time slice before it hands its
  game to a new job at the lane's end (``worker.config``), so a person's game waits at
  most for a slice of another game;
* a *share per client* in each lane: the runs of one client's games queued or playing at
  once are limited (``bot_runs``: the client's quota, remembered by the game; RQ's
  concurrency limit, ``rq.RateLimit``). The others wait in RQ's rate-limited set, oldest
  first, and move to the queue as the client's runs end: a client with twenty games gets
  its share, not twenty.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, replace
from typing import Any

from rq import Queue, RateLimit
from rq.job import Job

from service.redis_io import Script, execute, games_of, pair  # noqa: F401 - pair: the pairing is here too

JOB_FUNC = "worker.jobs.play_bot_turns"  # by name: the API never imports the worker
PERSONS, BOTS = "persons", "bots"  # the lanes (see the module): a person's game, a game of bots only
LANES = (PERSONS, BOTS)  # in the order every worker takes them
ENQUEUE_GUARD_MS = 10_000  # two enqueues of one job id racing each other: the second stands down
SERIALIZER = "rq.serializers.JSONSerializer"
ANY_VERSION = 1 << 62  # newer than any version a game reaches: "forget the wait, whatever its version"
_JOB_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class QueueConfig:
    """What the API and the worker agree on about the queue.

    ``prefix`` is the API's key prefix (``CANASTA_KEY_PREFIX``); the RQ queue is named after
    it (``CANASTA_BOT_QUEUE`` names another) so that two deployments (or test sessions)
    sharing one Redis never take each other's jobs.
    """

    prefix: str = "canasta"
    queue: str = ""  # the persons' lane; default: "<prefix>-bots" (the bots' lane: "<queue>-bg")
    job_timeout: int = 120  # RQ's hard limit of one job, seconds
    result_ttl: int = 120  # a finished job's record is kept this long
    failure_ttl: int = 3600
    # bot runs of one client queued or playing at once, per lane, for games that do not say
    # (games created before they did); 0: no limit
    runs_per_client: int = 1

    def __post_init__(self) -> None:
        if not self.queue:
            object.__setattr__(self, "queue", f"{self.prefix}-bots")

    def lane_queue(self, lane: str) -> str:
        """The RQ queue of ``lane``."""
        return self.queue if lane == PERSONS else f"{self.queue}-bg"

    @classmethod
    def from_env(cls, prefix: str | None = None, **overrides: Any) -> QueueConfig:
        runs = os.environ.get("CANASTA_BOT_RUNS_PER_CLIENT", "").strip()
        cfg = cls(prefix=prefix or os.environ.get("CANASTA_KEY_PREFIX") or cls.prefix,
                  queue=os.environ.get("CANASTA_BOT_QUEUE", ""),
                  runs_per_client=int(runs) if runs else cls.runs_per_client)
        return replace(cfg, **overrides) if overrides else cfg


@dataclass(frozen=True)
class BotWork:
    """Where a game's bot runs are scheduled: its lane, its client, and how many runs of
    that client's games in the lane may be queued or playing at once (0: no limit)."""

    lane: str
    client: str
    runs: int

    @classmethod
    def of(cls, game_id: str, meta: dict[str, Any], cfg: QueueConfig) -> BotWork:
        """From a game's meta: a person sits at it (a named seat no bot plays) or not; the
        client that created it (a game of before: a client of its own)."""
        person = any(s.get("name") is not None and not s.get("bot") for s in meta["seats"])
        runs = meta.get("bot_runs")
        return cls(PERSONS if person else BOTS, str(meta.get("client") or f"g:{game_id}"),
                   int(runs) if runs is not None else cfg.runs_per_client)

    def rate_limit(self, cfg: QueueConfig) -> RateLimit | None:
        """RQ's concurrency limit of this client in this lane (None: no limit)."""
        return RateLimit(f"{cfg.prefix}:{self.lane}:{self.client}", self.runs) if self.runs > 0 else None


def rate_limit_keys_of(prefix: str, keys: list[str]) -> list[str]:
    """The RQ rate-limit keys (``rq.rate_limit.RateLimitRegistry``) of ``prefix``'s games."""
    return [k for k in keys if any(k.startswith(f"{prefix}:{lane}:") for lane in LANES)]


@functools.lru_cache(maxsize=64)
def config_for(prefix: str) -> QueueConfig:
    """The queue of the games under ``prefix``, as the environment names it (read once)."""
    return QueueConfig.from_env(prefix)


class BotKeys:
    """The bot queue's own Redis keys, beside the games' (``service/keys.py``) under one prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def awaiting(self) -> str:
        """Sorted set: games where a bot is to act; score = the version it was noticed at."""
        return f"{self.prefix}:bots:awaiting"

    def lease(self, game_id: str) -> str:
        """String: the id of the job playing this game's bots now (expires if it dies)."""
        return f"{self.prefix}:{{{game_id}}}:botlease"


def job_id(game_id: str, version: int) -> str:
    """``bot-<game>-v<version>``; RQ allows only ``[A-Za-z0-9_-]`` in ids."""
    jid = f"bot-{game_id}-v{int(version)}"
    if not _JOB_ID_RE.match(jid):
        raise ValueError(f"game id {game_id!r} cannot be part of a job id")
    return jid


def lanes(cfg: QueueConfig) -> dict[str, str]:
    """The bot queue's lanes (:data:`LANES`): lane name -> RQ queue name, watched by
    ``canasta_bot_queue_depth{lane}`` (:func:`lane_keys`)."""
    return {lane: cfg.lane_queue(lane) for lane in LANES}


def lane_keys(cfg: QueueConfig) -> dict[str, str]:
    """Lane name -> the Redis list RQ keeps the lane's waiting jobs in (its depth: ``LLEN``)."""
    return {lane: Queue.redis_queue_namespace_prefix + name for lane, name in lanes(cfg).items()}


def rq_queue(redis: Any, cfg: QueueConfig, lane: str = PERSONS) -> Queue:
    return Queue(cfg.lane_queue(lane), connection=redis, serializer=SERIALIZER, default_timeout=cfg.job_timeout)


def rq_queues(redis: Any, cfg: QueueConfig) -> list[Queue]:
    """Every lane's queue, in the order the workers take them."""
    return [rq_queue(redis, cfg, lane) for lane in LANES]


def notify(redis: Any, cfg: QueueConfig, game_id: str, version: int, work: BotWork) -> str | None:
    """A bot is to act in ``game_id`` at ``version``: record it and enqueue the run (in
    ``work``'s lane, on its client's share), unless a job holds the game (it plays on). The
    job id, or None when none was enqueued (a job holds the game, or the same run was
    enqueued before). ``redis``: the queue's client."""
    keys = BotKeys(cfg.prefix)
    games = games_of(redis)
    if games is redis:
        with redis.pipeline(transaction=False) as pipe:
            pipe.zadd(keys.awaiting(), {game_id: int(version)}, gt=True)
            pipe.exists(keys.lease(game_id))
            _, leased = pipe.execute()
    else:  # the wait first, then the lease: a holder that releases after this re-reads the game
        execute(redis, ("ZADD", keys.awaiting(), "GT", int(version), game_id))
        (leased,) = execute(games, ("EXISTS", keys.lease(game_id)))
    if leased:
        return None
    return enqueue(redis, cfg, game_id, version, work)


def guard_key(cfg: QueueConfig, jid: str) -> str:
    """String: held while job ``jid`` is enqueued, so that a second enqueue racing it stands down."""
    return f"{cfg.prefix}:bots:enqueued:{jid}"


def enqueue(redis: Any, cfg: QueueConfig, game_id: str, version: int, work: BotWork, attempt: int = 0) -> str | None:
    """Enqueue the run of ``game_id`` from ``version`` in ``work``'s lane, on its client's
    share (``attempt``: runs of it that failed before); None when RQ holds a job of that id
    already, or another enqueue of it is under way.

    RQ refuses ``unique`` jobs with a concurrency limit, so the dedup is ours: a guard key
    held with ``SET NX`` while the job is enqueued (two racing enqueues), then the job's own
    key (a job enqueued before, kept ``result_ttl`` after it ends). A failed run is not retried by RQ (its retries need RQ's scheduler, a process
    that dies with a dropped connection): the sweeper replaces it (``worker.recovery``)."""
    jid = job_id(game_id, version)
    guard = guard_key(cfg, jid)
    (taken,) = execute(redis, ("SET", guard, "1", "NX", "PX", ENQUEUE_GUARD_MS))
    if taken is None:
        return None
    try:
        (exists,) = execute(redis, ("EXISTS", Job.key_for(jid)))
        if exists:
            return None
        rq_queue(redis, cfg, work.lane).enqueue_call(
            JOB_FUNC,
            kwargs={"game_id": game_id, "version": int(version), "prefix": cfg.prefix, "attempt": attempt},
            job_id=jid,
            timeout=cfg.job_timeout,
            result_ttl=cfg.result_ttl,
            failure_ttl=cfg.failure_ttl,
            description=f"bot turns of game {game_id} from version {version}",
            rate_limit=work.rate_limit(cfg),
        )
        return jid
    finally:  # the job's own key says "enqueued" from now on (a crash here: the guard expires)
        execute(redis, ("DEL", guard))


# forget a game's wait unless it was noticed at a newer version
DISCARD = Script("""
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
""")


def discard_command(prefix: str, game_id: str, version: int) -> tuple[Any, ...]:
    """The command of :func:`discard_awaiting`, to send with others (:func:`service.redis_io.execute`)."""
    return DISCARD.command([BotKeys(prefix).awaiting()], [game_id, int(version)])


def discard_awaiting(redis: Any, prefix: str, game_id: str, version: int) -> bool:
    """Forget that ``game_id`` awaits a bot, unless it was noticed at a newer version
    (``ANY_VERSION``: whatever the version)."""
    (reply,) = execute(redis, discard_command(prefix, game_id, version), scripts=(DISCARD,))
    return bool(reply)
