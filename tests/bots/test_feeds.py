"""The expert's feed correction: the chance that the next opponent can take the pile after a
discard is exact for the worlds the search deals, and the correction takes that coin out of
the candidates' means without moving their expectations."""

from __future__ import annotations

import math
import random

import pytest

import bots
import engine
from bots.expert import FeedControl
from bots.simulate import play_game
from bots.standard import can_take, take_chance_known
from bots.view import SeatView, determinize
from engine.cards import MELD_RANKS, RANK_OF, parse_card
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


def test_the_correction_leaves_each_discard_its_expected_value_whatever_the_worlds() -> None:
    """Rollout values that depend on the feed coin alone (a base per candidate, a pile lost
    when the next hand can take): the corrected means are the exact expectations, while the
    plain means carry the luck of the worlds drawn."""
    checked = 0
    for state, seat in discard_positions("finnish", 8, seed=5):
        v = SeatView(state, seat)
        nxt = v.next_opponent()
        assert nxt is not None
        actions = [a for a in engine.legal_actions(state, seat) if a["type"] == "discard"]
        candidates = [a for a in actions if RANK_OF[parse_card(a["card"])] in MELD_RANKS][:3]
        if len(candidates) < 2:
            continue
        unseen = v.unseen_counts()
        base = [100.0 * i for i in range(len(candidates))]
        pile_loss = 400.0
        corrected, plain = FeedControl(v, candidates), FeedControl(v, candidates, correct=False)
        rng = random.Random(checked)
        for _ in range(8):  # as few worlds as a 15 ms search sees
            world = determinize(state, seat, rng)
            for i, a in enumerate(candidates):
                rank = RANK_OF[parse_card(a["card"])]
                value = base[i] - pile_loss * can_take(v, nxt, rank, world.hands[nxt])
                corrected.add(i, world, value)
                plain.add(i, world, value)
        expected = [base[i] - pile_loss * take_chance_known(v, nxt, RANK_OF[parse_card(a["card"])], unseen)
                    for i, a in enumerate(candidates)]
        if all(fed in (0, 8) for fed in corrected.fed):
            continue  # every candidate fed in all worlds or in none: no slope to fit
        shares = [corrected.fed[i] / corrected.count[i] for i in range(len(candidates))]
        assert corrected.means() == pytest.approx(expected, abs=1e-6)
        assert plain.means() == pytest.approx([base[i] - pile_loss * shares[i] for i in range(len(candidates))])
        assert plain.fed == [0] * len(candidates)  # uncorrected: the coin is not even looked at
        checked += 1
    assert checked >= 3
