"""docs/gamelog.md stays complete: every line kind, field, action, hand-end reason and reason
code that the code knows is named there, and its hand-written example is a valid log."""

from __future__ import annotations

import re
from pathlib import Path

import engine
from engine import moves
from replay import log, reader
from replay.validate import validate_bytes

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "gamelog.md"
# how the code names a reason code where it raises or records it
CODE_PATTERNS = (
    r'Unreadable\(\s*"([a-z_]+)"',
    r'HeaderError\(\s*"([a-z_]+)"',
    r'Violation\(\s*"([a-z_]+)"',
    r'_fail\(\s*"([a-z_]+)"',
    r'BadLog\(\s*"([a-z_]+)"',
)


def _doc() -> str:
    return DOC.read_text()


def _table_names(text: str) -> set[str]:
    """The names in the first column of the doc's tables (`` | `name` | ``)."""
    return set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))


def _replay_codes() -> set[str]:
    source = "\n".join(p.read_text() for p in (ROOT / "replay").glob("*.py"))
    return {code for pattern in CODE_PATTERNS for code in re.findall(pattern, source)}


def test_every_reason_code_of_the_reader_and_validator_is_in_a_table() -> None:
    codes = _replay_codes()
    assert {"truncated", "score_mismatch", "invalid_seats", "log_too_long"} <= codes, "the patterns are wrong"
    assert sorted(codes - _table_names(_doc())) == []


def test_every_line_kind_and_field_is_named() -> None:
    rules = engine.resolve("classic")
    result = {"hand_end": 1, "reason": "went_out", "by": 0,
              "scores": [dict.fromkeys(reader.SCORE_FIELDS, 0)]}
    lines = [
        log.header_line(rules, game_id="g"),
        log.deal_line(1, 0, [], "", ""),
        log.move_line(1, 1, 0, {}),
        log.hand_end_line(result),
        log.game_end_line({"totals": [0, 0], "winner": None, "reason": "target"}),
    ]
    written = {key for line in lines for key in line}
    written |= {key for seat in lines[0]["seats"] for key in seat}
    kinds = {"log", reader.DEAL, reader.MOVE, reader.HAND_END, reader.GAME_END, reader.AUTO}
    doc = _doc()
    assert sorted((written | set(reader.SCORE_FIELDS)) - _table_names(doc)) == []
    # the table of line kinds: | kind | `key` ... |
    assert sorted(k for k in kinds if not re.search(rf"^\| [a-z ]+ \| `{k}`", doc, re.M)) == []
    assert f'"log": "{reader.FORMAT}"' in doc


def test_every_action_and_its_fields_are_in_the_actions_table() -> None:
    fields = getattr(moves, "ACTION_FIELDS", None) or moves._FIELDS  # type -> (required, optional)
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z_]+)` \| ([^|]*) \|", _doc(), re.M)}
    missing = []
    for kind, (required, optional) in fields.items():
        row = rows.get(kind)
        if row is None:
            missing.append(kind)
            continue
        missing += [f"{kind}.{f}" for f in sorted(required | optional) if f"`{f}`" not in row]
    assert missing == []


def test_every_hand_end_reason_is_named() -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "engine").glob("*.py"))
    reasons = set(re.findall(r'end_hand\([^()]*?,\s*"([a-z_]+)"', source))
    # reasons named by a constant of engine.state (the move limit's is also a game's)
    reasons |= {getattr(engine.state, name) for name in re.findall(r"end_hand\([^()]*?,\s*([A-Z_]+)\b", source)}
    assert reasons == {"went_out", "stock_exhausted", "red_three_last", "move_limit"}
    row = next(line for line in _doc().splitlines() if line.startswith("| `reason` |"))
    assert sorted(r for r in reasons if f"`{r}`" not in row) == []


def test_every_game_end_reason_is_named() -> None:
    reasons = {engine.state.TARGET, engine.state.HAND_LIMIT, engine.state.MOVE_LIMIT}
    game_end = _doc().split("### Game end", 1)[1].split("###", 1)[0]
    row = next(line for line in game_end.splitlines() if line.startswith("| `reason` |"))
    assert sorted(r for r in reasons if f"`{r}`" not in row) == []


def _example() -> bytes:
    section = _doc().split("## Writing a log by hand", 1)[1]
    block = re.search(r"```jsonl\n(.*?)```", section, re.S)
    assert block, "the hand-written example is gone"
    return block.group(1).encode()


def test_the_hand_written_example_is_a_valid_finished_game() -> None:
    result = validate_bytes(_example(), "example.jsonl")
    assert result.valid and result.finished, result.describe()

