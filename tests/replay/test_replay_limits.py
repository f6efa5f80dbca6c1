"""Logs of games that end by a limit (docs/rules.md, "Limits"): the validator replays the
engine, which must agree; a log that claims a limit end that did not happen, or plays on past
a limit, is refused with one precise line; a log written before games had limits (no limit in
its header) validates as it always did."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from replay_corpus import encode, limited, unlimited

from engine.rules import DEFAULT_MAX_HANDS
from replay.cli import main
from replay.validate import validate_bytes


def _valid(lines, name="x"):
    result = validate_bytes(encode(lines), name)
    assert result.valid, result.describe()
    return result


def _first(lines, key, nth=0):
    return [i for i, line in enumerate(lines) if key in line][nth]


def _only_violation(lines):
    result = validate_bytes(encode(lines), "x")
    assert not result.valid
    return result.violations[0]


@pytest.fixture(scope="module")
def hand_limited():
    """Six norwegian players alone, random, at most 2 hands: the hand limit ends the game."""
    lines = limited("norwegian", 6, 1, max_hands=2)
    assert lines[-1]["reason"] == "hand_limit" and lines[0]["rules"]["max_hands"] == 2
    return lines


@pytest.fixture(scope="module")
def move_limited():
    """Classic, random, hands of at most 30 moves: the first hand is cut."""
    lines = limited("classic", None, 1, max_moves_per_hand=30)
    assert lines[-2]["reason"] == "move_limit" and lines[-1]["reason"] == "move_limit"
    return lines


@pytest.fixture(scope="module")
def old_log():
    """A log of the service before limits: 8 hands of six norwegian players, no limit in
    the header, no game end."""
    return unlimited("norwegian", 6, 2, hands=8)


def test_a_log_ended_by_the_hand_limit_validates(hand_limited):
    result = _valid(hand_limited)
    assert result.finished and sum("deal" in line for line in hand_limited) == 2


def test_a_log_ended_by_the_move_limit_validates(move_limited):
    result = _valid(move_limited)
    assert result.finished and result.last_move == 30


def test_playing_on_past_the_hand_limit_is_refused(hand_limited, old_log):
    """The old log's game, its header given max_hands 3: a deal of hand 4 follows the game's end."""
    lines = copy.deepcopy(old_log)
    lines[0]["rules"]["max_hands"] = 3
    v = _only_violation(lines)
    assert (v.code, v.line) == ("game_over", _first(lines, "deal", 3) + 1)
    assert "the game ended with hand 3 (hand_limit (max_hands 3))" in v.message


def test_playing_on_past_the_move_limit_is_refused(old_log):
    lines = copy.deepcopy(old_log)
    lines[0]["rules"]["max_moves_per_hand"] = 10
    v = _only_violation(lines)
    assert (v.code, v.move) == ("hand_already_ended", 11)
    assert "move_limit by seat" in v.message and "max_moves_per_hand is 10" in v.message


def test_a_game_end_at_a_limit_that_was_not_reached_is_refused(old_log):
    """The old log cut after its third hand and ended there "by the hand limit", with the
    header's max_hands 5: the engine says the game goes on."""
    lines = copy.deepcopy(old_log[:_first(old_log, "hand_end", 2) + 1])
    lines[0]["rules"]["max_hands"] = 5
    lines.append({"game_end": True, "reason": "hand_limit"})
    v = _only_violation(lines)
    assert (v.code, v.line) == ("game_not_over", len(lines))
    assert "hand 3 of at most 5 was played" in v.message


def test_a_hand_end_at_the_move_limit_that_was_not_reached_is_refused(old_log):
    i = _first(old_log, "move", 5)
    lines = copy.deepcopy(old_log[:i + 1])
    lines.append({"hand_end": 1, "reason": "move_limit"})
    v = _only_violation(lines)
    assert (v.code, v.line) == ("hand_not_ended", len(lines))


def test_a_limit_end_told_as_another_end_is_refused(hand_limited, move_limited):
    for lines, wrong in ((hand_limited, "target"), (move_limited, "hand_limit")):
        lines = copy.deepcopy(lines)
        lines[-1]["reason"] = wrong
        v = _only_violation(lines)
        assert v.code == "game_end_mismatch" and f"the log says {wrong}" in v.message
    lines = copy.deepcopy(move_limited)
    lines[-2]["reason"] = "stock_exhausted"
    assert _only_violation(lines).code == "hand_end_mismatch"


def test_a_target_end_told_as_a_limit_is_refused(sample_logs):
    lines = copy.deepcopy(sample_logs[0])
    assert lines[-1]["reason"] == "target"
    lines[-1]["reason"] = "hand_limit"
    v = _only_violation(lines)
    assert v.code == "game_end_mismatch" and "the game ended by target (target_score" in v.message


def test_a_header_that_lifts_a_limit_is_refused(hand_limited):
    for value in (None, DEFAULT_MAX_HANDS * 100):
        lines = copy.deepcopy(hand_limited)
        lines[0]["rules"]["max_hands"] = value
        v = _only_violation(lines)
        assert (v.code, v.line) == ("invalid_rules", 1) and v.message.startswith("max_hands must be 1 to ")


def test_an_old_log_without_limits_validates_as_before(old_log):
    result = _valid(old_log)
    assert result.describe() == [f"x: ok, unfinished at move {result.last_move}"]
    assert "max_hands" not in old_log[0]["rules"]


@pytest.mark.slow
def test_an_old_log_longer_than_the_default_limits_validates():
    """More hands than max_hands allows by default: a log without limits was played without."""
    lines = unlimited("norwegian", 6, 4, hands=DEFAULT_MAX_HANDS + 1)
    assert sum("deal" in line for line in lines) == DEFAULT_MAX_HANDS + 1
    _valid(lines)


def test_an_old_finished_log_without_a_reason_validates():
    lines = unlimited("classic", None, 4, hands=1000)
    assert "game_end" in lines[-1] and "reason" not in lines[-1]
    assert _valid(lines).finished


def test_the_command_line_says_one_line_per_forged_file(tmp_path: Path, capsys, old_log, hand_limited):
    past = copy.deepcopy(old_log)
    past[0]["rules"]["max_moves_per_hand"] = 10
    claimed = copy.deepcopy(hand_limited)
    claimed[-1]["reason"] = "move_limit"
    for name, lines in (("past.jsonl", past), ("claimed.jsonl", claimed), ("good.jsonl", hand_limited)):
        (tmp_path / name).write_bytes(encode(lines))
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[-1] == "3 files: 1 valid, 2 invalid, 0 unreadable"
    assert any(": hand_already_ended: the engine ended hand 1 at move 10 (move_limit by seat" in line for line in out)
    assert any(line.endswith("game_end_mismatch: the game ended by hand_limit (max_hands 2), the log says move_limit")
               for line in out)
    assert f"{tmp_path / 'good.jsonl'}: ok" in out


def test_replay_show_says_why_the_game_ended(tmp_path: Path, capsys, hand_limited, move_limited):
    for lines, why in ((hand_limited, "(the game ended at the hand limit: 2 hands)"),
                       (move_limited, "(the game ended at the move limit: a hand reached 30 moves)")):
        path = tmp_path / "g.jsonl"
        path.write_bytes(encode(lines))
        assert main(["show", str(path)]) == 0
        out = capsys.readouterr().out
        assert "game over: " in out and why in out
