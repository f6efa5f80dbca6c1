"""One seat of a game: its token, the last version it saw, and the moves it sends
(``If-Match`` and an ``Idempotency-Key`` each)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from client.bodies import Action, GameView, Hint
from client.events import EventStream, LongPoll
from client.problems import ApiProblem
from client.wire import new_idempotency_key

if TYPE_CHECKING:
    from client.server import Client


# -- one seat ------------------------------------------------------------------------------
class Seat:
    """One seat of one game, played with its token.

    It remembers the last view and ``ETag`` it saw: :meth:`move` sends that ETag as
    ``If-Match``, so a move decided on an old table is refused (:class:`StaleVersion`)
    rather than applied to a new one, and :meth:`view` asks with ``If-None-Match``, so
    reading an unchanged game costs the server no view. If a move fails without an answer
    (:class:`Unreachable`), sending the same move again reuses its Idempotency-Key: it is
    applied once whatever happened to the first try."""

    def __init__(self, client: Client, game_id: str, token: str) -> None:
        self.client = client
        self.game_id = game_id
        self.token = token
        self.etag: str | None = None
        self.last_view: GameView | None = None
        self._pending: tuple[str, str, str] | None = None  # (etag, action, key) of an unanswered move

    def __repr__(self) -> str:
        return f"<Seat {self.number} of game {self.game_id} at {self.etag or 'no version yet'}>"

    @property
    def number(self) -> int | None:
        """The seat's number (known after the first read)."""
        return self.last_view["seat"] if self.last_view else None

    @property
    def legal(self) -> dict[str, Any]:
        """The ``legal`` summary of the last view: what this seat may do now."""
        inner = self.last_view["view"] if self.last_view else None
        return dict(inner.get("legal") or {}) if inner else {}

    @property
    def my_turn(self) -> bool:
        """Whether this seat is to act, as of the last view."""
        return bool(self.last_view and self.last_view["status"] == "playing" and self.legal.get("to_act"))

    def view(self, *, fresh: bool = False) -> GameView:
        """The seat's view now; unchanged since the last read, the server answers 304 and
        the view held is returned. ``fresh``: read it whole whatever the ETag."""
        held = None if fresh or self.last_view is None else self.etag
        reply = self.client.game(self.game_id, self.token, if_none_match=held)
        if reply.status == 304 and self.last_view is not None:
            return self.last_view
        self._remember(reply.body, reply.etag)
        assert self.last_view is not None
        return self.last_view

    def move(self, action: Action, *, idempotency_key: str | None = None) -> GameView:
        """Make a move at the version last seen; returns the seat's new view. Raises
        :class:`StaleVersion` (read the view and decide again), :class:`ApiProblem` (e.g.
        422 with the engine's reason code for an illegal move) or :class:`Unreachable`."""
        if self.etag is None:
            self.view()
        assert self.etag is not None
        fingerprint = json.dumps(action, sort_keys=True, separators=(",", ":"))
        key = idempotency_key
        if key is None:
            pending = self._pending
            same = pending is not None and pending[0] == self.etag and pending[1] == fingerprint
            key = pending[2] if same and pending is not None else new_idempotency_key()
        self._pending = (self.etag, fingerprint, key)
        try:
            reply = self.client.move(self.game_id, self.token, action, self.etag, idempotency_key=key)
        except ApiProblem:
            self._pending = None  # answered: a new try of this move is a new move
            raise
        self._pending = None
        self._remember(reply.body, reply.etag)
        assert self.last_view is not None
        return self.last_view

    def dry_run(self, action: Action) -> dict[str, Any]:
        """Ask whether ``action`` is legal now, changing nothing: an illegal one raises
        :class:`ApiProblem` exactly as the move would; a legal one answers ``dry_run: true``
        (what else it shows is in openapi.yaml: never more than the seat may know)."""
        if self.etag is None:
            self.view()
        assert self.etag is not None
        return dict(self.client.move(self.game_id, self.token, action, self.etag, dry_run=True).body)

    def hint(self, bot: str = "standard") -> Hint:
        """The move a ``bot`` would make for this seat now."""
        return self.client.hint(self.game_id, self.token, bot)

    def to_bot(self, bot: str, *, budget_ms: int | None = None) -> GameView:
        """Hand this seat to a bot (the token still reads the view); ``budget_ms``: the
        expert's thinking time per decision."""
        number = self._number()
        self._remember(self.client.seat_to_bot(self.game_id, number, bot, self.token, budget_ms=budget_ms))
        assert self.last_view is not None
        return self.last_view

    def take_back(self) -> GameView:
        """Play this seat again after :meth:`to_bot`."""
        number = self._number()
        self._remember(self.client.take_seat_back(self.game_id, number, self.token))
        assert self.last_view is not None
        return self.last_view

    def view_and_cursor(self) -> tuple[GameView, str]:
        """The seat's view and an event id at or before it: a stream started after that id
        (``stream(last_event_id=...)``) tells every change made after the cursor, so none
        made between this read and the stream's start is missed (a stream started without
        one begins with a snapshot, and what changed before it is not told)."""
        cursor = self.client.poll(self.game_id, self.token).last_id
        return self.view(), cursor

    def stream(self, **options: Any) -> EventStream:
        """The game's events as this seat may see them (:meth:`Client.stream`)."""
        return self.client.stream(self.game_id, self.token, **options)

    def long_poll(self, **options: Any) -> LongPoll:
        return self.client.long_poll(self.game_id, self.token, **options)

    def _number(self) -> int:
        if self.last_view is None:
            self.view()
        number = self.number
        if number is None:  # pragma: no cover - a seat token always reads a seat view
            raise ValueError("this token reads no seat")
        return number

    def _remember(self, body: GameView, etag: str | None = None) -> None:
        if self.last_view is not None and body["version"] < self.last_view["version"]:
            return  # an older answer arriving late
        self.last_view = body
        self.etag = etag or f'"{body["version"]}"'


