"""Validating a game log: rebuild the game with the engine and compare every line.

docs/gamelog.md ("Validation") is the contract. The engine is the only judge of a move: this
module never re-derives a rule, it feeds the engine what the log says and compares what the
engine answers (``IllegalMove`` codes, ``state.hand_result``, ``state.game_result``) with
what the log recorded. Its own checks are the bookkeeping around the moves: numbering,
dealing order, where hands and the game end.

The validator's own reason codes are stable; docs/gamelog.md ("Validation") lists and explains
them (tests/replay/test_replay_gamelog_doc.py keeps that list complete). The engine's move
codes (docs/reason-codes.md) are passed through unchanged, e.g. ``not_your_turn``,
``pile_frozen``, ``invalid_deck``, ``commitment_mismatch``, ``invalid_dealer``.

With ``all_errors`` the validator goes on after a violation where it can: after a bad score
with the engine's totals; after a numbering mistake with the recorded number; after an
illegal move or a bad deck it skips to the next deal line (that hand cannot be rebuilt) and
takes the totals from the skipped hand's hand_end line if it has them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

import engine
from engine.rules import LIMIT_OPTIONS, RuleOptions, RulesError, resolve
from engine.text import clip, quote
from replay.reader import (
    AUTO,
    DEAL,
    GAME_END,
    HAND_END,
    MOVE,
    Line,
    Log,
    Unreadable,
    has_huge_number,
    parse_bytes,
    read_bytes,
)

SCORE_FIELDS = ("melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand", "hand_total", "total")
_SALT = re.compile(r"[0-9a-fA-F]{32,}")
_ENDED = ("deal", "over")  # engine phases between hands

OK, INVALID, UNREADABLE = "ok", "invalid", "unreadable"


@dataclass(slots=True)
class Violation:
    """One thing wrong in a log. ``context`` is the human prefix ("move 5, hand 1, seat 2, {...}")."""

    code: str
    message: str
    line: int | None = None
    move: int | None = None
    hand: int | None = None
    seat: int | None = None
    action: Any = None
    context: str = ""

    def describe(self, file: str) -> str:
        """``FILE:LINE: context: code: sentence`` (parts that do not apply are left out)."""
        where = f"{file}:{self.line}" if self.line is not None else file
        context = f" {self.context}:" if self.context else ""
        return f"{where}:{context} {self.code}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "move": self.move,
            "hand": self.hand,
            "seat": self.seat,
            "action": self.action,
            "code": self.code,
            "message": self.message,
        }


@dataclass(slots=True)
class Result:
    """The verdict on one file: plain data, cheap to send back from a worker process."""

    file: str
    status: str  # OK, INVALID or UNREADABLE
    finished: bool = False  # the log has its game_end line
    moves: int = 0  # moves the engine replayed
    last_move: int = 0  # the last move number in the log that was reached
    violations: list[Violation] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.status == OK

    def describe(self) -> list[str]:
        if self.status == OK:
            return [f"{self.file}: ok" if self.finished else f"{self.file}: ok, unfinished at move {self.last_move}"]
        return [v.describe(self.file) for v in self.violations]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "valid": self.valid, "status": self.status,
                               "finished": self.finished, "moves": self.last_move}
        if self.violations:
            out.update(self.violations[0].to_dict())
            if len(self.violations) > 1:
                out["errors"] = [v.to_dict() for v in self.violations]
        return out


class _Stop(Exception):
    """Ends the replay of a file (first violation, or one the replay cannot go past)."""


# -- the header ------------------------------------------------------------------------------


def rules_from_header(header: dict[str, Any]) -> RuleOptions:
    """The game's rules: the header's (possibly partial) ``rules`` over its preset's values.

    The player count comes from ``seats``; where the seats give teams and the rules do not
    give ``team_size``, the seating decides it (a hand-written six-player game in pairs). A
    limit the rules leave out is no limit: logs written before games had limits (and
    hand-written ones) were played without them.
    Raises :class:`HeaderError` when the header does not make a playable rule set.
    """
    rules = dict(header.get("rules") or {})
    named = rules.pop("preset", None)
    preset = header.get("preset") or named
    if not isinstance(preset, str) or not preset:
        raise HeaderError("invalid_header", "the header names no preset (\"preset\": \"classic\", ...)")
    if named is not None and named != preset:
        raise HeaderError("invalid_rules", f"the rules are of preset {quote(named)}, the header says {quote(preset)}")
    seats = header.get("seats")
    players = len(seats) if seats is not None else None
    if seats and "team_size" not in rules and all(s.get("team") is not None for s in seats):
        teams = len({s["team"] for s in seats})
        if teams and len(seats) % teams == 0:
            rules["team_size"] = len(seats) // teams
    unlimited = {name: None for name in LIMIT_OPTIONS if name not in rules}
    try:
        options = resolve(preset, players, rules).with_values(unlimited)
    except RulesError as e:
        raise HeaderError("invalid_rules", str(e)) from None
    except Exception as e:  # a value of a shape resolve() did not expect
        raise HeaderError("invalid_rules", f"the rules cannot be read: {clip(e)}") from None
    for i, s in enumerate(seats or ()):
        if s["seat"] != i:
            raise HeaderError("invalid_seats", f"seat entry {i} says seat {clip(s['seat'])}: seats are listed 0, 1, 2, ...")
        team = s.get("team")
        if team is not None and team != options.team_of(i):
            raise HeaderError(
                "invalid_seats",
                f"seat {i} is on team {options.team_of(i)} in {preset} with {options.players} players "
                f"(team_size {options.team_size}), not team {team}",
            )
    return options


class HeaderError(Exception):
    """The header is readable but does not describe a game the engine can play."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- replaying ---------------------------------------------------------------------------------


class Replay:
    """Feeds a log's lines to the engine, checking each; ``state`` is the position reached.

    Used by ``validate`` (all lines) and ``show`` (up to a move).
    """

    def __init__(self, rules: RuleOptions, all_errors: bool = False) -> None:
        self.rules = rules
        self.all_errors = all_errors
        self.state: engine.State | None = None  # None until the first deal line
        self.expect_move = 1
        self.last_move = 0
        self.replayed = 0
        self.hand_closed = True  # the current hand's hand_end line has been read
        self.game_ended = False  # the game_end line has been read
        self.skipping = False  # all_errors: the hand could not be rebuilt; wait for a deal
        self.skipped_totals: list[int] | None = None
        self.violations: list[Violation] = []

    # -- reporting -------------------------------------------------------------------------
    def _fail(self, code: str, message: str, line: Line, *, then: str = "stop") -> None:
        """Record a violation; then go on (``continue``), ``skip`` the hand, or ``stop``."""
        d = line.data
        v = Violation(code, message, line.no)
        if line.kind == MOVE:
            v.move, v.hand, v.seat, v.action = d.get("move"), d.get("hand"), d.get("seat"), d.get("action")
            parts = [f"move {v.move}"]
            if v.hand is not None:
                parts.append(f"hand {v.hand}")
            parts += [f"seat {v.seat}", _compact(v)]
            v.context = ", ".join(parts)
        elif line.kind == DEAL:
            v.hand = d.get("deal")
            v.context = f"deal {v.hand}"
        elif line.kind == HAND_END:
            v.hand = d.get("hand_end")
            v.context = f"hand {v.hand} end"
        elif line.kind == GAME_END:
            v.context = "game end"
        self.violations.append(v)
        if not self.all_errors or then == "stop":
            raise _Stop
        if then == "skip":
            self.skipping = True
            self.skipped_totals = None

    # -- lines ----------------------------------------------------------------------------
    def feed(self, line: Line) -> None:
        """Check one line against the game so far; raises ``_Stop`` when the replay ends."""
        kind = line.kind
        if kind == AUTO:
            return  # derived events written for people; the engine derives them itself
        if self.game_ended:
            self._fail("trailing_lines", "lines after the game_end line: the game is over", line)
        if kind == MOVE:
            self._move(line)
        elif kind == DEAL:
            self._deal(line)
        elif kind == HAND_END:
            self._hand_end(line)
        else:
            self._game_end(line)

    def _move(self, line: Line) -> None:
        if self.skipping:
            self.last_move = line.data["move"]
            self.expect_move = self.last_move + 1
            return
        d = line.data
        st = self.state
        if st is None or (self.hand_closed and st.phase in _ENDED):
            if st is not None and st.phase == "over":
                self._fail("game_over", f"a move after the game ended ({_game_ended(st)})", line)
            self._fail("hand_not_started", "a move before its hand was dealt: a deal line comes first", line)
        assert st is not None
        if st.phase in _ENDED:
            self._fail("hand_already_ended", f"the engine ended hand {st.hand_no} at move {st.moves} "
                       f"({_ended(st)}): its hand_end line comes next, not a move", line)
        number = d["move"]
        if number != self.expect_move:
            self._fail("move_number_mismatch", f"this should be move {self.expect_move}: moves are numbered "
                       "1, 2, 3, ... over the whole game", line, then="continue")
        hand = d.get("hand")
        if hand is not None and hand != st.hand_no:
            self._fail("hand_mismatch", f"hand {st.hand_no} is being played, the line says hand {hand}", line,
                       then="continue")
        self.expect_move = number + 1
        self.last_move = number
        try:
            self.state = engine.apply(st, d["seat"], d["action"])
        except engine.IllegalMove as e:
            if has_huge_number(d["action"]):
                raise Unreadable("number_too_large", "the action holds a number too large", line.no) from None
            self._fail(e.code, e.message, line, then="skip")
            return
        self.replayed += 1

    def _deal(self, line: Line) -> None:
        d = line.data
        st = self.state
        rules = self.rules
        if self.skipping:
            st = self._resync()
        elif st is not None:
            if st.phase not in _ENDED:
                self._fail("hand_not_ended", f"the engine has not ended hand {st.hand_no}: "
                           f"seat {st.to_act} is to act ({st.phase})", line, then="continue")
                st = self._resync()
            else:
                if not self.hand_closed:
                    self._fail("missing_hand_end", f"hand {st.hand_no} ended ({_ended(st)}) but its hand_end "
                               "line is missing", line, then="continue")
                if st.phase == "over":
                    self._fail("game_over", f"the game ended with hand {st.hand_no} ({_game_ended(st)}): there is "
                               "no next deal", line)
        number = d["deal"]
        expected = (st.hand_no if st is not None else 0) + 1
        dealer = d.get("dealer")
        if st is None:  # hand 1: any seat may deal
            try:
                st = engine.new_game(rules, dealer)
            except engine.IllegalMove as e:
                self._fail(e.code, e.message, line)
        else:
            after = (st.dealer + 1) % rules.players
            if dealer is not None and dealer != after:
                self._fail("dealer_mismatch", f"seat {after} deals hand {expected} (the seat after the last "
                           f"dealer, seat {st.dealer}), not seat {dealer}", line, then="continue")
                if 0 <= dealer < rules.players:
                    st = st._replace(dealer=(dealer - 1) % rules.players)
        assert st is not None
        if number != expected:
            self._fail("deal_number_mismatch", f"this is the deal of hand {expected}", line, then="continue")
            st = st._replace(hand_no=number - 1)
        salt, digest = d.get("salt"), d.get("commitment")
        if salt is not None and not _SALT.fullmatch(salt):
            self._fail("invalid_salt", "a salt is at least 32 hex characters", line, then="continue")
        self.state = st  # the position before the deal, in case the deck is refused
        try:
            self.state = engine.deal(st, d["deck"], salt, digest)
        except engine.IllegalMove as e:
            if e.code == "commitment_mismatch":
                self._fail(e.code, e.message, line, then="continue")
                self.state = engine.deal(st, d["deck"])
            else:
                self.state = st._replace(hand_no=number)
                self._fail(e.code, e.message, line, then="skip")
                return
        self.hand_closed = False
        self.skipping = False

    def _resync(self) -> engine.State:
        """After a hand that could not be rebuilt: the position between hands, as the log has it."""
        st = self.state
        assert st is not None
        totals = self.skipped_totals or list(st.totals)
        self.skipping = False
        self.hand_closed = True
        return st._replace(phase="deal", totals=tuple(totals), moves=self.last_move, to_act=-1)

    def _hand_end(self, line: Line) -> None:
        d = line.data
        if self.skipping:
            self._take_totals(d)
            return
        st = self.state
        if st is None:
            self._fail("hand_not_started", "a hand_end line before any deal", line)
        assert st is not None
        if self.hand_closed:
            self._fail("duplicate_hand_end", f"hand {st.hand_no} already has its hand_end line", line)
        if st.phase not in _ENDED:
            who = f"seat {st.to_act} is to act ({st.phase})"
            self._fail("hand_not_ended", f"the engine has not ended hand {st.hand_no}: {who}", line, then="skip")
            self._take_totals(d)
            return
        self.hand_closed = True
        result = st.hand_result or {}
        if d["hand_end"] != st.hand_no:
            self._fail("hand_end_mismatch", f"this ends hand {st.hand_no}, the line says {d['hand_end']}", line,
                       then="continue")
        reason, by = d.get("reason"), d.get("by")
        if reason is not None and reason != result.get("reason"):
            self._fail("hand_end_mismatch", f"the hand ended by {result.get('reason')} (seat {result.get('by')}), "
                       f"the log says {clip(reason)}", line, then="continue")
        elif by is not None and by != result.get("by"):
            self._fail("hand_end_mismatch", f"seat {result.get('by')} ended the hand ({result.get('reason')}), "
                       f"the log says seat {by}", line, then="continue")
        scores = d.get("scores")
        if scores is not None:
            self._scores(scores, result.get("scores") or [], line)

    def _take_totals(self, d: dict[str, Any]) -> None:
        """A skipped hand's recorded totals, to go on with after it (``all_errors``)."""
        totals = [row.get("total") for row in d.get("scores") or ()]
        if len(totals) == self.rules.teams and all(isinstance(t, int) for t in totals):
            self.skipped_totals = totals

    def _scores(self, recorded: list[dict[str, Any]], computed: list[dict[str, Any]], line: Line) -> None:
        by_team = {row["team"]: row for row in computed}
        for i, row in enumerate(recorded):
            team = row.get("team")
            team = i if team is None else team
            mine = by_team.get(team)
            if mine is None:
                self._fail("score_mismatch", f"a score row for team {team}: the game has teams 0 to "
                           f"{len(computed) - 1}", line, then="continue")
                continue
            for key in SCORE_FIELDS:
                value = row.get(key)
                if value is not None and value != mine[key]:
                    self._fail("score_mismatch", f"team {team} {key}: the log says {value}, the engine "
                               f"counts {mine[key]}", line, then="continue")

    def _game_end(self, line: Line) -> None:
        d = line.data
        if self.skipping:
            self.game_ended = True
            return
        st = self.state
        if st is None:
            self._fail("game_not_over", "a game_end line before any deal", line)
        assert st is not None
        if st.phase not in _ENDED:
            self._fail("hand_not_ended", f"the engine has not ended hand {st.hand_no}: seat {st.to_act} "
                       f"is to act ({st.phase})", line)
        if not self.hand_closed:
            self._fail("missing_hand_end", f"hand {st.hand_no} ended ({_ended(st)}) but its hand_end line "
                       "is missing", line, then="continue")
        if st.phase != "over":
            so_far = ", ".join(str(t) for t in st.totals)
            last = self.rules.limits.max_hands
            of = f" of at most {last}" if last is not None else ""
            self._fail("game_not_over", f"the engine says the game goes on: totals {so_far}, the target is "
                       f"{self.rules.scoring.target_score}, hand {st.hand_no}{of} was played", line)
        self.game_ended = True
        result = st.game_result or {}
        reason = d.get("reason")
        if reason is not None and reason != result.get("reason"):
            self._fail("game_end_mismatch", f"the game ended by {_game_ended(st)}, the log says {_short(reason)}",
                       line, then="continue")
        totals = d.get("totals")
        if totals is not None and totals != result.get("totals"):
            self._fail("game_end_mismatch", f"the totals are {result.get('totals')}, the log says {totals}", line,
                       then="continue")
        if "winner" in d and d["winner"] != result.get("winner"):
            self._fail("game_end_mismatch", f"the winner is {_winner(result.get('winner'))}, the log says "
                       f"{_winner(d['winner'])}", line, then="continue")


def _compact(v: Violation) -> str:
    """The action as compact JSON for the text line (cut when very long)."""
    try:
        orjson.dumps({"errors": [{"action": v.action}]})  # as deep as Result.to_dict puts it
        text = orjson.dumps(v.action).decode()
    except orjson.JSONEncodeError:  # nested deeper than orjson writes
        v.action = None
        return "(an action nested too deeply to print)"
    return text if len(text) <= 300 else text[:300] + "..."


def _winner(team: Any) -> str:
    return "nobody (a draw)" if team is None else f"team {team}"


def _ended(st: engine.State) -> str:
    """How the engine ended the hand, and the limit where one ended it."""
    result = st.hand_result or {}
    text = f"{result.get('reason')} by seat {result.get('by')}"
    if result.get("reason") == "move_limit":
        text += f": the rules' max_moves_per_hand is {st.rules.limits.max_moves_per_hand}"
    return text


def _game_ended(st: engine.State) -> str:
    """Why the engine ended the game, with the limit where one ended it."""
    reason = (st.game_result or {}).get("reason")
    limits = st.rules.limits
    if reason == "hand_limit":
        return f"hand_limit (max_hands {limits.max_hands})"
    if reason == "move_limit":
        return f"move_limit (max_moves_per_hand {limits.max_moves_per_hand})"
    return f"{reason} (target_score {st.rules.scoring.target_score})"


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:40] + "..."


# -- files -----------------------------------------------------------------------------------


def replay_log(log: Log, all_errors: bool = False, until_move: int | None = None,
               before_line: Callable[[Replay, Line], None] | None = None) -> Replay:
    """Replay a read log (through move ``until_move`` if given); violations are on the result.

    ``before_line(replay, line)`` is called before each line is fed (the fair-play audit
    keeps the position before each move). Raises :class:`HeaderError` for a header whose
    rules cannot be resolved.
    """
    rules = rules_from_header(log.header)
    rep = Replay(rules, all_errors)
    try:
        for line in log.lines:
            if (until_move is not None and rep.state is not None and rep.last_move >= until_move
                    and line.kind in (MOVE, DEAL)):
                break
            if before_line is not None:
                before_line(rep, line)
            rep.feed(line)
    except _Stop:
        pass
    return rep


def validate_bytes(data: bytes, name: str, all_errors: bool = False) -> Result:
    """Validate one log held in memory; never raises."""
    try:
        log = parse_bytes(data)
        return _validate_log(log, name, all_errors)
    except Unreadable as e:
        return Result(name, UNREADABLE, violations=[Violation(e.code, e.message, e.line)])
    except Exception as e:  # a bug: report it as such, never a traceback
        return Result(name, UNREADABLE, violations=[Violation("internal_error", f"{type(e).__name__}: {e}")])


def validate_path(path: str, all_errors: bool = False, name: str | None = None) -> Result:
    """Validate one file (``-``: standard input); never raises."""
    name = name or path
    try:
        data = read_bytes(path)
    except Unreadable as e:
        return Result(name, UNREADABLE, violations=[Violation(e.code, e.message, e.line)])
    return validate_bytes(data, name, all_errors)


def _validate_log(log: Log, name: str, all_errors: bool) -> Result:
    try:
        rep = replay_log(log, all_errors)
    except HeaderError as e:
        return Result(name, INVALID, violations=[Violation(e.code, e.message, log.header_no, context="header")])
    status = INVALID if rep.violations else OK
    # finished: the log records the game to its end (for an invalid log too: that helps triage)
    finished = rep.game_ended or any(line.kind == GAME_END for line in reversed(log.lines))
    return Result(name, status, finished=finished, moves=rep.replayed, last_move=rep.last_move,
                  violations=rep.violations)


