"""The decisions of a log: each position where a seat had a real choice, and what it chose.

A log is judged only if it is valid (the engine accepts every line, the deck of every hand is
there): the audit compares choices with the true deal, so it needs the true deal. Anything
else is refused with a :class:`Refused` that says why in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import engine
from engine.state import IN_HAND, State
from replay.reader import DEAL, MOVE, Line, Log, Unreadable, parse_bytes, read_bytes
from replay.validate import HeaderError, Replay, replay_log


class Refused(Exception):
    """A log the audit cannot judge; ``str()`` is the one line to print."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One choice of ``seat``: the position before it (the true one), its legal actions and
    the action it took. ``move`` and ``hand`` locate it in the log."""

    state: State
    seat: int
    legal: list[dict[str, Any]]
    action: dict[str, Any]
    move: int
    hand: int


@dataclass(slots=True)
class Game:
    """What the audit reads of one log: the seats' names and every seat's choices."""

    name: str
    players: int
    seat_names: list[str]
    decisions: list[Decision]

    def of_seat(self, seat: int) -> list[Decision]:
        return [d for d in self.decisions if d.seat == seat]


def read_game(path: str, name: str | None = None, data: bytes | None = None) -> Game:
    """The decisions with a choice in the log at ``path`` (or in ``data``); raises :class:`Refused`."""
    name = name or path
    try:
        log = parse_bytes(read_bytes(path) if data is None else data)
    except Unreadable as e:
        where = f"{name}:{e.line}" if e.line else name
        raise Refused(f"{where}: not a game log ({e.code}: {e.message})") from None
    return game_of(log, name)


def game_of(log: Log, name: str) -> Game:
    """Replay ``log`` with the validator's own replay, keeping the position before each move."""
    decisions: list[Decision] = []
    dealt = False

    def keep(rep: Replay, line: Line) -> None:
        nonlocal dealt
        st = rep.state
        dealt = dealt or line.kind == DEAL
        if line.kind == MOVE and st is not None and st.phase in IN_HAND:
            seat, action = line.data["seat"], line.data["action"]
            legal = engine.legal_actions(st, seat) if seat == st.to_act else []
            if len(legal) > 1:
                decisions.append(Decision(st, seat, legal, action, line.data["move"], st.hand_no))

    try:
        rep = replay_log(log, before_line=keep)
    except HeaderError as e:
        raise Refused(f"{name}:{log.header_no}: cannot be judged: header: {e.code}: {e.message}") from None
    if rep.violations:
        v = rep.violations[0]
        raise Refused(f"{v.describe(name)} (the audit judges valid logs only: canasta replay validate)")
    if not dealt:
        raise Refused(f"{name}: cannot be judged: no hand was dealt")
    players = rep.rules.players
    seats = log.header.get("seats") or []
    names = [str(s.get("name") or f"seat {i}") for i, s in enumerate(seats)] or [f"seat {i}" for i in range(players)]
    return Game(name, players, names, decisions)
