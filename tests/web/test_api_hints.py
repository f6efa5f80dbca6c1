"""Hints are bounded, tried over HTTP by a seat that asks too much: an answer is kept per game
version, seat and bot (never another seat's), hints have their own per-token limit (429 with
Retry-After), and the expert thinks within the configured wall-clock budget."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from api_helpers import Table, auth, four_humans
from flask.testing import FlaskClient

import engine
import service
from service.store import Store
from web import create_app


@pytest.fixture
def limited(redis_url: str, key_prefix: str) -> Iterator[FlaskClient]:
    """An app with the rate limiter on: 3 hints per window per token, 100 other requests."""
    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix, "test_seeds": True,
                      "rate_limit_per_address": 0, "rate_limit_per_token": 100, "rate_limit_hints_per_token": 3,
                      "rate_limit_window": 30})
    yield app.test_client()


def drawn(client: FlaskClient, seed: int = 7, **game: Any) -> Table:
    """A game whose first seat has drawn: a choice among many moves (``game``: a preset and
    players for ``four_humans``)."""
    t = Table(client, four_humans(seed=seed, **game))
    _, etag = t.view(0)
    assert t.move(0, {"type": "draw"}, etag).status_code == 200
    return t


def hint(client: FlaskClient, t: Table, seat: int, bot: str = "greedy") -> Any:
    return client.get(f"/games/{t.id}/hint?bot={bot}", headers=auth(t.tokens[seat]))


def test_an_answer_is_kept_per_version_seat_and_bot(client: FlaskClient, store: Store) -> None:
    t = drawn(client)
    version = service.load_game(store, t.id).version
    r = hint(client, t, 0)
    assert r.status_code == 200 and r.headers["Cache-Control"] == "private, no-store"
    answer = r.get_json()
    assert answer["version"] == version and answer["seat"] == 0
    key = store.keys.hint(t.id, version, 0, "greedy")
    assert orjson.loads(store.redis.get(key)) == answer
    assert 0 < store.redis.ttl(key) <= 600
    assert key.startswith(f"{store.keys.prefix}:{{{t.id}}}:")  # the game's hash tag
    # what is kept is what is answered: an answer planted under the key comes back as it is
    planted = {**answer, "action": {"type": "discard", "card": "JK"}}
    store.redis.set(key, orjson.dumps(planted))
    assert hint(client, t, 0).get_json() == planted
    assert hint(client, t, 0, "random").get_json()["action"] != planted["action"]  # another bot: its own
    # another seat never gets it: it is not that seat's turn (and its key would be its own)
    r = hint(client, t, 1)
    assert r.status_code == 403 and r.get_json()["code"] == "not_your_turn"
    assert "JK" not in r.get_data(as_text=True)
    # a new version is a new question
    view, etag = t.view(0)
    card = view["view"]["legal"]["discards"][0]
    assert t.move(0, {"type": "discard", "card": card}, etag).status_code == 200
    r = hint(client, t, 1)
    assert r.status_code == 200 and r.get_json()["version"] == version + 1 and r.get_json()["seat"] == 1
    store.redis.delete(key)


def test_hints_have_their_own_lower_limit_per_token(limited: FlaskClient) -> None:
    t = drawn(limited)
    statuses = [hint(limited, t, 0).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    r = hint(limited, t, 0)
    assert r.status_code == 429 and r.get_json()["code"] == "rate_limited"
    assert 1 <= int(r.headers["Retry-After"]) <= 30
    assert limited.get(f"/games/{t.id}", headers=auth(t.tokens[0])).status_code == 200  # the rest: its own limit
    other = drawn(limited, seed=8)  # another token has its own count
    assert hint(limited, other, 0).status_code == 200


def test_the_expert_thinks_within_its_budget(redis_url: str, key_prefix: str) -> None:
    """The wall-clock budget is the server's setting: a long one is used (the expert
    searches until it runs out), a short one ends the search early. Two players: in
    partnerships the expert judges a discard without searching (bots.distilled)."""
    timings = {}
    for budget in (250, 5):  # the most a server may set (bots.BUDGET_LIMITS_MS), and little
        app = create_app({"redis_url": redis_url, "key_prefix": key_prefix, "test_seeds": True,
                          "rate_limit_enabled": False, "hint_budget_ms": budget, "hint_cache_seconds": 0})
        c = app.test_client()
        t = drawn(c, preset="finnish-2p", players=2)
        game = service.load_game(app.extensions["canasta"].store, t.id)
        assert game.state is not None
        assert len(engine.legal_actions(game.state, 0)) > 1  # a choice: the expert searches
        start = time.perf_counter()
        r = hint(c, t, 0, "expert")
        timings[budget] = time.perf_counter() - start
        assert r.status_code == 200, r.get_json()
    # it thought for the whole budget, but for the last sampled world, which would have ended
    # past it (the expert stops when the next world would overrun: its budget holds on average)
    assert timings[250] >= 0.2
    assert timings[5] < timings[250]  # and less with a short one
