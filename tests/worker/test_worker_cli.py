"""``canasta worker`` as a subprocess: killed -9 mid-run, another one finishes the game; SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

import service
from service.botqueue import BotKeys as Keys
from service.config import Settings
from service.store import Store
from tests.worker.conftest import LEASE_MS, event_versions, new_game

ROOT = Path(__file__).resolve().parents[2]


def worker(redis_url: str, prefix: str, *args: str, budget_ms: int = 15) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CANASTA_KEY_PREFIX": prefix, "CANASTA_BOT_LEASE_MS": str(LEASE_MS),
           "CANASTA_BOT_BUDGET_MS": str(budget_ms), "CANASTA_BOT_SWEEP_SECONDS": "0.5"}
    cmd = [sys.executable, "-m", "cli.main", "worker", "--redis-url", redis_url, "--prefix", prefix, *args]
    # a session of its own: RQ's scheduler is a child process, and -9 must reach it too
    return subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    proc.wait(10)


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_worker_killed_mid_run_is_replaced_and_nothing_is_applied_twice(
        redis_url: str, wprefix: str, wstore: Store, wsettings: Settings, rclient: Any) -> None:
    seats = [{"bot": "expert"}, {"bot": "expert"}, {"bot": "expert"}, {"bot": "expert"}]
    gid = new_game(wstore, wsettings, seats, rules={"target_score": 1500}, seed=31)["id"]
    first = worker(redis_url, wprefix)
    try:
        wait_for(lambda: service.load_game(wstore, gid).version >= 25, 60, "the first worker to play")
    finally:
        kill_group(first)  # SIGKILL in the middle of the bot run
    killed_at = service.load_game(wstore, gid)
    assert killed_at.status == "playing", "the game ended before the kill; the test proves nothing"
    time.sleep(0.3)
    assert service.load_game(wstore, gid).version == killed_at.version  # nobody plays it now
    second = worker(redis_url, wprefix, "--burst")
    try:
        out, _ = second.communicate(timeout=120)
    finally:
        kill_group(second)
    assert second.returncode == 0, out.decode()[-2000:]
    assert b"sweeper: " in out  # the sweeper found the stalled game and gave it a new job
    game = service.load_game(wstore, gid)
    assert game.status == "over"
    assert event_versions(wstore, gid) == list(range(1, game.version + 1))  # no version twice
    moves = [orjson.loads(line)["move"] for line in wstore.read_log(gid) if line.startswith(b'{"move"')]
    assert moves == list(range(1, len(moves) + 1))
    assert rclient.zscore(Keys(wprefix).awaiting(), gid) is None


def test_sigterm_stops_a_worker_pool_cleanly(redis_url: str, wprefix: str, rclient: Any) -> None:
    registered = f"rq:workers:{wprefix}-bots"
    before = rclient.smembers(registered)  # a worker killed -9 earlier stays listed for a while
    pool = worker(redis_url, wprefix, "--pool", "2")
    try:
        # both worker processes registered with RQ on our queue: the pool is up
        wait_for(lambda: len(rclient.smembers(registered) - before) >= 2, 60, "the pool to start")
        assert pool.poll() is None
        os.kill(pool.pid, signal.SIGTERM)
        try:
            out, _ = pool.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            kill_group(pool)
            out, _ = pool.communicate()
            raise AssertionError("the pool did not stop: " + out.decode()[-3000:]) from None
        assert pool.returncode == 0, out.decode()[-2000:]
    finally:
        kill_group(pool)
