"""Settings of the bot worker, from the environment (the same variables as the API's)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from bots import BUDGET_LIMITS_MS
from service.botqueue import BOTS, QueueConfig

LEASE_RENEWALS = 3  # a job renews its lease this many times per lease: a slow move never loses it


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    return float(value) if value else default


@dataclass(frozen=True)
class WorkerConfig(QueueConfig):
    """Everything a job, the sweeper and ``canasta worker`` agree on: the queue
    (:class:`service.botqueue.QueueConfig`, shared with the API) and how the worker plays it."""

    lease_ms: int = 5000  # a job holds a game this long without renewing it
    slice_seconds: float = 5.0  # a job plays this long, then hands the game to a new job
    # in the lane of games of bots only (service.botqueue): nobody waits for them, and a person's
    # game waits for a worker at most this long (and a bot's decision)
    bots_slice_seconds: float = 0.5
    sweep_seconds: float = 3.0
    deep_sweep_seconds: float = 60.0  # full scan of game keys, for a set entry lost
    budget_ms: float = 75.0  # expert thinking time per decision
    # where finished games' logs are written before the retention lets them go (service.retention);
    # "": not archived
    archive_dir: str = ""

    def slice_of(self, lane: str) -> float:
        """How long a run in ``lane`` plays before it hands its game on."""
        return self.bots_slice_seconds if lane == BOTS else self.slice_seconds

    @property
    def lease_seconds(self) -> float:
        return self.lease_ms / 1000.0

    @property
    def renew_seconds(self) -> float:
        """How long a job plays between renewals of its lease."""
        return self.lease_seconds / LEASE_RENEWALS

    def __post_init__(self) -> None:
        super().__post_init__()
        high = BUDGET_LIMITS_MS[1]
        if not 0 < self.budget_ms <= high:  # a thinking time is CPU: capped as a seat's is
            raise ValueError(f"CANASTA_BOT_BUDGET_MS is a thinking time of at most {high} ms")

    @classmethod
    def from_env(cls, prefix: str | None = None, **overrides: Any) -> WorkerConfig:
        queue = QueueConfig.from_env(prefix)
        cfg = cls(
            prefix=queue.prefix,
            queue=queue.queue,
            lease_ms=int(_env_float("CANASTA_BOT_LEASE_MS", cls.lease_ms)),
            slice_seconds=_env_float("CANASTA_BOT_SLICE_SECONDS", cls.slice_seconds),
            bots_slice_seconds=_env_float("CANASTA_BOT_BOTS_SLICE_SECONDS", cls.bots_slice_seconds),
            runs_per_client=queue.runs_per_client,
            sweep_seconds=_env_float("CANASTA_BOT_SWEEP_SECONDS", cls.sweep_seconds),
            budget_ms=_env_float("CANASTA_BOT_BUDGET_MS", cls.budget_ms),
            archive_dir=os.environ.get("CANASTA_ARCHIVE_DIR", "").strip(),
        )
        return replace(cfg, **overrides) if overrides else cfg
