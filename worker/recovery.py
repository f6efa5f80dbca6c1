"""``ensure_job``: a live job for every game where a bot is to act (recovery).

Who is responsible for a game where a bot is to act (so that none stalls):

* the job holding the game's lease (``<prefix>:{game}:botlease``) plays on; while a lease
  is held, :func:`service.botqueue.notify` only records the game, it does not enqueue, and the
  holder's own moves do not notify at all (they say so: ``MoveRequest.by_bot_run``);
* the holder re-reads the game *after* releasing the lease and takes it again if a bot is
  to act, so a move that raced with the release is never left unplayed;
* otherwise the job enqueued for that version does it;
* the sweeper (:mod:`worker.sweeper`) covers the rest: a worker killed -9 (its lease
  expires), a failed job, an enqueue lost with a Redis hiccup.

Every game where a bot is to act is in the sorted set ``<prefix>:bots:awaiting`` (score: the
version), added by the API and removed by the job (or the sweeper) when a person is to act.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.rate_limit import RateLimitRegistry

from service.botqueue import SERIALIZER, BotKeys, BotWork, enqueue, games_of, job_id, rq_queue
from service.keys import Keys
from worker.config import WorkerConfig

log = logging.getLogger("canasta.worker")
START_GRACE_SECONDS = 2.0  # a started run without its game's lease after this long is dead

# waiting its turn: in RQ's scheduled or deferred registries (jobs of before, when RQ retried
# failed runs itself), or in the rate-limited set of its client's share (``service.botqueue``)
WAITING = (JobStatus.SCHEDULED, JobStatus.DEFERRED, JobStatus.RATE_LIMITED)


def ensure_job(redis: Any, cfg: WorkerConfig, game_id: str, version: int, work: BotWork,
               grace_seconds: float | None = None) -> str:
    """Make sure a live job will play ``game_id`` at ``version``; say what was found or done
    (``redis``: the bot queue's client; ``work``: the game's lane and client share).

    Outcomes: ``enqueued`` (none existed), ``waiting`` (queued, or held back for its
    client's share), ``running`` (started moments ago), ``moved_on`` (the game is no longer
    at ``version``), ``replaced`` (a finished, failed, lost or orphaned job, or one left
    scheduled by RQ's retries of before: deleted, its share given back, and enqueued again
    with ``attempt`` + 1 after a failure; after two failures the run falls back to the
    random bot, whose moves are always legal, so that a bot bug cannot stall a game).
    ``grace_seconds`` (default: a lease) is how long a queued or started job is trusted to
    be alive.
    """
    grace = cfg.lease_seconds if grace_seconds is None else grace_seconds
    jid = job_id(game_id, version)
    try:
        job = Job.fetch(jid, connection=redis, serializer=SERIALIZER)
    except NoSuchJobError:
        return "enqueued" if enqueue(redis, cfg, game_id, version, work) else "waiting"
    status = job.get_status(refresh=False)
    now = time.time()
    if status == JobStatus.RATE_LIMITED:
        return "waiting"
    if status == JobStatus.QUEUED:
        q = rq_queue(redis, cfg, work.lane)
        enqueued = job.enqueued_at.timestamp() if job.enqueued_at else now
        if redis.lpos(q.key, jid) is not None or now - enqueued < grace:
            return "waiting"
    elif status == JobStatus.STARTED:
        # alive while it holds its game's lease, which a run takes moments after it starts;
        # a worker killed mid-run (or by a lost connection) leaves it "started" in RQ for minutes
        started = job.started_at.timestamp() if job.started_at else now
        holder = games_of(redis).get(BotKeys(cfg.prefix).lease(game_id))
        if (holder is not None and holder.decode() == jid) or now - started < min(grace, START_GRACE_SECONDS):
            return "running"
    elif status in WAITING:
        enqueued = job.enqueued_at.timestamp() if job.enqueued_at else now
        if now - enqueued < grace:
            return "waiting"
    current = games_of(redis).hget(Keys(cfg.prefix).state(game_id), "version")
    if current is None or int(current) != int(version):
        return "moved_on"  # read before the job finished: it played on, nothing to replace
    attempt = int((job.kwargs or {}).get("attempt", 0)) + (1 if status == JobStatus.FAILED else 0)
    result = job.return_value() if status == JobStatus.FINISHED else None
    log.warning("replacing job %s (status %s, result %s) of game %s", jid, status, result, game_id)
    replace_job(redis, job)
    enqueue(redis, cfg, game_id, version, work, attempt)
    return "replaced"


def replace_job(redis: Any, job: Job) -> None:
    """Delete ``job`` and give its client's share back: the game's lease, not RQ's status,
    says whether a run lives, and this one is found dead (a worker killed -9 leaves its job
    "started" for minutes, holding its share)."""
    key = job.rate_limit_key
    job.delete(remove_from_queue=True)
    if key:
        RateLimitRegistry(key, connection=redis).release_and_enqueue(job.id)
