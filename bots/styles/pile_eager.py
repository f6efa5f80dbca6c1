"""The eager pile-taker: any pile it may take, it takes (the outside bot of issue 37 did)."""

from __future__ import annotations

from typing import Any

from bots.styles.written import WrittenStandard
from bots.view import SeatView

Action = dict[str, Any]


class PileEager(WrittenStandard):
    """Our standard's melds and discards; the draw is always the pile when the rules allow."""

    name = "pile-eager"

    def draw_phase(self, v: SeatView, actions: list[Action]) -> Action:
        takes = [a for a in actions if a["type"] == "take_pile"]
        if takes:
            return max(takes, key=lambda a: self.take_score(v, a))
        return super().draw_phase(v, actions)
