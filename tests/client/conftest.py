"""Fixtures of the client tests: a real API server (granian) and a real bot worker on a real
Redis, with short event streams so that every stream test also sees a reconnection."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client import Client
from tests.conftest_redis import key_prefix, redis_url  # noqa: F401
from tests.web.api_servers import api_server, bot_worker

# Streams end after SSE_MAX_SECONDS (the client reconnects with Last-Event-ID); pings keep
# idle streams visibly alive.
SERVER_ENV = {"CANASTA_SSE_MAX_SECONDS": "2", "CANASTA_SSE_PING_SECONDS": "0.5"}


@pytest.fixture(scope="session")
def server(redis_url: str, key_prefix: str) -> Iterator[str]:  # noqa: F811
    """The API's base URL; its bot seats are played by a worker process."""
    with api_server(redis_url, key_prefix, threads=12, extra_env=SERVER_ENV) as base, bot_worker(redis_url, key_prefix):
        yield base


@pytest.fixture
def api(server: str) -> Iterator[Client]:
    client = Client(server)
    yield client
    client.close()  # close idle keep-alive connections before the server stops
