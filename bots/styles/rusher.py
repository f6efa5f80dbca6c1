"""The rusher: races to go out. Written on greedy, not on our standard (unlike the held-out
asker, which asks its partner at every chance): it never asks, goes out the moment the engine
has a plan, lays every meld and add once its side has the canastas to go out (each card laid
is one less to meld on the turn out), and lets its partner go out whenever asked."""

from __future__ import annotations

from typing import Any

from bots.greedy import Greedy
from bots.view import SeatView

Action = dict[str, Any]

SHED = 5.0  # any meld or add, once out is in reach: above nothing, below greedy's own choices


class Rusher(Greedy):
    """Greedy's draws and discards; the hand is ended as soon as its side may end it."""

    name = "rusher"

    def want_go_out(self, v: SeatView) -> bool:
        return True

    @staticmethod
    def want_ask(v: SeatView) -> bool:
        return False

    def answer_yes(self, v: SeatView) -> bool:
        return True

    def meld_score(self, v: SeatView, a: Action) -> float:
        score = super().meld_score(v, a)
        if v.canastas(v.team) >= v.rules.going_out.canastas_to_go_out and v.opened(v.team):
            return max(score, SHED)
        return score
