"""Enqueueing bot runs: ``enqueue_bot_turn`` (the API's hook) and ``ensure_job`` (recovery).

One RQ job plays a *run* of bot turns: every bot move until a human is to act or the game
ends (:mod:`worker.runner`). Its id is ``bot-<game>-v<version>``, so the same run enqueued
twice is dropped by RQ's unique enqueue; it is JSON-serialised (no pickle), retried with
back-off and bounded by a timeout.

Who is responsible for a game where a bot is to act (so that none stalls):

* the job holding the game's lease (``<prefix>:{game}:botlease``) plays on; while a lease
  is held, ``enqueue_bot_turn`` only records the game, it does not enqueue (and after the
  holder's own moves, which the API also reports to it, it does nothing at all);
* the holder re-reads the game *after* releasing the lease and takes it again if a bot is
  to act, so a move that raced with the release is never left unplayed;
* otherwise the job enqueued for that version does it;
* the sweeper (:mod:`worker.sweeper`) covers the rest: a worker killed -9 (its lease
  expires), a failed job, an enqueue lost with a Redis hiccup.

Every game where a bot is to act is in the sorted set ``<prefix>:bots:awaiting`` (score: the
version), added here and removed by the job (or the sweeper) when a human is to act, only if
the score is not newer, so a removal never hides a newer wait.
"""

from __future__ import annotations

import contextvars
import logging
import re
import time
from typing import Any

from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from api.keys import Keys as ApiKeys
from api.redis_io import Script, execute
from worker.config import Keys, WorkerConfig

log = logging.getLogger("canasta.worker")

JOB_FUNC = "worker.jobs.play_bot_turns"
SERIALIZER = "rq.serializers.JSONSerializer"
_JOB_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")

# The prefix of the job running in this thread: its own moves call enqueue_bot_turn through
# the API without a prefix, and must land under the job's prefix, not the environment's.
current_prefix: contextvars.ContextVar[str | None] = contextvars.ContextVar("canasta_bot_prefix", default=None)
# The game whose lease this thread's job holds: the API's hook after the job's own moves is
# then a no-op (the holder plays on; the game is already in the awaiting set).
playing: contextvars.ContextVar[str | None] = contextvars.ContextVar("canasta_bot_playing", default=None)

_DISCARD = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""


def job_id(game_id: str, version: int) -> str:
    """``bot-<game>-v<version>``; RQ allows only ``[A-Za-z0-9_-]`` in ids."""
    jid = f"bot-{game_id}-v{int(version)}"
    if not _JOB_ID_RE.match(jid):
        raise ValueError(f"game id {game_id!r} cannot be part of a job id")
    return jid


def config_for(prefix: str | None) -> WorkerConfig:
    return WorkerConfig.from_env(prefix or current_prefix.get())


def queue(redis: Any, cfg: WorkerConfig) -> Queue:
    return Queue(cfg.queue, connection=redis, serializer=SERIALIZER, default_timeout=cfg.job_timeout)


def enqueue_bot_turn(redis: Any, game_id: str, version: int, *, prefix: str | None = None,
                     config: WorkerConfig | None = None) -> str | None:
    """Record that a bot is to act at ``version`` and enqueue the run, unless a job plays the game.

    Returns the job id, or None when a duplicate was dropped or a running job plays on.
    The API calls this after every accepted move after which a bot is to act.
    """
    if playing.get() == game_id:
        return None
    cfg = config or config_for(prefix)
    keys = Keys(cfg.prefix)
    with redis.pipeline(transaction=False) as pipe:
        pipe.zadd(keys.awaiting(), {game_id: int(version)}, gt=True)
        pipe.exists(keys.lease(game_id))
        _, leased = pipe.execute()
    if leased:
        return None
    return _enqueue(redis, cfg, game_id, version)


def _enqueue(redis: Any, cfg: WorkerConfig, game_id: str, version: int, attempt: int = 0) -> str | None:
    jid = job_id(game_id, version)
    try:
        queue(redis, cfg).enqueue_call(
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


DISCARD = Script(_DISCARD)


def discard_command(prefix: str, game_id: str, version: int) -> tuple[Any, ...]:
    """The command of :func:`discard_awaiting`, to send with others (``worker.lease.execute``)."""
    return DISCARD.command([Keys(prefix).awaiting()], [game_id, int(version)])


def discard_awaiting(redis: Any, prefix: str, game_id: str, version: int) -> bool:
    """Forget that ``game_id`` awaits a bot, unless it was noticed at a newer version."""
    (reply,) = execute(redis, discard_command(prefix, game_id, version), scripts=(DISCARD,))
    return bool(reply)


def ensure_job(redis: Any, cfg: WorkerConfig, game_id: str, version: int, grace_seconds: float | None = None) -> str:
    """Make sure a live job will play ``game_id`` at ``version``; say what was found or done.

    Outcomes: ``enqueued`` (none existed), ``waiting`` (queued or scheduled), ``running``
    (started moments ago), ``moved_on`` (the game is no longer at ``version``), ``replaced`` (a finished, failed, lost or orphaned job: deleted
    and enqueued again with ``attempt`` + 1; after two failures the run falls back to the
    random bot, whose moves are always legal, so that a bot bug cannot stall a game).
    """
    grace = cfg.lease_ms / 1000.0 if grace_seconds is None else grace_seconds
    jid = job_id(game_id, version)
    try:
        job = Job.fetch(jid, connection=redis, serializer=SERIALIZER)
    except NoSuchJobError:
        return "enqueued" if _enqueue(redis, cfg, game_id, version) else "waiting"
    status = job.get_status(refresh=False)
    now = time.time()
    if status in (JobStatus.SCHEDULED, JobStatus.DEFERRED):
        return "waiting"
    if status == JobStatus.QUEUED:
        q = queue(redis, cfg)
        enqueued = job.enqueued_at.timestamp() if job.enqueued_at else now
        if redis.lpos(q.key, jid) is not None or now - enqueued < grace:
            return "waiting"
    elif status == JobStatus.STARTED:
        started = job.started_at.timestamp() if job.started_at else now
        if now - started < grace:
            return "running"
    current = redis.hget(ApiKeys(cfg.prefix).state(game_id), "version")
    if current is None or int(current) != int(version):
        return "moved_on"  # read before the job finished: it played on, nothing to replace
    attempt = int((job.kwargs or {}).get("attempt", 0)) + (1 if status == JobStatus.FAILED else 0)
    result = job.return_value() if status == JobStatus.FINISHED else None
    log.warning("replacing job %s (status %s, result %s) of game %s", jid, status, result, game_id)
    job.delete(remove_from_queue=True)
    _enqueue(redis, cfg, game_id, version, attempt)
    return "replaced"


def play_bot_turns(game_id: str, version: int, prefix: str, attempt: int = 0) -> dict[str, Any]:
    """The RQ job: play the run of bot turns of ``game_id`` that starts at ``version``."""
    from rq import get_current_job

    from worker.runner import BotRun

    job = get_current_job()
    if job is None:  # pragma: no cover - only RQ calls this
        raise RuntimeError("play_bot_turns runs inside an RQ job")
    cfg = WorkerConfig.from_env(prefix)
    retry = job.retries_left is not None and job.retries_left < len(cfg.retry_intervals)
    return BotRun(job.connection, cfg, game_id, token=job.id).run(version, attempt, retry)
