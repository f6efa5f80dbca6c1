"""The random bot: a legal action chosen by chance, the baseline of every tournament.

Uniform over action *types* first, then uniform over the actions of that type. Uniform
over all actions would almost never draw (one ``draw`` among dozens of take and meld
variants is fine, but one ``discard`` type hides a dozen discards while ``add`` variants
crowd it out); choosing the type first plays every kind of move often enough to finish hands.
"""

from __future__ import annotations

import random
from typing import Any

from bots.view import SeatView

Action = dict[str, Any]


class RandomBot:
    name = "random"

    def __init__(self, by_type: bool = True) -> None:
        self.by_type = by_type

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        if not self.by_type:
            return rng.choice(actions)
        groups: dict[str, list[Action]] = {}
        for a in actions:
            groups.setdefault(a["type"], []).append(a)
        return rng.choice(groups[rng.choice(sorted(groups))])
