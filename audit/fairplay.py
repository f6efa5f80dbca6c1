"""A seat's decisions combined into one test of fair play, with a p-value and a verdict.

Each judged decision gives two ranks, uniform on (0, 1) under fair play (:mod:`audit.judge`):
the hands' ``u`` (the other seats' hidden cards dealt among them again) and the stock's ``u_stock`` (the true
hands, the stock shuffled again: exactly uniform for any fair player, nobody has seen it). Decisions where those hidden cards did not
change the choice's advantage (``spread`` 0) carry no evidence and are left out of that test
(that depends only on the set of deals, not on which one is true, so the rest stay uniform).
Each test combines its ranks by Stouffer's method: ``z = sum of Phi^-1(u) / sqrt(n)``,
standard normal under fair play when the decisions' ranks are independent, one-sided (a seat
that sees hidden cards pushes ``u`` up). The suspect's p-value is twice the smaller of the
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
                "z_hands": round(self.z, 3), "z_stock": round(self.z_stock, 3), "p": self.p, "threshold": self.threshold,
                "judgeable": self.judgeable, "flagged": self.flagged,
                "weighty": [{"game": g, "move": j.move, "hand": j.hand, "seat": j.seat, "action": j.action,
                             "rank": round(j.u, 3), "true_advantage": round(j.true_advantage, 1),
                             "sampled_advantage": round(j.mean_advantage, 1)} for g, j in self.weighty]}


def decision_rng(game: str, d: Decision) -> random.Random:
    """The sampler's stream for one decision: repeatable for the same log (a rerun gives the
    same p-value), and independent of everything the seat could influence."""
    return random.Random(f"audit:{game}:{d.move}:{d.seat}:{d.state.commitment or ''}")


def audit(suspect: str, games: Iterable[tuple[str, list[Decision]]], judge: Judge | None = None,
          threshold: float = THRESHOLD) -> Verdict:
    """Judge every decision of the suspect in ``games`` ((name, decisions) pairs) and combine."""
    judge = judge or Judge()
    verdict = Verdict(suspect, threshold=threshold)
    scored: list[tuple[float, str, Judged]] = []
    total = total_stock = 0.0
    counted = counted_stock = 0
    for name, decisions in games:
        for d in decisions:
            verdict.decisions += 1
            j = judge.judge(d, decision_rng(name, d))
            if j is None or (j.spread <= 0 and j.spread_stock <= 0):
                continue
            verdict.judged += 1
            if j.spread > 0:
                z = _NORMAL.inv_cdf(min(max(j.u, _EDGE), 1 - _EDGE))
                total += z
                counted += 1
                # what weighs most: a high rank where the hidden cards moved the advantage most
                scored.append((z * j.spread, name, j))
            if j.spread_stock > 0:
                total_stock += _NORMAL.inv_cdf(min(max(j.u_stock, _EDGE), 1 - _EDGE))
                counted_stock += 1
    verdict.z = total / math.sqrt(counted) if counted else 0.0
    verdict.z_stock = total_stock / math.sqrt(counted_stock) if counted_stock else 0.0
    if verdict.judged:
        smaller = min(1.0 - _NORMAL.cdf(verdict.z), 1.0 - _NORMAL.cdf(verdict.z_stock))
        verdict.p = min(1.0, 2 * smaller)
    scored.sort(key=lambda t: -t[0])
    verdict.weighty = [(name, j) for _, name, j in scored[:SHOWN]]
    return verdict
