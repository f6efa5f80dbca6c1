"""A mixture of styles: each decision is played by one of them, drawn by the seat's rng."""

from __future__ import annotations

import random
from typing import Any

from bots.view import SeatView

Action = dict[str, Any]


class Mixture:
    """No single habit to read: a per-decision draw among ``parts`` (any :class:`bots.Bot`)."""

    def __init__(self, name: str, parts: list[Any]) -> None:
        if not parts:
            raise ValueError(f"mixture {name!r} has no styles")
        self.name = name
        self.parts = parts

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        return rng.choice(self.parts).choose(v, actions, rng, budget)
