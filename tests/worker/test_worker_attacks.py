"""Attacks on the bot runs' exactly-once promise: two runs of one game at once whose leases
expire in the middle of their moves (a paused worker, a lease shorter than a move)."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import orjson

import service
from service.config import Settings
from service.store import Store
from tests.worker.conftest import event_versions, new_game
from worker.config import WorkerConfig
from worker.runner import BotRun

FOUR_BOTS = [{"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}, {"bot": "random"}]
RUNS = 3


def test_runs_whose_leases_expire_mid_move_apply_each_turn_once(wstore: Store, wsettings: Settings,
                                                                rclient: Any, cfg: WorkerConfig) -> None:
    """Three runs of the same game at once, each with a lease of 1 ms (it expires during
    every move, so each run takes the game back between moves and all three play it
    together): every version is committed once, and the log replays move by move."""
    created = new_game(wstore, wsettings, FOUR_BOTS, rules={"target_score": 600}, seed=21)
    gid = created["id"]
    v = service.load_game(wstore, gid).version
    short = replace(cfg, lease_ms=1, slice_seconds=60.0)
    barrier = threading.Barrier(RUNS)
    results: list[Any] = [None] * RUNS

    def play(i: int) -> None:
        barrier.wait()
        total = 0
        for _ in range(200):  # a run ends when another holds the lease: start again, as the sweeper would
            game = service.load_game(wstore, gid)
            if game.status != "playing":
                break
            total += BotRun(rclient, short, gid, f"run-{i}").run(game.version)["moves"]
        results[i] = total

    threads = [threading.Thread(target=play, args=(i,)) for i in range(RUNS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    game = service.load_game(wstore, gid)
    assert game.status == "over", game.version
    assert event_versions(wstore, gid) == list(range(1, game.version + 1))  # every version once
    assert sum(results) == game.version - v, results  # each run's moves, counted once, are every move
    moves = [orjson.loads(line)["move"] for line in wstore.read_log(gid) if line.startswith(b'{"move"')]
    assert moves == list(range(1, len(moves) + 1))
    assert len(moves) == game.version - v
