"""The hoarder: opens, then keeps everything in hand but a completed canasta until it can go
out in one turn. Written on greedy, not on our standard (unlike the held-out concealed
player, which does not even open until the hand is late): its side sits with long hands and
few melds, and may end the hand at any turn."""

from __future__ import annotations

from typing import Any

from bots.greedy import CANASTA_ADD, Greedy
from bots.view import SeatView

Action = dict[str, Any]


class Hoarder(Greedy):
    """Greedy's draws, discards and opening; after the opening only a canasta goes down before
    the turn out, which it takes whenever the engine has a plan."""

    name = "hoarder"

    def want_go_out(self, v: SeatView) -> bool:
        return True

    def meld_score(self, v: SeatView, a: Action) -> float:
        score = super().meld_score(v, a)
        if not v.opened(v.team) or self.lays_red_three(a) or score >= CANASTA_ADD:
            return score
        return 0.0
