"""Reading game log v1 (docs/gamelog.md): bytes -> typed lines, or :class:`Unreadable`.

This module decides whether a file *is* a game log: UTF-8 JSON Lines, a ``canasta-log/1``
header first, and every other line one of the known kinds with its fields of the right
JSON types. Whether the log is *right* (legal moves, matching scores) is
:mod:`replay.validate`'s job. Keeping the two apart is what gives ``canasta replay
validate`` its exit codes: 2 for a file that cannot be read, 1 for one that is wrong.

Fields a reader does not know are ignored (docs/gamelog.md), and so are blank lines. Optional
fields (the hand-written form) are read as ``None`` by the validator.

The reason codes of :class:`Unreadable` are stable; docs/gamelog.md ("Reading") lists and
explains them (tests/replay/test_replay_gamelog_doc.py keeps that list complete).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from engine.text import quote

FORMAT = "canasta-log/1"
MAX_INT = 2**53  # JSON's safe integers: anything beyond is a corrupt or hostile number

HEADER = "header"
DEAL = "deal"
MOVE = "move"
HAND_END = "hand_end"
GAME_END = "game_end"
AUTO = "auto"

_BOM = b"\xef\xbb\xbf"
_MISSING = object()
SCORE_FIELDS = ("team", "melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand", "hand_total",
                "total")


class Unreadable(Exception):
    """The file is not a game log v1. ``line`` is the 1-based line number, or None."""

    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.line = line


class Line(NamedTuple):
    """One line after the header: its number in the file, its kind and the parsed object."""

    no: int
    kind: str
    data: dict[str, Any]


@dataclass(slots=True)
class Log:
    """A log that has been read: the header object and the other lines in order."""

    header: dict[str, Any]
    lines: list[Line]
    header_no: int = 1


def read_path(path: str) -> Log:
    """Read a file (``-``: standard input) as a log."""
    return parse_bytes(read_bytes(path))


def read_bytes(path: str) -> bytes:
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise Unreadable("io_error", e.strerror or str(e)) from None


def parse_bytes(data: bytes) -> Log:
    """Split into lines, parse each with orjson and check its kind and field types."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    raw_lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    last = len(raw_lines) - 1
    header: dict[str, Any] | None = None
    header_no = 1
    lines: list[Line] = []
    append = lines.append
    loads = orjson.loads
    new_line = tuple.__new__  # Line(...) without the namedtuple's Python-level __new__
    for i, raw in enumerate(raw_lines):
        if not raw or raw.isspace():
            continue
        no = i + 1
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as e:
            raise _decode_error(raw, e, no, truncated=(i == last and not complete)) from None
        if type(obj) is not dict:
            raise Unreadable("wrong_type", f"each line is a JSON object; this one is {_json_type(obj)}", no)
        if header is None:
            header, header_no = _check_header(obj, no), no
            continue
        if MOVE in obj:  # most lines: the checks inline (see _check_move_slowly for the why)
            m, seat, hand = obj["move"], obj.get("seat"), obj.get("hand", 0)
            if not (type(m) is int and type(seat) is int and type(hand) is int
                    and type(obj.get("action")) is dict
                    and -MAX_INT <= m <= MAX_INT and -MAX_INT <= seat <= MAX_INT and -MAX_INT <= hand <= MAX_INT):
                _check_move_slowly(obj, no)
            append(new_line(Line, (no, MOVE, obj)))
        elif DEAL in obj:
            append(Line(no, DEAL, _check_deal(obj, no)))
        elif HAND_END in obj:
            append(Line(no, HAND_END, _check_hand_end(obj, no)))
        elif GAME_END in obj:
            append(Line(no, GAME_END, _check_game_end(obj, no)))
        elif AUTO in obj:
            append(Line(no, AUTO, obj))
        elif "log" in obj:
            raise Unreadable("unknown_line", "a second header: a log has one header, on its first line", no)
        else:
            keys = ", ".join(repr(k)[:24] for k in sorted(obj)[:5]) or "no fields"
            raise Unreadable(
                "unknown_line", f"not a log line (a line has move, deal, hand_end, game_end or auto; this has {keys})", no
            )
    if header is None:
        raise Unreadable("missing_header", "the file is empty: a log starts with its header line", None)
    return Log(header, lines, header_no)


# -- errors ----------------------------------------------------------------------------------


def _decode_error(raw: bytes, e: Exception, no: int, truncated: bool) -> Unreadable:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as u:
        return Unreadable("not_utf8", f"byte {u.start + 1} of the line is not UTF-8 (0x{raw[u.start]:02x})", no)
    text = str(e)
    if "infinity" in text:
        return Unreadable("number_too_large", "a number too large to be a double", no)
    # cut off: the last line, no newline after it, and the parser ran out of text
    if truncated and getattr(e, "pos", -1) >= len(decoded.rstrip()):
        return Unreadable("truncated", "the last line stops in the middle (no newline, incomplete JSON)", no)
    pos = getattr(e, "pos", None)
    where = f" at column {pos + 1}" if isinstance(pos, int) else ""
    return Unreadable("not_json", f"not JSON{where} ({text.split(': line ')[0]})", no)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _is_int(value: Any) -> bool:
    return type(value) is int and -MAX_INT <= value <= MAX_INT


def _bad_number(value: Any) -> bool:
    """A number the format cannot mean: beyond the safe integers, or infinite."""
    if type(value) is int:
        return not -MAX_INT <= value <= MAX_INT
    if type(value) is float:
        return not math.isfinite(value) or abs(value) > MAX_INT
    return False


def has_huge_number(value: Any) -> bool:
    """Whether a JSON value holds a number beyond +-2**53 anywhere inside (iterative: JSON
    nests deeper than Python recurses)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
        elif _bad_number(v):
            return True
    return False


def _field(obj: dict[str, Any], key: str, what: str, no: int, *, required: bool, nullable: bool = False) -> Any:
    """An integer field: present and int (or absent/null where allowed)."""
    value = obj.get(key, _MISSING)
    if value is _MISSING or (value is None and nullable):
        if required and value is _MISSING:
            raise Unreadable("missing_field", f"{what} line has no {key!r}", no)
        return None if value is _MISSING else value
    if _is_int(value):
        return value
    if _bad_number(value):
        raise Unreadable("number_too_large", f"{key!r} of the {what} line is too large a number", no)
    raise Unreadable("wrong_type", f"{key!r} of the {what} line must be a whole number, not {_json_type(value)}", no)


def _text(obj: dict[str, Any], key: str, what: str, no: int) -> None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise Unreadable("wrong_type", f"{key!r} of the {what} must be a string, not {_json_type(value)}", no)


# -- line kinds --------------------------------------------------------------------------------


def _check_header(obj: dict[str, Any], no: int) -> dict[str, Any]:
    if "log" not in obj:
        raise Unreadable(
            "missing_header", f'the first line is not a header (it starts {{"log": "{FORMAT}", ...}})', no
        )
    version = obj["log"]
    if not isinstance(version, str):
        raise Unreadable("wrong_type", f"'log' of the header must be a string, not {_json_type(version)}", no)
    if version != FORMAT:
        raise Unreadable("unsupported_version", f"format {quote(version)}: this reader knows {FORMAT} only", no)
    if has_huge_number(obj):
        raise Unreadable("number_too_large", "the header holds a number too large", no)
    for key in ("game", "preset", "created"):
        _text(obj, key, "header", no)
    rules = obj.get("rules")
    if rules is not None and not isinstance(rules, dict):
        raise Unreadable("wrong_type", f"'rules' of the header must be an object, not {_json_type(rules)}", no)
    seats = obj.get("seats")
    if seats is not None:
        if not isinstance(seats, list):
            raise Unreadable("wrong_type", f"'seats' of the header must be an array, not {_json_type(seats)}", no)
        for s in seats:
            if not isinstance(s, dict):
                raise Unreadable("wrong_type", f"each seat of the header is an object, not {_json_type(s)}", no)
            _field(s, "seat", "header's seat", no, required=True)
            _field(s, "team", "header's seat", no, required=False, nullable=True)
            _text(s, "name", "header's seat", no)
    return obj


def _check_move_slowly(obj: dict[str, Any], no: int) -> dict[str, Any]:
    """Say what is wrong with a move line that failed the fast path in :func:`parse_bytes`.

    Numbers inside ``action`` are not looked at here: a legal action holds none, so the
    validator looks for huge ones only in an action the engine refused.
    """
    _field(obj, "move", "move", no, required=True)
    _field(obj, "hand", "move", no, required=False)
    _field(obj, "seat", "move", no, required=True)
    action = obj.get("action", _MISSING)
    if action is _MISSING:
        raise Unreadable("missing_field", "move line has no 'action'", no)
    if type(action) is not dict:
        raise Unreadable("wrong_type", f"'action' of the move line must be an object, not {_json_type(action)}", no)
    return obj


def _check_deal(obj: dict[str, Any], no: int) -> dict[str, Any]:
    _field(obj, "deal", "deal", no, required=True)
    _field(obj, "dealer", "deal", no, required=False, nullable=True)
    deck = obj.get("deck", _MISSING)
    if deck is _MISSING:
        raise Unreadable("missing_field", "deal line has no 'deck'", no)
    if type(deck) is not list:
        raise Unreadable("wrong_type", f"'deck' of the deal line must be an array, not {_json_type(deck)}", no)
    for card in deck:
        if type(card) is not str:
            if _bad_number(card):
                raise Unreadable("number_too_large", "the deck holds a number too large", no)
            raise Unreadable("wrong_type", f"'deck' holds card codes (strings), not {_json_type(card)}", no)
    _text(obj, "salt", "deal line", no)
    _text(obj, "commitment", "deal line", no)
    return obj


def _check_hand_end(obj: dict[str, Any], no: int) -> dict[str, Any]:
    _field(obj, "hand_end", "hand_end", no, required=True)
    _field(obj, "by", "hand_end", no, required=False, nullable=True)
    _text(obj, "reason", "hand_end line", no)
    scores = obj.get("scores")
    if scores is not None:
        if type(scores) is not list:
            raise Unreadable("wrong_type", f"'scores' of the hand_end line must be an array, not {_json_type(scores)}", no)
        for row in scores:
            if type(row) is not dict:
                raise Unreadable("wrong_type", f"each score row is an object, not {_json_type(row)}", no)
            for key in SCORE_FIELDS:
                _field(row, key, "hand_end", no, required=False, nullable=True)
    return obj



def _check_game_end(obj: dict[str, Any], no: int) -> dict[str, Any]:
    if obj["game_end"] is not True:
        raise Unreadable("wrong_type", f"'game_end' must be true, not {orjson.dumps(obj['game_end']).decode()[:20]}", no)
    totals = obj.get("totals")
    if totals is not None:
        if type(totals) is not list:
            raise Unreadable("wrong_type", f"'totals' of the game_end line must be an array, not {_json_type(totals)}", no)
        for t in totals:
            if not _is_int(t):
                if _bad_number(t):
                    raise Unreadable("number_too_large", "'totals' holds a number too large", no)
                raise Unreadable("wrong_type", f"'totals' holds whole numbers, not {_json_type(t)}", no)
    _field(obj, "winner", "game_end", no, required=False, nullable=True)
    _text(obj, "reason", "game_end line", no)
    return obj
