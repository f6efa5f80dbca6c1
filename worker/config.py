"""Settings of the bot worker, from the environment (the same variables as the API's)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    return float(value) if value else default


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a job, the sweeper and ``canasta worker`` agree on.

    ``prefix`` is the API's key prefix (``CANASTA_KEY_PREFIX``); the RQ queue is named after
    it so that two deployments (or test sessions) sharing one Redis never take each
    other's jobs.
    """

    prefix: str = "canasta"
    queue: str = ""  # default: "<prefix>-bots"
    lease_ms: int = 5000  # a job holds a game this long without renewing it
    slice_seconds: float = 5.0  # a job plays this long, then hands the game to a new job
    job_timeout: int = 120  # RQ's hard limit of one job
    result_ttl: int = 120  # a finished job id refuses duplicates this long
    failure_ttl: int = 3600
    retry_intervals: tuple[int, ...] = (1, 3, 10)  # back-off of RQ retries (needs the scheduler)
    sweep_seconds: float = 3.0
    deep_sweep_seconds: float = 60.0  # full scan of game keys, for a set entry lost
    budget_ms: float = 75.0  # expert thinking time per decision

    def __post_init__(self) -> None:
        if not self.queue:
            object.__setattr__(self, "queue", f"{self.prefix}-bots")

    @classmethod
    def from_env(cls, prefix: str | None = None, **overrides: Any) -> WorkerConfig:
        p = prefix or os.environ.get("CANASTA_KEY_PREFIX") or cls.prefix
        cfg = cls(
            prefix=p,
            queue=os.environ.get("CANASTA_BOT_QUEUE", ""),
            lease_ms=int(_env_float("CANASTA_BOT_LEASE_MS", cls.lease_ms)),
            slice_seconds=_env_float("CANASTA_BOT_SLICE_SECONDS", cls.slice_seconds),
            sweep_seconds=_env_float("CANASTA_BOT_SWEEP_SECONDS", cls.sweep_seconds),
            budget_ms=_env_float("CANASTA_BOT_BUDGET_MS", cls.budget_ms),
        )
        return replace(cfg, **overrides) if overrides else cfg


class Keys:
    """The worker's own Redis keys, beside the API's (``api/keys.py``) under the same prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def awaiting(self) -> str:
        """Sorted set: games where a bot is to act; score = the version it was noticed at."""
        return f"{self.prefix}:bots:awaiting"

    def lease(self, game_id: str) -> str:
        """String: the id of the job playing this game's bots now (expires if it dies)."""
        return f"{self.prefix}:{{{game_id}}}:botlease"
