"""Every request seen once: its request id, its metrics and its access log line.

One place for both ways a request is answered. Under granian the ASGI app
(:class:`web.asgi.App`) sees every request, those it answers on the event loop
(:mod:`web.loop_routes`) and those it hands to Flask, and an event stream until it ends: it
opens an :class:`Exchange` when a request arrives, and :meth:`Observer.send` wraps its
``send``, adding ``X-Request-Id`` to the answer's head and counting what goes out. Under a
plain WSGI server (``web:create_app()``, Flask's test client) :class:`WsgiObserved`, around
the Flask app, does the same; under the ASGI app it only sets the request id for the logs of
the Flask thread (:data:`service.logs.REQUEST_ID`).

**Request ids.** ``X-Request-Id`` is taken from the request when it is a short printable
token (:data:`REQUEST_ID_RE`: up to 64 of ``[A-Za-z0-9._-]``), so that a proxy's or a
client's id follows the request; anything else (too long, a newline, a space) is replaced by
a new id, never echoed. The answer always carries the id: success, problem, 304, SSE.

**The access line** (``canasta.access``, one per request, at its end: an event stream when it
closes): ``method``, ``route`` (the route template of ``openapi.yaml``, ``other`` for unknown
paths), ``path`` (cut to :data:`PATH_SHOWN` characters), ``status`` (499: the client left
before the answer), ``code`` (a problem's), ``duration_ms``, ``client`` (as the rate limiter
sees it), ``bytes_out`` (the body's), and for a game's routes ``game`` and ``version`` (the
answer's ``ETag``, else the request's ``If-Match``). ``CANASTA_ACCESS_LOG=0`` turns the line
off; ``CANASTA_METRICS=0`` stops counting requests (benchmarks compare them).
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from service import metrics
from service.config import Settings
from service.logs import REQUEST_ID
from web.middleware import forwarded_address

ACCESS_LOGGER = "canasta.access"
access_log = logging.getLogger(ACCESS_LOGGER)

HEADER = "X-Request-Id"
HEADER_BYTES = b"x-request-id"
REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
REQUEST_ID_MAX = 64
REQUEST_ID_ENV = "canasta.request_id"  # the WSGI environ's: the ASGI app observes this request
PATH_SHOWN = 200  # characters of a path in the access line
OTHER = "other"  # the route of a path no route matches, and the method of an unknown one
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
PROBLEM_JSON = "application/problem+json"
CLIENT_GONE = 499  # nginx's word for a request whose client left before its answer
MOVES_ROUTE = "/games/{game_id}/moves"


class _Ids:
    """New request ids: a random prefix per process and a count (16 hex digits): unique
    among the processes of a run without a system call each (a forked child draws its own)."""

    def __init__(self) -> None:
        self.renew()

    def renew(self) -> None:
        self.prefix = secrets.token_hex(4)
        self.count = itertools.count(secrets.randbelow(1 << 20))

    def next(self) -> str:
        return f"{self.prefix}{next(self.count) & 0xFFFFFFFF:08x}"


_ids = _Ids()
os.register_at_fork(after_in_child=_ids.renew)


def request_id(given: str | None) -> str:
    """The request's id: ``given`` when well-formed, else a new one (16 hex digits)."""
    if given is not None and len(given) <= REQUEST_ID_MAX and REQUEST_ID_RE.fullmatch(given):
        return given
    return _ids.next()


# -- route templates --------------------------------------------------------------------------
HOT_RULES = ["/games/<game_id>/moves", "/games/<game_id>", "/games/<game_id>/events"]
_VARIABLE = re.compile(r"<(?:([a-z]+)(?:\([^)]*\))?:)?([A-Za-z_][A-Za-z0-9_]*)>")


class Routes:
    """Path -> (route template, path parameters), from the Flask app's rules, as
    ``openapi.yaml`` writes them (``/games/{game_id}/moves``): a bounded label for metrics."""

    def __init__(self, rules: Iterable[str]) -> None:
        self.exact: dict[str, str] = {}
        self.patterns: list[tuple[re.Pattern[str], str]] = []
        # the routes players call most are tried first; then the longer before the shorter
        for rule in sorted(set(rules), key=lambda r: (r not in HOT_RULES, HOT_RULES.index(r) if r in HOT_RULES else 0,
                                                      -r.count("/"), r)):
            if "<" not in rule:
                self.exact[rule] = rule
                continue
            template = _VARIABLE.sub(lambda m: "{" + m.group(2) + "}", rule)
            pattern = ""
            last = 0
            for m in _VARIABLE.finditer(rule):
                pattern += re.escape(rule[last:m.start()])
                pattern += f"(?P<{m.group(2)}>.+)" if m.group(1) == "path" else f"(?P<{m.group(2)}>[^/]+)"
                last = m.end()
            pattern += re.escape(rule[last:])
            self.patterns.append((re.compile(pattern), template))

    @classmethod
    def of(cls, flask_app: Any) -> Routes:
        return cls(rule.rule for rule in flask_app.url_map.iter_rules())

    def match(self, path: str) -> tuple[str, dict[str, str]]:
        if path in self.exact:
            return path, {}
        for pattern, template in self.patterns:
            m = pattern.fullmatch(path)
            if m is not None:
                return template, m.groupdict()
        return OTHER, {}


# -- one request ------------------------------------------------------------------------------
class Exchange:
    """What is known of one request as it is answered."""

    __slots__ = ("started", "method", "path", "query", "rid", "client", "if_match", "status", "code", "etag",
                 "problem", "bytes_out")

    def __init__(self, method: str, path: str, query: str, rid: str, client: str | None,
                 if_match: str | None) -> None:
        self.started = time.perf_counter()
        self.method, self.path, self.query, self.rid, self.client = method, path, query, rid, client
        self.if_match = if_match
        self.status: int | None = None
        self.code: str | None = None
        self.etag: str | None = None
        self.problem = False
        self.bytes_out = 0

    def head(self, status: int, content_type: str | None, etag: str | None) -> None:
        self.status = status
        self.problem = content_type is not None and content_type.startswith(PROBLEM_JSON)
        self.etag = etag

    def body(self, chunk: bytes) -> None:
        self.bytes_out += len(chunk)
        if self.problem and self.code is None and chunk:
            self.code = problem_code(chunk)


def problem_code(body: bytes) -> str | None:
    """The ``code`` of a problem+json body (None: none to read)."""
    try:
        code = orjson.loads(body).get("code")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return code if isinstance(code, str) else None


class Observer:
    """The request ids, metrics and access lines of one app (its settings and routes)."""

    def __init__(self, settings: Settings, routes: Routes) -> None:
        self.routes = routes
        self.metrics = settings.metrics
        self.access = settings.access_log
        self.trust_proxy = settings.trust_proxy

    # -- under the ASGI app ------------------------------------------------------------------
    def begin(self, scope: dict[str, Any]) -> Exchange:
        given = if_match = forwarded = None
        for name, value in scope["headers"]:
            if name == HEADER_BYTES:
                given = value.decode("latin-1") if len(value) <= REQUEST_ID_MAX else ""
            elif name == b"if-match":
                if_match = value
            elif name == b"x-forwarded-for" and self.trust_proxy:
                forwarded = value.decode("latin-1")
        client = scope.get("client")
        address = forwarded_address(forwarded) if forwarded else None
        return Exchange(scope["method"], scope["path"], scope["query_string"].decode("latin-1"), request_id(given),
                        address or (client[0] if client else None),
                        if_match.decode("latin-1") if if_match is not None else None)

    def send(self, send: Callable[[dict[str, Any]], Any], exchange: Exchange) -> Callable[[dict[str, Any]], Any]:
        """``send`` that adds the request id to the answer's head and notes what goes out."""
        rid = exchange.rid.encode()

        async def observed(message: dict[str, Any]) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                headers = message["headers"]
                content_type = etag = None
                for name, value in headers:
                    if name == b"content-type":
                        content_type = value.decode("latin-1")
                    elif name == b"etag":
                        etag = value.decode("latin-1")
                exchange.head(message["status"], content_type, etag)
                message = {**message, "headers": [*headers, (HEADER_BYTES, rid)]}
            elif kind == "http.response.body":
                exchange.body(message.get("body", b""))
            await send(message)

        return observed

    # -- the end of every request ------------------------------------------------------------
    def end(self, exchange: Exchange) -> None:
        if not (self.metrics or self.access):
            return
        seconds = time.perf_counter() - exchange.started
        route, params = self.routes.match(exchange.path)
        method = exchange.method if exchange.method in METHODS else OTHER
        status = exchange.status or CLIENT_GONE
        if self.metrics:
            metrics.observe_request(route, method, status, seconds, exchange.code)
            if route == MOVES_ROUTE and method == "POST" and status == 200 and "dry_run" not in exchange.query:
                metrics.observe_move(seconds)
        if self.access:
            fields: dict[str, Any] = {
                "request_id": exchange.rid, "method": exchange.method[:16], "route": route,
                "path": exchange.path[:PATH_SHOWN], "status": status, "code": exchange.code,
                "duration_ms": round(seconds * 1000, 3), "client": exchange.client, "bytes_out": exchange.bytes_out,
            }
            game = params.get("game_id")
            if game is not None:
                fields["game"] = game[:32]
                fields["version"] = _version(exchange.etag) or _version(exchange.if_match)
            if access_log.isEnabledFor(logging.INFO):  # made here: Logger.info would walk the stack for its caller
                access_log.handle(access_log.makeRecord(ACCESS_LOGGER, logging.INFO, __file__, 0, "request", (), None,
                                                        extra={"fields": fields}))


def _version(tag: str | None) -> int | None:
    """The version an ETag or If-Match names (``"17"``; None: none or another form)."""
    if not tag:
        return None
    text = tag.strip().strip('"')
    return int(text) if text.isdigit() and len(text) < 19 else None


# -- under a plain WSGI server ------------------------------------------------------------------
class WsgiObserved:
    """The Flask app's WSGI callable, observed (the outermost layer of ``create_app``)."""

    def __init__(self, app: Callable[..., Iterable[bytes]], observer: Observer) -> None:
        self.app = app
        self.observer = observer

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        rid = environ.get(REQUEST_ID_ENV)
        if rid is not None:  # the ASGI app observes the request: only the logs' request id here
            token = REQUEST_ID.set(rid)
            try:
                return self.app(environ, start_response)
            finally:
                REQUEST_ID.reset(token)
        exchange = self._begin(environ)

        def observed_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            content_type = etag = None
            for name, value in headers:
                low = name.lower()
                if low == "content-type":
                    content_type = value
                elif low == "etag":
                    etag = value
            exchange.head(int(status[:3]), content_type, etag)
            headers = [*headers, (HEADER, exchange.rid)]
            return start_response(status, headers, exc_info)

        token = REQUEST_ID.set(exchange.rid)
        try:
            result = self.app(environ, observed_start)
        except BaseException:
            exchange.status = exchange.status or 500
            self.observer.end(exchange)
            raise
        finally:
            REQUEST_ID.reset(token)
        return _Counted(result, exchange, self.observer)

    def _begin(self, environ: dict[str, Any]) -> Exchange:
        address = environ.get("REMOTE_ADDR")
        if self.observer.trust_proxy:  # as ProxyFix, inside this layer, will read it
            address = forwarded_address(environ.get("HTTP_X_FORWARDED_FOR")) or address
        return Exchange(environ.get("REQUEST_METHOD", "GET"), environ.get("PATH_INFO", ""),
                        environ.get("QUERY_STRING", ""), request_id(environ.get("HTTP_X_REQUEST_ID")), address,
                        environ.get("HTTP_IF_MATCH"))


class _Counted:
    """A WSGI answer's body, counted as it goes out; the request ends when it is read to its
    end or closed (an event stream: when its client goes), whichever comes first."""

    def __init__(self, result: Iterable[bytes], exchange: Exchange, observer: Observer) -> None:
        self.result, self.exchange, self.observer = result, exchange, observer
        self.ended = False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.result:
            self.exchange.body(chunk)
            yield chunk
        self._end()

    def close(self) -> None:
        try:
            close = getattr(self.result, "close", None)
            if close is not None:
                close()
        finally:
            self._end()

    def _end(self) -> None:
        if not self.ended:
            self.ended = True
            self.observer.end(self.exchange)
