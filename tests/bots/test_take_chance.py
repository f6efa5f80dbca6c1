"""The standard bot's chance that the next opponent can take the pile is exact for the hidden
cards dealt at random (as the expert's worlds are dealt): over many dealt worlds, the share in
which the next hand can take matches it, rank by rank and without a bias across positions."""

from __future__ import annotations

import math
import random

import pytest

import bots
from bots.simulate import play_game
from bots.standard import take_chance_known
from bots.view import SeatView, determinize
from engine.cards import MELD_RANKS, WILDS
from engine.rules import resolve
from engine.state import State

WORLDS = 1500


def discard_positions(preset: str, count: int, seed: int) -> list[tuple[State, int]]:
    """Play-phase positions of standard self-play where the seat to act may discard."""
    rules = resolve(preset, overrides={"target_score": 1000})
    rng = random.Random(seed)
    out: list[tuple[State, int]] = []

    def collect(state: State, seat: int, actions: list[dict]) -> dict:
        if (len(out) < count and state.phase == "play" and rng.random() < 0.2
                and sum(1 for a in actions if a["type"] == "discard") >= 3):
            out.append((state, seat))
        return bots.choose_from("standard", state, seat, actions, rng)

    while len(out) < count:
        play_game(rules, random.Random(rng.random()), collect)
    return out


def can_take(v: SeatView, seat: int, rank: int, hand: tuple[int, ...]) -> bool:
    """The event itself, read in a dealt world: R10/R12 (onto the side's meld unless frozen, a
    natural pair, or unfrozen a natural and a wild), the opening minimum aside."""
    team = v.team_of(seat)
    frozen = v.pile_frozen_for(team)
    if not frozen and v.melds(team)[rank] is not None:
        return True
    naturals = sum(hand[k] for k in range(rank * 4, rank * 4 + 4))
    if naturals >= 2:
        return True
    return not frozen and naturals == 1 and any(hand[k] for k in WILDS)


@pytest.mark.parametrize("preset", ["finnish", "finnish-2p"])
def test_the_take_chance_is_the_share_of_dealt_worlds_whose_next_hand_can_take(preset: str) -> None:
    rng = random.Random(7)
    worst = 0.0
    errors: list[float] = []
    variances: list[float] = []
    for state, seat in discard_positions(preset, 6, seed=3):
        v = SeatView(state, seat)
        nxt = v.next_opponent()
        assert nxt is not None
        unseen = v.unseen_counts()
        hands = [determinize(state, seat, rng).hands[nxt] for _ in range(WORLDS)]
        for rank in MELD_RANKS:
            chance = take_chance_known(v, nxt, rank, unseen)
            share = sum(can_take(v, nxt, rank, h) for h in hands) / WORLDS
            # four standard errors of the share (plus a floor for chances of 0 and 1)
            assert abs(share - chance) <= 4 * math.sqrt(chance * (1 - chance) / WORLDS) + 1e-9, (rank, share, chance)
            worst = max(worst, abs(share - chance))
            errors.append(share - chance)
            variances.append(chance * (1 - chance) / WORLDS)
    assert worst > 0  # the worlds did vary: the comparison was not vacuous
    # and no bias across positions: a chance off by half a point everywhere (red threes counted
    # as if a seat past its first turn could hold one) is ~10 standard errors of this mean
    mean, se = sum(errors) / len(errors), math.sqrt(sum(variances)) / len(errors)
    assert abs(mean) <= 4 * se, (mean, se)
