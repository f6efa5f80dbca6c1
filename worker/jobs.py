"""The RQ job that plays a run of bot turns.

The API enqueues it by name after every change after which a bot is to act
(:mod:`api.botqueue`: job ids, the awaiting set, the lease check). One job plays a *run*:
every bot move until a person is to act or the game ends (:mod:`worker.runner`); who
answers for a game when no job does: :mod:`worker.recovery`.
"""

from __future__ import annotations

import datetime
from typing import Any

import redis
from rq import get_current_job

from api import metrics
from worker.config import WorkerConfig
from worker.runner import BotRun


def play_bot_turns(game_id: str, version: int, prefix: str, attempt: int = 0) -> dict[str, Any]:
    """The RQ job (:data:`api.botqueue.JOB_FUNC`): play the run of bot turns of ``game_id``
    that starts at ``version``. Counted by outcome (``canasta_bot_runs_total``; ``error``: it
    raised, and RQ retries it), its wait in the queue observed (``canasta_bot_wait_seconds``)."""
    job = get_current_job()
    if job is None:  # pragma: no cover - only RQ calls this
        raise RuntimeError("play_bot_turns runs inside an RQ job")
    cfg = WorkerConfig.from_env(prefix)
    retry = job.retries_left is not None and job.retries_left < len(cfg.retry_intervals)
    run = BotRun(job.connection, cfg, game_id, token=job.id, waited=waited_seconds(job.enqueued_at))
    try:
        result = run.run(version, attempt, retry)
    except Exception as e:
        metrics.count_bot_run("error")
        if isinstance(e, redis.ConnectionError | redis.TimeoutError):
            metrics.count_redis_error("worker")
        raise
    metrics.count_bot_run(str(result["outcome"]))
    return result


def waited_seconds(enqueued_at: datetime.datetime | None) -> float | None:
    """Seconds since ``enqueued_at`` (RQ's, UTC; None: unknown). The enqueuer's clock and this
    worker's: on two boxes, their skew is in it."""
    if enqueued_at is None:
        return None
    if enqueued_at.tzinfo is None:
        enqueued_at = enqueued_at.replace(tzinfo=datetime.UTC)
    return max(0.0, (datetime.datetime.now(datetime.UTC) - enqueued_at).total_seconds())
