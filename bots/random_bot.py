"""The random bot: a legal action chosen by chance, the baseline of every tournament.

Uniform over action *types* first, then uniform over the actions of that type. Uniform
over all actions would almost never draw (one ``draw`` among dozens of take and meld
variants is fine, but one ``discard`` type hides a dozen discards while ``add`` variants
crowd it out); choosing the type first plays every kind of move often enough to finish hands.

The one random policy of the project: the ``random`` bot, :func:`random_policy` for whole
games played in-process (``canasta simulate``, the benchmarks, the tests' corpora).
"""

from __future__ import annotations

import random
from typing import Any

from bots.simulate import Policy
from bots.view import SeatView
from engine.state import State

Action = dict[str, Any]


def choose_at_random(actions: list[Action], rng: random.Random) -> Action:
    """A type of action at random, then one action of that type at random."""
    groups: dict[str, list[Action]] = {}
    for a in actions:
        groups.setdefault(a["type"], []).append(a)
    return rng.choice(groups[rng.choice(sorted(groups))])


def random_policy(rng: random.Random) -> Policy:
    """A :mod:`bots.simulate` policy ``f(state, seat, actions)`` that plays
    :func:`choose_at_random` with ``rng`` (the same ``rng``, the same game)."""

    def choose(state: State, seat: int, actions: list[Action]) -> Action:
        return choose_at_random(actions, rng)

    return choose


class RandomBot:
    name = "random"

    def __init__(self, by_type: bool = True) -> None:
        self.by_type = by_type

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        if not self.by_type:
            return rng.choice(actions)
        return choose_at_random(actions, rng)
