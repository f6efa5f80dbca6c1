"""A crash in the middle of writing a transaction to the append-only file (servers.aof): the
cut transaction is never applied, not at the next start and not at the one after it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import redis

from servers.aof import last_incremental_file, mend_unfinished_tail, read_tail
from servers.embedded import EmbeddedRedis

# two writes in one script: appended to the file as MULTI, XADD, HSET, EXEC (our commit's shape)
COMMIT = "redis.call('XADD', KEYS[1], '*', 'v', ARGV[1]); redis.call('HSET', KEYS[2], 'version', ARGV[1]); return 1"
MULTI = b"*1\r\n$5\r\nMULTI\r\n"


def command(*words: bytes) -> bytes:
    return b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)


SET = command(b"SET", b"k", b"v")
BLOCK = MULTI + command(b"XADD", b"ev", b"1-1", b"v", b"1") + command(b"HSET", b"st", b"version", b"1") + command(b"EXEC")


@pytest.mark.parametrize(("data", "whole", "unfinished"), [
    (b"", 0, False),
    (SET + BLOCK, len(SET + BLOCK), False),
    (SET + SET[:-3], len(SET), True),  # a command cut short
    (SET + BLOCK[:-4], len(SET), True),  # a transaction cut inside its EXEC
    (SET + BLOCK[:len(MULTI) + 30], len(SET), True),  # ... inside its first command
    (SET + BLOCK[:-len(command(b"EXEC"))], len(SET), True),  # whole commands, no EXEC
    (SET + b"#TS:1796617528\r\n" + SET, len(SET) * 2 + 16, False),  # annotations are lines
    (SET + b"+garbage\r\n" + SET, len(SET), False),  # not a command: Valkey's to judge
    (SET + MULTI + SET + BLOCK, len(SET), False),  # a MULTI in a MULTI: mended badly before
])
def test_the_tail_is_read_to_the_last_whole_command_outside_a_transaction(data: bytes, whole: int,
                                                                           unfinished: bool) -> None:
    tail = read_tail(data)
    assert (tail.size, tail.whole, tail.unfinished) == (len(data), whole, unfinished)


def _crash_mid_transaction(data_dir: Path) -> None:
    """Append to the file what a kill in the middle of writing the last transaction again
    leaves: its MULTI and first command whole, the second one cut (a later stream id, as a
    commit after the last one would have)."""
    path = last_incremental_file(data_dir)
    assert path is not None
    data = path.read_bytes()
    block = data[data.rindex(MULTI):]
    cut = block[:block.index(b"$4\r\nHSET") + 8]
    cut = re.sub(rb"(\d{13})-0", lambda m: b"%d-0" % (int(m.group(1)) + 1), cut)
    path.write_bytes(data + cut)


def test_a_transaction_cut_by_a_crash_is_never_applied(tmp_path: Path) -> None:
    data = tmp_path / "valkey"
    with EmbeddedRedis(data_dir=data) as server:
        client = redis.Redis.from_url(server.url)
        client.eval(COMMIT, 2, "events", "state", 1)
        client.close()
    _crash_mid_transaction(data)
    for version in (2, 3):  # the start after the crash, and the one after that
        with EmbeddedRedis(data_dir=data) as server:
            client = redis.Redis.from_url(server.url)
            assert client.xinfo_stream("events")["entries-added"] == version - 1
            assert [e[1][b"v"] for e in client.xrange("events")] == [b"%d" % v for v in range(1, version)]
            client.eval(COMMIT, 2, "events", "state", version)
            client.close()
    assert mend_unfinished_tail(data) == 0  # whole again
