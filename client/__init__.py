"""The Python client of the Canasta API: one object per server, one per seat.

    from client import Client

    api = Client("http://127.0.0.1:8000")
    game = api.create_game("finnish", [{"name": "ann"}, {"bot": "greedy"}, {"bot": "greedy"}, {"bot": "greedy"}])
    ann = api.seat(game["id"], game["seats"][0]["token"])
    for event in ann.stream():                 # Server-Sent Events, resumed after a dropped stream
        ann.view()                             # 304 (no body) while nothing changed
        if ann.my_turn and ann.legal["may_draw"]:
            ann.move({"type": "draw"})         # If-Match and Idempotency-Key are sent for you

Every endpoint of ``openapi.yaml`` has a method here; bodies are the JSON the contract
describes (plain dicts, typed below as ``TypedDict`` for readers and type checkers). What
the client does for its caller, and why:

* **Versions.** A move must name the version it was decided on (``If-Match``), so that a
  move decided on an old table is refused (412) instead of applied to a new one. A
  :class:`Seat` remembers the last ``ETag`` it saw and sends it; a 412 is raised as
  :class:`StaleVersion` with the current version, never retried: the move may no longer be
  legal, so only the caller can decide again.
* **Idempotency.** Every move carries an ``Idempotency-Key``; a retry of the same move (by
  the client after a dropped connection, or by the caller after :class:`Unreachable`)
  sends the same key, so the server applies it once and answers the retry with the stored
  answer.
* **Retries**, only where they cannot change the outcome (:class:`RetryPolicy`): 429 (the
  rate limiter refused before anything happened) always; 503 and lost connections for
  reads, replays and moves (a move's key and If-Match make a second try harmless), not for
  creating a game or taking a seat; 409 ``conflict`` (the server gave up a busy
  compare-and-set and changed nothing). ``Retry-After`` is honoured.
* **Errors** are ``application/problem+json``; they are raised as :class:`ApiProblem`
  carrying ``status``, ``code`` and ``detail``.
* **Events**: :meth:`Client.stream` reads Server-Sent Events (``Accept: text/event-stream``)
  and reconnects with ``Last-Event-ID`` after the server's ``retry:`` delay;
  :meth:`Client.long_poll` reads the JSON long-poll instead, for networks that buffer
  streams. Both yield :class:`Event` objects, snapshots of the reader's view included.

``bench/api.py`` drives the API with raw sockets instead: it measures the server, and a
client library's own costs would hide them.
"""

from __future__ import annotations

import codecs
import email.utils
import json
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict
from urllib.parse import quote, urlencode

import requests
import requests.adapters

USER_AGENT = "canasta-client/1"
EVENT_STREAM = "text/event-stream"
NDJSON = "application/x-ndjson"
_ETAG = re.compile(r'^(?:W/)?"(\d+)"$')


# -- what the server answers (openapi.yaml's schemas) -------------------------------------
class PublicSeat(TypedDict):
    seat: int
    team: int
    name: str | None
    bot: str | None
    budget_ms: int | None  # the expert's thinking time the seat set (None: the server's default)
    open: bool


class CreatedSeat(PublicSeat):
    token: str | None  # only for a person's seat, and only in the answer to create_game


class GameView(TypedDict):
    """``GET /games/{id}``: the game's public facts and the reader's ``view`` (engine's
    seat view: hand, melds, pile, ``legal`` summary; None while the game waits)."""

    id: str
    status: str  # waiting, playing, over
    version: int
    preset: str
    players: int
    seat: int | None
    seats: list[PublicSeat]
    view: dict[str, Any] | None
    rules: NotRequired[dict[str, Any]]
    dry_run: NotRequired[bool]


class CreatedGame(TypedDict):
    id: str
    status: str
    version: int
    preset: str
    players: int
    seat: None
    seats: list[CreatedSeat]
    view: dict[str, Any] | None
    rules: dict[str, Any]


class JoinedSeat(TypedDict):
    id: str
    seat: int
    team: int
    name: str
    token: str
    status: str
    version: int


class Hint(TypedDict):
    bot: str
    seat: int
    version: int
    action: dict[str, Any]


Action = dict[str, Any]
"""A move: the game log's action object, e.g. ``{"type": "discard", "card": "7H"}``."""


# -- errors -------------------------------------------------------------------------------
class ApiProblem(Exception):
    """An error answer (``application/problem+json``, RFC 9457).

    ``code`` is stable and meant for programs (``pile_frozen``, ``not_your_turn``,
    ``rate_limited``); ``detail`` is a sentence for people; ``body`` is the whole problem
    (some carry more members: ``version``, ``to_act``, ``errors``)."""

    def __init__(self, status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        self.body = dict(body)
        self.code = str(body.get("code", "") or "")
        self.detail = str(body.get("detail", "") or "")
        self.title = str(body.get("title", "") or "")
        self.headers: Mapping[str, str] = headers if headers is not None else {}
        super().__init__(f"{status} {self.code}: {self.detail}")

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asks to wait before trying again (429, 503), if it said."""
        return parse_retry_after(self.headers.get("Retry-After"))


class StaleVersion(ApiProblem):
    """412: the move was decided on version ``expected`` but the game is at ``version``.

    Read the view again (:meth:`Seat.view`) and decide again: the move may have become
    illegal, or pointless, since."""

    @property
    def version(self) -> int:
        return int(self.body.get("version", 0))


class Unreachable(Exception):
    """The server could not be reached, or the connection broke before an answer, after
    every retry the policy allows. A move may or may not have been applied: send the same
    move again (a :class:`Seat` reuses its Idempotency-Key), or read the view."""


def problem_of(status: int, body: Any, headers: Mapping[str, str]) -> ApiProblem:
    """The exception for an error answer (a body that is not a problem still gives one)."""
    if not isinstance(body, dict):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        body = {"code": "http_error", "detail": text.strip()[:500] or f"HTTP {status}"}
    cls = StaleVersion if status == 412 else ApiProblem
    return cls(status, body, headers)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date (RFC 9110 10.2.3)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit takes any script's digits; float() does not
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# -- retries ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a request whose outcome a retry cannot change.

    ``attempts`` retries after the first try; waits start at ``backoff`` seconds and double
    (with jitter, so that many clients refused at once do not come back at once) up to
    ``max_backoff``. A ``Retry-After`` from the server is honoured instead, up to
    ``max_retry_after``: a longer one is raised to the caller rather than slept through."""

    attempts: int = 4
    backoff: float = 0.25
    max_backoff: float = 8.0
    max_retry_after: float = 30.0

    def wait(self, failures: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry number ``failures`` (1-based); None: give up."""
        if failures > self.attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        base = min(self.max_backoff, self.backoff * 2 ** (failures - 1))
        return base / 2 + random.random() * base / 2


NO_RETRY = RetryPolicy(attempts=0)


# -- answers ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    """An answer: status, decoded body (JSON, or text/bytes for other types), headers."""

    status: int
    body: Any
    headers: Mapping[str, str]

    @property
    def etag(self) -> str | None:
        return self.headers.get("ETag")

    @property
    def version(self) -> int | None:
        """The game version the ETag names."""
        m = _ETAG.match(self.etag or "")
        return int(m.group(1)) if m else None

    @property
    def replayed(self) -> bool:
        """True when the server answered a retried move from its stored answer."""
        return self.headers.get("Idempotent-Replayed") == "true"


@dataclass(frozen=True)
class Event:
    """One message of a game's event stream.

    ``type`` is ``snapshot`` (``body`` is the reader's whole :class:`GameView`: sent first,
    and again after a gap too long to replay) or an event type (``created``, ``joined``,
    ``bot``, ``move``...; ``body`` is the Event: ``version``, ``status``, ``phase``,
    ``to_act``, and ``data`` with the ``move`` as the reader may see it). ``id`` is where a
    reader resumes from."""

    type: str
    id: str | None
    body: dict[str, Any]

    @property
    def is_snapshot(self) -> bool:
        return self.type == "snapshot"

    @property
    def version(self) -> int:
        return int(self.body.get("version", 0))

    @property
    def status(self) -> str | None:
        return self.body.get("status")

    @property
    def move(self) -> dict[str, Any] | None:
        """The move as the reader may see it (engine's ``describe_move``), for move events."""
        data = self.body.get("data") if not self.is_snapshot else None
        return data.get("move") if isinstance(data, dict) else None


@dataclass(frozen=True)
class EventsPage:
    """One answer of the JSON long-poll: ``events`` after the cursor, the ``last_id`` to
    pass as ``after`` next time, and a ``snapshot`` of the view when there was no cursor
    or the cursor was older than the events the server keeps."""

    events: list[Event]
    last_id: str
    snapshot: GameView | None = None


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
                 retry: RetryPolicy = RetryPolicy(), sleep: Callable[[float], object] = time.sleep,
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
            reply = Reply(r.status_code, _decode(r), r.headers)
            if r.status_code < 400 or r.status_code in expect:
                return reply
            problem = problem_of(r.status_code, reply.body, r.headers)
            if _retryable(problem, idempotent):
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
        return dict(self.request("GET", f"/rules/{_seg(preset)}", params=params).body)

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
        return self.request("GET", f"/games/{_seg(game_id)}", token=token, headers=headers, expect=(304,))

    def join(self, game_id: str, seat: int, name: str, *, idempotency_key: str | None = None) -> JoinedSeat:
        """``POST /games/{id}/seats/{n}``: take an open seat; keep the token it answers. A
        key (a random UUID: the server refuses a guessable one) is made when none is given,
        and every retry of this call (after a 503 or a lost connection) sends the same one:
        the answer of a join made but lost comes back, to this address only."""
        headers = {"Idempotency-Key": idempotency_key or new_idempotency_key()}
        return self.request("POST", f"/games/{_seg(game_id)}/seats/{int(seat)}",
                            json_body={"name": name}, headers=headers, idempotent=True).body

    def seat_to_bot(self, game_id: str, seat: int, bot: str, token: str, *,
                    budget_ms: int | None = None) -> GameView:
        """``POST /games/{id}/seats/{n}/bot``: a bot plays the seat from now on
        (``budget_ms``: the expert's thinking time per decision, within ``GET /bots``'s limits)."""
        body: dict[str, Any] = {"bot": bot} if budget_ms is None else {"bot": bot, "budget_ms": budget_ms}
        return self.request("POST", f"/games/{_seg(game_id)}/seats/{int(seat)}/bot",
                            token=token, json_body=body).body

    def take_seat_back(self, game_id: str, seat: int, token: str) -> GameView:
        """``DELETE /games/{id}/seats/{n}/bot``: the seat's person plays it again (only
        the seat's own token may)."""
        return self.request("DELETE", f"/games/{_seg(game_id)}/seats/{int(seat)}/bot",
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
        return self.request("POST", f"/games/{_seg(game_id)}/moves", token=token, json_body={"action": action},
                            headers=headers, params=params, idempotent=True)

    def hint(self, game_id: str, token: str, bot: str = "standard") -> Hint:
        """``GET /games/{id}/hint``: the move a bot would make for the seat to act."""
        return self.request("GET", f"/games/{_seg(game_id)}/hint", token=token,
                            params={"bot": bot}).body

    def log_bytes(self, game_id: str) -> bytes:
        """``GET /games/{id}/log``: the game log (JSON Lines), once the game is over."""
        body = self.request("GET", f"/games/{_seg(game_id)}/log").body
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
        body = self.request("GET", f"/games/{_seg(game_id)}/events", token=token, params=params,
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


def _retryable(problem: ApiProblem, idempotent: bool) -> bool:
    if problem.status == 429:
        return True
    if problem.status == 409:
        return problem.code == "conflict"  # the server's compare-and-set gave up; nothing changed
    return problem.status == 503 and idempotent


def _decode(r: requests.Response) -> Any:
    ctype = r.headers.get("Content-Type", "")
    if not r.content:
        return None
    if ctype.startswith(("application/json", "application/problem+json")):
        try:
            return r.json()
        except ValueError:
            return r.text
    if ctype.startswith(NDJSON):
        return r.content
    if ctype.startswith(("text/", "application/yaml")):
        return r.text
    return r.content


def _seg(value: str) -> str:
    return quote(str(value), safe="")


class SourceAddressAdapter(requests.adapters.HTTPAdapter):
    """An adapter whose connections leave from one local ``address`` (a host with several
    addresses; tests and benchmarks that play several clients from loopback addresses)."""

    def __init__(self, address: str, **kwargs: Any) -> None:
        self.address = address
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def session_from(address: str) -> requests.Session:
    """A ``requests.Session`` (for :class:`Client`'s ``session``) whose every connection
    comes from the local ``address``."""
    session = requests.Session()
    adapter = SourceAddressAdapter(address)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def new_idempotency_key() -> str:
    return uuid.uuid4().hex


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


# -- Server-Sent Events ---------------------------------------------------------------------
@dataclass
class SseMessage:
    event: str
    data: str
    id: str | None


@dataclass
class SseDecoder:
    """The ``text/event-stream`` format (HTML standard, 9.2.6): lines end in CRLF, LF or
    CR; ``data``, ``event``, ``id`` and ``retry`` fields; ``:`` starts a comment (the
    server's keep-alive); a blank line ends a message."""

    last_id: str | None = None
    retry_ms: int | None = None
    comments: int = 0
    _buffer: str = ""
    _skip_lf: bool = False
    _data: list[str] = field(default_factory=list)
    _event: str = ""

    def feed(self, text: str) -> list[SseMessage]:
        out: list[SseMessage] = []
        chunk = self._buffer + text
        self._buffer = ""
        if self._skip_lf and chunk.startswith("\n"):
            chunk = chunk[1:]
        self._skip_lf = False
        start = 0
        for end in _LINE_END.finditer(chunk):
            if end.group() == "\r" and end.end() == len(chunk):
                self._skip_lf = True  # a CR ending the chunk: a LF starting the next one is part of it
            message = self._line(chunk[start:end.start()])
            if message is not None:
                out.append(message)
            start = end.end()
        self._buffer = chunk[start:]
        return out

    def _line(self, line: str) -> SseMessage | None:
        if line == "":
            message = None
            if self._data:
                message = SseMessage(self._event or "message", "\n".join(self._data), self.last_id)
            self._data, self._event = [], ""
            return message
        if line.startswith(":"):
            self.comments += 1
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():  # ASCII digits only (9.2.6)
            self.retry_ms = int(value)
        return None


_LINE_END = re.compile(r"\r\n|\r|\n")
DEFAULT_RETRY_MS = 2000  # until the server says (its first line is ``retry:``)


class _EventReader:
    """What both ways of reading a game's events share: the game, the seat's token, the id
    of the last event read (a new reader resumes after it), whether the game is over, and
    :meth:`close`."""

    def __init__(self, client: Client, game_id: str, token: str | None, last_id: str | None,
                 stop_when_over: bool) -> None:
        self.client = client
        self.game_id = game_id
        self.token = token
        self.last_id = last_id
        self.stop_when_over = stop_when_over
        self.over = False
        self._closed = threading.Event()

    def __enter__(self) -> _EventReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop: the iteration ends."""
        self._closed.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


class EventStream(_EventReader):
    """A game's events over Server-Sent Events, read as an iterator of :class:`Event`.

    The first message is a ``snapshot`` of the reader's view; then one per event. When the
    stream ends or breaks (servers end streams after a few minutes; networks drop them),
    it reconnects after the server's ``retry:`` delay with ``Last-Event-ID``, and the
    server replays what was missed (or sends a new snapshot when too much was). With
    ``stop_when_over`` the iteration ends once the game is over and the server has closed
    the stream. ``read_timeout``: silence (the server pings every 15 s) after which the
    connection counts as dropped. ``max_failures``: connection attempts in a row that may
    fail before :class:`Unreachable` (None: keep trying). A 4xx answer other than 429 is
    raised as :class:`ApiProblem`: asking again would not help.

    :meth:`close` (from any thread) ends the iteration."""

    def __init__(self, client: Client, game_id: str, token: str | None = None, *, last_event_id: str | None = None,
                 stop_when_over: bool = True, read_timeout: float = 45.0, max_failures: int | None = 10) -> None:
        super().__init__(client, game_id, token, last_event_id, stop_when_over)
        self.retry_ms = DEFAULT_RETRY_MS
        self.read_timeout = read_timeout
        self.max_failures = max_failures
        self.connections = 0  # how many times it connected (1 + reconnects)
        self._response: requests.Response | None = None
        self._http = requests.Session()  # its own connection: a stream holds one for minutes
        self._http.headers["User-Agent"] = USER_AGENT

    def __iter__(self) -> Iterator[Event]:
        try:
            yield from self._events()
        finally:
            self._http.close()  # no idle connection left behind for the server to wait on

    def __enter__(self) -> EventStream:
        return self

    def close(self) -> None:
        """Stop: the iteration ends, an open connection is shut."""
        super().close()
        response = self._response
        if response is not None:
            _shutdown(response)
        self._http.close()

    def _events(self) -> Iterator[Event]:
        failures = 0
        url = f"{self.client.base_url}/games/{_seg(self.game_id)}/events"
        while not self._closed.is_set():
            headers = {"Accept": EVENT_STREAM}
            if self.token is not None:
                headers["Authorization"] = f"Bearer {self.token}"
            if self.last_id is not None:
                headers["Last-Event-ID"] = self.last_id
            try:
                response = self._http.get(url, headers=headers, stream=True,
                                          timeout=(self.client.timeout, self.read_timeout))
            except requests.RequestException as e:
                failures += 1
                self._give_up_after(failures, e)
                self._wait(_backoff(failures))
                continue
            wait_s = self.retry_ms / 1000
            try:
                if response.status_code != 200 or not response.headers.get("Content-Type", "").startswith(EVENT_STREAM):
                    problem = problem_of(response.status_code, _decode(response), response.headers)
                    if problem.status not in (429, 503) and problem.status < 500:
                        raise problem
                    failures += 1
                    self._give_up_after(failures, problem)
                    wait_s = problem.retry_after if problem.retry_after is not None else _backoff(failures)
                else:
                    failures = 0
                    self.connections += 1
                    self._response = response
                    yield from self._read(response)
            finally:
                self._response = None
                response.close()
            if self._closed.is_set() or (self.over and self.stop_when_over):
                return
            self._wait(wait_s)

    def _read(self, response: requests.Response) -> Iterator[Event]:
        decoder = SseDecoder(last_id=self.last_id)
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            for chunk in response.iter_content(chunk_size=None):
                for message in decoder.feed(text.decode(chunk)):
                    if decoder.retry_ms is not None:
                        self.retry_ms = decoder.retry_ms
                    self.last_id = message.id
                    try:
                        body = json.loads(message.data)
                    except ValueError:
                        continue  # not ours to read; the id still counts
                    event = Event(message.event, message.id, body)
                    if event.status == "over":
                        self.over = True
                    yield event
                if decoder.retry_ms is not None:
                    self.retry_ms = decoder.retry_ms
        except (requests.RequestException, OSError, AttributeError, ValueError):
            # a dropped or closed connection: the loop reconnects (or ends, if closed);
            # urllib3 may raise AttributeError/ValueError on a socket shut under it
            if self._closed.is_set():
                return

    def _give_up_after(self, failures: int, cause: Exception) -> None:
        if self.max_failures is not None and failures > self.max_failures:
            raise Unreachable(f"the event stream of game {self.game_id} could not be read "
                              f"({failures} tries): {cause}") from cause

    def _wait(self, seconds: float) -> None:
        self._closed.wait(max(0.0, seconds))


def _backoff(failures: int, cap: float = 30.0) -> float:
    base = min(cap, 0.5 * 2 ** (failures - 1))
    return base / 2 + random.random() * base / 2


def _shutdown(response: requests.Response) -> None:
    """Shut the socket under a streaming response, so that a thread blocked reading it
    wakes up now (closing the response alone leaves the read waiting for the next byte)."""
    import socket

    try:
        conn = response.raw.connection
        sock = conn.sock if conn is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except (AttributeError, OSError):
        pass
    try:
        response.close()
    except Exception:  # noqa: BLE001 - closing from another thread may race the reader
        pass


class LongPoll(_EventReader):
    """A game's events read with the JSON long-poll (``?after=&wait=``): the same
    :class:`Event` objects as :class:`EventStream`, a ``snapshot`` first, for networks that
    buffer or cut streams. Each request waits up to ``wait`` seconds for an event; 429 and
    503 (the server holds as many waiting readers as it may) are retried by the client's
    policy. :meth:`close` ends the iteration after the current request."""

    def __init__(self, client: Client, game_id: str, token: str | None = None, *, after: str | None = None,
                 wait: float = 25.0, stop_when_over: bool = True) -> None:
        super().__init__(client, game_id, token, after, stop_when_over)
        self.wait = wait

    def __iter__(self) -> Iterator[Event]:
        return self._events()

    def _events(self) -> Iterator[Event]:
        while not self._closed.is_set():
            if self.last_id is None:
                page = self.client.poll(self.game_id, self.token)
            else:
                page = self.client.poll(self.game_id, self.token, after=self.last_id, wait=self.wait)
            if page.snapshot is not None:
                self.last_id = page.last_id
                self.over = self.over or page.snapshot.get("status") == "over"
                yield Event("snapshot", page.last_id, dict(page.snapshot))
            for event in page.events:
                self.last_id = event.id  # a reader that stops here resumes after this event
                self.over = self.over or event.status == "over"
                yield event
            self.last_id = page.last_id
            if self.over and self.stop_when_over:
                return  # a game that is over changes no more


def tokens_of(created: CreatedGame) -> dict[int, str]:
    """The tokens of a new game's person seats, by seat number."""
    return {s["seat"]: token for s in created["seats"] if (token := s.get("token"))}


__all__ = [
    "Action", "ApiProblem", "Client", "CreatedGame", "Event", "EventStream", "EventsPage", "GameView", "Hint",
    "JoinedSeat", "LongPoll", "NO_RETRY", "Reply", "RetryPolicy", "Seat", "SseDecoder", "StaleVersion",
    "Unreachable", "new_idempotency_key", "parse_retry_after", "problem_of", "tokens_of",
]
