"""The meld-everything player: written from the legal actions alone, no bot of ours beneath.

It takes any pile of two cards or more, lays the biggest meld or add it can every time it
may, goes out whenever it can, and sheds the card it has fewest of (the highest on a tie)."""

from __future__ import annotations

import random
from typing import Any

from bots.view import SeatView
from engine.cards import IS_BLACK_THREE, IS_RED_THREE, IS_WILD, RANK_OF, VALUE, parse_card

Action = dict[str, Any]

PILE_MIN = 2  # the smallest pile it takes
ANSWER_YES_HAND = 4  # it lets the partner go out when it holds this many cards or fewer


def cards_laid(a: Action) -> int:
    if a["type"] == "meld":
        return sum(len(g) for g in a["melds"])
    return len(a.get("cards", ()))


class MeldAll:
    name = "meld-all"

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        if len(actions) == 1:
            return actions[0]
        if v.phase == "answer":
            return {"type": "answer_go_out", "yes": v.hand_size <= ANSWER_YES_HAND}
        by_type: dict[str, list[Action]] = {}
        for a in actions:
            by_type.setdefault(a["type"], []).append(a)
        if v.phase == "draw":
            takes = by_type.get("take_pile", [])
            if takes and (v.pile_size >= PILE_MIN or "draw" not in by_type):
                return max(takes, key=lambda a: (len(a.get("melds", ())), -len(a.get("with", ()))))
            return (by_type.get("draw") or by_type.get("pass") or actions)[0]
        plan = v.going_out_plan()
        if plan and plan[0] in actions:
            return plan[0]  # out at once, without asking the partner
        melds = by_type.get("meld", []) + by_type.get("add", [])
        if melds:
            return max(melds, key=lambda a: (cards_laid(a), rng.random()))
        discards = by_type.get("discard")
        if discards:
            counts = v.hand_rank_counts()
            return min(discards, key=lambda a: self.shed_order(parse_card(a["card"]), counts))
        return rng.choice(actions)

    @staticmethod
    def shed_order(kind: int, counts: tuple[int, ...]) -> tuple[int, int]:
        """Lower sheds first: a black three, then the rarest rank in hand, the highest card."""
        if IS_WILD[kind] or IS_RED_THREE[kind]:
            return (99, 0)
        if IS_BLACK_THREE[kind]:
            return (0, 0)
        return (counts[RANK_OF[kind]], -VALUE[kind])
