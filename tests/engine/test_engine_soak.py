"""Soak: 1 000 complete random hands per preset and player count without an engine error."""

from __future__ import annotations

import random

import pytest

from bots.simulate import play_game
from cli.engine_cmds import random_policy
from engine import resolve
from engine.rules import DEFAULT_MAX_HANDS, DEFAULT_MAX_MOVES_PER_HAND, MAX_TARGET

SOAK = [
    ("classic", 4), ("finnish", 4), ("finnish-2p", 2), ("finnish-3p", 3), ("bicycle", 4),
    ("wiki", 4), ("wiki", 2), ("wiki", 3), ("wiki", 6),
    ("norwegian", 4), ("norwegian", 2), ("norwegian", 5), ("norwegian", 6),
]
HANDS = 1000


@pytest.mark.slow
@pytest.mark.parametrize("preset,players", SOAK)
def test_soak_random_hands(preset, players):
    rules = resolve(preset, players)
    hands = games = 0
    reasons: dict[str, int] = {}
    while hands < HANDS:
        rng = random.Random(f"soak:{preset}:{players}:{games}")
        record = play_game(rules, rng, random_policy(rng), max_moves=10**7)
        assert record.final is not None and record.final.phase == "over"
        assert record.final.game_result["totals"] == list(record.final.totals)
        for end in record.hands:
            reasons[end["reason"]] = reasons.get(end["reason"], 0) + 1
        hands += len(record.hands)
        games += 1
    assert sum(reasons.values()) == hands


@pytest.mark.slow
@pytest.mark.parametrize("preset,players", SOAK + [("norwegian", 3)])
def test_soak_random_play_ends_within_the_default_limits(preset, players):
    """Random play to the highest target a client may choose, where it wanders longest: every
    game ends, after at most ``max_hands`` hands of at most ``max_moves_per_hand`` moves
    (docs/rules.md, "Limits"); before limits, six norwegian players played on for ever."""
    rules = resolve(preset, players, {"target_score": MAX_TARGET})
    limits = rules.limits
    assert (limits.max_hands, limits.max_moves_per_hand) == (DEFAULT_MAX_HANDS, DEFAULT_MAX_MOVES_PER_HAND)
    for game in range(1):
        rng = random.Random(f"limits:{preset}:{players}:{game}")
        record = play_game(rules, rng, random_policy(rng), max_moves=DEFAULT_MAX_HANDS * DEFAULT_MAX_MOVES_PER_HAND)
        final = record.final
        assert final is not None and final.phase == "over"
        assert len(record.hands) <= DEFAULT_MAX_HANDS
        assert max(record.moves_per_hand()) <= DEFAULT_MAX_MOVES_PER_HAND
        assert final.game_result["reason"] in ("target", "hand_limit", "move_limit")
