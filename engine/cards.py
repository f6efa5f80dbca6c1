"""Cards, ranks and packs.

A card is a small int, its *kind*: ``rank * 4 + suit`` for the 52 suited cards and
``JOKER`` (52) for a joker. Copies from different decks are the same kind, so a hand is a
tuple of 53 counts. Card codes are the log format's: rank ``A23456789TJQK``, suit ``SHDC``,
``JK`` for a joker.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import mul

from engine.text import quote

RANKS = "A23456789TJQK"
SUITS = "SHDC"
JOKER = 52
KINDS = 53
SUITED_CARDS = 52  # of one deck
JOKERS_PER_DECK = 2
CARDS_PER_DECK = SUITED_CARDS + JOKERS_PER_DECK

# rank indexes
ACE, TWO, THREE = 0, 1, 2
MELD_RANKS = (0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)  # A 4 5 6 7 8 9 T J Q K

CODES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS) + ("JK",)
_BY_CODE = {c: i for i, c in enumerate(CODES)}

RED_THREES = (THREE * 4 + 1, THREE * 4 + 2)  # 3H 3D
BLACK_THREES = (THREE * 4 + 0, THREE * 4 + 3)  # 3S 3C
TWOS = tuple(TWO * 4 + s for s in range(4))
WILDS = (*TWOS, JOKER)

IS_WILD = tuple(k in WILDS for k in range(KINDS))
IS_RED_THREE = tuple(k in RED_THREES for k in range(KINDS))
IS_BLACK_THREE = tuple(k in BLACK_THREES for k in range(KINDS))
# rank of a kind; a joker has no rank (-1)
RANK_OF = tuple(k >> 2 for k in range(52)) + (-1,)


def _value(kind: int) -> int:
    if kind == JOKER:
        return 50
    rank = kind >> 2
    if rank in (ACE, TWO):
        return 20
    if rank == THREE:
        return 100 if kind in RED_THREES else 5
    return 10 if rank >= 7 else 5  # 8 (index 7) and up: 10


VALUE = tuple(_value(k) for k in range(KINDS))


class CardError(ValueError):
    """Text that is not a card code or a rank."""


def parse_card(code: str) -> int:
    """``"TH"`` -> kind. Raises :class:`CardError` for anything else."""
    try:
        return _BY_CODE[code]
    except (KeyError, TypeError):
        raise CardError(f"{quote(code)} is not a card code (rank A23456789TJQK then suit SHDC, or JK)") from None


def parse_rank(text: str) -> int:
    """A meld rank, ``"A"`` or ``"4"``..``"K"`` (``"3"`` for black threes) -> rank index."""
    if isinstance(text, str) and len(text) == 1 and text in RANKS and text != "2":
        return RANKS.index(text)
    raise CardError(f"{quote(text)} is not a meld rank (A 4 5 6 7 8 9 T J Q K, or 3)")


def code(kind: int) -> str:
    return CODES[kind]


def rank_code(rank: int) -> str:
    return RANKS[rank]


def pack(decks: int = 2) -> list[int]:
    """The full pack in a fixed order: ``decks`` x 52 cards and 2 jokers per deck."""
    return [k for _ in range(decks) for k in range(SUITED_CARDS)] + [JOKER] * (JOKERS_PER_DECK * decks)


def counts(kinds: Iterable[int]) -> tuple[int, ...]:
    c = [0] * KINDS
    for k in kinds:
        c[k] += 1
    return tuple(c)


def expand(hand: tuple[int, ...]) -> list[int]:
    """Count tuple -> sorted list of kinds."""
    return [k for k, n in enumerate(hand) if n for _ in range(n)]


def hand_codes(hand: tuple[int, ...]) -> list[str]:
    return [CODES[k] for k, n in enumerate(hand) if n for _ in range(n)]


def hand_value(hand: tuple[int, ...]) -> int:
    return sum(map(mul, VALUE, hand))
