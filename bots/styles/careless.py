"""The careless shedder: discards its highest card, whatever the next seat can do with it."""

from __future__ import annotations

from bots.greedy import Greedy
from bots.view import SeatView
from engine.cards import IS_BLACK_THREE, IS_RED_THREE, IS_WILD, VALUE

WILD_KEPT = 1000.0  # a wild or a red three is still never thrown away first


class Careless(Greedy):
    """Greedy's draws and melds; its discard is the card worth the most points (no danger,
    no pair kept), a black three only when nothing scores more."""

    name = "careless"

    def discard_score(self, v: SeatView, kind: int, unseen: list[int]) -> float:
        if IS_WILD[kind] or IS_RED_THREE[kind]:
            return WILD_KEPT
        if IS_BLACK_THREE[kind]:
            return 0.0
        return -float(VALUE[kind])
