"""The two requests players make most, answered on the event loop: a move (``POST
/games/{id}/moves``) and a read of the game (``GET /games/{id}``).

Why: through Flask, every request is handed to a thread, gets a WSGI environ and Flask's
request and response objects, and its Redis round trips are made by that thread, each one a
wait on the interpreter lock for the next. On the loop a request is parsed from the ASGI
scope, judged by the same service functions (:mod:`service.games`) and committed through one
connection that every request of the process shares (:mod:`service.redis_io` packs, :mod:`web.redis_aio`
sends). On this project's 2-core machine that doubled the accepted moves per second
(``BENCHMARKS.md``).

What the loop answers: only what it can answer exactly as Flask would, with the same bytes:
a request of the common shape (below) whose answer is a success (200, or 304 for a read
whose ``If-None-Match`` holds), or the 503 of a move made but not confirmed on disk. Every
other request is handed to Flask (:class:`ToFlask`) before anything of it was written, and
Flask answers it as it answers every request: any refusal, a dry run, a query string, a body
that is not plain ``application/json`` of a few KB, an ``If-Match`` other than one strong
ETag, a game this process has not cached at the version a move names and Redis does not
hand the loop, an outcome other than ``ok`` (``stale``: Flask reads the game afresh;
``replay``: Flask answers the Idempotency-Key's stored record). A move whose compare-and-set
got no reply is handed over too: Flask reads the game afresh, and the compare-and-set on
the version applies a move once, whichever path tries it.

The request is read with the WSGI environ's header names and values (:func:`environ_headers`,
as the ASGI bridge builds them for Flask), through the same parsers (``web.http``), limits
(``web.middleware``: a request counted here is handed over with its count) and CORS headers.
``CANASTA_LOOP_ROUTES=0`` turns the loop's routes off (every request through Flask).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import re
from concurrent.futures import Executor
from typing import Any

import orjson
import redis
from flask import Flask
from marshmallow import Schema

from service import metrics
from service.redis_io import first_key
from service.steps import Commit, Done, Load, Settle, Steps, advance
from service.store import NotDurable, Record, record_of
from web import answers, middleware
from web.http import JSON, SMALL_BODY, Ctx, LoadedBodies, ascii_number, load_body
from web.problems import not_durable_problem, problem_headers
from web.redis_aio import AioRedis, Unanswered

log = logging.getLogger("canasta.api")

Answer = tuple[int, list[tuple[bytes, bytes]], bytes]
Scope = dict[str, Any]

NO_ARGS: dict[str, str] = {}  # the loop takes no request with a query


def _no_body(schema: Schema, memo: LoadedBodies | None) -> dict[str, Any]:
    raise AssertionError("a read has no body")  # the loop hands a read with a body to Flask


MOVE_PATH = re.compile(r"^/games/([A-Za-z0-9_-]{12})/moves$")
GAME_PATH = re.compile(r"^/games/([A-Za-z0-9_-]{12})$")
REPLY_MARGIN_SECONDS = 1.0  # a reply later than the durability wait plus this is given up
SHORTEST_WAIT_SECONDS = 2.0
# requests that do their own work (parse, judge, render) in one turn of the event loop; the
# others wait for a later turn, off the loop's queue. At saturation a hundred requests in
# flight would each take a step in every turn, and the event hub's wake-up and delivery to a
# listener (a turn each) would wait behind all of them. Their waits on Redis are not limited,
# so the pipeline to Redis stays as deep. 200 games at saturation with 5 000 listeners, the
# quiet 2-core machine (docs/benchmarks/api.md, ninth session): 8 a turn, move -> listener
# p99 28 ms and 2 561 moves/s without listeners; 32: 56 ms, 2 693/s; no limit: 69 ms,
# 2 817/s (and 111 ms on a busy machine, against 42 ms with 8). Each wait for a turn costs a
# future and a wake-up.
WORKERS_PER_TURN = 32


class Turns:
    """At most ``per_turn`` requests do their own work in each turn of the event loop (see
    :data:`WORKERS_PER_TURN`). :meth:`take` before each stretch of work; the turn's count is
    reset by a callback the loop runs in its next turn, which also wakes the next waiters."""

    def __init__(self, per_turn: int) -> None:
        self.per_turn = per_turn
        self.used = 0
        self.parked: collections.deque[asyncio.Future[None]] = collections.deque()
        self._next: asyncio.Handle | None = None

    async def take(self) -> None:
        if self.used < self.per_turn:
            self.used += 1
            self._schedule()
            return
        future = asyncio.get_running_loop().create_future()
        self.parked.append(future)
        self._schedule()
        await future

    def _schedule(self) -> None:
        if self._next is None:
            self._next = asyncio.get_running_loop().call_soon(self._turn)

    def _turn(self) -> None:
        self._next = None
        self.used = 0
        while self.parked and self.used < self.per_turn:
            future = self.parked.popleft()
            if not future.done():  # a request that went away in the meantime takes no turn
                future.set_result(None)
                self.used += 1
        if self.used or self.parked:
            self._schedule()


class ToFlask(Exception):
    """Flask answers this request. ``counted``: the rate limiter's answer (ms to wait) when
    the loop counted the request already, so that Flask does not count it again."""

    def __init__(self, counted: int | None = None) -> None:
        super().__init__()
        self.counted = counted


def environ_headers(scope: Scope) -> dict[str, str]:
    """The request's headers as the WSGI environ names them (``HTTP_AUTHORIZATION``,
    ``CONTENT_TYPE``, ...; repeated ones joined by commas), as ``a2wsgi`` builds Flask's."""
    found: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1")
        if name == "content-length":
            key = "CONTENT_LENGTH"
        elif name == "content-type":
            key = "CONTENT_TYPE"
        else:
            key = "HTTP_" + name.upper().replace("-", "_")
        value = raw_value.decode("latin-1")
        found[key] = found[key] + "," + value if key in found else value
    return found


def _headers(pairs: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in pairs]


class LoopRoutes:
    """The loop's routes of one API process (see the module)."""

    def __init__(self, flask_app: Flask, executor: Executor) -> None:
        c: Ctx = flask_app.extensions["canasta"]
        self.settings = c.settings
        self.store = c.store
        self.executor = executor
        timeout = max(SHORTEST_WAIT_SECONDS, c.settings.durability_timeout_ms / 1000 + REPLY_MARGIN_SECONDS)
        self.redis = AioRedis.of(c.store.redis, timeout)
        self.limited = middleware.limiter_on(c.settings)
        self.trust_proxy = c.settings.trust_proxy
        self.answered = 0  # requests answered on the loop, and handed to Flask (tests)
        self.handed_over = 0
        self.turns = Turns(WORKERS_PER_TURN)

    @classmethod
    def of(cls, flask_app: Flask, executor: Executor) -> LoopRoutes | None:
        """The loop's routes, or None when they are off or cannot reach Redis (TLS)."""
        c: Ctx = flask_app.extensions["canasta"]
        if not c.settings.loop_routes:
            return None
        routes = cls(flask_app, executor)
        if routes.redis is None:
            log.info("a TLS Redis: moves and game reads are answered by Flask's threads")
            return None
        return routes

    @staticmethod
    def wants(scope: Scope) -> bool:
        """Whether the request may be one of the loop's (its method and path say so)."""
        method, path = scope["method"], scope["path"]
        return (method == "POST" and path.endswith("/moves")) or (method == "GET" and path.startswith("/games/")
                                                                  and path.count("/") == 2)

    async def answer(self, scope: Scope, body: bytes) -> Answer:
        """The answer to the request, or :class:`ToFlask`."""
        await self.turns.take()
        try:
            found = await self._answer(scope, body)
        except ToFlask:
            self.handed_over += 1
            raise
        self.answered += 1
        return found

    async def _answer(self, scope: Scope, body: bytes) -> Answer:
        if scope["query_string"]:
            raise ToFlask
        headers = environ_headers(scope)
        if scope["method"] == "POST":
            m = MOVE_PATH.match(scope["path"])
            if m is None:
                raise ToFlask
            return await self._move(scope, headers, m.group(1), body)
        m = GAME_PATH.match(scope["path"])
        if m is None or "CONTENT_LENGTH" in headers or "HTTP_TRANSFER_ENCODING" in headers:
            raise ToFlask  # a read with a body: Flask reads it, and answers as it does
        return await self._read(scope, headers, m.group(1))

    # -- POST /games/{id}/moves: web.answers.move ------------------------------------------
    async def _move(self, scope: Scope, headers: dict[str, str], game_id: str, body: bytes) -> Answer:
        if headers.get("CONTENT_TYPE") != JSON or "HTTP_TRANSFER_ENCODING" in headers:
            raise ToFlask  # a body of another media type, or streamed: Werkzeug reads it
        length = headers.get("CONTENT_LENGTH", "")
        if not ascii_number(length) or int(length) != len(body) or len(body) > min(SMALL_BODY, self.settings.max_body_bytes):
            raise ToFlask
        counted = await self._count(scope, headers, "games.post_move")

        def loaded_body(schema: Schema, memo: LoadedBodies | None) -> dict[str, Any]:
            return load_body(body, schema, memo)

        asked = answers.Asked(game_id, headers, NO_ARGS, loaded_body)
        try:
            reply = await self._run(answers.move(self.settings, asked), counted)
        except NotDurable:
            problem = not_durable_problem()
            return self._respond(problem.status, problem_headers(problem), orjson.dumps(problem.to_dict()), headers)
        return self._reply(reply, headers)

    # -- GET /games/{id}: web.answers.read ---------------------------------------------------
    async def _read(self, scope: Scope, headers: dict[str, str], game_id: str) -> Answer:
        counted = await self._count(scope, headers, "games.get_game")
        asked = answers.Asked(game_id, headers, NO_ARGS, _no_body)
        return self._reply(await self._run(answers.read(asked), counted), headers)

    # -- the driver ----------------------------------------------------------------------------
    async def _run(self, steps: Steps[answers.Reply], counted: int | None) -> answers.Reply:
        """Drive ``steps`` (:mod:`service.steps`) on the loop: the game and the
        compare-and-set over the shared connection, the settling in a thread. A refusal, a
        failure nobody foresaw (an engine bug: Flask's problem+json 500, logged), a step the
        loop does not take (:class:`service.steps.Recall`, on the way to a refusal) or a
        Redis that does not answer: Flask answers instead (:class:`ToFlask`), running the
        same steps. A change made but not confirmed on disk is raised as ``NotDurable``."""
        reply: Any = None
        failure: Exception | None = None
        while True:
            try:
                step = advance(steps, reply, failure)
            except NotDurable:
                raise
            except Exception:  # noqa: BLE001 - see above: Flask answers it as it answers every request
                raise ToFlask(counted) from None
            if isinstance(step, Done):
                return step.value
            reply, failure = None, None
            if isinstance(step, Load):
                reply = await self._record(step.game_id, counted)
            elif isinstance(step, Commit):
                try:
                    reply = await self._commit(step, counted)
                except NotDurable as e:
                    log.error("a change was not confirmed durable: %s", e)
                    failure = e
            elif isinstance(step, Settle):
                await self._in_thread(step.fn, self.store, *step.args)
            else:
                raise ToFlask(counted)

    async def _commit(self, step: Commit, counted: int | None) -> Any:
        store = self.store
        if store.durability == "fsync" and not store.fsync_known():
            raise ToFlask(counted)  # Flask asks the server, and the next moves come here again
        commands = store.commit_commands(**step.args)
        assert self.redis is not None
        try:
            replies = await self.redis.send(commands, store.keys.state(step.game_id))
        except Unanswered:
            metrics.count_redis_error("api")
            raise ToFlask(counted) from None
        await self.turns.take()  # after each wait, the work goes on in its turn
        try:
            return store.commit_outcome(replies)
        except redis.ResponseError:
            raise ToFlask(counted) from None

    async def _record(self, game_id: str, counted: int | None) -> Record | None:
        """The game's record as Redis holds it now (None: no such game)."""
        assert self.redis is not None
        command = self.store.load_command(game_id)
        try:
            (reply,) = await self.redis.send([command], command[1])
        except Unanswered:
            metrics.count_redis_error("api")
            raise ToFlask(counted) from None
        await self.turns.take()
        if isinstance(reply, Exception):
            raise ToFlask(counted)
        return record_of(reply)

    def _reply(self, reply: answers.Reply, headers: dict[str, str]) -> Answer:
        body = b"" if reply.body is None else orjson.dumps(reply.body)
        fields = reply.headers if reply.body is None else [("Content-Type", JSON), *reply.headers]
        return self._respond(reply.status, fields, body, headers)

    async def _count(self, scope: Scope, headers: dict[str, str], endpoint: str) -> int | None:
        """Count the request as ``web.middleware`` does (None: the limiter is off). Over a
        limit, Flask answers it (429) with this count; a limiter the loop cannot reach hands
        the request to Flask uncounted, which counts it (or logs the limiter's failure)."""
        if not self.limited:
            return None
        s = self.settings
        client = scope.get("client")
        address = client[0] if client else None
        if self.trust_proxy:
            address = middleware.forwarded_address(headers.get("HTTP_X_FORWARDED_FOR")) or address
        counters = middleware.rate_counters(s, address, headers.get("HTTP_AUTHORIZATION"), endpoint)
        commands = self.store.rate_limit_commands(counters, s.rate_limit_window)
        assert self.redis is not None
        try:  # one call per hash slot: one on a single server
            replies = [await self.redis.send([c], str(first_key(c))) for c in commands]
        except Unanswered:
            metrics.count_redis_error("api")
            raise ToFlask from None
        await self.turns.take()
        if any(isinstance(reply, Exception) for reply, in replies):
            raise ToFlask  # a script the server lost (NOSCRIPT), a moved slot: Flask's client handles them
        wait = max((int(reply) for reply, in replies), default=0)
        if wait > 0:
            raise ToFlask(wait)
        return wait

    async def _in_thread(self, fn: Any, *args: Any) -> None:
        """``fn(*args)`` in a Flask thread: it talks to Redis with the sync client (the bot
        queue, the log's fold), which would stop the loop."""
        await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
        await self.turns.take()

    def _respond(self, status: int, fields: list[tuple[str, str]], body: bytes, headers: dict[str, str]) -> Answer:
        """The answer with its length and, for an allowed origin, the CORS headers (as Flask's
        ``after_request`` adds them: ``web.middleware``)."""
        allowed = self.settings.cors_origins
        if allowed:
            origin = headers.get("HTTP_ORIGIN")
            fields = [*fields, *middleware.cors_headers(allowed, origin)]
            if middleware.vary_origin(allowed, origin):
                vary = next((value for name, value in fields if name == "Vary"), None)
                fields = [f for f in fields if f[0] != "Vary"]
                fields.append(("Vary", f"{vary}, Origin" if vary else "Origin"))
        if status != 304:
            fields.append(("Content-Length", str(len(body))))
        return status, _headers(fields), body
