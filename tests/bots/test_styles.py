"""Opponent styles (bots.styles): legal, seeded, unlike each other, in two pools kept apart;
and the expert's rollouts play the opposing seats with the models it is given."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import bots
from bots import Budget
from bots.expert import Expert
from bots.simulate import play_game
from bots.standard import Standard
from bots.styles import DESCRIPTIONS, HELD_OUT, MIXES, STYLES, TUNING
from bots.view import SeatView
from engine.rules import resolve

SHORT = {"target_score": 1500}  # a game of a few hands


def game_log(preset: str, styles: dict[int, str], seed: int) -> str:
    rules = resolve(preset, overrides=SHORT)
    pols = {seat: bots.policy(name, random.Random(f"{seed}:{seat}")) for seat, name in styles.items()}
    return json.dumps(play_game(rules, random.Random(seed), pols).lines)


def test_the_pools_are_apart_and_cover_every_style() -> None:
    assert not set(TUNING) & set(HELD_OUT)
    assert set(STYLES) == set(DESCRIPTIONS) and len(STYLES) >= 6
    for mix, parts in MIXES.items():
        pool = TUNING if mix in TUNING else HELD_OUT
        assert set(parts) <= set(pool), mix  # a mixture never crosses the pools
    assert not set(STYLES) & set(bots.NAMES)  # styles are no levels the API offers


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("preset", ["finnish", "classic"])
def test_a_style_plays_legal_moves_to_the_end_and_the_same_seed_the_same_game(style: str, preset: str) -> None:
    seats = {0: style, 1: "standard", 2: style, 3: "standard"}
    first = game_log(preset, seats, seed=5)  # play_game applies each move: an illegal one raises
    assert game_log(preset, seats, seed=5) == first


def test_the_styles_play_unlike_each_other_and_unlike_our_standard() -> None:
    logs = {name: game_log("finnish", {0: name, 1: "standard", 2: name, 3: "standard"}, seed=9)
            for name in (*STYLES, "standard")}
    assert len(set(logs.values())) == len(logs)


class Recording:
    """A model of an opposing seat that plays our standard and notes the seats it played."""

    name = "recording"

    def __init__(self) -> None:
        self.seats: set[int] = set()
        self.standard = Standard()

    def choose(self, v: SeatView, actions: list[dict[str, Any]], rng: random.Random, budget: Any = None) -> Any:
        self.seats.add(v.seat)
        return self.standard.choose(v, actions, rng)


def test_the_expert_s_rollouts_play_the_opposing_seats_with_its_models() -> None:
    model = Recording()
    expert = Expert(rollout=Standard(), opponents=(model,))
    rules = resolve("finnish", overrides=SHORT)
    searched = 0

    def play(state: Any, seat: int, actions: list[dict[str, Any]]) -> Any:
        nonlocal searched
        if seat == 0 and len(actions) > 1 and searched < 6:
            searched += 1
            return expert.choose(SeatView(state, seat), actions, random.Random(searched), Budget(ms=60_000, rollouts=9))
        return bots.choose_from("standard", state, seat, actions, random.Random(seat))

    play_game(rules, random.Random(3), play)
    # the next opponent plays in every rollout (two turns: seat 0's, then seat 1's); seat 0's
    # partner and seat 0 itself never play the model
    assert 1 in model.seats and model.seats <= {1, 3}


def test_the_judgment_departs_from_the_bot_only_by_more_than_its_margin() -> None:
    from bots import distilled

    assert distilled.chosen("discard", [0.0, 30.0, 10.0], margin=50.0) == 0
    assert distilled.chosen("discard", [0.0, 60.0, 10.0], margin=50.0) == 1
    assert distilled.chosen("discard", [0.0, 30.0, 10.0]) == 1  # the self-play margin: any gain
    assert distilled.chosen("hold", [30.0, 10.0], margin=50.0) == 0
    assert distilled.chosen("hold", [30.0, 70.0], margin=50.0) == 2
    assert bots.get("expert").judge_margin == distilled.JUDGE_MARGIN > 0  # type: ignore[attr-defined]
    assert bots.get("expert-2026-12-06").judge_margin == 0.0  # type: ignore[attr-defined]
