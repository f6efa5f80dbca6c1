"""A seat's decisions combined into one test of fair play, with a p-value and a verdict.

Each judged decision gives two ranks, uniform on (0, 1) under fair play (:mod:`audit.judge`):
the hands' ``u`` (the other seats' hidden cards dealt among them again) and the stock's ``u_stock`` (the true
hands, the stock shuffled again: exactly uniform for any fair player, nobody has seen it). Decisions where those hidden cards did not
change the choice's advantage (``spread`` 0) carry no evidence and are left out of that test
(that depends only on the set of deals, not on which one is true, so the rest stay uniform).
Each test sums the normal scores ``Phi^-1(u)`` per hand and combines the hands' sums,
self-normalised (:class:`Evidence`: the decisions of one hand share its deal, different hands
do not): about standard normal under fair play, one-sided (a seat that sees hidden cards
pushes ``u`` up). The suspect's p-value is twice the smaller of the
two tests' (Bonferroni: right however the two depend on each other).
Fewer than :data:`MIN_DECISIONS` such decisions: too short to judge, never flagged.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from audit.decisions import Decision
from audit.judge import Judge, Judged

THRESHOLD = 0.001  # flagged when the p-value is below this
MIN_DECISIONS = 50  # informative decisions below which a seat is too short to judge
SHOWN = 5  # decisions listed for a person to look at
_NORMAL = NormalDist()
_EDGE = 1e-12  # u is kept inside (0, 1) for the normal quantile


@dataclass(slots=True)
class Verdict:
    """The test of one suspect: a seat of one game, or a player over several games."""

    suspect: str
    decisions: int = 0  # decisions with a choice
    judged: int = 0  # of them, those with informative ranks (combined)
    z: float = 0.0  # the hands' test
    p: float = 1.0  # the suspect's p-value: twice the smaller of the two tests' (Bonferroni)
    z_stock: float = 0.0  # the stock's test
    hands: int = 0  # hands the informative decisions came from (the sums' terms)
    z_independent: float = 0.0  # the two tests' z had the decisions been independent (for comparison)
    z_stock_independent: float = 0.0
    threshold: float = THRESHOLD
    weighty: list[tuple[str, Judged]] = field(default_factory=list)  # (game, decision), strongest first

    @property
    def judgeable(self) -> bool:
        return self.judged >= MIN_DECISIONS

    @property
    def flagged(self) -> bool:
        return self.judgeable and self.p < self.threshold

    @property
    def status(self) -> str:
        if not self.judgeable:
            return "too short to judge"
        return "FLAGGED" if self.flagged else "not flagged"

    def to_dict(self) -> dict[str, Any]:
        return {"suspect": self.suspect, "decisions": self.decisions, "judged": self.judged,
                "z_hands": round(self.z, 3), "z_stock": round(self.z_stock, 3), "hands": self.hands, "p": self.p, "threshold": self.threshold,
                "judgeable": self.judgeable, "flagged": self.flagged,
                "weighty": [{"game": g, "move": j.move, "hand": j.hand, "seat": j.seat, "action": j.action,
                             "rank": round(j.u, 3), "true_advantage": round(j.true_advantage, 1),
                             "sampled_advantage": round(j.mean_advantage, 1)} for g, j in self.weighty]}


def decision_rng(game: str, d: Decision) -> random.Random:
    """The sampler's stream for one decision: repeatable for the same log (a rerun gives the
    same p-value), and independent of everything the seat could influence."""
    return random.Random(f"audit:{game}:{d.move}:{d.seat}:{d.state.commitment or ''}")


class Evidence:
    """One test's normal scores, summed per hand.

    The decisions of one hand share its deal, so their ranks are not independent (a stock
    that suits a seat's habits suits them at every draw of the hand): a fair random player's
    stock test, summed as if they were, had a z spread of 1.5 over sets of 20 games instead
    of 1, and flagged one set in 15. Different hands are dealt from independent decks: under
    fair play each hand's sum has mean 0 whatever came before, so the sum over hands divided
    by the root of the hands' squared sums (self-normalised, like a t statistic) is about
    standard normal over the ~100 hands of 20 games, however the decisions of a hand depend on
    each other (for normal sums its tail at z = 3.3 is below the normal's: it cannot exceed
    the root of the number of hands).
    """

    def __init__(self) -> None:
        self.by_hand: dict[tuple[str, int], float] = {}
        self.decisions = 0

    def add(self, hand: tuple[str, int], score: float) -> None:
        self.by_hand[hand] = self.by_hand.get(hand, 0.0) + score
        self.decisions += 1

    @property
    def z(self) -> float:
        squares = sum(s * s for s in self.by_hand.values())
        return sum(self.by_hand.values()) / math.sqrt(squares) if squares > 0 else 0.0

    @property
    def z_independent(self) -> float:
        """Stouffer's z as if every decision were independent (shown beside, not used)."""
        return sum(self.by_hand.values()) / math.sqrt(self.decisions) if self.decisions else 0.0


def audit(suspect: str, games: Iterable[tuple[str, list[Decision]]], judge: Judge | None = None,
          threshold: float = THRESHOLD) -> Verdict:
    """Judge every decision of the suspect in ``games`` ((name, decisions) pairs) and combine."""
    judge = judge or Judge()
    verdict = Verdict(suspect, threshold=threshold)
    scored: list[tuple[float, str, Judged]] = []
    hands, stock = Evidence(), Evidence()
    for name, decisions in games:
        for d in decisions:
            verdict.decisions += 1
            j = judge.judge(d, decision_rng(name, d))
            if j is None or (j.spread <= 0 and j.spread_stock <= 0):
                continue
            verdict.judged += 1
            if j.spread > 0:
                z = _NORMAL.inv_cdf(min(max(j.u, _EDGE), 1 - _EDGE))
                hands.add((name, d.hand), z)
                # what weighs most: a high rank where the hidden cards moved the advantage most
                scored.append((z * j.spread, name, j))
            if j.spread_stock > 0:
                stock.add((name, d.hand), _NORMAL.inv_cdf(min(max(j.u_stock, _EDGE), 1 - _EDGE)))
    verdict.z, verdict.z_stock = hands.z, stock.z
    verdict.z_independent, verdict.z_stock_independent = hands.z_independent, stock.z_independent
    verdict.hands = len(set(hands.by_hand) | set(stock.by_hand))
    if verdict.judged:
        smaller = min(1.0 - _NORMAL.cdf(verdict.z), 1.0 - _NORMAL.cdf(verdict.z_stock))
        verdict.p = min(1.0, 2 * smaller)
    scored.sort(key=lambda t: -t[0])
    verdict.weighty = [(name, j) for _, name, j in scored[:SHOWN]]
    return verdict
