"""The benchmarks' player: the body of a move chosen from the seat view's legal summary alone
(``view.legal``), never by running the engine, as a third-party client would; and the body
of the four-seat game the benchmarks create."""

from __future__ import annotations

import random
from typing import Any

import orjson

CREATE_BODY = orjson.dumps({"preset": "classic", "seats": [{"name": f"bench{i}"} for i in range(4)]})
DRAW = orjson.dumps({"action": {"type": "draw"}})
PASS = orjson.dumps({"action": {"type": "pass"}})
ANSWER_YES = orjson.dumps({"action": {"type": "answer_go_out", "yes": True}})
_DISCARDS: dict[str, bytes] = {}


def choose(view: dict[str, Any], rng: random.Random) -> bytes | None:
    """The body of a move for the seat to act, from its legal summary alone (None: nothing)."""
    legal = view["legal"]
    if legal["must_answer_go_out"]:
        return ANSWER_YES
    if view["phase"] == "draw":
        if legal["take_pile"]:
            return orjson.dumps({"action": legal["take_pile"][0]})
        if legal["may_draw"]:
            return DRAW
        return PASS if legal["may_pass"] else None
    if legal["go_out"]:
        return orjson.dumps({"action": legal["go_out"][0]})
    if legal["melds"]:
        return orjson.dumps({"action": legal["melds"][0]})
    if legal["discards"]:
        card = rng.choice(legal["discards"])
        body = _DISCARDS.get(card)
        if body is None:
            body = _DISCARDS[card] = orjson.dumps({"action": {"type": "discard", "card": card}})
        return body
    return None
