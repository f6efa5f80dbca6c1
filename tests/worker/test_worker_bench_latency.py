"""``canasta bench bots latency``: a short burst on the suite's Redis (one server in ``make test``;
the local cluster, with the bot queue on its own Valkey, in ``make test-cluster``): the bots
play, their turns are timed from the events, and nothing of the bench is left behind."""

from __future__ import annotations

import os
import re

import pytest

from bench.bots import main
from service.redis_io import connect
from tests.conftest_redis import CLUSTER_TESTS, queue_client

BURST = ["--games", "4", "--seconds", "1.5", "--warmup", "0.5", "--pool", "1", "--drivers", "1",
         "--think-ms", "20", "--think-jitter", "0", "--bot", "greedy"]


def test_a_short_burst_times_bot_turns(redis_url: str, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANASTA_KEY_PREFIX", "unset")  # the bench sets its own here: restored after the test
    code = main(["latency", "--redis-url", redis_url, *BURST])
    out = capsys.readouterr().out
    assert code in (0, 1), out  # 1: a goal missed on a busy machine
    turns = re.search(r"bot turns (\d+)  human moves (\d+)", out)
    assert turns and int(turns.group(1)) > 0 and int(turns.group(2)) > 0, out
    assert re.search(r"per bot turn: p50 [\d.]+ ms", out), out
    assert re.search(r"redis [\d.]+ ms", out), out  # every node's CPU was read (a cluster's too)
    prefix = os.environ["CANASTA_KEY_PREFIX"]  # the bench's own, set for its workers
    assert prefix.startswith("bench-")
    games = connect(redis_url)
    queue = queue_client(redis_url)
    try:
        assert not list(games.scan_iter(match=f"{prefix}:*", count=1000)), "the bench's games are left"
        assert not list(queue.scan_iter(match=f"{prefix}:*", count=1000)), "its awaiting set is left"
        if CLUSTER_TESTS:  # RQ ran on the queue's Valkey, nothing of it on the cluster
            assert not list(games.scan_iter(match="rq:*", count=1000))
    finally:
        games.close()
