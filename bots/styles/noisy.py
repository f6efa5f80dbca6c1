"""The noisy standard: our standard, with one choice in :data:`NOISE` swapped for another move
of the same kind (another discard, another take or the stock, another meld)."""

from __future__ import annotations

import random
from typing import Any

from bots.styles.written import WrittenStandard
from bots.view import SeatView

Action = dict[str, Any]

NOISE = 0.25
DRAW_KINDS = ("draw", "take_pile")  # a noisy draw may be either


class NoisyStandard(WrittenStandard):
    name = "noisy-standard"

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        choice = super().choose(v, actions, rng, budget)
        if len(actions) == 1 or rng.random() >= NOISE or v.phase == "answer":
            return choice
        kinds = DRAW_KINDS if choice["type"] in DRAW_KINDS else (choice["type"],)
        same = [a for a in actions if a["type"] in kinds]
        return rng.choice(same)
