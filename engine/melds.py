"""Melds: what a group of cards of one rank must be (R5, R7, R15)."""

from __future__ import annotations

from engine.cards import IS_WILD, RANK_OF, THREE
from engine.errors import IllegalMove
from engine.rules import RuleOptions


def meld_rank(cards: list[int]) -> int:
    """The rank a list of cards melds as: the rank of its naturals, all of which must agree."""
    ranks = {RANK_OF[k] for k in cards if not IS_WILD[k]}
    if not ranks:
        raise IllegalMove("not_enough_naturals", "a meld needs natural cards; wild cards alone cannot be melded")
    if len(ranks) > 1:
        raise IllegalMove("mixed_ranks", "all natural cards of a meld must have the same rank")
    return ranks.pop()


def check_meld(rules: RuleOptions, rank: int, naturals: int, wilds: int, new: bool) -> None:
    """Raise unless ``naturals`` natural cards and ``wilds`` wilds are a valid meld of ``rank``."""
    if rank == THREE:
        raise IllegalMove("black_threes_not_allowed", "black threes can only be melded, three or four without wild cards, when going out")
    if naturals + wilds < 3:
        raise IllegalMove("meld_too_small", "a meld needs at least three cards")
    if naturals < rules.min_naturals:
        raise IllegalMove("not_enough_naturals", f"a meld needs at least {rules.min_naturals} natural cards")
    if rules.max_wilds is not None and wilds > rules.max_wilds:
        raise IllegalMove("too_many_wilds", f"a meld may hold at most {rules.max_wilds} wild cards")
    if rules.wild_ratio == "at_most_naturals" and wilds > naturals:
        raise IllegalMove("too_many_wilds", "a meld may not hold more wild cards than natural cards")
    if rules.wild_ratio == "fewer_than_naturals" and wilds >= naturals:
        raise IllegalMove("too_many_wilds", "a meld must hold more natural cards than wild cards")


def wild_room(rules: RuleOptions, naturals: int, wilds: int) -> int:
    """How many more wilds a meld with these counts can take."""
    room = 10**6 if rules.max_wilds is None else rules.max_wilds - wilds
    if rules.wild_ratio == "at_most_naturals":
        room = min(room, naturals - wilds)
    elif rules.wild_ratio == "fewer_than_naturals":
        room = min(room, naturals - 1 - wilds)
    return max(room, 0)


def check_black_three_meld(cards: list[int]) -> None:
    """R15: three or four black threes, nothing else."""
    if any(IS_WILD[k] for k in cards):
        raise IllegalMove("black_threes_not_allowed", "a meld of black threes may not hold wild cards")
    if not 3 <= len(cards) <= 4:
        raise IllegalMove("black_threes_not_allowed", "black threes are melded three or four at a time")
