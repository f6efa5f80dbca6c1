"""Fixtures of the API tests: a real Redis, an app on a private key prefix, game helpers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.store import Store, connect  # noqa: E402
from tests.conftest_redis import key_prefix, redis_client, redis_url  # noqa: E402, F401
from web import Settings, create_app  # noqa: E402


@pytest.fixture(scope="session")
def settings(redis_url: str, key_prefix: str) -> Settings:  # noqa: F811
    return Settings.from_env({
        "redis_url": redis_url,
        "key_prefix": key_prefix,
        "test_seeds": True,
        "rate_limit_enabled": False,
        "sse_ping_seconds": 0.2,
        "sse_max_seconds": 1.5,
        "poll_max_wait": 2.0,
    })


@pytest.fixture(scope="session")
def app(settings: Settings) -> Flask:
    return create_app(settings)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="session")
def store(settings: Settings) -> Iterator[Store]:
    s = Store.for_settings(connect(settings.redis_url), settings)
    yield s
    s.redis.close()
