"""Rules, bots, health, readiness and the OpenAPI document."""

from __future__ import annotations

import importlib.resources

from flask import Blueprint, Response, request

import bots
import engine
from engine.text import quote
from service import botqueue, metrics
from web.http import ascii_number, ctx, json_response
from web.problems import ApiError

bp = Blueprint("meta", __name__)


def openapi_text() -> bytes:
    return importlib.resources.files("web").joinpath("openapi.yaml").read_bytes()


@bp.get("/rules")
def list_rules() -> Response:
    return json_response({"presets": engine.preset_summary()})


@bp.get("/rules/<preset>")
def get_rules(preset: str) -> Response:
    summary = {p["name"]: p for p in engine.preset_summary()}
    if preset not in summary:
        raise ApiError(404, "preset_not_found", f"There is no preset {quote(preset)}.")
    raw = request.args.get("players")
    players = None
    if raw is not None:
        if not ascii_number(raw) or len(raw) > 2:
            raise ApiError(400, "invalid_parameter", "players is a whole number.")
        players = int(raw)
    try:
        rules = engine.resolve(preset, players)
    except engine.RulesError as e:
        raise ApiError(422, "invalid_rules", str(e)) from None
    return json_response({**summary[preset], "rules": rules.to_dict()})


@bp.get("/bots")
def list_bots() -> Response:
    """The bot levels, weakest first, each with a sentence, and the budget a seat may set."""
    low, high = bots.BUDGET_LIMITS_MS
    default = ctx().settings.bot_budget_ms
    levels = [
        {"name": name, "description": bots.LEVELS[name], "default": name == bots.DEFAULT_BOT,
         "budget_ms": {"default": default, "min": low, "max": high} if name in bots.BUDGETED else None}
        for name in bots.NAMES
    ]
    return json_response({"bots": levels})


@bp.get("/healthz")
def healthz() -> Response:
    failures = ctx().rate_limiter_failures.value
    return json_response({"status": "ok", "rate_limiter_failures": failures}, headers={"Cache-Control": "no-store"})


@bp.get("/readyz")
def readyz() -> Response:
    try:
        ctx().store.ping()
    except Exception:  # noqa: BLE001 - any failure means not ready
        raise ApiError(503, "redis_unavailable", "Redis does not answer.") from None
    return json_response({"status": "ready"}, headers={"Cache-Control": "no-store"})


@bp.get("/openapi.yaml")
def openapi() -> Response:
    return Response(openapi_text(), mimetype="application/yaml")


@bp.get("/metrics")
def get_metrics() -> Response:
    """Prometheus text: every process's metrics on this box and the bot queue's depth. Who may
    read it: :func:`service.metrics.refusal` (a token, else loopback only)."""
    c = ctx()
    environ = request.environ
    forwarded = not c.settings.trust_proxy and any(name in environ for name in metrics.FORWARDING_HEADERS)
    refused = metrics.refusal(c.settings.metrics_token, request.remote_addr, request.headers.get("Authorization"),
                              forwarded)
    if refused is not None:
        status, code, detail = refused
        raise ApiError(status, code, detail, headers={"WWW-Authenticate": "Bearer"} if status == 401 else None)
    lanes = botqueue.lane_keys(botqueue.config_for(c.store.keys.prefix))
    body = metrics.exposition([metrics.QueueDepth(c.store.queue, lanes, "api")])
    return Response(body, content_type=metrics.CONTENT_TYPE, headers={"Cache-Control": "no-store"})
