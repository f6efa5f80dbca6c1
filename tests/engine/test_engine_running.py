"""The running points of the views (engine.scoring.running_points): what a player counts during
a hand, the same sums the hand's scoring makes, public for every reader."""

from __future__ import annotations

import random

import pytest

import engine
from bots import policy
from engine.cards import VALUE, parse_card
from engine.scoring import score_hand
from engine.views import seat_view, spectator_view
from tests.positions import played

# (preset, seed, moves): greedy hands far enough in for melds, canastas and red threes
POSITIONS = [(preset, seed, moves) for preset in ("finnish", "classic", "norwegian", "finnish-2p")
             for seed in (1, 2, 3) for moves in (20, 45, 70)]


def _in_hand(preset: str, seed: int, moves: int) -> engine.State:
    """The position after up to ``moves`` greedy moves of the first hand (it may end sooner:
    the last position before its end)."""
    state, _ = played(preset, seed, 0)
    play = policy("greedy", random.Random(seed))
    for _ in range(moves):
        seat = state.to_act
        after = engine.apply(state, seat, play(state, seat, engine.legal_actions(state, seat)))
        if after.hand_no != state.hand_no or after.phase not in ("draw", "play", "answer"):
            break
        state = after
    return state


@pytest.mark.parametrize(("preset", "seed", "moves"), POSITIONS)
def test_running_points_are_the_hands_scoring_of_the_table(preset: str, seed: int, moves: int) -> None:
    state = _in_hand(preset, seed, moves)
    view = spectator_view(state)
    rows = score_hand(state, "stock_exhausted", state.turn, False)  # as if it ended now
    for team, (running, row) in enumerate(zip(view["running"], rows, strict=True)):
        melds = view["melds"][team]
        assert running["melds"] == row["melds"] == sum(VALUE[parse_card(c)] for m in melds for c in m["cards"])
        assert running["canasta_bonus"] == row["canasta_bonus"]
        assert running["red_threes"] == row["red_threes"]
        assert running["canastas"] == {kind: sum(m["canasta"] == kind for m in melds) for kind in ("natural", "mixed")}
        assert running["penalties"] == -state.penalties[team]
        assert running["on_table"] == running["melds"] + running["canasta_bonus"] + running["red_threes"] + running["penalties"]
        # the hand's score is the table's, less the cards in hand (nobody went out)
        assert row["hand_total"] == running["on_table"] + row["in_hand"] + (row["penalties"] - running["penalties"])
        canastas = running["canastas"]["natural"] + running["canastas"]["mixed"]
        assert running["canastas_to_go_out"] == max(0, state.rules.going_out.canastas_to_go_out - canastas)
        assert running["opening_needed"] == (None if view["opened"][team] else view["opening_minimums"][team])
    for seat in range(state.rules.players):  # the same for every reader; the hand's cost is the seat's own
        mine = seat_view(state, seat)
        assert mine["running"] == view["running"]
        assert mine["hand_points"] == sum(VALUE[parse_card(c)] for c in mine["hand"])


def test_a_side_that_melds_sees_its_points_at_once() -> None:
    rules = engine.resolve("finnish")
    for seed in range(1, 40):
        state, _ = played("finnish", seed, 0)
        before = spectator_view(state)["running"]
        assert all(r["melds"] == 0 and r["canastas"] == {"natural": 0, "mixed": 0} for r in before)
        assert all(r["opening_needed"] == state.minimums[t] for t, r in enumerate(before))
        for _ in range(60):
            seat = state.to_act
            melds = [a for a in engine.legal_actions(state, seat) if a["type"] == "meld"]
            if melds and state.phase == "play":
                team = rules.team_of(seat)
                after = engine.apply(state, seat, melds[0])
                running = spectator_view(after)["running"][team]
                laid = sum(VALUE[parse_card(c)] for group in melds[0]["melds"] for c in group)
                assert running["melds"] == spectator_view(state)["running"][team]["melds"] + laid > 0
                assert running["opening_needed"] is None
                return
            state = engine.apply(state, seat, engine.legal_actions(state, seat)[0])
            if state.phase not in ("draw", "play", "answer"):
                break
    raise AssertionError("no seed gives a meld")


def test_no_running_points_before_the_deal() -> None:
    state = engine.new_game(engine.resolve("finnish"))
    assert spectator_view(state)["running"] == []
