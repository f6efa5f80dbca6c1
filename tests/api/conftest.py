"""Fixtures of the API tests: a real Redis, an app on a private key prefix, game helpers."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient


def _load_conftest_redis() -> None:
    """tests/conftest_redis.py, shared with other packages' tests (tests/ is not a package,
    and putting it on sys.path would shadow the ``api`` package with ``tests/api``)."""
    if "conftest_redis" not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "conftest_redis.py"
        spec = importlib.util.spec_from_file_location("conftest_redis", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["conftest_redis"] = module
        spec.loader.exec_module(module)


_load_conftest_redis()
from conftest_redis import key_prefix, redis_client, redis_url  # noqa: E402, F401

from api import Settings, create_app  # noqa: E402
from api.store import Store, connect  # noqa: E402


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
    s = Store(connect(settings.redis_url), settings.key_prefix)
    yield s
    s.redis.close()
