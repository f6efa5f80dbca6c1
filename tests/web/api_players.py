"""A client-side player that reads only the seat view (its hand and the legal-action summary)."""

from __future__ import annotations

from typing import Any


def candidates(view: dict[str, Any]) -> list[dict[str, Any]]:
    """Actions to try in order; the server judges them (a 422 means: try the next)."""
    legal = view["legal"]
    hand: list[str] = view["hand"]
    if legal["must_answer_go_out"]:
        return [{"type": "answer_go_out", "yes": False}]
    if view["phase"] == "draw":
        out = list(legal["take_pile"])
        if legal["may_draw"]:
            out.append({"type": "draw"})
        if legal["may_pass"]:
            out.append({"type": "pass"})
        return out
    wilds = [c for c in hand if c == "JK" or c[0] == "2"]
    out = []
    for rank in legal["add_ranks"]:
        naturals = [c for c in hand if c[0] == rank]
        if naturals:
            out.append({"type": "add", "rank": rank, "cards": naturals})
        elif wilds:
            out.append({"type": "add", "rank": rank, "cards": wilds[:1]})
    melds = []
    for rank in legal["meld_ranks"]:
        naturals = [c for c in hand if c[0] == rank]
        melds.append(naturals if len(naturals) >= 3 else naturals + wilds[:1])
    if melds:
        out.append({"type": "meld", "melds": melds})
        out.extend({"type": "meld", "melds": [m]} for m in melds)
    out.extend({"type": "discard", "card": card} for card in legal["discards"])
    return out
