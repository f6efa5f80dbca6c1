"""Request hooks: rate limits (Redis counters) and CORS."""

from __future__ import annotations

import hashlib
import logging
import math

from flask import Flask, Response, request

from api.config import Settings
from api.errors import ApiError, problem_response
from api.http import ctx

log = logging.getLogger("canasta.api")

_EXEMPT = {"meta.healthz", "meta.readyz", "meta.openapi"}
# the query parameters each endpoint takes; any other is refused (400 unknown_parameter)
QUERY_PARAMS: dict[str, frozenset[str]] = {
    "games.post_move": frozenset({"dry_run"}),
    "games.get_hint": frozenset({"bot"}),
    "events.events": frozenset({"after", "wait", "access_token"}),
    "meta.get_rules": frozenset({"players"}),
}
# pages for people take any query: a link to the web table shared in a chat app comes back
# with tracking parameters (?fbclid=...), and must still open
ANY_QUERY = frozenset({"web.table", "static"})
ALLOW_HEADERS = "Authorization, Content-Type, If-Match, Idempotency-Key, Last-Event-ID"
EXPOSE_HEADERS = "ETag, Location, Retry-After, Idempotent-Replayed"
ALLOW_METHODS = "GET, POST, DELETE, OPTIONS"
BEARER = "bearer "  # the Authorization scheme of a token, lower-cased
TOKEN_IDENT_HEX = 32  # hex digits of a token's hash that name its rate-limit counters
NAMES_SHOWN, NAME_SHOWN = 5, 40  # unknown query parameters named in the error, and their length


def _origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    return bool(origin) and ("*" in allowed or origin in allowed)


def _rate_limit() -> Response | None:
    c = ctx()
    s = c.settings
    if request.method == "OPTIONS" or request.endpoint in _EXEMPT:
        return None
    counters: list[tuple[str, str, int]] = []
    if s.rate_limit_per_address > 0:
        counters.append(("addr", request.remote_addr or "unknown", s.rate_limit_per_address))
    header = request.headers.get("Authorization", "")
    token = header[len(BEARER):].strip()
    if header[:len(BEARER)].lower() == BEARER and token:
        hints = s.rate_limit_hints_per_token if request.endpoint == "games.get_hint" else 0
        if s.rate_limit_per_token > 0 or hints > 0:
            ident = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:TOKEN_IDENT_HEX]
            if s.rate_limit_per_token > 0:
                counters.append(("tok", ident, s.rate_limit_per_token))
            if hints > 0:  # hints may run a search: their own, lower limit
                counters.append(("hint", ident, hints))
    try:
        wait_ms = c.store.rate_limit(counters, s.rate_limit_window)
    except Exception:  # noqa: BLE001 - a limiter that cannot count lets requests through: logged, counted
        failures = c.rate_limiter_failures.add()
        log.warning("rate limiter failed (%d failures in this process; GET /healthz shows them); the request "
                    "goes through uncounted", failures, exc_info=True)
        return None
    if wait_ms <= 0:
        return None
    retry = max(1, math.ceil(wait_ms / 1000))
    return problem_response(ApiError(429, "rate_limited", f"Too many requests; retry in {retry} s.",
                                     headers={"Retry-After": str(retry)}))


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
    limited = settings.rate_limit_enabled and (settings.rate_limit_per_address > 0 or settings.rate_limit_per_token > 0
                                               or settings.rate_limit_hints_per_token > 0)

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
        if _origin_allowed(origin, allowed):
            resp.headers["Access-Control-Allow-Origin"] = "*" if "*" in allowed else origin
            resp.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
            if "*" not in allowed:
                resp.vary.add("Origin")
        return resp
