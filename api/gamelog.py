"""Game log lines (shared/spec/gamelog.md) as the service writes them.

Stand-ins for the writers of ``replay/log.py``: each function returns exactly one line object.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

LOG_FORMAT = "canasta-log/1"


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def header(game_id: str, preset: str, rules: dict[str, Any], seats: list[dict[str, Any]], created: str) -> dict[str, Any]:
    """Line 1: the game, its resolved rules and its seats ({seat, name, team, bot})."""
    return {
        "log": LOG_FORMAT,
        "game": game_id,
        "rules": rules,
        "preset": preset,
        "seats": [{"seat": s["seat"], "name": s.get("name"), "team": s["team"], "bot": s.get("bot")} for s in seats],
        "created": created,
    }


def deal(hand: int, dealer: int, deck: list[str], salt: str, commitment: str) -> dict[str, Any]:
    return {"deal": hand, "dealer": dealer, "deck": list(deck), "salt": salt, "commitment": commitment}


def move(number: int, hand: int, seat: int, action: dict[str, Any]) -> dict[str, Any]:
    return {"move": number, "hand": hand, "seat": seat, "action": action}


def hand_end(result: dict[str, Any]) -> dict[str, Any]:
    """The engine's ``state.hand_result`` is already the line; copied to keep field order."""
    return {"hand_end": result["hand_end"], "reason": result["reason"], "by": result["by"],
            "scores": result["scores"], **{k: v for k, v in result.items()
                                          if k not in ("hand_end", "reason", "by", "scores")}}


def game_end(result: dict[str, Any]) -> dict[str, Any]:
    return {"game_end": True, "totals": list(result["totals"]), "winner": result["winner"],
            **{k: v for k, v in result.items() if k not in ("game_end", "totals", "winner")}}


def encode(line: dict[str, Any]) -> bytes:
    """One line of the ``.jsonl`` file, without the newline."""
    return orjson.dumps(line)
