"""Helpers of the API tests (kept out of conftest.py: test modules import them by name)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from flask.testing import FlaskClient

import engine
from engine.cards import CODES, hand_codes

CARD = re.compile(r"^(?:[A2-9TJQK][SHDC]|JK)$")


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


# -- what a reader may see (the leak checks) ----------------------------------------------
def cards_in(value: Any) -> Counter[str]:
    """Every card code anywhere in a JSON value, counted."""
    out: Counter[str] = Counter()
    if isinstance(value, str):
        if CARD.match(value):
            out[value] += 1
    elif isinstance(value, dict):
        for v in value.values():
            out += cards_in(v)
    elif isinstance(value, list):
        for v in value:
            out += cards_in(v)
    return out


def public_cards(s: engine.State) -> Counter[str]:
    """Melds, red threes, the whole pile and the wilds beside it, the cards each seat took with
    the pile and still holds: what anyone may see (or may have seen)."""
    out: Counter[str] = Counter(CODES[k] for k in s.pile + s.pile_beside)
    for known in s.known_from_pile:
        out.update(CODES[k] for k in known)
    for side in s.melds:
        for m in side:
            if m is not None:
                out.update(CODES[k] for k in m.cards)
    for r in s.red_threes:
        out.update(CODES[k] for k in r)
    return out


def own_cards(s: engine.State, seat: int | None) -> Counter[str]:
    if seat is None or not s.hands:
        return Counter()
    return Counter(hand_codes(s.hands[seat]))
