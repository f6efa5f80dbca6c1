"""Game log lines (docs/gamelog.md) as the service writes them.

A thin adapter over the log writers of :mod:`replay.log`, so the API and the replay tool
write the same lines; each function returns exactly one line object.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

from engine import RuleOptions
from replay import log as _log

LOG_FORMAT = _log.FORMAT


def now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def header(game_id: str, rules: dict[str, Any], seats: list[dict[str, Any]], created: str) -> dict[str, Any]:
    """Line 1: the game, its resolved rules, its preset and its seats ({seat, name, team, bot})."""
    public = [{"seat": s["seat"], "name": s.get("name"), "team": s["team"], "bot": s.get("bot")} for s in seats]
    return _log.header_line(RuleOptions.from_dict(rules), game_id, public, created)


def deal(hand: int, dealer: int, deck: list[str], salt: str, commitment: str) -> dict[str, Any]:
    return _log.deal_line(hand, dealer, list(deck), salt, commitment)


def move(number: int, hand: int, seat: int, action: dict[str, Any]) -> dict[str, Any]:
    return _log.move_line(number, hand, seat, action)


def hand_end(result: dict[str, Any]) -> dict[str, Any]:
    """From the engine's ``state.hand_result``."""
    return _log.hand_end_line(result)


def game_end(result: dict[str, Any]) -> dict[str, Any]:
    """From the engine's ``state.game_result``."""
    return _log.game_end_line(result)


def encode(line: dict[str, Any]) -> bytes:
    """One line of the ``.jsonl`` file, without the newline."""
    return orjson.dumps(line)
