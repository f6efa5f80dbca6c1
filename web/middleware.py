"""Request hooks: rate limits (Redis counters) and CORS."""

from __future__ import annotations

import hashlib
import logging
import math

from flask import Flask, Response, request
from werkzeug.http import parse_list_header

from service import metrics
from service.config import Settings
from web.http import ACCESS_TOKEN, FailureCount, ctx, query_token
from web.problems import ApiError, problem_response

log = logging.getLogger("canasta.api")

_EXEMPT = {"meta.healthz", "meta.readyz", "meta.openapi", "meta.get_metrics"}
# the query parameters each endpoint takes; any other is refused (400 unknown_parameter)
QUERY_PARAMS: dict[str, frozenset[str]] = {
    "games.post_move": frozenset({"dry_run"}),
    "games.get_hint": frozenset({"bot"}),
    "events.events": frozenset({"after", "wait", ACCESS_TOKEN}),
    "meta.get_rules": frozenset({"players"}),
}
# pages for people take any query: a link to the web table shared in a chat app comes back
# with tracking parameters (?fbclid=...), and must still open
ANY_QUERY = frozenset({"web.table", "static"})
# endpoints that take the token in ``?access_token=`` too (EventSource sends no headers): it is
# counted on that token's limit as if sent in Authorization
QUERY_TOKEN = frozenset(e for e, names in QUERY_PARAMS.items() if ACCESS_TOKEN in names)
REPLAY_ENDPOINT = "replays.replay"  # POST /replay: a whole game through the engine, its own limit
ALLOW_HEADERS = "Authorization, Content-Type, If-Match, Idempotency-Key, Last-Event-ID, X-Api-Key"
EXPOSE_HEADERS = "ETag, Location, Retry-After, Idempotent-Replayed"
ALLOW_METHODS = "GET, POST, DELETE, OPTIONS"
BEARER = "bearer "  # the Authorization scheme of a token, lower-cased
TOKEN_IDENT_HEX = 32  # hex digits of a token's hash that name its rate-limit counters
NAMES_SHOWN, NAME_SHOWN = 5, 40  # unknown query parameters named in the error, and their length


# the WSGI environ key under which the event loop (web.loop_routes) hands Flask a request it
# has counted already: the ms to wait (0: within the limits). No header can set it (those
# are HTTP_*), and Flask then answers the limit without counting the request twice.
COUNTED = "canasta.rate_limit_wait_ms"


def _origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    return bool(origin) and ("*" in allowed or origin in allowed)


def limiter_on(settings: Settings) -> bool:
    """Whether requests are counted at all (any limit set and the limiter enabled)."""
    return settings.rate_limit_enabled and (settings.rate_limit_per_address > 0 or settings.rate_limit_per_token > 0
                                            or settings.rate_limit_hints_per_token > 0
                                            or settings.rate_limit_replays_per_address > 0)


def rate_counters(settings: Settings, address: str | None, authorization: str | None,
                  endpoint: str | None) -> list[tuple[str, str, int]]:
    """The counters one request counts on: (kind, identity, limit) for its client address (and
    replays' own) and, with a bearer token, the token (and hints' own)."""
    s = settings
    counters: list[tuple[str, str, int]] = []
    if s.rate_limit_per_address > 0:
        counters.append(("addr", address or "unknown", s.rate_limit_per_address))
    if endpoint == REPLAY_ENDPOINT and s.rate_limit_replays_per_address > 0:
        counters.append(("replay", address or "unknown", s.rate_limit_replays_per_address))
    header = authorization or ""
    token = header[len(BEARER):].strip()
    if header[:len(BEARER)].lower() == BEARER and token:
        hints = s.rate_limit_hints_per_token if endpoint == "games.get_hint" else 0
        if s.rate_limit_per_token > 0 or hints > 0:
            ident = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:TOKEN_IDENT_HEX]
            if s.rate_limit_per_token > 0:
                counters.append(("tok", ident, s.rate_limit_per_token))
            if hints > 0:  # hints may run a search: their own, lower limit
                counters.append(("hint", ident, hints))
    return counters


def limiter_failed(failures: FailureCount) -> None:
    """A limiter that cannot count lets the request through: logged, and counted for /healthz."""
    count = failures.add()
    metrics.count_redis_error("api")
    log.warning("rate limiter failed (%d failures in this process; GET /healthz shows them); the request "
                "goes through uncounted", count, exc_info=True)


def forwarded_address(header: str | None) -> str | None:
    """The client address a trusted proxy names (``CANASTA_TRUST_PROXY``): the last
    ``X-Forwarded-For`` entry, as Werkzeug's ``ProxyFix(x_for=1)`` reads it (None: none)."""
    if not header:
        return None
    values = parse_list_header(header)
    return (values[-1] or None) if values else None


def cors_headers(allowed: tuple[str, ...], origin: str | None) -> list[tuple[str, str]]:
    """The CORS headers of an answer to ``origin`` (none when it is not allowed)."""
    if not _origin_allowed(origin, allowed):
        return []
    return [("Access-Control-Allow-Origin", "*" if "*" in allowed else str(origin)),
            ("Access-Control-Expose-Headers", EXPOSE_HEADERS)]


def vary_origin(allowed: tuple[str, ...], origin: str | None) -> bool:
    """Whether an answer to ``origin`` varies by it (an allowed origin, named rather than ``*``)."""
    return _origin_allowed(origin, allowed) and "*" not in allowed


def _rate_limit() -> Response | None:
    c = ctx()
    s = c.settings
    if request.method == "OPTIONS" or request.endpoint in _EXEMPT:
        return None
    wait_ms = request.environ.get(COUNTED)
    if wait_ms is None:
        counters = rate_counters(s, request.remote_addr, _authorization(), request.endpoint)
        try:
            wait_ms = c.store.rate_limit(counters, s.rate_limit_window)
        except Exception:  # noqa: BLE001 - a limiter that cannot count lets requests through: logged, counted
            limiter_failed(c.rate_limiter_failures)
            return None
    if wait_ms <= 0:
        return None
    retry = max(1, math.ceil(wait_ms / 1000))
    return problem_response(ApiError(429, "rate_limited", f"Too many requests; retry in {retry} s.",
                                     headers={"Retry-After": str(retry)}))


def _authorization() -> str | None:
    """The request's bearer token as an ``Authorization`` value, for its counters: the header,
    else an ``access_token`` where the endpoint takes one (the route refuses both at once)."""
    header = request.headers.get("Authorization")
    if header is None and request.endpoint in QUERY_TOKEN:
        token = query_token()
        if token:
            return BEARER + token
    return header


def _unknown_query() -> Response | None:
    if request.method == "OPTIONS" or request.endpoint is None or request.endpoint in _EXEMPT:
        return None
    if request.endpoint in ANY_QUERY:
        return None
    unknown = sorted(set(request.args) - QUERY_PARAMS.get(request.endpoint, frozenset()))
    if not unknown:
        return None
    names = ", ".join(repr(u[:NAME_SHOWN]) for u in unknown[:NAMES_SHOWN])
    return problem_response(ApiError(400, "unknown_parameter", f"Unknown query parameter(s): {names}."))


def _preflight() -> Response | None:
    if "HTTP_ACCESS_CONTROL_REQUEST_METHOD" not in request.environ:
        return None
    resp = Response(status=204)
    allowed = ctx().settings.cors_origins
    origin = request.headers.get("Origin")
    if _origin_allowed(origin, allowed):
        resp.headers["Access-Control-Allow-Methods"] = ALLOW_METHODS
        resp.headers["Access-Control-Allow-Headers"] = ALLOW_HEADERS
        resp.headers["Access-Control-Max-Age"] = "600"
    return resp


def register(app: Flask) -> None:
    """Install the hooks this app's settings need, and only those: every request pays for
    each hook, and most deployments run without a limiter or without CORS."""
    settings: Settings = app.extensions["canasta"].settings
    limited = limiter_on(settings)

    @app.before_request
    def _before() -> Response | None:
        environ = request.environ
        if environ["REQUEST_METHOD"] == "OPTIONS" and (answer := _preflight()) is not None:
            return answer
        if limited and (answer := _rate_limit()) is not None:
            return answer
        if environ.get("QUERY_STRING"):  # no parameters: none unknown (and no parsing)
            return _unknown_query()
        return None

    if not settings.cors_origins:  # no origin is allowed: no CORS headers to add
        return

    @app.after_request
    def _cors(resp: Response) -> Response:
        allowed = settings.cors_origins
        origin = request.environ.get("HTTP_ORIGIN")
        for name, value in cors_headers(allowed, origin):
            resp.headers[name] = value
        if vary_origin(allowed, origin):
            resp.vary.add("Origin")
        return resp
