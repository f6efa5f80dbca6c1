"""Fixtures of the worker tests: the shared real Redis (``tests/conftest_redis.py``), a key
prefix and RQ queue of our own (cleaned up afterwards), the API app on that prefix, and
helpers to run workers and read a game's events."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import service  # noqa: E402
from service.store import Store  # noqa: E402
from tests.conftest_redis import delete_test_keys, queue_client, redis_url  # noqa: E402, F401
from web import Settings, create_app  # noqa: E402
from worker.config import WorkerConfig  # noqa: E402

LEASE_MS = 1000  # short, so that the killed-worker test waits ~1 s for the lease to expire


@pytest.fixture(scope="session")
def wprefix(redis_url: str) -> Iterator[str]:  # noqa: F811
    """Our own key prefix; afterwards its keys, our RQ queue's keys and our games' jobs are deleted."""
    prefix = f"wtest-{uuid.uuid4().hex[:10]}"
    yield prefix
    client = queue_client(redis_url)
    try:
        delete_test_keys(client, prefix)
    finally:
        client.close()


@pytest.fixture(autouse=True)
def worker_env(wprefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker reads its settings from the environment, as in production."""
    monkeypatch.setenv("CANASTA_KEY_PREFIX", wprefix)
    monkeypatch.setenv("CANASTA_BOT_LEASE_MS", str(LEASE_MS))
    monkeypatch.setenv("CANASTA_BOT_BUDGET_MS", "5")
    monkeypatch.setenv("CANASTA_BOT_SWEEP_SECONDS", "0.5")
    monkeypatch.setenv("CANASTA_EVENTS_KEEP", "0")  # the tests check every version's event


@pytest.fixture(scope="session")
def rclient(redis_url: str) -> Iterator[Any]:  # noqa: F811
    """The bot queue's client (RQ, the awaiting set), paired with the games' (on a cluster,
    the games are elsewhere: :func:`service.botqueue.games_of`)."""
    client = queue_client(redis_url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def wsettings(redis_url: str, wprefix: str) -> Settings:  # noqa: F811
    return Settings.from_env({"redis_url": redis_url, "key_prefix": wprefix, "test_seeds": True,
                              "rate_limit_enabled": False, "events_keep": 0})


@pytest.fixture(scope="session")
def wstore(rclient: Any, wprefix: str) -> Store:
    from service.botqueue import games_of

    return Store.for_settings(games_of(rclient), Settings.from_env({"key_prefix": wprefix}), queue=rclient)


@pytest.fixture
def cfg(wprefix: str, worker_env: None) -> WorkerConfig:
    return WorkerConfig.from_env(wprefix)


@pytest.fixture(scope="session")
def wapp(wsettings: Settings) -> Any:
    return create_app(wsettings)


@pytest.fixture
def http(wapp: Any) -> Any:
    return wapp.test_client()


def new_game(store: Store, settings: Settings, seats: list[dict[str, Any]], preset: str = "finnish",
             seed: int = 5, rules: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"preset": preset, "seats": seats, "seed": seed}
    if rules:
        body["rules"] = rules
    created, _ = service.create_game(store, settings, body)
    return created


def event_versions(store: Store, game_id: str) -> list[int]:
    return [int(e.fields["v"]) for e in store.events_after(game_id, "0-0", 100_000)]


def move_events(store: Store, game_id: str) -> list[dict[str, Any]]:
    """Every move event as a spectator reads it (seat, action, version)."""
    out = []
    for e in store.events_after(game_id, "0-0", 100_000):
        body = service.render_event(e.id, e.fields, None)
        if body["type"] == "move":
            move = body["data"]["move"]
            out.append({"version": body["version"], "seat": move["seat"], "action": move["action"]})
    return out


def run_worker(redis: Any, cfg: WorkerConfig, rounds: int = 50) -> None:
    """In-process SimpleWorker bursts (no fork) until every lane's queue is empty (a run
    handed on at its slice's end, or let through by its client's share, is queued anew)."""
    from service.botqueue import rq_queues
    from worker.cli import _make_worker

    for _ in range(rounds):
        _make_worker(redis, cfg).work(burst=True, with_scheduler=False, logging_level="WARNING")
        if not any(len(q) for q in rq_queues(redis, cfg)):
            return
