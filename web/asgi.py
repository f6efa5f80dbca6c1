"""The API as one ASGI app (granian ``--interface asgi``, ``web.asgi:create_asgi_app``):
moves and reads of a game answered on the event loop where they can be
(:mod:`web.loop_routes`), the Flask app for every other request, run in a small pool of
threads, and the event hub (``web/hub.py``) on the event loop for the waiting part of
``GET /games/{id}/events``.

A request is read in full on the loop (at most the body limit plus one byte: Flask answers
413 for more). A move or a read of a game is answered on the loop unless the loop routes hand
it over (:class:`web.loop_routes.ToFlask`); any other request is run through Flask in a
thread, and its answer written by the loop: one hand-off per request. When the events route
leaves a :class:`web.hub.Handoff` in the scope (an SSE stream, or a long-poll with nothing to
answer yet) the loop goes on from there: the stream's head is sent and the listener waits on
the hub, with heartbeats, until the stream's time is up, the game is over, the client goes
away or the server stops.

Stopping (SIGINT, SIGTERM): granian's own handler is kept, and before it runs the hub ends
every listener, so that no open stream holds the worker up.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import orjson
from a2wsgi.wsgi import build_environ
from flask import Flask

from service.config import Settings
from web.hub import EventHub, Handoff, Listener, connect, sse_message
from web.loop_routes import LoopRoutes, ToFlask
from web.middleware import COUNTED
from web.observe import REQUEST_ID_ENV, Exchange, Observer
from web.routes.events import HANDOFF_KEY

log = logging.getLogger("canasta.asgi")

Scope = dict[str, Any]
Receive = Any
Send = Any

DEFAULT_THREADS = 4  # Flask threads per process (CANASTA_THREADS): few beat many (the GIL)
EXCHANGE_KEY = "canasta.exchange"  # the scope's: the request as web.observe sees it
EVENTS_SUFFIX = "/events"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def _send_whole(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    """An answer in one piece: its head, then its body."""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Disconnected(Exception):
    """The client went away before its request was read."""


class SlowBody(Exception):
    """The client did not send its body within ``body_read_seconds``: a slow-body attack
    holds a connection and a buffer for as long as it trickles; it is answered 408."""


SLOW_BODY = orjson.dumps({"type": "urn:canasta:problem:body_timeout", "title": "Request Timeout", "status": 408,
                          "detail": "The request body did not arrive in time.", "code": "body_timeout"})
SLOW_BODY_HEADERS = [(b"content-type", b"application/problem+json"), (b"cache-control", b"no-store"), (b"connection", b"close")]


class App:
    """The ASGI callable of one process."""

    def __init__(self, flask_app: Flask, settings: Settings, threads: int = DEFAULT_THREADS) -> None:
        self.flask = flask_app
        self.settings = settings
        self.body_limit = settings.max_body_bytes
        self.executor = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="flask")
        self.loop_routes = LoopRoutes.of(flask_app, self.executor)
        self.observer: Observer = flask_app.extensions["canasta.observer"]
        self._hub: EventHub | None = None
        self.stopping = False

    @property
    def hub(self) -> EventHub:
        """Made on the loop, at the first listener (or lifespan startup)."""
        if self._hub is None:
            store = self.flask.extensions["canasta"].store
            self._hub = EventHub(connect(self.settings.redis_url), store.keys)
            self._chain_stop_signals()
        return self._hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            # every request: its id in the answer, its metrics and access line at its end (web.observe)
            exchange = scope[EXCHANGE_KEY] = self.observer.begin(scope)
            send = self.observer.send(send, exchange)
            try:
                if scope["method"] == "GET" and scope["path"].endswith(EVENTS_SUFFIX):
                    await self._events(scope, receive, send)
                elif self.loop_routes is not None and self.loop_routes.wants(scope):
                    await self._on_loop(scope, receive, send, self.loop_routes)
                else:
                    await self._flask(scope, receive, send)
            except SlowBody:
                await _send_whole(send, 408, SLOW_BODY_HEADERS, SLOW_BODY)
            finally:
                self.observer.end(exchange)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    # -- every request: Flask in a thread ----------------------------------------------------
    async def _flask(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            status, headers, body = await self._run(scope, receive)
        except Disconnected:
            return
        await _send_whole(send, status, headers, body)

    # -- a move, a read of a game: on the loop where it can be (web.loop_routes) -------------
    async def _on_loop(self, scope: Scope, receive: Receive, send: Send, routes: LoopRoutes) -> None:
        body: bytes | None = None  # a read takes no body (one that has one is Flask's: ToFlask)
        if scope["method"] == "POST":
            try:
                body = await self._read_body(scope, receive)
            except Disconnected:
                return
        try:
            status, headers, out = await routes.answer(scope, body or b"")
        except ToFlask as handover:
            extra = {COUNTED: handover.counted} if handover.counted is not None else None
            try:
                status, headers, out = await self._run(scope, receive, body, extra)
            except Disconnected:
                return
        await _send_whole(send, status, headers, out)

    async def _run(self, scope: Scope, receive: Receive, body: bytes | None = None,
                   extra: dict[str, Any] | None = None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Flask's answer, in a thread (``body``: read already; ``extra``: environ entries)."""
        if body is None:
            body = await self._read_body(scope, receive)
        environ = cast(dict[str, Any], build_environ(scope, io.BytesIO(body)))  # type: ignore[arg-type]
        exchange: Exchange | None = scope.get(EXCHANGE_KEY)
        if exchange is not None:  # observed here: Flask's layer only names it in its logs
            environ[REQUEST_ID_ENV] = exchange.rid
        if extra:
            environ.update(extra)
        if environ.pop("HTTP_TRANSFER_ENCODING", None) is not None:
            # read whole (or the limit + 1 bytes): Flask sees its length, and refuses more
            # than the limit with 413 (Werkzeug would cut an undeclared body at the limit)
            environ["CONTENT_LENGTH"] = str(len(body))
        return await asyncio.get_running_loop().run_in_executor(self.executor, self._call_flask, environ)

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes:
        """The body, up to the limit + 1 byte (Flask refuses more: 413); none when the
        declared Content-Length is over the limit already (Flask refuses it unread)."""
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.body_limit:
                return b""
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.settings.body_read_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise Disconnected
                    chunk = message.get("body", b"")
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > self.body_limit or not message.get("more_body"):
                        return b"".join(chunks)
        except TimeoutError:
            raise SlowBody from None

    def _call_flask(self, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            started[:] = [status, headers]
            return None

        result = self.flask(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        return int(status[:3]), [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers], body

    # -- GET /games/{id}/events ---------------------------------------------------------------
    async def _events(self, scope: Scope, receive: Receive, send: Send) -> None:
        box: dict[str, Handoff] = {}
        scope[HANDOFF_KEY] = box
        try:
            status, headers, body = await self._run(scope, receive)
        except Disconnected:
            handoff = box.pop("handoff", None)
            if handoff is not None:
                handoff.release()
            return
        handoff = box.get("handoff")
        if handoff is None:
            await _send_whole(send, status, headers, body)
            return
        try:
            if handoff.kind == "sse":
                await self._stream(handoff, status, headers, body, receive, send)
            else:
                await self._poll(handoff, status, headers, receive, send)
        finally:
            handoff.release()

    async def _watch(self, listener: Listener, receive: Receive, gone: asyncio.Event) -> None:
        """Wake the listener when its client goes away."""
        with contextlib.suppress(Exception):
            while (await receive())["type"] != "http.disconnect":
                pass
        gone.set()
        listener.wake.set()

    async def _stream(self, handoff: Handoff, status: int, headers: list[tuple[bytes, bytes]], head: bytes,
                      receive: Receive, send: Send) -> None:
        listener = handoff.listener
        gone = asyncio.Event()
        watcher = asyncio.get_running_loop().create_task(self._watch(listener, receive, gone))
        hub = self.hub
        try:
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": head, "more_body": True})
            await hub.listen(listener)
            deadline = asyncio.get_running_loop().time() + handoff.seconds
            while not gone.is_set() and not listener.closed:
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                try:
                    async with asyncio.timeout(min(handoff.ping, remaining)):
                        await listener.wake.wait()
                except TimeoutError:
                    if remaining > handoff.ping:
                        await send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})
                    continue
                found = listener.take()
                if found:
                    chunk = b"".join(sse_message(event_id, body["type"], body) for event_id, body in found)
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    if any(body.get("status") == "over" for _, body in found):
                        break
            if not gone.is_set():
                await send({"type": "http.response.body", "body": b""})
        except OSError:  # the client went away while we wrote
            pass
        except Exception as e:  # noqa: BLE001 - granian raises its own error for a closed connection
            if not gone.is_set() and "disconnect" not in type(e).__name__.lower():
                raise
        finally:
            hub.leave(listener)
            watcher.cancel()

    async def _poll(self, handoff: Handoff, status: int, headers: list[tuple[bytes, bytes]], receive: Receive,
                    send: Send) -> None:
        listener = handoff.listener
        after = listener.cursor
        gone = asyncio.Event()
        watcher = asyncio.get_running_loop().create_task(self._watch(listener, receive, gone))
        hub = self.hub
        try:
            await hub.listen(listener)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(handoff.seconds):
                    while not listener.pending and not gone.is_set() and not listener.closed:
                        await listener.wake.wait()
                        listener.wake.clear()
            if gone.is_set():
                return
            found = listener.take()
            body = orjson.dumps({"events": [b for _, b in found], "last_id": found[-1][0] if found else after})
            headers = [(k, v) for k, v in headers if k != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await _send_whole(send, status, headers, body)
        finally:
            hub.leave(listener)
            watcher.cancel()

    # -- start and stop ---------------------------------------------------------------------
    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.hub  # noqa: B018 - made now, on the loop: it chains the stop signals
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._hub is not None:
                    await self._hub.close()
                if self.loop_routes is not None and self.loop_routes.redis is not None:
                    self.loop_routes.redis.close()
                self.executor.shutdown(wait=False, cancel_futures=True)
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _chain_stop_signals(self) -> None:
        """Before granian's handler of SIGINT and SIGTERM, end every listener: the server
        waits for open requests to finish, and a stream would not."""
        loop = asyncio.get_running_loop()
        handlers = getattr(loop, "_signal_handlers", {})
        for sig in STOP_SIGNALS:
            theirs = handlers.get(sig)

            def stop(theirs: Any = theirs) -> None:
                self.stopping = True
                if self._hub is not None:
                    self._hub.stop_now()
                if theirs is not None:
                    theirs._run()

            try:
                loop.add_signal_handler(sig, stop)
            except (NotImplementedError, RuntimeError):  # not the main thread: leave them be
                return


def create_asgi_app(config: Settings | dict[str, Any] | None = None) -> App:
    """The ASGI app (granian ``--factory``). Flask threads: ``CANASTA_THREADS`` (default 4)."""
    from service import metrics, procstat
    from web import create_app

    metrics.start_process()  # a pid a dead worker had: its open listeners are not ours
    procstat.raise_open_files_limit()  # each open stream is a socket
    # a worker whose granian main process is gone (killed) stops as on the main's SIGTERM:
    # seen once, a worker left running for good after its main was killed
    parent = os.getppid()
    procstat.die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # it died before we asked
        os.kill(os.getpid(), signal.SIGTERM)
    flask_app = create_app(config)
    settings: Settings = flask_app.extensions["canasta"].settings
    threads = int(os.environ.get("CANASTA_THREADS") or DEFAULT_THREADS)
    app = App(flask_app, settings, threads)
    procstat.settle_collector()  # last: everything made so far stays for the process's life
    return app
