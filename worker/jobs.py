"""The RQ job that plays a run of bot turns.

The API enqueues it by name after every change after which a bot is to act
(:mod:`service.botqueue`: job ids, the awaiting set, the lease check). One job plays a *run*:
every bot move until a person is to act or the game ends (:mod:`worker.runner`); who
answers for a game when no job does: :mod:`worker.recovery`.
"""

from __future__ import annotations

import datetime
import logging
import time
from typing import Any

import redis
from rq import get_current_job

from service import metrics
from worker.config import WorkerConfig
from worker.runner import BotRun

log = logging.getLogger("canasta.worker")

# A run that loses its Redis connection (the server restarted, a failover) starts again on a
# new one for this long: every step of a run is safe to repeat (reads, a lease taken with
# SET NX, moves that are compare-and-sets at the version read), and a run that failed instead
# would be replaced by the sweeper seconds later and count as the bot's failure.
RECONNECT_SECONDS = 20.0
RECONNECT_PAUSES = (0.2, 0.5, 1.0, 2.0)  # then 2 s between tries


def play_bot_turns(game_id: str, version: int, prefix: str, attempt: int = 0) -> dict[str, Any]:
    """The RQ job (:data:`service.botqueue.JOB_FUNC`): play the run of bot turns of ``game_id``
    that starts at ``version``. Counted by outcome (``canasta_bot_runs_total``; ``error``: it
    raised, and the sweeper replaces it), its wait observed (``canasta_bot_wait_seconds``:
    from its making to its start, its client's share's hold included)."""
    job = get_current_job()
    if job is None:  # pragma: no cover - only RQ calls this
        raise RuntimeError("play_bot_turns runs inside an RQ job")
    cfg = WorkerConfig.from_env(prefix)
    deadline = time.monotonic() + RECONNECT_SECONDS
    tries = 0
    start: int | None = version
    # the wait: from the job's making (its enqueue, or its hold for its client's share) to now
    waited = waited_seconds(job.created_at)
    while True:
        try:
            result = BotRun(job.connection, cfg, game_id, token=job.id, waited=waited).run(start, attempt)
        except (redis.ConnectionError, redis.TimeoutError) as e:
            metrics.count_redis_error("worker")
            if time.monotonic() >= deadline:
                metrics.count_bot_run("error")
                raise
            pause = RECONNECT_PAUSES[min(tries, len(RECONNECT_PAUSES) - 1)]
            tries += 1
            start, waited = None, None  # the lost try may have moved the game on: play on from where it is
            log.warning("bot run of %s lost its Redis connection (%s); again in %.1f s", game_id, e, pause)
            time.sleep(pause)
            continue
        except Exception:
            metrics.count_bot_run("error")
            raise
        metrics.count_bot_run(str(result["outcome"]))
        return result


def waited_seconds(since: datetime.datetime | None) -> float | None:
    """Seconds since ``since`` (RQ's, UTC; None: unknown). The enqueuer's clock and this
    worker's: on two boxes, their skew is in it."""
    if since is None:
        return None
    if since.tzinfo is None:
        since = since.replace(tzinfo=datetime.UTC)
    return max(0.0, (datetime.datetime.now(datetime.UTC) - since).total_seconds())
