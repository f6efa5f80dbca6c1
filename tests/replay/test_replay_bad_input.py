"""Files that are not game logs: exit 2, one clear line per file, never a traceback, and the
other files of the run are still checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_corpus import ROOT, encode

from replay.cli import main
from replay.reader import Unreadable, parse_bytes

UNREADABLE_CODES = {"io_error", "not_utf8", "not_json", "truncated", "number_too_large", "wrong_type",
                    "missing_field", "missing_header", "unsupported_version", "unknown_line"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def good(sample_logs) -> bytes:
    return encode(sample_logs[0])


def run(tmp_path: Path, capsys, files: dict[str, bytes], *extra: str) -> tuple[int, list[str]]:
    paths = []
    for name, data in files.items():
        p = tmp_path / name
        p.write_bytes(data)
        paths.append(str(p))
    code = main(["validate", *extra, *paths])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out.splitlines()


def one_line(lines: list[str], path: Path) -> str:
    mine = [line for line in lines if line.startswith(f"{path}:")]
    assert len(mine) == 1, lines
    return mine[0]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_random_bytes(tmp_path, capsys, good, data):
    code, out = run(tmp_path, capsys, {"a-good.jsonl": good, "b-junk.jsonl": data})
    assert code == 2
    assert out[0] == f"{tmp_path / 'a-good.jsonl'}: ok"
    junk = one_line(out, tmp_path / "b-junk.jsonl")
    assert junk.split(": ")[1] in UNREADABLE_CODES or junk.split(": ")[0].endswith(tuple("0123456789"))
    assert out[-1] == "2 files: 1 valid, 0 invalid, 1 unreadable"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(objects=st.lists(json_values, min_size=1, max_size=5), header=st.booleans())
def test_random_json_lines(tmp_path, capsys, objects, header):
    """Any JSON at all: never a crash, one line, and the exit code says what the line says."""
    if header:
        objects = [{"log": "canasta-log/1", "preset": "classic"}, *objects]
    data = "".join(json.dumps(o) + "\n" for o in objects).encode()
    code, out = run(tmp_path, capsys, {"j.jsonl": data})
    line = one_line(out, tmp_path / "j.jsonl")
    if code == 0:
        assert line.endswith(": ok") or ": ok, unfinished at move" in line
    else:
        assert code in (1, 2)
        assert out[-1].endswith("1 invalid, 0 unreadable" if code == 1 else "0 invalid, 1 unreadable")


# (line kind, field, JSON types the field may have)
FIELDS = [
    ("move", "move", (int,)), ("move", "seat", (int,)), ("move", "hand", (int,)), ("move", "action", (dict,)),
    ("deal", "deal", (int,)), ("deal", "dealer", (int, type(None))), ("deal", "deck", (list,)),
    ("deal", "salt", (str, type(None))), ("deal", "commitment", (str, type(None))),
    ("hand_end", "hand_end", (int,)), ("hand_end", "by", (int, type(None))), ("hand_end", "reason", (str, type(None))),
    ("hand_end", "scores", (list, type(None))), ("game_end", "totals", (list, type(None))),
    ("game_end", "winner", (int, type(None))), ("log", "rules", (dict, type(None))),
    ("log", "seats", (list, type(None))), ("log", "preset", (str, type(None))), ("log", "log", (str,)),
]


def _other_type(types):
    def ok(v):
        if isinstance(v, bool):
            return True  # no field here takes a boolean, not even a number field
        if isinstance(v, float) and int in types:
            return True  # orjson reads 3.0 as a float: not a whole number
        return not isinstance(v, types)

    return json_values.filter(ok)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choice=st.sampled_from(FIELDS), data=st.data())
def test_wrong_json_types(sample_logs, choice, data):
    kind, field, types = choice
    lines = [dict(line) for line in sample_logs[1]]
    index = data.draw(st.sampled_from([i for i, line in enumerate(lines) if kind in line]))
    value = data.draw(_other_type(types))
    lines[index][field] = value
    data_ = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode()
    with pytest.raises(Unreadable) as e:
        parse_bytes(data_)
    assert e.value.line == index + 1
    assert e.value.code in {"wrong_type", "number_too_large", "unsupported_version"}


def test_truncated_anywhere(good, tmp_path, capsys):
    newlines = {i + 1 for i, b in enumerate(good) if b == 0x0A}
    for cut in range(0, len(good), max(1, len(good) // 150)):
        data = good[:cut]
        code, out = run(tmp_path, capsys, {"t.jsonl": data})
        line = one_line(out, tmp_path / "t.jsonl")
        if cut == 0:
            assert code == 2 and ": missing_header: " in line
        elif cut + 1 == len(good):  # all but the last newline: the whole game, to its end
            assert code == 0 and line.endswith(": ok"), line
        elif cut in newlines or cut + 1 in newlines:  # the last line is complete
            assert code == 0 and ": ok, unfinished at move" in line, line
        else:
            assert code == 2 and ": truncated: " in line, line


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda b: b.replace(b'"move":3,', b'"move":123456789012345678901234567890,', 1), "number_too_large"),
        (lambda b: b.replace(b'"move":3,', b'"move":1e400,', 1), "number_too_large"),
        (lambda b: b.replace(b'"move":3,', b'"move":9007199254740993,', 1), "number_too_large"),
        (lambda b: b.replace(b'"seat":', b'"seat":1e300,"x":', 1), "number_too_large"),
        (lambda b: b.replace(b'{"type":"draw"}', b'{"type":"draw","n":1e300}', 1), "number_too_large"),
        (lambda b: b.replace(b'"deck":["', b'"deck":[1e999,"', 1), "number_too_large"),
        (lambda b: b.replace(b'"canasta-log/1"', b'"canasta-log/2"', 1), "unsupported_version"),
        (lambda b: b.replace(b'"canasta-log/1"', b'"v1"', 1), "unsupported_version"),
        (lambda b: b.replace(b'"seat 0"', b'"J\xe4rvinen"', 1), "not_utf8"),
        (lambda b: b.replace(b'"type":"draw"', b'"type":"dr\xffaw"', 1), "not_utf8"),
        (lambda b: b.replace(b"\n", b"\n\n{oops}\n", 1), "not_json"),
        (lambda b: b.replace(b"\n", b"\n[1,2]\n", 1), "wrong_type"),
        (lambda b: b.replace(b"\n", b'\n{"hello":1}\n', 1), "unknown_line"),
        (lambda b: b.replace(b"\n", b'\n{"log":"canasta-log/1"}\n', 1), "unknown_line"),
        (lambda b: b.replace(b'"seat":', b'"chair":', 1), "missing_field"),
        (lambda b: b.split(b"\n", 1)[1], "missing_header"),
        (lambda b: b"", "missing_header"),
        (lambda b: b"\n  \n", "missing_header"),
        (lambda b: b"[" * 5000 + b"]" * 5000 + b"\n", "not_json"),
        (lambda b: b.replace(b'"game_end":true', b'"game_end":1', 1), "wrong_type"),
    ],
)
def test_unreadable_files_and_the_others_still_checked(good, tmp_path, capsys, change, code):
    bad = change(good)
    assert bad != good
    status, out = run(tmp_path, capsys, {"0.jsonl": good, "1.jsonl": bad, "2.jsonl": good})
    assert status == 2
    assert out[0].endswith("0.jsonl: ok") and out[2].endswith("2.jsonl: ok")
    assert f": {code}: " in out[1], out[1]
    assert out[-1] == "3 files: 2 valid, 0 invalid, 1 unreadable"


def test_missing_files_and_empty_directories(tmp_path, capsys, good):
    (tmp_path / "empty").mkdir()
    (tmp_path / "g.jsonl").write_bytes(good)
    code = main(["validate", str(tmp_path / "nope.jsonl"), str(tmp_path / "empty"), str(tmp_path / "g.jsonl")])
    out = capsys.readouterr().out.splitlines()
    assert code == 2
    assert out[0].startswith(f"{tmp_path / 'nope.jsonl'}: io_error: ")
    assert out[1].startswith(f"{tmp_path / 'empty'}: io_error: no .jsonl files")
    assert out[2].endswith("g.jsonl: ok")


def test_unreadable_wins_over_invalid(tmp_path, capsys, good, sample_logs):
    invalid = [dict(line) for line in sample_logs[0]]
    invalid[-1] = {**invalid[-1], "winner": None if invalid[-1]["winner"] is not None else 0}
    code, out = run(tmp_path, capsys, {"a.jsonl": good, "b.jsonl": encode(invalid)})
    assert code == 1
    code, out = run(tmp_path, capsys, {"a.jsonl": good, "b.jsonl": encode(invalid), "c.jsonl": b"\xff\n"})
    assert code == 2 and out[-1] == "3 files: 1 valid, 1 invalid, 1 unreadable"


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "cli.main", "replay", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=120)


def test_subprocess_bad_files_one_line_each(tmp_path, good):
    files = {"good.jsonl": good, "latin1.jsonl": good.replace(b'"seat 0"', b'"\xe5sa"', 1),
             "v2.jsonl": good.replace(b"canasta-log/1", b"canasta-log/2", 1), "cut.jsonl": good[: len(good) // 2],
             "types.jsonl": good.replace(b'"move":1,', b'"move":"1",', 1), "good2.jsonl": good}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    proc = _cli("validate", str(tmp_path))
    out = proc.stdout.decode().splitlines()
    assert proc.returncode == 2
    assert proc.stderr == b""
    codes = {Path(line.split(":")[0]).name: line for line in out[:-1]}
    assert codes["good.jsonl"].endswith(": ok") and codes["good2.jsonl"].endswith(": ok")
    assert ": not_utf8: " in codes["latin1.jsonl"]
    assert ": unsupported_version: " in codes["v2.jsonl"]
    assert ": truncated: " in codes["cut.jsonl"]
    assert ": wrong_type: " in codes["types.jsonl"]
    assert out[-1] == "6 files: 2 valid, 0 invalid, 4 unreadable"


def test_subprocess_stdin_and_garbage_stdin(good):
    proc = _cli("validate", "-", stdin=good)
    assert proc.returncode == 0 and proc.stdout.decode().splitlines()[0] == "-: ok"
    proc = _cli("validate", "-", stdin=b"\x00\x01garbage")
    assert proc.returncode == 2 and proc.stderr == b""
    assert proc.stdout.decode().startswith("-:1: not_json: ")


def test_floats_that_look_like_ints_are_wrong_types():
    lines = b'{"log":"canasta-log/1","preset":"classic"}\n{"move":1.0,"seat":1,"action":{"type":"draw"}}\n'
    with pytest.raises(Unreadable) as e:
        parse_bytes(lines)
    assert (e.value.code, e.value.line) == ("wrong_type", 2)


@pytest.mark.parametrize("depth", [10, 252, 300, 1000])
def test_deeply_nested_actions(tmp_path, capsys, sample_logs, depth):
    lines = [dict(line) for line in sample_logs[0]]
    i = next(i for i, line in enumerate(lines) if "move" in line)
    nested = "[" * depth + "]" * depth
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines[:i])
    seat = lines[i]["seat"]
    text += f'{{"move":1,"hand":1,"seat":{seat},"action":{{"type":"discard","card":{nested}}}}}\n'
    path = tmp_path / "deep.jsonl"
    path.write_text(text)
    for args in (["validate", str(path)], ["validate", "--json", "--all-errors", str(path)]):
        code = main(args)
        out = capsys.readouterr()
        assert "Traceback" not in out.out + out.err
        if depth + 3 > 1024:  # deeper than orjson reads
            assert code == 2 and "not_json" in out.out
        else:
            assert code == 1 and ("must_draw_first" in out.out or "invalid_card" in out.out), out.out
