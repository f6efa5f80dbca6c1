"""One decision judged: where does the true deal rank among deals the seat could not tell from it?

A decision of seat S is judged where S departed from the reference, the standard bot's move
in S's position (a seat that plays the book move shows nothing of what it knows; which
decisions are judged depends on S's view alone). The options compared: S's choice, the
reference's and the expert's next candidate (:meth:`bots.expert.Expert.candidates`). Two
kinds of deals (:mod:`audit.deals`): the other seats' hidden cards dealt among them again,
the stock as it is (the hands' test), and the true hands with the stock shuffled again (the
stock's test: exact for any fair player, nobody has seen the stock's order). In those and in
the true deal, every option is valued by one fixed evaluator: the standard bot plays every
seat on (the same rollout seed in every deal), and the leaf evaluation
(:func:`bots.evaluation.evaluate`, greedy's weights) is taken at the end of the next seat's
turn and of the one after (the partner's, with four players), and averaged. The *advantage*
of the choice in a deal is its value minus the mean of the alternatives'.

Why so short a look-ahead: every later turn draws from a stock, and that luck drowned the
signal (a full round: the opponent-peeking cheater ranked 0.48 on average over 146
decisions; to the end of the next turn 0.56). The partner's turn is kept because a partner's
hand pays off there. Why the hands' test keeps the stock: the same decisions, 15 deals each,
ranked the next-opponent-peeking cheater's choice +0.17 (normal score, a decision) with the
stock dealt again and +0.25 with it kept; standard rollouts rather than greedy's, +0.20
against +0.17 (1 700 decisions; docs/audit.md).

A fair seat's choice is a function of its view (and its own coin flips), so, given the view,
the true deal is one more draw of the deals the seat could not tell apart: its advantage
ranks uniformly among the sampled deals' (ties broken at random). A seat that sees hidden
cards chooses what is good in the true deal, and its rank goes up. The rank becomes a
uniform number ``u`` in (0, 1); docs/audit.md says what the test assumes and where it fails.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from audit.deals import hands_dealt_again, stock_shuffled
from audit.decisions import Decision
from bots import view_seed
from bots.evaluation import evaluate
from bots.expert import Expert
from bots.standard import Standard
from bots.view import SeatView
from engine.errors import IllegalMove
from engine.legal import legal_actions_and_plan
from engine.moves import apply
from engine.state import IN_HAND, State

WORLDS = 11  # deals with the hands dealt again, per decision (the true one makes 12 ranks)
STOCK_WORLDS = 7  # deals with the stock shuffled again, per decision
WEIGHTS = "greedy"  # the leaf evaluation's weights (bots.evaluation.WEIGHTS) the ranks were measured with
OPTIONS = 3  # the choice and at most two alternatives
HORIZON = 3  # turn changes a rollout plays through: to the end of the partner's turn (four players)
FIRST_LOOK = 2  # the first turn change where the position is valued: the end of the next seat's turn
MAX_STEPS = 30  # moves a rollout plays at most
SAME = 1e-6  # advantages closer than this (points) are tied


@dataclass(frozen=True, slots=True)
class Judged:
    """A decision's verdict: ``u`` and ``u_stock`` uniform on (0, 1) under fair play; ``spread``
    how much the choice's advantage varies over the deals (0: those hidden cards do not
    matter to it)."""

    move: int
    hand: int
    seat: int
    action: dict[str, Any]
    u: float  # the hands' test: the true deal among deals with the other hands dealt again
    true_advantage: float
    mean_advantage: float  # in those deals
    spread: float
    u_stock: float  # the stock's test: the true deal among deals with the stock shuffled again
    spread_stock: float


class Judge:
    """The fixed evaluator and the options; one per audit (it holds no per-game state)."""

    def __init__(self, worlds: int = WORLDS, options: int = OPTIONS, horizon: int = HORIZON,
                 stock_worlds: int = STOCK_WORLDS) -> None:
        self.worlds = worlds
        self.stock_worlds = stock_worlds
        # the alternatives: the standard bot's choice, then the expert's other candidates
        self.proposer = Expert(rollout=Standard(), max_candidates=options)
        # the evaluator: standard-bot rollouts (the same in every deal)
        self.rollout_bot = Standard()
        self.horizon = horizon
        self.options = options

    def options_of(self, d: Decision) -> list[dict[str, Any]]:
        """The choice, the reference's choice, then the expert's other candidates: all from the
        seat's view alone. Only the choice when it is the reference's own (nothing to judge)."""
        v = SeatView(d.state, d.seat)
        reference = self.proposer.greedy.choose(v, d.legal, random.Random(view_seed(d.state, d.seat)))
        if d.action == reference:
            return [d.action]
        others = [a for a in self.proposer.candidates(v, d.legal, reference) if a != d.action]
        return [d.action, *others[:self.options - 1]]

    def judge(self, d: Decision, rng: random.Random) -> Judged | None:
        """The decision's ranks, or None when there is nothing to judge (the seat played the
        reference's move, or had one option)."""
        options = self.options_of(d)
        if len(options) < 2:
            return None
        truth = d.state._replace(deck=d.state.stock, stock_pos=0)  # a whole state: the stock from deck[0]
        hands = [hands_dealt_again(truth, d.seat, rng) for _ in range(self.worlds)]
        stocks = [stock_shuffled(truth, rng) for _ in range(self.stock_worlds)]
        seed = rng.getrandbits(32)  # the same rollout seed in every deal: only the deal differs
        true = self.advantage(truth, d.seat, options, seed)
        by_hands = [self.advantage(w, d.seat, options, seed) for w in hands]
        by_stock = [self.advantage(w, d.seat, options, seed) for w in stocks]
        u, spread = _rank(true, by_hands, rng)
        u_stock, spread_stock = _rank(true, by_stock, rng)
        return Judged(d.move, d.hand, d.seat, d.action, u, true, sum(by_hands) / len(by_hands), spread,
                      u_stock, spread_stock)

    def advantage(self, world: State, seat: int, options: list[dict[str, Any]], seed: int) -> float:
        """The choice's value in ``world`` minus the mean of the alternatives' (an option the
        deal makes illegal is left out; none: 0)."""
        values = [self.value(world, seat, a, random.Random(seed)) for a in options]
        chosen = values[0]
        rest = [x for x in values[1:] if x is not None]
        if chosen is None or not rest:
            return 0.0
        return chosen - sum(rest) / len(rest)

    def value(self, world: State, seat: int, action: dict[str, Any], rng: random.Random) -> float | None:
        """The mean of the leaf evaluation (``bots.evaluation.evaluate``) for ``seat``'s team at
        the end of each turn from the next seat's to the ``horizon``: the standard bot plays every seat;
        a hand that ends first counts its exact score at the points left. None: illegal here."""
        try:
            s = apply(world, seat, action)
        except IllegalMove:
            return None
        team = world.rules.team_of(seat)
        bot, name = self.rollout_bot, WEIGHTS
        turns, last, steps, total = 0, world.turn, 0, 0.0
        while s.phase in IN_HAND and steps < MAX_STEPS:
            if s.turn != last:
                turns, last = turns + 1, s.turn
                if turns >= FIRST_LOOK:
                    total += evaluate(s, team, name)
                if turns >= self.horizon:
                    return total / (self.horizon - FIRST_LOOK + 1)
            actor = s.to_act
            acts, plan = legal_actions_and_plan(s, actor)
            if not acts:
                break
            choice = acts[0] if len(acts) == 1 else bot.choose(SeatView(s, actor).knowing_plan(plan), acts, rng)
            s = apply(s, actor, choice)
            steps += 1
        left = self.horizon - max(turns, FIRST_LOOK - 1)
        return (total + left * evaluate(s, team, name)) / (self.horizon - FIRST_LOOK + 1)


def _rank(true: float, sampled: list[float], rng: random.Random) -> tuple[float, float]:
    """``true``'s rank among ``sampled`` as a uniform number (ties broken at random), and the
    spread of all of them."""
    below = sum(1 for a in sampled if a < true - SAME)
    tied = sum(1 for a in sampled if abs(a - true) <= SAME)
    u = (below + rng.random() * (tied + 1)) / (len(sampled) + 1)
    return u, max(true, *sampled) - min(true, *sampled)

