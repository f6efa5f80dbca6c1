"""Deals a seat could not tell from the true one: the two kinds the audit ranks the true deal among.

Both start from the true position and change only cards the seat has not seen, so its view
(its hand, the table, the pile, what others were seen to take) is the same in every one.

- :func:`hands_dealt_again`: the stock stays as it is; the other seats' hidden cards are dealt
  among them again. What tells these deals apart is who holds which hidden card, and nothing
  else: the cards the rollouts draw are the true ones in every deal, so the luck of the draw,
  which drowned the hands' effect when the stock was dealt again too, is the same everywhere.
- :func:`stock_shuffled`: the true hands; the stock in a new order. Nobody has seen the
  stock's order, so for any fair seat the true order is exactly one more draw among these.
"""

from __future__ import annotations

import random

from bots.view import holds_no_red_three
from engine.cards import IS_RED_THREE, KINDS
from engine.state import State


def hands_dealt_again(truth: State, seat: int, rng: random.Random) -> State:
    """``truth`` with the other seats' hidden cards dealt among them again.

    Each other seat keeps its hand's size and the cards the table saw it take with the pile
    (``known_from_pile``); the rest of those hands are pooled and dealt at random. Where red
    threes must be laid, a red three goes only to a seat that may still hold one, as in the
    true deal. ``truth`` is a whole state: its stock starts at ``deck[0]``.
    """
    rules = truth.rules
    others = [p for p in range(rules.players) if p != seat]
    known = truth.known_from_pile or ((),) * rules.players
    kept: dict[int, list[int]] = {}
    slots: list[int] = []  # one per hidden card: the seat it is dealt to
    pool: list[int] = []
    reds: list[int] = []
    laid = not rules.melding.red_threes_optional
    for p in others:
        seen = [0] * KINDS
        for k in known[p]:
            seen[k] += 1
        kept[p] = [min(seen[k], truth.hands[p][k]) for k in range(KINDS)]
        for k in range(KINDS):
            hidden = truth.hands[p][k] - kept[p][k]
            (reds if IS_RED_THREE[k] and laid else pool).extend([k] * hidden)
            slots.extend([p] * hidden)
    cards: list[int | None] = [None] * len(slots)
    may_hold = [i for i, p in enumerate(slots) if not holds_no_red_three(truth, p)]
    for k, i in zip(reds, rng.sample(may_hold, len(reds)), strict=True):
        cards[i] = k
    rng.shuffle(pool)
    rest = iter(pool)
    hands = {p: list(kept[p]) for p in others}
    for p, card in zip(slots, cards, strict=True):
        hands[p][next(rest) if card is None else card] += 1
    return truth._replace(hands=tuple(tuple(hands[p]) if p in hands else h for p, h in enumerate(truth.hands)))


def stock_shuffled(truth: State, rng: random.Random) -> State:
    """``truth`` with its stock in a new order (the hands as they are)."""
    deck = list(truth.deck)
    rng.shuffle(deck)
    return truth._replace(deck=tuple(deck))
