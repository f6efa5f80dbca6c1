"""Writing game log v1 lines (the format: docs/gamelog.md)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from engine.rules import RuleOptions

FORMAT = "canasta-log/1"


def header_line(
    rules: RuleOptions, game_id: str = "", seats: list[dict[str, Any]] | None = None, created: str | None = None
) -> dict[str, Any]:
    """The first line: the full resolved rules, the preset and the seats."""
    if seats is None:
        seats = [{"seat": p, "name": f"seat {p}", "team": rules.team_of(p), "bot": None} for p in range(rules.players)]
    return {
        "log": FORMAT,
        "game": game_id,
        "rules": rules.to_dict(),
        "preset": rules.preset,
        "seats": seats,
        "created": created or dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


def deal_line(hand_no: int, dealer: int, deck: list[str], salt: str | None, commitment: str | None) -> dict[str, Any]:
    return {"deal": hand_no, "dealer": dealer, "deck": deck, "salt": salt, "commitment": commitment}


def move_line(move: int, hand: int, seat: int, action: dict[str, Any]) -> dict[str, Any]:
    return {"move": move, "hand": hand, "seat": seat, "action": action}


def dumps(line: dict[str, Any]) -> bytes:
    return orjson.dumps(line)


def write_log(path: Path | str, lines: Iterable[dict[str, Any]]) -> None:
    with open(path, "wb") as f:
        for line in lines:
            f.write(orjson.dumps(line))
            f.write(b"\n")


def hand_end_line(result: dict[str, Any]) -> dict[str, Any]:
    """A hand_end line from the engine's ``state.hand_result`` (already the line; copied)."""
    return {"hand_end": result["hand_end"], "reason": result["reason"], "by": result["by"],
            "scores": [dict(row) for row in result["scores"]]}


def game_end_line(result: dict[str, Any]) -> dict[str, Any]:
    """The game_end line from the engine's ``state.game_result``."""
    return {"game_end": True, "totals": list(result["totals"]), "winner": result["winner"], "reason": result["reason"]}


def encode_log(lines: Iterable[dict[str, Any]]) -> bytes:
    """A whole ``.jsonl`` file in memory: one compact JSON object per line, each ending in a newline."""
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)
