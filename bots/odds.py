"""Card odds from what a seat has not seen: will the next opponent take the pile?

Hypergeometric draws over the unseen cards, with the opponent's hand as the sample. The
numbers are small (a hand of at most ~40 from ~100 unseen), so a product formula with a
cache is both exact and fast enough for rollouts.
"""

from __future__ import annotations

from functools import lru_cache

from engine.cards import RANK_OF, WILDS


@lru_cache(maxsize=65536)
def at_least(unseen: int, good: int, drawn: int, need: int) -> float:
    """P(at least ``need`` of ``good`` marked cards among ``drawn`` taken from ``unseen``)."""
    if need <= 0:
        return 1.0
    if good < need or drawn < need or unseen <= 0:
        return 0.0
    drawn = min(drawn, unseen)
    # P(X = 0) and P(X = 1); need is 1 or 2 in this module
    p0 = 1.0
    for i in range(drawn):
        p0 *= (unseen - good - i) / (unseen - i) if unseen - good - i > 0 else 0.0
        if p0 == 0.0:
            break
    if need == 1:
        return 1.0 - p0
    p1 = 0.0
    if unseen - good >= drawn - 1:
        p1 = drawn * good / unseen
        for i in range(drawn - 1):
            p1 *= (unseen - good - i) / (unseen - 1 - i)
    return max(0.0, 1.0 - p0 - p1)


def take_chance(unseen: list[int], hand_size: int, rank: int, frozen: bool, has_meld: bool) -> float:
    """The chance that a seat holding ``hand_size`` unseen cards can take a pile topped by ``rank``.

    Frozen: it needs a natural pair. Not frozen: a meld of the rank (``onto``), a pair, or
    one natural and a wild.
    """
    if has_meld and not frozen:
        return 1.0
    total = sum(unseen)
    good = sum(unseen[k] for k in range(rank * 4, rank * 4 + 4) if RANK_OF[k] == rank)
    pair = at_least(total, good, hand_size, 2)
    if frozen:
        return pair
    one = at_least(total, good, hand_size, 1)
    wilds = sum(unseen[k] for k in WILDS)
    wild = at_least(total - good, wilds, max(hand_size - 1, 0), 1)
    return min(1.0, pair + (one - pair) * wild)
