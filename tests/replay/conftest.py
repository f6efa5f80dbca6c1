"""Fixtures of the replay tests: simulated logs, generated once per test session."""

from __future__ import annotations

from typing import Any

import pytest
from replay_corpus import corpus

# Random games to a low target: one to a few hands each, so that the fast suite can check
# every preset and player count several times.
FAST_GAMES = 15
FAST_TARGET = 1000


@pytest.fixture(scope="session")
def fast_corpus() -> dict[str, list[list[dict[str, Any]]]]:
    return corpus(FAST_GAMES, FAST_TARGET)


@pytest.fixture(scope="session")
def sample_logs(fast_corpus: dict[str, list[list[dict[str, Any]]]]) -> list[list[dict[str, Any]]]:
    """About 30 finished logs across every configuration, for mutations and CLI tests."""
    return [games[g] for games in fast_corpus.values() for g in range(2)] + [games[2] for games in list(fast_corpus.values())[:4]]


from tests.conftest_redis import key_prefix, redis_client, redis_url  # noqa: E402, F401
