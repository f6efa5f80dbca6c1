"""`canasta replay validate`: output formats, --json, --all-errors, --jobs, directories."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from replay_corpus import encode

from replay import cli
from replay.cli import main


def write(tmp_path: Path, name: str, lines) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode(lines))
    return path


def first_index(lines, key, nth=0):
    return [i for i, line in enumerate(lines) if key in line][nth]


def test_ok_and_summary(tmp_path, capsys, sample_logs):
    path = write(tmp_path, "a.jsonl", sample_logs[0])
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{path}: ok", "1 files: 1 valid, 0 invalid, 0 unreadable"]


def test_a_move_violation_line(tmp_path, capsys, sample_logs):
    lines = copy.deepcopy(sample_logs[0])
    i = next(i for i, line in enumerate(lines) if line.get("action", {}).get("type") == "discard")
    lines[i]["action"]["card"] = "XX"
    path = write(tmp_path, "m.jsonl", lines)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    m = lines[i]
    assert out[0] == (f'{path}:{i + 1}: move {m["move"]}, hand {m["hand"]}, seat {m["seat"]}, '
                      '{"type":"discard","card":"XX"}: invalid_card: '
                      "'XX' is not a card code (rank A23456789TJQK then suit SHDC, or JK)")
    assert out[1] == "1 files: 0 valid, 1 invalid, 0 unreadable"


def test_a_deal_violation_line(tmp_path, capsys, sample_logs):
    lines = copy.deepcopy(next(log for log in sample_logs if sum("deal" in line for line in log) >= 2))
    i = first_index(lines, "deal", 1)
    deck = lines[i]["deck"]
    j = next(j for j in range(1, len(deck)) if deck[j] != deck[0])
    deck[0], deck[j] = deck[j], deck[0]
    path = write(tmp_path, "d.jsonl", lines)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}:{i + 1}: deal 2: commitment_mismatch: the deck and salt do not match the commitment"


def test_score_violation_names_team_and_field(tmp_path, capsys, sample_logs):
    lines = copy.deepcopy(sample_logs[0])
    i = first_index(lines, "hand_end")
    lines[i]["scores"][1]["in_hand"] -= 5
    path = write(tmp_path, "s.jsonl", lines)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:{i + 1}: hand 1 end: score_mismatch: team 1 in_hand: the log says ")


def test_json_output(tmp_path, capsys, sample_logs):
    good = write(tmp_path, "a.jsonl", sample_logs[0])
    lines = copy.deepcopy(sample_logs[1])
    i = first_index(lines, "move", 3)
    lines[i]["seat"] = (lines[i]["seat"] + 1) % len(lines[0]["seats"])
    bad = write(tmp_path, "b.jsonl", lines)
    unfinished = write(tmp_path, "c.jsonl", sample_logs[2][:20])
    assert main(["validate", "--json", str(good), str(bad), str(unfinished)]) == 1
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert captured.err.strip() == "3 files: 2 valid, 1 invalid, 0 unreadable"
    assert rows[0] == {"file": str(good), "valid": True, "status": "ok", "finished": True,
                       "moves": sum("move" in line for line in sample_logs[0])}
    assert rows[1]["valid"] is False and rows[1]["finished"] is True
    assert {k: rows[1][k] for k in ("line", "move", "hand", "seat", "action", "code")} == {
        "line": i + 1, "move": lines[i]["move"], "hand": lines[i]["hand"], "seat": lines[i]["seat"],
        "action": lines[i]["action"], "code": "not_your_turn"}
    assert rows[1]["message"]
    assert rows[2]["valid"] is True and rows[2]["finished"] is False


def test_json_output_of_unreadable(tmp_path, capsys):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"log": "canasta-log/2"}\n')
    assert main(["validate", "--json", str(path)]) == 2
    row = json.loads(capsys.readouterr().out)
    assert row["valid"] is False and row["status"] == "unreadable"
    assert (row["code"], row["line"], row["move"]) == ("unsupported_version", 1, None)


def test_all_errors_goes_on(tmp_path, capsys, sample_logs):
    lines = copy.deepcopy(next(log for log in sample_logs if sum("deal" in line for line in log) >= 3))
    h1 = first_index(lines, "hand_end", 0)
    lines[h1]["scores"][0]["melds"] += 5  # a bad score: go on with the engine's totals
    m2 = first_index(lines, "deal", 1) + 3
    lines[m2]["seat"] = (lines[m2]["seat"] + 1) % len(lines[0]["seats"])  # illegal: skip hand 2
    d3 = first_index(lines, "deal", 2)
    lines[d3]["commitment"] = "0" * 64  # a bad commitment: deal anyway
    m3 = d3 + 2
    lines[m3]["move"] += 100  # numbering: go on with the recorded number
    lines[-1]["winner"] = None if lines[-1]["winner"] is not None else 0
    path = write(tmp_path, "many.jsonl", lines)
    assert main(["validate", str(path)]) == 1
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert main(["validate", "--all-errors", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    reported = [(int(line.split(":")[1]), line) for line in out[:-1]]
    expected = [(h1 + 1, "score_mismatch"), (m2 + 1, "not_your_turn"), (d3 + 1, "commitment_mismatch"),
                (m3 + 1, "move_number_mismatch"), (m3 + 2, "move_number_mismatch")]  # the next one is off too
    assert [(n, code) for (n, line), (_, code) in zip(reported, expected, strict=False) if f": {code}: " in line] \
        == expected, out
    assert ": game end: game_end_mismatch: " in out[-2]
    assert out[-1] == "1 files: 0 valid, 1 invalid, 0 unreadable"


def test_directories_jobs_and_order(tmp_path, capsys, sample_logs):
    for n, lines in enumerate(sample_logs[:24]):
        write(tmp_path, f"d{n % 3}/g{n:02d}.jsonl", lines)
    (tmp_path / "d0" / "notes.txt").write_text("not a log")
    bad = copy.deepcopy(sample_logs[0])
    bad[-1]["totals"][0] += 1
    write(tmp_path, "d1/zz-bad.jsonl", bad)
    assert main(["validate", str(tmp_path)]) == 1
    serial = capsys.readouterr().out
    assert main(["validate", "--jobs", "2", str(tmp_path)]) == 1
    parallel = capsys.readouterr().out
    assert serial == parallel
    out = serial.splitlines()
    assert len(out) == 26 and out[-1] == "25 files: 24 valid, 1 invalid, 0 unreadable"
    assert out[0].startswith(f"{tmp_path}/d0/g00.jsonl: ok")
    assert main(["validate", "-q", "-j", "0", str(tmp_path)]) == 1
    quiet = capsys.readouterr().out.splitlines()
    assert len(quiet) == 2 and "zz-bad.jsonl:" in quiet[0] and "game_end_mismatch" in quiet[0]


def test_stdin(monkeypatch, capsys, sample_logs):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(encode(sample_logs[0][:30]))))
    assert main(["validate", "-"]) == 0
    out = capsys.readouterr().out.splitlines()
    moves = sum("move" in line for line in sample_logs[0][:30])
    assert out[0] == f"-: ok, unfinished at move {moves}"


def test_progress_bar_when_many_files_go_to_a_terminal(tmp_path, capsys, monkeypatch, sample_logs):
    for n in range(cli.PROGRESS_MIN_FILES + 1):
        write(tmp_path, f"g{n:02d}.jsonl", sample_logs[n % len(sample_logs)])
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    assert main(["validate", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"{cli.PROGRESS_MIN_FILES + 1} files: {cli.PROGRESS_MIN_FILES + 1} valid, 0 invalid, 0 unreadable"
    assert sum(line.endswith(": ok") for line in out) == cli.PROGRESS_MIN_FILES + 1


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["validate"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2
    capsys.readouterr()


def test_file_names_that_are_not_utf8(tmp_path, capsys, sample_logs):
    import os

    name = os.fsdecode(b"g\xe4me.jsonl")  # Latin-1 bytes in a file name
    (tmp_path / name).write_bytes(encode(sample_logs[0]))
    assert main(["validate", str(tmp_path)]) == 0
    assert main(["validate", "--json", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("g\\xe4me.jsonl: ok")
    assert json.loads(out[2])["file"].endswith("g\\xe4me.jsonl")
