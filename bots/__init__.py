"""Bots: ``choose(name, state, seat, rng=None, budget=None) -> action``.

The one entry point for the worker, the API's hint endpoint and tournaments. It asks the
engine for the seat's legal actions (the rulebook is public), wraps the state in a
:class:`~bots.view.SeatView` (the seat's own view) and hands only those two to the
bot, so what a bot chooses depends on nothing another seat hides.

Bots, weakest first (:data:`LEVELS` says each in a sentence): ``random``, ``greedy``,
``standard`` (the default strength) and ``expert`` (determinized Monte Carlo over standard
rollouts, within a time budget that a seat may set within :data:`BUDGET_LIMITS_MS`).
:func:`get` also serves baselines and the opponent styles of :mod:`bots.styles` (for
benchmarks: no level).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import engine
from bots.view import SeatView
from engine.state import State

Action = dict[str, Any]

DEFAULT_BUDGET_MS = 75.0


WALL, CPU = "wall", "cpu"  # the clocks a budget may be counted on


@dataclass(frozen=True)
class Budget:
    """Thinking allowance per decision: ``ms``, and optionally a rollout cap.

    A cap makes the expert deterministic for a given rng (tests); the clock alone makes it
    as strong as the machine allows in the time a player will wait. ``clock``: the wall
    clock (``wall``: what a player waits, as served) or the thread's CPU time (``cpu``: what
    a machine to itself would give in that time; strength benchmarks on a shared machine,
    where the wall clock would measure the neighbours).
    """

    ms: float = DEFAULT_BUDGET_MS
    rollouts: int | None = None
    clock: str = WALL

    @property
    def timer(self) -> Callable[[], float]:
        """Seconds on this budget's clock."""
        return time.thread_time if self.clock == CPU else time.perf_counter

    @classmethod
    def of(cls, budget: Budget | float | int | None) -> Budget:
        if budget is None:
            return cls()
        if isinstance(budget, Budget):
            return budget
        return cls(ms=float(budget))


class Bot(Protocol):
    name: str

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action: ...


def _registry() -> dict[str, Bot]:
    from bots.expert import Expert
    from bots.greedy import Greedy
    from bots.random_bot import RandomBot
    from bots.standard import Standard

    return {"random": RandomBot(), "greedy": Greedy(), "standard": Standard(),
            "expert": Expert(rollout=Standard(), use_distilled=True)}


_BOTS: dict[str, Bot] | None = None
NAMES = ("random", "greedy", "standard", "expert")
DEFAULT_BOT = "standard"  # the level a seat gets when nobody names one
# One sentence per level, weakest first (GET /bots).
LEVELS = {
    "random": "Plays a legal move at random: for tests and for beginners.",
    "greedy": "Rules of thumb one move at a time: opens early, takes most piles; a weak club player.",
    "standard": "A sound club game: judges a pile by its cards, discards safely with the cards it "
                "remembers, keeps cards in hand until they make a canasta, blocks and freezes the "
                "pile, goes out when that wins the hand.",
    "expert": "Searches sampled deals consistent with what it has seen, playing the standard bot "
              "ahead; thinks for its budget (budget_ms) per decision. With a partner, where one "
              "canasta lets a side go out, it judges its discards and melds by what searching to "
              "the hand's end taught it.",
}
BUDGETED = frozenset({"expert"})  # the levels whose thinking time a seat may set
BUDGET_LIMITS_MS = (5, 250)  # the budget a seat may ask for, inclusive


def _baselines() -> dict[str, Bot]:
    """Bots kept only to measure progress against (``canasta bench bots``, tournaments); not
    levels: the API offers :data:`NAMES` only."""
    from bots.distilled import SELF_PLAY_MARGIN
    from bots.expert import Expert
    from bots.greedy import Greedy
    from bots.standard import Standard

    # the expert before issue 15: greedy rollouts, six candidates, two of them other melds;
    # the expert before its distilled judgment (it searched every decision); and the judgment
    # without the search (the standard bot where the judgment does not apply)
    return {"expert-2026-11": Expert(rollout=Greedy(), max_candidates=6, other_melds=2),
            "expert-2026-12": Expert(rollout=Standard()),
            "standard-judged": Expert(rollout=Standard(), use_distilled=True, search=False),
            # before issue 37: the judgment departs from the bot's choice at any predicted gain
            "expert-2026-12-06": Expert(rollout=Standard(), use_distilled=True, judge_margin=SELF_PLAY_MARGIN)}


BASELINES = ("expert-2026-11", "expert-2026-12", "standard-judged", "expert-2026-12-06")
SEARCHING_BASELINES = frozenset({"expert-2026-11", "expert-2026-12", "expert-2026-12-06"})  # those a budget applies to


def get(name: str) -> Bot:
    global _BOTS
    if _BOTS is None:
        from bots.styles import registry as styles

        _BOTS = {**_registry(), **_baselines(), **styles()}
    try:
        return _BOTS[name]
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; bots: {', '.join(NAMES)}") from None


def is_bot(name: str) -> bool:
    """A level, a baseline or an opponent style (:mod:`bots.styles`): what a tournament may seat."""
    from bots.styles import STYLES

    return name in NAMES or name in BASELINES or name in STYLES


def view_seed(state: State, seat: int) -> int:
    """A seed from what the seat sees, so that a hint is repeatable and peeks at nothing."""
    visible = (seat, state.hand_no, state.moves, state.hands[seat] if state.hands else (),
               state.pile[-1] if state.pile else -1, len(state.pile), state.stock_size, state.totals)
    return int.from_bytes(hashlib.sha256(repr(visible).encode()).digest()[:8], "big")


def choose(name: str, state: State, seat: int, rng: random.Random | None = None,
           budget: Budget | float | int | None = None) -> Action:
    """The action bot ``name`` plays for ``seat`` (which must be the seat to act)."""
    actions = engine.legal_actions(state, seat)
    if not actions:
        raise ValueError(f"seat {seat} has nothing to do (seat {state.to_act} is to act, phase {state.phase})")
    return choose_from(name, state, seat, actions, rng, budget)


def choose_from(name: str, state: State, seat: int, actions: list[Action],
                rng: random.Random | None = None, budget: Budget | float | int | None = None) -> Action:
    """:func:`choose` when the legal actions are already known (simulations compute them)."""
    bot = get(name)
    if len(actions) == 1:
        return actions[0]
    if rng is None:
        rng = random.Random(view_seed(state, seat))
    return bot.choose(SeatView(state, seat), actions, rng, Budget.of(budget))


def policy(name: str, rng: random.Random, budget: Budget | float | int | None = None
           ) -> Callable[[State, int, list[Action]], Action]:
    """An ``bots.simulate`` policy ``f(state, seat, actions)`` playing bot ``name``."""
    bot = get(name)
    b = Budget.of(budget)

    def play(state: State, seat: int, actions: list[Action]) -> Action:
        if len(actions) == 1:
            return actions[0]
        return bot.choose(SeatView(state, seat), actions, rng, b)

    return play


__all__ = ["BASELINES", "BUDGETED", "SEARCHING_BASELINES", "CPU", "WALL", "BUDGET_LIMITS_MS", "Budget", "DEFAULT_BOT", "DEFAULT_BUDGET_MS", "LEVELS", "NAMES", "SeatView", "choose", "choose_from", "get", "is_bot", "policy", "view_seed"]
