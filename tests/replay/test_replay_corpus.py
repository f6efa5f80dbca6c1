"""Simulated games of every preset and player count validate clean."""

from __future__ import annotations

import pytest
from replay_corpus import CONFIGS, config_id, encode, simulate

from replay.validate import validate_bytes

SLOW_GAMES = 200
# Random play takes long to reach the presets' 5000 (norwegian with five or six players
# alone: thousands of moves); the header's rules carry the lower target.
SLOW_TARGET = 1500


def test_fast_corpus_is_valid(fast_corpus):
    checked = 0
    for name, games in fast_corpus.items():
        for g, lines in enumerate(games):
            result = validate_bytes(encode(lines), f"{name}#{g}")
            assert result.valid and result.finished, result.describe()
            assert result.last_move == result.moves == sum(1 for line in lines if "move" in line)
            checked += 1
    assert checked >= len(CONFIGS) * 15


def test_every_configuration_is_covered(fast_corpus):
    assert set(fast_corpus) == {config_id(c) for c in CONFIGS}
    players = {len(games[0][0]["seats"]) for games in fast_corpus.values()}
    assert players == {2, 3, 4, 5, 6}


@pytest.mark.parametrize("preset", ["classic", "finnish", "finnish-2p", "wiki"])
def test_a_game_to_the_presets_own_target_is_valid(preset):
    lines = simulate(preset, None, 7)
    assert lines[0]["rules"]["target_score"] == 5000
    result = validate_bytes(encode(lines), preset)
    assert result.valid and result.finished, result.describe()


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_200_games_per_configuration_are_valid(config):
    for g in range(SLOW_GAMES):
        lines = simulate(config[0], config[1], 1000 + g, SLOW_TARGET)
        result = validate_bytes(encode(lines), f"{config_id(config)}#{g}")
        assert result.valid and result.finished, result.describe()
