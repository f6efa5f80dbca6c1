"""Logs typed in by hand (docs/gamelog.md): partial rules, no salt or commitment, no scores."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from replay_handmade import quick_game

from engine import resolve
from replay.cli import main
from replay.validate import rules_from_header, validate_bytes


def encode(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def test_a_hand_written_game_is_valid():
    result = validate_bytes(encode(quick_game()), "table.jsonl")
    assert result.valid and result.finished, result.describe()
    assert result.describe() == ["table.jsonl: ok"]


NO_LIMITS = {"max_hands": None, "max_moves_per_hand": None}


def test_partial_rules_take_the_rest_from_the_preset():
    """... but for the limits: a table plays without them, and so did the service before."""
    header = quick_game()[0]
    rules = rules_from_header(header)
    assert rules == resolve("classic", 4, {"target_score": 300}).with_values(NO_LIMITS)
    header.pop("rules")
    assert rules_from_header(header) == resolve("classic").with_values(NO_LIMITS)


def test_a_limit_the_header_gives_is_played():
    header = quick_game()[0]
    header["rules"]["max_hands"] = 3
    rules = rules_from_header(header)
    assert (rules.limits.max_hands, rules.limits.max_moves_per_hand) == (3, None)


def test_partial_scores_are_checked():
    lines = quick_game()
    lines[5]["scores"] = [{"team": 1, "melds": 180, "canasta_bonus": 500, "going_out": 200, "red_threes": 0}]
    assert validate_bytes(encode(lines), "x").valid
    lines[5]["scores"] = [{"team": 1, "going_out": 100}]  # not concealed? it was: 200
    result = validate_bytes(encode(lines), "x")
    v = result.violations[0]
    assert (v.line, v.code) == (6, "score_mismatch")
    assert "team 1 going_out" in v.message and "200" in v.message


def test_a_wrong_winner_is_found():
    lines = quick_game()
    lines[6]["winner"] = 0
    result = validate_bytes(encode(lines), "x")
    assert [(v.line, v.code) for v in result.violations] == [(7, "game_end_mismatch")]


def test_the_game_goes_on_below_the_target():
    lines = quick_game(target=5000)
    result = validate_bytes(encode(lines), "x")
    assert [(v.line, v.code) for v in result.violations] == [(7, "game_not_over")]
    assert validate_bytes(encode(lines[:-1]), "x").describe() == ["x: ok, unfinished at move 3"]


def test_an_unfinished_hand_written_game():
    lines = quick_game()[:4]  # header, deal, draw, meld: seat 1 still has to discard
    result = validate_bytes(encode(lines), "live.jsonl")
    assert result.valid and not result.finished
    assert result.describe() == ["live.jsonl: ok, unfinished at move 2"]


def test_a_hand_end_where_the_engine_goes_on():
    lines = quick_game()
    del lines[4]  # the going-out discard
    result = validate_bytes(encode(lines), "x")
    assert [(v.line, v.code) for v in result.violations] == [(5, "hand_not_ended")]


def test_a_move_after_the_hand_ended():
    lines = quick_game()
    lines.insert(5, {"move": 4, "hand": 1, "seat": 2, "action": {"type": "draw"}})
    result = validate_bytes(encode(lines), "x")
    assert [(v.line, v.code) for v in result.violations] == [(6, "hand_already_ended")]


def test_lines_after_the_game_end():
    lines = quick_game() + [{"deal": 2, "dealer": 1, "deck": quick_game()[1]["deck"]}]
    result = validate_bytes(encode(lines), "x")
    assert [(v.line, v.code) for v in result.violations] == [(8, "trailing_lines")]


def test_auto_lines_and_unknown_fields_are_ignored():
    lines = quick_game()
    lines[2]["note"] = "she drew the 9 of spades"
    lines[0]["venue"] = {"city": "Turku"}
    lines.insert(2, {"auto": "upcard", "pile": ["5S"]})
    assert validate_bytes(encode(lines), "x").valid


def test_a_commitment_without_salt_is_refused():
    lines = quick_game()
    lines[1]["commitment"] = "0" * 64
    result = validate_bytes(encode(lines), "x")
    assert [(v.line, v.code) for v in result.violations] == [(2, "commitment_mismatch")]


def test_salt_and_commitment_when_present_are_checked():
    from engine import commitment

    lines = quick_game()
    salt = "ab" * 16
    lines[1]["salt"], lines[1]["commitment"] = salt, commitment(salt, lines[1]["deck"])
    assert validate_bytes(encode(lines), "x").valid
    lines[1]["salt"] = "abc"
    assert validate_bytes(encode(lines), "x").violations[0].code == "invalid_salt"


def test_hand_one_dealer_is_free_then_it_rotates():
    lines = quick_game()
    second = {"deal": 2, "dealer": 3, "deck": lines[1]["deck"]}
    lines = quick_game(target=5000)[:-1] + [second]
    result = validate_bytes(encode(lines), "x")
    assert [(v.line, v.code) for v in result.violations] == [(7, "dealer_mismatch")]
    assert "seat 1 deals hand 2" in result.violations[0].message
    second["dealer"] = 1
    assert validate_bytes(encode(lines), "x").valid
    second["deal"] = 3
    assert validate_bytes(encode(lines), "x").violations[0].code == "deal_number_mismatch"


def test_teams_in_the_seats_decide_the_seating():
    seats = [{"seat": p, "team": p % 3} for p in range(6)]
    rules = rules_from_header({"log": "canasta-log/1", "preset": "norwegian", "seats": seats})
    assert (rules.players, rules.team_size, rules.teams, rules.going_out.canastas_to_go_out) == (6, 2, 3, 2)


@pytest.mark.parametrize(
    ("header", "code"),
    [
        ({"seats": [{"seat": 0}, {"seat": 1}]}, "invalid_header"),
        ({"preset": "poker", "seats": [{"seat": 0}, {"seat": 1}]}, "invalid_rules"),
        ({"preset": "classic", "seats": [{"seat": 0}, {"seat": 1}, {"seat": 2}]}, "invalid_rules"),
        ({"preset": "classic", "rules": {"players": 2}, "seats": [{"seat": p} for p in range(4)]}, "invalid_rules"),
        ({"preset": "classic", "rules": {"jokers": 4}}, "invalid_rules"),
        ({"preset": "classic", "rules": {"target_score": "lots"}}, "invalid_rules"),
        ({"preset": "classic", "seats": [{"seat": 0}, {"seat": 2}, {"seat": 1}, {"seat": 3}]}, "invalid_seats"),
        ({"preset": "classic", "seats": [{"seat": p, "team": 0} for p in range(4)]}, "invalid_rules"),
        ({"preset": "classic", "seats": [{"seat": p, "team": p // 2} for p in range(4)]}, "invalid_seats"),
    ],
)
def test_bad_headers_are_invalid(header, code, tmp_path, capsys):
    lines = quick_game()
    lines[0] = {"log": "canasta-log/1", **header}
    path = tmp_path / "h.jsonl"
    path.write_bytes(encode(lines))
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:1: header: {code}: "), out


def _old_form(lines: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int] | None:
    """The log as an engine before issue 11 wrote it: a hand that ends because the player to
    move cannot take the pile gets that player's forced ``pass`` before its hand_end line.
    Returns the lines and the 1-based line of the pass, or None if no hand ended so."""
    for i, line in enumerate(lines):
        if line.get("reason") == "stock_exhausted" and lines[i - 1].get("action", {}).get("type") == "discard":
            pass_line = {"move": lines[i - 1]["move"] + 1, "hand": line["hand_end"], "seat": line["by"],
                         "action": {"type": "pass"}}
            later = [dict(x, move=x["move"] + 1) if "move" in x else x for x in lines[i:]]
            return lines[:i] + [pass_line] + later, i + 1
    return None


@pytest.mark.parametrize("preset", ["classic", "finnish", "bicycle", "wiki-4"])
def test_a_forced_pass_written_before_issue_11_no_longer_validates(fast_corpus, preset):
    """docs/changelog.md: a hand that ends because the player to move cannot take the pile
    ends at the discard before; the old form, with that player's forced pass, is refused at
    the pass. The new form validates."""
    for lines in fast_corpus[preset]:
        old = _old_form(lines)
        if old is None:
            continue
        assert validate_bytes(encode(lines), "new").valid
        mutated, at = old
        result = validate_bytes(encode(mutated), "old")
        first = result.violations[0]
        assert (first.line, first.code) == (at, "hand_already_ended"), result.describe()
        return
    pytest.fail(f"no {preset} game of the corpus ended a hand for want of a pile to take")
