"""One object per server (:class:`Client`: every endpoint of ``openapi.yaml`` is a method of
it) and one per seat (:class:`Seat`: its token, the last version it saw, and the moves it
sends, each with ``If-Match`` and an ``Idempotency-Key``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

import requests
import requests.adapters

from client.bodies import Action, CreatedGame, GameView, Hint, JoinedSeat
from client.events import Event, EventsPage, EventStream, LongPoll
from client.problems import (
    DEFAULT_RETRY,
    ApiProblem,
    RetryPolicy,
    Unreachable,
    problem_of,
    retryable,
)
from client.wire import NDJSON, USER_AGENT, Reply, decode, new_idempotency_key, segment


# -- the client ---------------------------------------------------------------------------
class Client:
    """The way to one server, over a ``requests.Session`` (use one client per thread).
    Every event stream opens its own connection, so one thread may read a stream while
    another moves.

    ``timeout`` bounds every request (a long-poll adds its ``wait``); ``retry`` is the
    :class:`RetryPolicy` (``NO_RETRY`` to see every 429 and 503 yourself); ``sleep`` is how
    it waits before a retry; ``api_key``, an operator's key sent with each new game (its
    quotas instead of the address's)."""

    def __init__(self, base_url: str, *, session: requests.Session | None = None, timeout: float = 30.0,
                 retry: RetryPolicy = DEFAULT_RETRY, sleep: Callable[[float], object] = time.sleep,
                 api_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key  # an operator's key (X-Api-Key): the games it creates count on its quotas
        self.http = session or requests.Session()
        self.http.headers["User-Agent"] = USER_AGENT
        self.timeout = timeout
        self.retry = retry
        self.sleep = sleep  # how the client waits before a retry (replace it to watch the waits)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the one place a request is made ---------------------------------------------------
    def request(self, method: str, path: str, *, token: str | None = None, json_body: Any = None,
                data: bytes | None = None, content_type: str | None = None,
                headers: Mapping[str, str] | None = None, params: Mapping[str, Any] | None = None,
                timeout: float | None = None, idempotent: bool | None = None, expect: Iterable[int] = ()) -> Reply:
        """Send one request and return the :class:`Reply`; an error status raises
        :class:`ApiProblem` unless listed in ``expect``.

        429 is always retried (the limiter refused before anything happened), and so is 409
        ``conflict``; 503 and lost connections only when the request is ``idempotent``
        (sending it twice has the effect of sending it once: by default, a GET)."""
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        if json_body is not None:
            data = json.dumps(json_body, separators=(",", ":")).encode()
            content_type = "application/json"
        if content_type is not None:
            h["Content-Type"] = content_type
        url = self.base_url + path
        if idempotent is None:
            idempotent = method in ("GET", "HEAD")
        failures = 0
        while True:
            try:
                r = self.http.request(method, url, data=data, headers=h, params=params,
                                      timeout=timeout or self.timeout)
            except requests.RequestException as e:
                failures += 1
                wait = self.retry.wait(failures) if idempotent else None
                if wait is None:
                    raise Unreachable(f"{method} {url}: {e}") from e
                self.sleep(wait)
                continue
            reply = Reply(r.status_code, decode(r), r.headers)
            if r.status_code < 400 or r.status_code in expect:
                return reply
            problem = problem_of(r.status_code, reply.body, r.headers)
            if retryable(problem, idempotent):
                failures += 1
                wait = self.retry.wait(failures, problem.retry_after)
                if wait is not None:
                    self.sleep(wait)
                    continue
            raise problem

    # -- service ---------------------------------------------------------------------------
    def health(self) -> bool:
        """``GET /healthz``: the API process answers."""
        try:
            return self.request("GET", "/healthz", idempotent=False, expect=(503,)).status == 200
        except Unreachable:
            return False

    def ready(self) -> bool:
        """``GET /readyz``: the API process answers and reaches Redis."""
        try:
            return self.request("GET", "/readyz", idempotent=False, expect=(503,)).status == 200
        except Unreachable:
            return False

    def openapi(self) -> str:
        """``GET /openapi.yaml``: the contract this server keeps."""
        return str(self.request("GET", "/openapi.yaml").body)

    def metrics(self, token: str | None = None) -> str:
        """``GET /metrics``: the server's Prometheus text, for operators (``token``: the
        server's ``CANASTA_METRICS_TOKEN``; without one it answers loopback clients only)."""
        return str(self.request("GET", "/metrics", token=token).body)

    # -- rules -----------------------------------------------------------------------------
    def presets(self) -> list[dict[str, Any]]:
        """``GET /rules``: the rule presets (name, seed text, player counts)."""
        return list(self.request("GET", "/rules").body["presets"])

    def rules(self, preset: str, *, players: int | None = None) -> dict[str, Any]:
        """``GET /rules/{preset}``: one preset with every rule option resolved."""
        params = {"players": players} if players is not None else None
        return dict(self.request("GET", f"/rules/{segment(preset)}", params=params).body)

    def bots(self) -> list[dict[str, Any]]:
        """``GET /bots``: the bot levels, weakest first, each with a sentence and, for the
        expert, the ``budget_ms`` a seat may set (default, min, max)."""
        return list(self.request("GET", "/bots").body["bots"])

    # -- games -----------------------------------------------------------------------------
    def create_game(self, preset: str, seats: list[dict[str, str] | None], *, players: int | None = None,
                    rules: Mapping[str, Any] | None = None, seed: int | None = None,
                    turn_timeout: int | None = None) -> CreatedGame:
        """``POST /games``. ``seats``: ``{"name": ...}`` (a person: gets a token),
        ``{"bot": "greedy"}`` or ``None`` (open, joined later). ``rules``: house rules over
        the preset. ``seed`` only on servers started with test seeds; ``turn_timeout`` only
        on servers that know it. The answer is the only one that shows the tokens."""
        body: dict[str, Any] = {"preset": preset, "seats": seats}
        if players is not None:
            body["players"] = players
        if rules:
            body["rules"] = dict(rules)
        if seed is not None:
            body["seed"] = seed
        if turn_timeout is not None:
            body["turn_timeout"] = turn_timeout
        headers = {"X-Api-Key": self.api_key} if self.api_key else None
        return self.request("POST", "/games", json_body=body, headers=headers).body

    def game(self, game_id: str, token: str | None = None, *, if_none_match: str | None = None) -> Reply:
        """``GET /games/{id}``: the seat's view (a spectator's without a token); the
        ``ETag`` is the version. With ``if_none_match`` (an ETag you hold), a game still at
        that version answers 304 with no body."""
        headers = {"If-None-Match": if_none_match} if if_none_match else None
        return self.request("GET", f"/games/{segment(game_id)}", token=token, headers=headers, expect=(304,))

    def join(self, game_id: str, seat: int, name: str, *, idempotency_key: str | None = None) -> JoinedSeat:
        """``POST /games/{id}/seats/{n}``: take an open seat; keep the token it answers. A
        key (a random UUID: the server refuses a guessable one) is made when none is given,
        and every retry of this call (after a 503 or a lost connection) sends the same one:
        the answer of a join made but lost comes back, to this address only."""
        headers = {"Idempotency-Key": idempotency_key or new_idempotency_key()}
        return self.request("POST", f"/games/{segment(game_id)}/seats/{int(seat)}",
                            json_body={"name": name}, headers=headers, idempotent=True).body

    def seat_to_bot(self, game_id: str, seat: int, bot: str, token: str, *,
                    budget_ms: int | None = None) -> GameView:
        """``POST /games/{id}/seats/{n}/bot``: a bot plays the seat from now on
        (``budget_ms``: the expert's thinking time per decision, within ``GET /bots``'s limits)."""
        body: dict[str, Any] = {"bot": bot} if budget_ms is None else {"bot": bot, "budget_ms": budget_ms}
        return self.request("POST", f"/games/{segment(game_id)}/seats/{int(seat)}/bot",
                            token=token, json_body=body).body

    def take_seat_back(self, game_id: str, seat: int, token: str) -> GameView:
        """``DELETE /games/{id}/seats/{n}/bot``: the seat's person plays it again (only
        the seat's own token may)."""
        return self.request("DELETE", f"/games/{segment(game_id)}/seats/{int(seat)}/bot",
                            token=token).body

    def move(self, game_id: str, token: str, action: Action, etag: str, *, idempotency_key: str | None = None,
             dry_run: bool = False) -> Reply:
        """``POST /games/{id}/moves`` with ``If-Match: etag``. A key is made when none is
        given, and every retry of this call sends the same one. ``dry_run``: only ask
        whether the move is legal (nothing changes; no key needed)."""
        headers = {"If-Match": etag}
        if idempotency_key is None and not dry_run:
            idempotency_key = new_idempotency_key()
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        params = {"dry_run": "true"} if dry_run else None
        return self.request("POST", f"/games/{segment(game_id)}/moves", token=token, json_body={"action": action},
                            headers=headers, params=params, idempotent=True)

    def hint(self, game_id: str, token: str, bot: str = "standard") -> Hint:
        """``GET /games/{id}/hint``: the move a bot would make for the seat to act."""
        return self.request("GET", f"/games/{segment(game_id)}/hint", token=token,
                            params={"bot": bot}).body

    def log_bytes(self, game_id: str) -> bytes:
        """``GET /games/{id}/log``: the game log (JSON Lines), once the game is over."""
        body = self.request("GET", f"/games/{segment(game_id)}/log").body
        return body if isinstance(body, bytes) else str(body).encode()

    def log(self, game_id: str) -> list[dict[str, Any]]:
        """The game log as a list of its lines."""
        return [json.loads(line) for line in self.log_bytes(game_id).splitlines() if line.strip()]

    def replay(self, log: bytes | str | Iterable[Mapping[str, Any]]) -> dict[str, Any]:
        """``POST /replay``: a game log (bytes, text, or its lines) turned into the game's
        positions, one frame per deal and move."""
        if isinstance(log, str):
            data = log.encode()
        elif isinstance(log, bytes):
            data = log
        else:
            data = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in log)
        return dict(self.request("POST", "/replay", data=data, content_type=NDJSON, idempotent=True).body)

    def table_url(self, game_id: str | None = None, *, seat: int | None = None, token: str | None = None,
                  join: int | None = None) -> str:
        """The web table (``GET /``) for people: the start page; a game to watch; a seat to
        play (its token goes in the URL's fragment, which browsers never send to a
        server); or an open seat to ``join``."""
        fragment: dict[str, Any] = {}
        if game_id is not None:
            fragment["game"] = game_id
        if join is not None:
            fragment["join"] = join
        if seat is not None:
            fragment["seat"] = seat
        if token is not None:
            fragment["token"] = token
        return f"{self.base_url}/" + (f"#{urlencode(fragment)}" if fragment else "")

    # -- events ----------------------------------------------------------------------------
    def poll(self, game_id: str, token: str | None = None, *, after: str | None = None,
             wait: float | None = None) -> EventsPage:
        """``GET /games/{id}/events`` as JSON: without ``after``, a snapshot and the last
        event id; with it, the events after it, waiting up to ``wait`` seconds (at most
        60) for one."""
        params: dict[str, Any] = {}
        if after is not None:
            params["after"] = after
        if wait is not None:
            params["wait"] = f"{wait:g}"
        body = self.request("GET", f"/games/{segment(game_id)}/events", token=token, params=params,
                            timeout=self.timeout + (wait or 0)).body
        events = [Event(str(e.get("type")), e.get("id"), e) for e in body.get("events", [])]
        return EventsPage(events, str(body.get("last_id", after or "0")), body.get("snapshot"))

    def stream(self, game_id: str, token: str | None = None, *, last_event_id: str | None = None,
               stop_when_over: bool = True, read_timeout: float = 45.0, max_failures: int | None = 10) -> EventStream:
        """The game's Server-Sent Events, as an iterator of :class:`Event` (see
        :class:`EventStream`)."""
        return EventStream(self, game_id, token, last_event_id=last_event_id, stop_when_over=stop_when_over,
                           read_timeout=read_timeout, max_failures=max_failures)

    def long_poll(self, game_id: str, token: str | None = None, *, after: str | None = None, wait: float = 25.0,
                  stop_when_over: bool = True) -> LongPoll:
        """The same events read with the JSON long-poll (see :class:`LongPoll`)."""
        return LongPoll(self, game_id, token, after=after, wait=wait, stop_when_over=stop_when_over)

    # -- seats -----------------------------------------------------------------------------
    def seat(self, game_id: str, token: str) -> Seat:
        """A :class:`Seat`: the game as one seat plays it."""
        return Seat(self, game_id, token)



def tokens_of(created: CreatedGame) -> dict[int, str]:
    """The tokens of a new game's person seats, by seat number."""
    return {s["seat"]: token for s in created["seats"] if (token := s.get("token"))}


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


