"""Whether a player can take the pile (R21) is exact: the engine's search agrees with trying
every take there is.

On an empty stock the hand ends when the player to move cannot take the pile, so "can take"
must be the take's own judgement. ``find_take`` tries a short list of candidate takes; here,
in small made-up positions (a few cards in hand, a short pile, some melds, minimums, a
partner's "no", wilds beside the pile), every take action is built, every ``with`` and every
partition of the rest of the hand into further melds, and each is judged by the take itself.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine import IllegalMove, State, deal, new_game, resolve
from engine.cards import CODES, IS_RED_THREE, IS_WILD, KINDS, RANK_OF, parse_card, rank_code
from engine.moves import _take_pile, find_take
from engine.state import NO_MELDS, Meld
from engine.turns import replace_at
from tests.engine.helpers import make_deck

POSITIONS = int(os.environ.get("ENGINE_TAKE_POSITIONS", "600"))
PRESETS = ["classic", "finnish", "finnish-2p", "bicycle", "wiki", "norwegian"]


def _sub_multisets(counts: list[int] | tuple[int, ...]) -> Iterator[list[int]]:
    kinds = [k for k in range(KINDS) if counts[k]]
    for combo in itertools.product(*(range(counts[k] + 1) for k in kinds)):
        yield [k for k, n in zip(kinds, combo, strict=True) for _ in range(n)]


def _partitions(cards: list[int]) -> Iterator[list[list[int]]]:
    """Every way to split ``cards`` into groups of three or more."""
    if not cards:
        yield []
        return
    first, rest = cards[0], cards[1:]
    for size in range(2, len(rest) + 1):
        for picked in itertools.combinations(range(len(rest)), size):
            block = [first] + [rest[i] for i in picked]
            others = [rest[i] for i in range(len(rest)) if i not in picked]
            for tail in _partitions(others):
                yield [block, *tail]


def every_take(s: State, seat: int) -> Iterator[dict[str, Any]]:
    hand = s.hands[seat]
    rank = RANK_OF[s.pile[-1]]
    yield {"type": "take_pile", "onto": rank_code(rank)}
    fitting = [n if (IS_WILD[k] or RANK_OF[k] == rank) and not IS_RED_THREE[k] else 0 for k, n in enumerate(hand)]
    for used in _sub_multisets(fitting):
        if not used:
            continue
        rest = list(hand)
        for k in used:
            rest[k] -= 1
        for further in _sub_multisets(rest):
            for groups in _partitions(further):
                action: dict[str, Any] = {"type": "take_pile", "with": [CODES[k] for k in used]}
                if groups:
                    action["melds"] = [[CODES[k] for k in g] for g in groups]
                yield action


def _legal(s: State, seat: int, action: dict[str, Any]) -> bool:
    try:
        _take_pile(s, seat, action)
    except IllegalMove:
        return False
    return True


def _card(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return "JK"
    if roll < 0.18:
        return "2" + rng.choice("SHDC")
    if roll < 0.24:
        return "3" + rng.choice("SCHD")
    return rng.choice("AKQJ9") + rng.choice("SHDC")


def _position(rng: random.Random) -> tuple[State, int]:
    """A draw phase on an empty stock: up to eight cards in hand, much of them the top card's
    rank or one other rank, a pile of one to three cards, melds near canastas or none."""
    rules = resolve(rng.choice(PRESETS))
    s = deal(new_game(rules), make_deck(rules))
    seat = s.to_act
    team = rules.team_of(seat)
    top = rng.choice("AKQ9")
    other = rng.choice("JT8")
    cards = [top + rng.choice("SHDC") for _ in range(rng.randint(0, 3))]
    cards += [other + rng.choice("SHDC") for _ in range(rng.choice([0, 0, 2, 3, 4]))]
    cards += [_card(rng) for _ in range(rng.randint(1, 3))]
    hand = [0] * KINDS
    for c in cards[:8]:
        hand[parse_card(c)] += 1
    melds = list(NO_MELDS)
    if rng.random() < 0.55:
        for r in rng.sample("AKQJ98T", rng.randint(1, 3)):
            size = rng.choice([3, 4, 5, 6, 6, 7])
            naturals = rng.randint(max(2, size - 2), size)
            kinds = [parse_card(r + rng.choice("SHDC")) for _ in range(naturals)] + [parse_card("2C")] * (size - naturals)
            meld = Meld.of(RANK_OF[kinds[0]], kinds)
            melds[meld.rank] = meld
    pile = [parse_card(_card(rng)) for _ in range(rng.choice([0, 0, 1, 2]))] + [parse_card(top + rng.choice("SHDC"))]
    beside: tuple[int, ...] = ()
    frozen = parse_card("JK") if rng.random() < 0.2 else -1
    if rules.pile.discarded_wilds == "beside_pile" and rng.random() < 0.3:
        beside = (parse_card("2D"),)
        frozen = beside[0]
    s = s._replace(
        hands=replace_at(s.hands, seat, tuple(hand)),
        pile=tuple(pile),
        pile_beside=beside,
        pile_frozen_by=frozen,
        melds=replace_at(s.melds, team, tuple(melds)),
        minimums=replace_at(s.minimums, team, rng.choice([15, 50, 90, 120])),
        permission=rng.choice([-1, -1, 0]),
        stock_pos=len(s.deck),
    )
    return s, seat


@pytest.mark.parametrize("block", range(4))
def test_find_take_agrees_with_every_take(block):
    rng = random.Random(f"takes:{block}")
    seen = {True: 0, False: 0}
    for _ in range(POSITIONS // 4):
        s, seat = _position(rng)
        found = find_take(s, seat)
        exists = any(_legal(s, seat, action) for action in every_take(s, seat))
        assert (found is not None) == exists, (
            f"{s.rules.preset}: hand {[CODES[k] for k, n in enumerate(s.hands[seat]) for _ in range(n)]}, "
            f"pile {[CODES[k] for k in s.pile]}, found {found}"
        )
        if found is not None:
            assert _legal(s, seat, found)
        seen[exists] += 1
    assert seen[True] and seen[False]  # both sides were tried
