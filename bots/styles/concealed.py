"""The concealed player: keeps its melds in hand, hoping to go out in one turn (a concealed
going out scores a bonus), until the hand is late or its hand grows heavy."""

from __future__ import annotations

from typing import Any

from bots.styles.written import WrittenStandard
from bots.view import SeatView

Action = dict[str, Any]

LATE_STOCK = 12  # stock size from which it melds like our standard
HEAVY_HAND = 16  # hand size from which it melds like our standard (it took a big pile)


class Concealed(WrittenStandard):
    """Our standard's draws and discards; goes out whenever the engine has a plan; any other
    meld or add waits (a pile take still melds the top card: the rules say so) until the
    stock is down to :data:`LATE_STOCK` or the hand holds :data:`HEAVY_HAND` cards."""

    name = "concealed"

    def want_go_out(self, v: SeatView) -> bool:
        return True

    def meld_score(self, v: SeatView, a: Action) -> float:
        if self.lays_red_three(a) or v.stock_size <= LATE_STOCK or v.hand_size >= HEAVY_HAND:
            return super().meld_score(v, a)
        return 0.0
