"""The RQ job that plays a run of bot turns.

The API enqueues it by name after every change after which a bot is to act
(:mod:`api.botqueue`: job ids, the awaiting set, the lease check). One job plays a *run*:
every bot move until a person is to act or the game ends (:mod:`worker.runner`); who
answers for a game when no job does: :mod:`worker.recovery`.
"""

from __future__ import annotations

from typing import Any

from rq import get_current_job

from worker.config import WorkerConfig
from worker.runner import BotRun


def play_bot_turns(game_id: str, version: int, prefix: str, attempt: int = 0) -> dict[str, Any]:
    """The RQ job (:data:`api.botqueue.JOB_FUNC`): play the run of bot turns of ``game_id``
    that starts at ``version``."""
    job = get_current_job()
    if job is None:  # pragma: no cover - only RQ calls this
        raise RuntimeError("play_bot_turns runs inside an RQ job")
    cfg = WorkerConfig.from_env(prefix)
    retry = job.retries_left is not None and job.retries_left < len(cfg.retry_intervals)
    return BotRun(job.connection, cfg, game_id, token=job.id).run(version, attempt, retry)
