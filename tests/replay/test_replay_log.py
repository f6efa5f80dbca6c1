"""The writer (replay/log.py) writes what docs/gamelog.md says, and the reader reads it back."""

from __future__ import annotations

import datetime as dt
import re

import engine
from cli.engine_cmds import simulate_main
from replay.cli import main
from replay.log import FORMAT, encode_log, game_end_line, hand_end_line, header_line, write_log
from replay.reader import DEAL, GAME_END, HAND_END, MOVE, read_path
from replay.validate import rules_from_header


def test_header_line_has_every_field():
    rules = engine.resolve("wiki", 6)
    h = header_line(rules, game_id="g1")
    assert list(h) == ["log", "game", "rules", "preset", "seats", "created"]
    assert h["log"] == FORMAT == "canasta-log/1"
    assert h["rules"] == rules.to_dict() and h["preset"] == "wiki"
    assert [s["team"] for s in h["seats"]] == [0, 1, 0, 1, 0, 1]
    assert all(set(s) == {"seat", "name", "team", "bot"} for s in h["seats"])
    dt.datetime.fromisoformat(h["created"].replace("Z", "+00:00"))  # RFC 3339
    assert rules_from_header(h) == rules


def test_round_trip(tmp_path, sample_logs):
    lines = sample_logs[5]
    path = tmp_path / "g.jsonl"
    write_log(path, lines)
    assert path.read_bytes() == encode_log(lines)
    log = read_path(str(path))
    assert log.header == lines[0]
    assert [line.data for line in log.lines] == lines[1:]
    kinds = [line.kind for line in log.lines]
    assert kinds[0] == DEAL and kinds[-1] == GAME_END and kinds[-2] == HAND_END and MOVE in kinds


def test_result_lines_copy_the_engines(sample_logs):
    for line in sample_logs[0]:
        if "hand_end" in line:
            assert hand_end_line(line) == line and hand_end_line(line) is not line
        if "game_end" in line:
            assert game_end_line(line) == line


def test_simulate_out_writes_valid_logs(tmp_path, capsys):
    assert simulate_main(["--rules", "finnish-3p", "--games", "3", "--set", "target_score=800",
                          "--out", str(tmp_path)]) == 0
    assert main(["validate", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 files: 3 valid, 0 invalid, 0 unreadable"


def test_simulate_counts_a_game_cut_by_max_moves_apart_from_engine_errors(tmp_path, capsys):
    """Random play may not reach the target for a long time (six norwegian players wandered
    4 500 hands without it, before games had limits): a game still going after ``--max-moves``
    is unfinished, not an engine error, and writes no log."""
    assert simulate_main(["--rules", "norwegian", "--players", "6", "--games", "2", "--max-moves", "150",
                          "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("unfinished: game did not end within 150 moves") == 2
    assert "unfinished games 2" in captured.out
    assert not list(tmp_path.iterdir())


def test_simulate_plays_a_bot_and_reports_the_lengths_and_the_ends(tmp_path, capsys):
    """``--bot`` seats one bot everywhere; the summary gives the longest game and hand (what
    the limits' defaults are measured by) and why the games ended."""
    assert simulate_main(["--rules", "classic", "--bot", "greedy", "--games", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "games ended: target 2" in out
    assert re.search(r"longest game \d+ hands, longest hand \d+ moves \(limits: 1000 hands, 1000 moves a hand\)", out)
    assert simulate_main(["--rules", "norwegian", "--players", "6", "--games", "1",
                          "--set", "max_hands=3", "--set", "max_moves_per_hand=40"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"games ended: (hand_limit|move_limit) 1", out) and "longest game" in out
    assert main(["validate", str(tmp_path)]) == 0
