"""The frozen-shy player: never takes a frozen pile (the pair it holds is no trap for it)."""

from __future__ import annotations

from typing import Any

from bots.greedy import Greedy
from bots.view import SeatView

Action = dict[str, Any]

OPEN_PILE_MIN = 3  # the smallest open pile it takes


class FrozenShy(Greedy):
    """Greedy's melds and discards; draws from the stock whenever the pile is frozen against
    its side, and takes an open pile of :data:`OPEN_PILE_MIN` cards or more."""

    name = "frozen-shy"

    def draw_phase(self, v: SeatView, actions: list[Action]) -> Action:
        takes = [a for a in actions if a["type"] == "take_pile"]
        others = [a for a in actions if a["type"] != "take_pile"]
        if takes and others and (v.pile_frozen_for(v.team) or v.pile_size < OPEN_PILE_MIN):
            return super().draw_phase(v, others)
        if takes:
            return max(takes, key=lambda a: self.take_score(v, a))
        return super().draw_phase(v, actions)
