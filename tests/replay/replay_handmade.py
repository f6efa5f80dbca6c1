"""A game typed in by hand (docs/gamelog.md): partial rules, no salt or commitment, no scores."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.cards import CODES, IS_RED_THREE, IS_WILD, RANK_OF, THREE, pack

ACES = ["AS", "AH", "AD", "AC", "AS", "AH", "AD"]
KINGS = ["KS", "KH", "KD", "KC"]


def build_deck(players: int, hand_size: int, dealer: int, hands: dict[int, list[str]], upcard: str,
               stock_top: list[str]) -> list[str]:
    """A 108-card deck (top first) that deals ``hands``; other hands get low naturals, red
    threes go to the bottom (the cards never seen, in any order)."""
    left = Counter(CODES[k] for k in pack(2))
    for c in [*(c for h in hands.values() for c in h), upcard, *stock_top]:
        left[c] -= 1
        assert left[c] >= 0, c
    low = [c for c in sorted(left.elements(), key=lambda c: (RANK_OF[CODES.index(c)], c))
           if not IS_WILD[CODES.index(c)] and RANK_OF[CODES.index(c)] not in (THREE, 0)]
    dealt: dict[int, list[str]] = {}
    for seat in range(players):
        cards = list(hands.get(seat, []))
        while len(cards) < hand_size:
            c = low.pop(0)
            left[c] -= 1
            cards.append(c)
        dealt[seat] = cards
    deck = [dealt[(dealer + 1 + i) % players][i // players] for i in range(players * hand_size)]
    deck += [upcard, *stock_top]
    rest = sorted(left.elements(), key=lambda c: IS_RED_THREE[CODES.index(c)])
    return deck + rest


def quick_game(target: int = 300) -> list[dict[str, Any]]:
    """Classic, dealer 0: seat 1 holds seven aces and four kings, draws 9S, melds all but
    the 9S (a natural canasta, 180 points over the minimum 50) and goes out discarding it."""
    deck = build_deck(4, 11, 0, {1: ACES + KINGS}, "5S", ["9S"])
    return [
        {"log": "canasta-log/1", "preset": "classic", "rules": {"target_score": target},
         "seats": [{"seat": 0}, {"seat": 1, "name": "Ann"}, {"seat": 2}, {"seat": 3, "name": "Bo"}]},
        {"deal": 1, "dealer": 0, "deck": deck},
        {"move": 1, "hand": 1, "seat": 1, "action": {"type": "draw"}},
        {"move": 2, "hand": 1, "seat": 1, "action": {"type": "meld", "melds": [ACES, KINGS]}},
        {"move": 3, "hand": 1, "seat": 1, "action": {"type": "discard", "card": "9S"}},
        {"hand_end": 1, "reason": "went_out", "by": 1},
        {"game_end": True, "winner": 1},
    ]
