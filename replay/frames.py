"""A logged game as the sequence of its positions, for viewers that step through it.

A frame is the table after one line of the log that changes it (a deal or a move): the
engine's spectator view, every hand (a log reveals every card, so a replay may show them)
and, for a move, the engine's own description of it. The engine replays the log with the
same checks as ``canasta replay validate`` (:class:`replay.validate.Replay`); nothing here
reads a rule. The web table's replay viewer gets these frames from ``POST /replay``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import engine
from engine.cards import CardError, hand_codes
from replay.reader import DEAL, MOVE, Unreadable, parse_bytes
from replay.validate import HeaderError, Replay, rules_from_header
from replay.validate import _Stop as ReplayStopped  # Replay.feed's "a violation ends it here"

log = logging.getLogger("canasta.replay")

# Ten times the longest game seen in bot tournaments (random bots: about 1 000 moves). A
# frame is ~1.5 KB of JSON, so this also bounds one answer (~15 MB before compression). Random
# play that ends at the hand limit (docs/rules.md, "Limits") can be longer: such a log is
# refused here (log_too_long), and `canasta replay validate` and `show` still read it.
MAX_MOVES = 10_000


class BadLog(Exception):
    """The log cannot be replayed: a stable ``code`` (the reader's, the validator's or the
    engine's), a sentence, and where (1-based ``line``, the ``move`` number) when known."""

    def __init__(self, code: str, message: str, line: int | None = None, move: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.line = line
        self.move = move

    def describe(self) -> str:
        where = f"line {self.line}" if self.line is not None else "the log"
        if self.move is not None:
            where += f" (move {self.move})"
        return f"{where}: {self.message}"


@dataclass
class Frames:
    """A replayed log: who played what, and one frame per deal and move."""

    header: dict[str, Any]
    frames: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False  # the log reaches the game's end

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header, "finished": self.finished, "frames": self.frames}


def frames_of(data: bytes, max_moves: int | None = None) -> Frames:
    """Replay the log in ``data`` (the bytes of a ``.jsonl`` file); raise :class:`BadLog`
    at its first unreadable or wrong line, or for more than ``max_moves`` (:data:`MAX_MOVES`)."""
    limit = MAX_MOVES if max_moves is None else max_moves
    try:
        game_log = parse_bytes(data)
    except Unreadable as e:
        raise BadLog(e.code, e.message, e.line) from None
    moves = sum(1 for line in game_log.lines if line.kind == MOVE)
    if moves > limit:
        raise BadLog("log_too_long", f"the log has {moves} moves; at most {limit} are replayed")
    try:
        rules = rules_from_header(game_log.header)
    except HeaderError as e:
        raise BadLog(e.code, e.message, game_log.header_no) from None
    result = Frames(_header(game_log.header, rules))
    rep = Replay(rules)
    for line in game_log.lines:
        before = rep.state
        try:
            rep.feed(line)
        except ReplayStopped:
            v = rep.violations[0]
            raise BadLog(v.code, v.message, v.line, v.move) from None
        except Unreadable as e:
            raise BadLog(e.code, e.message, e.line) from None
        except (CardError, ValueError, TypeError, KeyError, IndexError):
            # the engine judges actions with IllegalMove; anything else is an engine bug
            log.exception("the engine failed on line %d of a replayed log", line.no)
            raise BadLog("invalid_action", "the engine cannot read this line", line.no) from None
        state = rep.state
        if state is None or state is before:
            continue
        if line.kind == DEAL:
            result.frames.append(_frame(line.no, "deal", state))
        elif line.kind == MOVE and before is not None:
            seat, action = line.data["seat"], line.data["action"]
            frame = _frame(line.no, "move", state, seat, action)
            frame["event"] = engine.describe_move(before, state, seat, action, seat)
            result.frames.append(frame)
    result.finished = rep.game_ended
    return result


def _header(header: dict[str, Any], rules: engine.RuleOptions) -> dict[str, Any]:
    """The header's public facts (only the fields the format defines) and the resolved rules."""
    given = {s.get("seat"): s for s in header.get("seats") or () if isinstance(s, dict)}
    seats = []
    for seat in range(rules.players):
        s = given.get(seat, {})
        name, bot = s.get("name"), s.get("bot")
        seats.append({"seat": seat, "team": rules.team_of(seat),
                      "name": name if isinstance(name, str) else None,
                      "bot": bot if isinstance(bot, str) else None})
    return {"game": header.get("game") if isinstance(header.get("game"), str) else None,
            "preset": rules.preset, "created": header.get("created") if isinstance(header.get("created"), str) else None,
            "players": rules.players, "seats": seats, "rules": rules.to_dict()}


def _frame(line_no: int, kind: str, state: engine.State, seat: int | None = None,
           action: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "line": line_no,
        "kind": kind,
        "hand": state.hand_no,
        "move": state.moves,
        "seat": seat,
        "action": action,
        "event": None,
        "view": engine.spectator_view(state),
        "hands": [hand_codes(h) for h in state.hands],
    }
