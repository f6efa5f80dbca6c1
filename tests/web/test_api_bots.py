"""The bot levels over HTTP: GET /bots lists them, a seat may set the expert's thinking time
within limits (checked, with reason codes), and the bot worker plays with that time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from api_helpers import Table, auth
from flask.testing import FlaskClient
from test_api_seats import problem

import bots
import service
from service.store import Store
from worker.runner import seat_budget_ms

ROOT = Path(__file__).resolve().parents[2]


def classic(seats: list[Any]) -> dict[str, Any]:
    return {"preset": "classic", "seed": 5, "seats": seats}


def test_get_bots_lists_every_level_with_a_sentence(client: FlaskClient) -> None:
    r = client.get("/bots")
    assert r.status_code == 200
    levels = r.get_json()["bots"]
    assert [b["name"] for b in levels] == list(bots.NAMES) == ["random", "greedy", "standard", "expert"]
    assert all(b["description"].endswith(".") and len(b["description"]) > 20 for b in levels)
    assert [b["name"] for b in levels if b["default"]] == ["standard"]
    expert = levels[-1]
    assert expert["budget_ms"] == {"default": 75.0, "min": 5, "max": 250}
    assert all(b["budget_ms"] is None for b in levels[:-1])
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())["components"]["schemas"]["BudgetMs"]
    assert (spec["minimum"], spec["maximum"]) == bots.BUDGET_LIMITS_MS


def test_a_created_bot_seat_keeps_its_budget_within_limits(client: FlaskClient, store: Store) -> None:
    t = Table(client, classic([{"name": "ann"}, {"bot": "expert", "budget_ms": 15}, {"bot": "standard"},
                               {"bot": "expert"}]))
    seats = t.created["seats"]
    assert [s["budget_ms"] for s in seats] == [None, 15, None, None]
    game = service.load_game(store, t.id)
    assert seat_budget_ms(game, 1, 75.0) == 15.0  # what the worker thinks with
    assert seat_budget_ms(game, 3, 75.0) == 75.0  # no budget set: the worker's default
    low, high = bots.BUDGET_LIMITS_MS
    for bad in (low - 1, high + 1, 0, -5):
        body = problem(client.post("/games", json=classic([{"name": "a"}, {"bot": "expert", "budget_ms": bad},
                                                           None, None])), 422, "budget_out_of_range")
        assert (body["min_budget_ms"], body["max_budget_ms"]) == (low, high)
    problem(client.post("/games", json=classic([{"name": "a"}, {"bot": "greedy", "budget_ms": 15}, None, None])),
            422, "budget_not_supported")
    for bad in ("15", 15.5, True):
        problem(client.post("/games", json=classic([{"name": "a"}, {"bot": "expert", "budget_ms": bad}, None, None])),
                422, "invalid_request")
    problem(client.post("/games", json=classic([{"name": "a", "budget_ms": 15}, None, None, None])),
            422, "invalid_request")


def test_a_seat_handed_to_the_expert_sets_its_budget_and_loses_it_when_taken_back(
        client: FlaskClient, store: Store) -> None:
    t = Table(client, classic([{"name": f"p{i}"} for i in range(4)]))
    r = client.post(f"/games/{t.id}/seats/2/bot", json={"bot": "expert", "budget_ms": 250}, headers=auth(t.tokens[2]))
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["seats"][2]["budget_ms"] == 250
    assert seat_budget_ms(service.load_game(store, t.id), 2, 75.0) == 250.0
    problem(client.post(f"/games/{t.id}/seats/1/bot", json={"bot": "expert", "budget_ms": 251},
                        headers=auth(t.tokens[1])), 422, "budget_out_of_range")
    problem(client.post(f"/games/{t.id}/seats/1/bot", json={"bot": "random", "budget_ms": 20},
                        headers=auth(t.tokens[1])), 422, "budget_not_supported")
    assert client.delete(f"/games/{t.id}/seats/2/bot", headers=auth(t.tokens[2])).status_code == 200
    assert service.load_game(store, t.id).meta["seats"][2].get("budget_ms") is None
