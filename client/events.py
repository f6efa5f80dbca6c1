"""A game's events as the client reads them: Server-Sent Events (:class:`EventStream`,
resumed after a dropped stream with ``Last-Event-ID``) or the JSON long-poll
(:class:`LongPoll`), each yielding :class:`Event` objects."""

from __future__ import annotations

import codecs
import json
import random
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests
import requests.adapters

from client.bodies import GameView
from client.problems import Unreachable, problem_of
from client.wire import EVENT_STREAM, USER_AGENT, decode, segment


class Server(Protocol):
    """What an event reader needs of the client (:class:`client.Client`)."""

    base_url: str
    timeout: float

    def poll(self, game_id: str, token: str | None = None, *, after: str | None = None,
             wait: float | None = None) -> EventsPage: ...

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

    def __init__(self, client: Server, game_id: str, token: str | None, last_id: str | None,
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

    def __init__(self, client: Server, game_id: str, token: str | None = None, *, last_event_id: str | None = None,
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
        url = f"{self.client.base_url}/games/{segment(self.game_id)}/events"
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
                    problem = problem_of(response.status_code, decode(response), response.headers)
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

    def __init__(self, client: Server, game_id: str, token: str | None = None, *, after: str | None = None,
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


