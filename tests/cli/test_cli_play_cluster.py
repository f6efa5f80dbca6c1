"""``canasta play --redis-url redis+cluster://... --queue-url ...`` (``make test-cluster`` only: the
suite's local cluster and queue Valkey): the local service it starts keeps the game on the
cluster and the bot queue on the queue's Valkey, and the bots answer the player's moves."""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

import pexpect
import pytest

from service.keys import Keys
from service.redis_io import connect
from tests.client.test_play_terminal import MENU_KEY, PICK, PREFERENCE, PROMPT, read, transcript
from tests.conftest_redis import CLUSTER_TESTS, delete_test_keys, queue_client, redis_url  # noqa: F401

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(not CLUSTER_TESTS, reason="on the local cluster of make test-cluster")]

ROOT = Path(__file__).resolve().parents[2]
BOT_MOVED = re.compile(r"Seat [123] \(greedy\) (drew|discarded|took|melded)|Greedy bot \(seat [123]\)")


def test_play_on_a_cluster_with_the_queue_named_by_its_option(redis_url: str) -> None:  # noqa: F811
    queue = os.environ["CANASTA_QUEUE_URL"]  # the suite's queue Valkey, given here as --queue-url only
    prefix = f"test-play-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CANASTA_QUEUE_URL")}
    env.update({"CANASTA_KEY_PREFIX": prefix, "NO_COLOR": "1", "COLUMNS": "120", "LINES": "50",
                "PYTHONIOENCODING": "utf-8", "TERM": "xterm"})
    child = pexpect.spawn(sys.executable, ["-m", "cli.main", "play", "--redis-url", redis_url, "--queue-url", queue,
                                           "--bots", "greedy,greedy,greedy", "--name", "ann"],
                          cwd=str(ROOT), env=env, encoding="utf-8", timeout=60, dimensions=(50, 120))
    child.transcript = []  # type: ignore[attr-defined]
    moves = 0
    games, queue_client_ = connect(redis_url), queue_client(redis_url)
    try:
        while True:  # play until a bot has answered one of ann's moves, then leave
            i, text = read(child, [PROMPT, PICK], timeout=90)
            if i == 1:
                child.sendline("1")
                continue
            if moves >= 2 and BOT_MOVED.search(transcript(child)):
                break
            keys = MENU_KEY.findall(text.rsplit("Your turn", 1)[-1])
            assert keys, text
            child.sendline(next(k for k in PREFERENCE if k in keys))
            moves += 1
            assert moves < 40, transcript(child)[-3000:]
        child.sendline("quit")
        child.expect(pexpect.EOF, timeout=60)
        child.close()
        assert child.exitstatus == 0, transcript(child)[-3000:]
        states = [k for k in games.scan_iter(match=f"{prefix}:*:state", count=1000)]
        assert len(states) == 1, states  # the game is on the cluster
        game_id = states[0].decode().split("{", 1)[1].split("}", 1)[0]
        assert games.xlen(Keys(prefix).events(game_id)) > moves  # ann's moves and the bots'
        assert not list(games.scan_iter(match="rq:*", count=1000))  # RQ ran on the queue's Valkey
    finally:
        child.close(force=child.isalive())
        delete_test_keys(queue_client_, prefix)
        games.close()
