"""Helpers of the API tests (kept out of conftest.py: test modules import them by name)."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

import engine


def auth(token: str | None, **extra: str) -> dict[str, str]:
    headers = dict(extra)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


class Table:
    """A game created over HTTP, with every human seat's token."""

    def __init__(self, client: FlaskClient, body: dict[str, Any]) -> None:
        r = client.post("/games", json=body)
        assert r.status_code == 201, r.get_json()
        self.client = client
        self.created = r.get_json()
        self.id: str = self.created["id"]
        self.tokens: dict[int, str] = {s["seat"]: s["token"] for s in self.created["seats"] if s["token"]}

    def view(self, seat: int | None) -> tuple[dict[str, Any], str]:
        r = self.client.get(f"/games/{self.id}", headers=auth(self.tokens.get(seat) if seat is not None else None))
        assert r.status_code == 200, r.get_json()
        return r.get_json(), r.headers["ETag"]

    def move(self, seat: int, action: dict[str, Any], etag: str | None, **headers: str) -> Any:
        h = auth(self.tokens[seat], **headers)
        if etag is not None:
            h["If-Match"] = etag
        return self.client.post(f"/games/{self.id}/moves", json={"action": action}, headers=h)


def four_humans(seed: int | None = 7, preset: str = "classic", players: int | None = None) -> dict[str, Any]:
    n = players or 4
    body: dict[str, Any] = {"preset": preset, "seats": [{"name": f"p{i}"} for i in range(n)]}
    if players is not None:
        body["players"] = players
    if seed is not None:
        body["seed"] = seed
    return body


def replay_log(lines: list[dict]) -> engine.State:
    """Rebuild the game from its log alone, checking every line against the engine."""
    header = lines[0]
    assert header["log"] == "canasta-log/1"
    rules = engine.RuleOptions.from_dict(header["rules"])
    state = engine.new_game(rules)
    expected_move = 1
    for line in lines[1:]:
        if "deal" in line:
            assert engine.commitment(line["salt"], line["deck"]) == line["commitment"]
            state = engine.deal(state, line["deck"], line["salt"], line["commitment"])
            assert (state.hand_no, state.dealer) == (line["deal"], line["dealer"])
        elif "move" in line:
            assert line["move"] == expected_move and line["hand"] == state.hand_no
            state = engine.apply(state, line["seat"], line["action"])
            expected_move += 1
        elif "hand_end" in line:
            assert state.hand_result == line
        elif "game_end" in line:
            assert state.game_result == line and line is lines[-1]
    return state
