"""Melds: what a group of cards of one rank must be (R5, R7, R15)."""

from __future__ import annotations

from engine.cards import IS_WILD, RANK_OF, THREE
from engine.errors import IllegalMove
from engine.rules import RuleOptions

MIN_MELD = 3  # cards in the smallest meld (R5)
BLACK_THREE_MELD_SIZES = (3, 4)  # R15: black threes meld three or four at a time
NO_WILD_CAP = 1 << 30  # room for wilds when neither max_wilds nor wild_ratio limits it


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
    if naturals + wilds < MIN_MELD:
        raise IllegalMove("meld_too_small", "a meld needs at least three cards")
    melding = rules.melding
    if naturals < melding.min_naturals:
        raise IllegalMove("not_enough_naturals", f"a meld needs at least {melding.min_naturals} natural cards")
    if melding.max_wilds is not None and wilds > melding.max_wilds:
        raise IllegalMove("too_many_wilds", f"a meld may hold at most {melding.max_wilds} wild cards")
    if melding.wild_ratio == "at_most_naturals" and wilds > naturals:
        raise IllegalMove("too_many_wilds", "a meld may not hold more wild cards than natural cards")
    if melding.wild_ratio == "fewer_than_naturals" and wilds >= naturals:
        raise IllegalMove("too_many_wilds", "a meld must hold more natural cards than wild cards")


def wild_room(rules: RuleOptions, naturals: int, wilds: int) -> int:
    """How many more wilds a meld with these counts can take."""
    melding = rules.melding
    room = NO_WILD_CAP if melding.max_wilds is None else melding.max_wilds - wilds
    if melding.wild_ratio == "at_most_naturals":
        room = min(room, naturals - wilds)
    elif melding.wild_ratio == "fewer_than_naturals":
        room = min(room, naturals - 1 - wilds)
    return max(room, 0)


def black_three_melds(rules: RuleOptions) -> tuple[int, ...]:
    """R15: how many black threes a meld of them may hold (none where they never meld)."""
    return BLACK_THREE_MELD_SIZES if rules.melding.black_three_meld_on_going_out else ()


def check_black_three_meld(rules: RuleOptions, cards: list[int]) -> None:
    """R15: three or four black threes, nothing else (when going out: the caller's check)."""
    if not rules.melding.black_three_meld_on_going_out:
        raise IllegalMove("black_threes_not_allowed", "black threes are never melded in this game")
    if any(IS_WILD[k] for k in cards):
        raise IllegalMove("black_threes_not_allowed", "a meld of black threes may not hold wild cards")
    if len(cards) not in BLACK_THREE_MELD_SIZES:
        raise IllegalMove("black_threes_not_allowed", "black threes are melded three or four at a time")
