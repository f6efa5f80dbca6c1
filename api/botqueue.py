"""The bot queue: how a change after which a bot is to act reaches the bot worker.

The API does not import the worker: it enqueues an RQ job by its function's dotted name
(:data:`JOB_FUNC`), which only the worker process imports and runs. One job plays a *run*
of bot turns (every bot move until a person is to act or the game ends); its id is
``bot-<game>-v<version>``, so the same run enqueued twice is dropped by RQ's unique enqueue.
Jobs are JSON-serialised (no pickle), retried with back-off and bounded by a timeout.

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
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, replace
from typing import Any

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError

from api.redis_io import Script, execute, games_of, pair  # noqa: F401 - pair: the pairing is here too

JOB_FUNC = "worker.jobs.play_bot_turns"  # by name: the API never imports the worker
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
    queue: str = ""  # default: "<prefix>-bots"
    job_timeout: int = 120  # RQ's hard limit of one job, seconds
    result_ttl: int = 120  # a finished job id refuses duplicates this long
    failure_ttl: int = 3600
    retry_intervals: tuple[int, ...] = (1, 3, 10)  # back-off of RQ retries (needs the scheduler)

    def __post_init__(self) -> None:
        if not self.queue:
            object.__setattr__(self, "queue", f"{self.prefix}-bots")

    @classmethod
    def from_env(cls, prefix: str | None = None, **overrides: Any) -> QueueConfig:
        cfg = cls(prefix=prefix or os.environ.get("CANASTA_KEY_PREFIX") or cls.prefix,
                  queue=os.environ.get("CANASTA_BOT_QUEUE", ""))
        return replace(cfg, **overrides) if overrides else cfg


@functools.lru_cache(maxsize=64)
def config_for(prefix: str) -> QueueConfig:
    """The queue of the games under ``prefix``, as the environment names it (read once)."""
    return QueueConfig.from_env(prefix)


class BotKeys:
    """The bot queue's own Redis keys, beside the games' (``api/keys.py``) under one prefix."""

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
    """The bot queue's lanes: lane name -> RQ queue name. One lane today, every bot run;
    a lane added here is watched too (``canasta_bot_queue_depth{lane}``, :func:`lane_keys`)."""
    return {"default": cfg.queue}


def lane_keys(cfg: QueueConfig) -> dict[str, str]:
    """Lane name -> the Redis list RQ keeps the lane's waiting jobs in (its depth: ``LLEN``)."""
    return {lane: Queue.redis_queue_namespace_prefix + name for lane, name in lanes(cfg).items()}


def rq_queue(redis: Any, cfg: QueueConfig) -> Queue:
    return Queue(cfg.queue, connection=redis, serializer=SERIALIZER, default_timeout=cfg.job_timeout)


def notify(redis: Any, cfg: QueueConfig, game_id: str, version: int) -> str | None:
    """A bot is to act in ``game_id`` at ``version``: record it and enqueue the run, unless
    a job holds the game (it plays on). The job id, or None when none was enqueued (a job
    holds the game, or the same run was enqueued before). ``redis``: the queue's client."""
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
    return enqueue(redis, cfg, game_id, version)


def enqueue(redis: Any, cfg: QueueConfig, game_id: str, version: int, attempt: int = 0) -> str | None:
    """Enqueue the run of ``game_id`` from ``version`` (``attempt``: runs of it that failed
    before); None when RQ already holds a job of that id."""
    jid = job_id(game_id, version)
    try:
        rq_queue(redis, cfg).enqueue_call(
            JOB_FUNC,
            kwargs={"game_id": game_id, "version": int(version), "prefix": cfg.prefix, "attempt": attempt},
            job_id=jid,
            unique=True,
            timeout=cfg.job_timeout,
            result_ttl=cfg.result_ttl,
            failure_ttl=cfg.failure_ttl,
            retry=Retry(max=len(cfg.retry_intervals), interval=list(cfg.retry_intervals)),
            description=f"bot turns of game {game_id} from version {version}",
        )
    except DuplicateJobError:
        return None
    return jid


# forget a game's wait unless it was noticed at a newer version
DISCARD = Script("""
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
""")


def discard_command(prefix: str, game_id: str, version: int) -> tuple[Any, ...]:
    """The command of :func:`discard_awaiting`, to send with others (:func:`api.redis_io.execute`)."""
    return DISCARD.command([BotKeys(prefix).awaiting()], [game_id, int(version)])


def discard_awaiting(redis: Any, prefix: str, game_id: str, version: int) -> bool:
    """Forget that ``game_id`` awaits a bot, unless it was noticed at a newer version
    (``ANY_VERSION``: whatever the version)."""
    (reply,) = execute(redis, discard_command(prefix, game_id, version), scripts=(DISCARD,))
    return bool(reply)
