"""Request hooks: rate limits (Redis counters) and CORS."""

from __future__ import annotations

import hashlib
import logging
import math

from flask import Flask, Response, request

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
ALLOW_HEADERS = "Authorization, Content-Type, If-Match, Idempotency-Key, Last-Event-ID"
EXPOSE_HEADERS = "ETag, Location, Retry-After, Idempotent-Replayed"
ALLOW_METHODS = "GET, POST, OPTIONS"


def _origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    return bool(origin) and ("*" in allowed or origin in allowed)


def _rate_limit() -> Response | None:
    c = ctx()
    s = c.settings
    if not s.rate_limit_enabled or request.method == "OPTIONS" or request.endpoint in _EXEMPT:
        return None
    counters: list[tuple[str, str, int]] = []
    if s.rate_limit_per_address > 0:
        counters.append(("addr", request.remote_addr or "unknown", s.rate_limit_per_address))
    header = request.headers.get("Authorization", "")
    if s.rate_limit_per_token > 0 and header[:7].lower() == "bearer " and header[7:].strip():
        ident = hashlib.sha256(header[7:].strip().encode("utf-8", "surrogatepass")).hexdigest()[:32]
        counters.append(("tok", ident, s.rate_limit_per_token))
    try:
        wait_ms = c.store.rate_limit(counters, s.rate_limit_window)
    except Exception:  # noqa: BLE001 - a limiter that cannot count lets requests through
        log.warning("rate limiter unavailable", exc_info=True)
        return None
    if wait_ms <= 0:
        return None
    retry = max(1, math.ceil(wait_ms / 1000))
    return problem_response(ApiError(429, "rate_limited", f"Too many requests; retry in {retry} s.",
                                     headers={"Retry-After": str(retry)}))


def _unknown_query() -> Response | None:
    if not request.query_string:  # no parameters: none unknown (and no parsing)
        return None
    if request.method == "OPTIONS" or request.endpoint is None or request.endpoint in _EXEMPT:
        return None
    unknown = sorted(set(request.args) - QUERY_PARAMS.get(request.endpoint, frozenset()))
    if not unknown:
        return None
    names = ", ".join(repr(u[:40]) for u in unknown[:5])
    return problem_response(ApiError(400, "unknown_parameter", f"Unknown query parameter(s): {names}."))


def _preflight() -> Response | None:
    if request.method != "OPTIONS" or "Access-Control-Request-Method" not in request.headers:
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
    @app.before_request
    def _before() -> Response | None:
        return _preflight() or _rate_limit() or _unknown_query()

    @app.after_request
    def _cors(resp: Response) -> Response:
        allowed = ctx().settings.cors_origins
        if not allowed:  # no origin is allowed: nothing to add
            return resp
        origin = request.headers.get("Origin")
        if _origin_allowed(origin, allowed):
            resp.headers["Access-Control-Allow-Origin"] = "*" if "*" in allowed else origin  # type: ignore[assignment]
            resp.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
            if "*" not in allowed:
                resp.vary.add("Origin")
        return resp
