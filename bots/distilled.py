"""The expert's judgment in partnership games, distilled from rollouts to the hand's end.

In four players the expert's short search (two turns, then the linear estimate of
:mod:`bots.evaluation`) chooses no better than the standard bot: judged by rollouts to the
hand's end, its discards gain nothing over the bot's own (docs/benchmarks/bots.md, issue 15).
Rollouts to the hand's end do see better moves (thirty worlds of them a decision won 65% of
the games against the standard bot), but cost twenty times the budget. So their judgment is learned
offline instead, and costs a few dot products at play:

1. **sampling**: at decisions of standard self-play (:func:`bots.distillation.sample`), the
   candidates the expert compares (the bot's choice and its next-best discards) are each
   played to the hand's end in the same sampled worlds (:func:`~bots.view.determinize`; the
   standard bot plays every seat), and the mean hand-score difference is recorded;
2. **fitting** (:func:`bots.distillation.fit`): ridge least squares of those means on
   features a seat can see;
3. **play** (:func:`judge`): the candidate the model scores highest.

Two models, one per kind of decision the search departs from the bot on most:

* **which discard**: the standard bot's own discard score is a feature, so the model
  corrects it (it learns, for example, that a card the opponents have melded, or one that
  breaks a pair, costs more than the bot's rules say, and that feeding a pile of a card or so
  costs less);
* **hold or meld**: when the bot would meld or add, whether keeping the cards in hand and
  discarding instead scores more (the features of the situation and of the discard).

Weights exist for partnership games where one canasta lets a side go out (:func:`table`; fit
on ``finnish``, four players); elsewhere the search decides, as before. The sampling and the
fitting are :mod:`bots.distillation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bots.standard import Standard, take_chance_known
from bots.view import SeatView
from engine.cards import IS_BLACK_THREE, IS_WILD, RANK_OF, VALUE, parse_card
from engine.state import NOT_FROZEN

Action = dict[str, Any]

NEAR_CANASTA = 5  # meld size from which one more pile makes a canasta likely
STOCK_FULL = 60.0  # stock size scaled to 1 (a four-player deal leaves ~63)

DISCARD_FEATURES = (
    "score",  # the standard bot's discard score (lower: the better discard by its rules)
    "danger",  # its estimate of what the next opponent gains from the card
    "take",  # the chance the next opponent can take the pile topped by the card
    "take_x_pile", "take_x_their_meld", "take_x_unopened",
    "safe",  # a natural card the next opponent cannot take the pile with
    "points", "single", "pair", "triple",  # the card, and the copies of its rank in hand
    "our_meld", "our_meld_near", "their_meld", "their_meld_near",
    "in_pile",  # cards of its rank in the pile (the next opponent would get them too)
    "black_three", "wild",
)
HOLD_FEATURES = (
    "bias", "pile", "stock", "opened", "hand", "cards_laid", "wilds_laid", "completes_canasta",
    "add", "our_canastas", "their_canastas", "threat", "next_side_opened", "frozen_pile",
    *(f"discard_{name}" for name in DISCARD_FEATURES),
)

# Fit on 4-player ``finnish``: ``python -m bots.distillation sample finnish 5000 5093`` and
# ``... 6000 6100`` (20 worlds: 7 529 decisions), then ``... fit``. "discard" predicts a
# discard's hand-end score relative to the other candidates', "hold" a discard's score minus the
# meld's. They serve the partnership games where one canasta
# lets a side go out (:func:`table`): in ``norwegian``, which needs two, the same judgment lost to
# the standard bot (42.5% of 1 000 games), where in ``classic``, ``bicycle`` and ``wiki`` it won
# 57-61% (docs/benchmarks/bots.md).
WEIGHTS: dict[str, dict[str, tuple[float, ...]]] = {
    "partners, one canasta": {
        "discard": (0.011, -0.298, 56.497, -17.807, 26.611, 87.990, 22.564, -0.176, 10.223, -33.893, 27.721,
                    -32.690, -14.396, -34.357, -16.869, -17.310, -8.054, 4.003),
        "hold": (-91.694, 11.605, 213.273, 15.623, -6.553, -13.013, 5.954, -45.249, -67.449, -8.663, -25.974,
                 -31.891, 52.946, -3.606, 0.066, -0.444, 187.845, -43.182, -76.494, 86.116, -44.961, -0.852,
                 -32.907, -33.932, -30.160, -7.765, 3.445, 41.910, 10.141, 36.734, 49.313, -44.007),
    },
}
# Points by which the model must rate a discard above the bot's own choice (its discard, or its
# meld: holding) before the judgment departs from it. The weights were fit on standard self-play
# (the rollouts assumed every seat plays our standard bot); against other styles (issue 37)
# their small predicted gains were the opponent's habits, not the move's: tuned on the tuning
# pool of bots.styles (four-player finnish, 200 games a style, judgment without search, 0 ->
# 50): against meld-all 72.8% -> 80.5%, against mix-tuning 77.5% -> 84.5% (BENCHMARKS.md).
JUDGE_MARGIN = 50.0
SELF_PLAY_MARGIN = 0.0  # the margin before issue 37 (the baseline expert-2026-12-06)


def table(v: SeatView) -> str:
    """The kind of game a set of weights was fit for: partners racing to the one canasta that
    lets a side go out (``finnish``, ``classic``, ``bicycle``, ``wiki``), or any other."""
    rules = v.rules
    if rules.team_size > 1 and rules.going_out.canastas_to_go_out == 1:
        return "partners, one canasta"
    return "other"


def discard_features(bot: Standard, v: SeatView, kind: int) -> list[float]:
    """What a seat sees of discarding ``kind`` (the next seat is an opponent)."""
    unseen = v.unseen_counts()
    nxt = v.next_opponent()
    assert nxt is not None
    their_team = v.team_of(nxt)
    natural = not IS_WILD[kind] and not IS_BLACK_THREE[kind]
    rank = RANK_OF[kind]
    copies = v.hand_rank_counts()[rank] if natural else 0
    ours = v.melds(v.team)[rank] if natural else None
    theirs = v.melds(their_team)[rank] if natural else None
    take = take_chance_known(v, nxt, rank, unseen) if natural else 0.0
    return [
        bot.discard_score(v, kind, unseen),
        bot.danger(v, kind, unseen) if natural else 0.0,
        take,
        take * v.pile_size,
        take if theirs is not None else 0.0,
        take if not v.opened(their_team) else 0.0,
        1.0 if natural and take == 0.0 else 0.0,
        float(VALUE[kind]),
        1.0 if copies == 1 else 0.0,
        1.0 if copies == 2 else 0.0,
        1.0 if copies >= 3 else 0.0,
        1.0 if ours is not None else 0.0,
        1.0 if ours is not None and len(ours.cards) >= NEAR_CANASTA else 0.0,
        1.0 if theirs is not None else 0.0,
        1.0 if theirs is not None and len(theirs.cards) >= NEAR_CANASTA else 0.0,
        float(sum(1 for k in v.pile if RANK_OF[k] == rank)) if natural else 0.0,
        1.0 if IS_BLACK_THREE[kind] else 0.0,
        1.0 if IS_WILD[kind] else 0.0,
    ]


def hold_features(bot: Standard, v: SeatView, meld: Action, kind: int) -> list[float]:
    """What a seat sees of keeping ``meld``'s cards in hand and discarding ``kind`` instead."""
    if meld["type"] == "meld":
        cards = [parse_card(c) for group in meld["melds"] for c in group]
    else:
        cards = [parse_card(c) for c in meld["cards"]]
    nxt = v.next_opponent()
    assert nxt is not None
    return [
        1.0,
        float(v.pile_size),
        v.stock_size / STOCK_FULL,
        1.0 if v.opened(v.team) else 0.0,
        float(v.hand_size),
        float(len(cards)),
        float(sum(1 for k in cards if IS_WILD[k])),
        1.0 if bot.completes_canasta(v, meld) else 0.0,
        1.0 if meld["type"] == "add" else 0.0,
        float(v.canastas(v.team)),
        float(max(v.canastas(t) for t in range(v.teams) if t != v.team)),
        1.0 if bot.threat(v) else 0.0,
        1.0 if v.opened(v.team_of(nxt)) else 0.0,
        float(v.pile_size) if v.pile_frozen_by != NOT_FROZEN else 0.0,
        *discard_features(bot, v, kind),
    ]


def dot(weights: Sequence[float], features: list[float]) -> float:
    return sum(w * f for w, f in zip(weights, features, strict=True))


def decision_kind(candidates: list[Action]) -> str | None:
    """The model that judges these candidates: "discard" (the bot's discard against other
    discards), "hold" (the bot's meld or add against discards), or None (going out, the draw,
    an answer: the search decides)."""
    if len(candidates) < 2 or any(a["type"] != "discard" for a in candidates[1:]):
        return None
    first = candidates[0]["type"]
    return "discard" if first == "discard" else "hold" if first in ("meld", "add") else None


def feature_rows(bot: Standard, v: SeatView, candidates: list[Action], kind: str) -> list[list[float]]:
    """One row a candidate for "discard"; one row a discard (``candidates[1:]``) for "hold"."""
    if kind == "discard":
        return [discard_features(bot, v, parse_card(a["card"])) for a in candidates]
    return [hold_features(bot, v, candidates[0], parse_card(a["card"])) for a in candidates[1:]]


def chosen(kind: str, scores: list[float], margin: float = SELF_PLAY_MARGIN) -> int:
    """The index among the candidates that the model's ``scores`` (of :func:`feature_rows`)
    choose: the best discard when it scores more than ``margin`` above the bot's own (0, kept
    on a tie); or the best discard instead of the meld when it gains more than ``margin``,
    else the meld (0)."""
    if kind == "discard":
        best = max(range(len(scores)), key=lambda i: (scores[i], i == 0))
        return best if best == 0 or scores[best] - scores[0] > margin else 0
    best = max(range(len(scores)), key=lambda i: scores[i])
    return best + 1 if scores[best] > margin else 0


def judge(bot: Standard, v: SeatView, candidates: list[Action], margin: float = JUDGE_MARGIN) -> Action | None:
    """The model's choice among the expert's ``candidates`` (the bot's own first), or None
    where no model applies: no weights for this table, no model for these candidates
    (:func:`decision_kind`), or a partner next to play. ``margin``: :func:`chosen`'s."""
    weights = WEIGHTS.get(table(v))
    kind = decision_kind(candidates)
    if weights is None or kind is None or v.next_opponent() is None:
        return None
    scores = [dot(weights[kind], row) for row in feature_rows(bot, v, candidates, kind)]
    return candidates[chosen(kind, scores, margin)]
