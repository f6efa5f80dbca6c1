"""Games: create, read, join a seat, hand a seat to a bot and take it back, move, hint, log."""

from __future__ import annotations

from flask import Blueprint, Response, request, url_for

import bots
import service
from service.steps import run
from web import answers
from web.http import (
    PRIVATE,
    bearer_token,
    check_game_id,
    check_seat,
    ctx,
    etag,
    join_key,
    json_body,
    json_response,
    request_client,
)
from web.problems import ApiError
from web.schemas import BOTS, BotSchema, CreateGameSchema, JoinSchema

bp = Blueprint("games", __name__)

_create = CreateGameSchema()
_join = JoinSchema()
_bot = BotSchema()


@bp.post("/games")
def create_game() -> Response:
    body = json_body(_create)
    c = ctx()
    result, version = service.create_game(c.store, c.settings, body, client=request_client())
    location = url_for("games.get_game", game_id=result["id"])
    return json_response(result, 201, {"Location": location, "ETag": etag(version), "Cache-Control": PRIVATE})


@bp.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    """The one implementation is :func:`web.answers.read` (the event loop runs it too)."""
    return _respond(run(ctx().store, answers.read(_asked(game_id))))


@bp.post("/games/<game_id>/seats/<int:seat>")
def join_seat(game_id: str, seat: int) -> Response:
    check_game_id(game_id)
    check_seat(seat)
    body = json_body(_join)
    c = ctx()
    result = service.join_seat(c.store, c.settings, game_id, seat, body["name"], join_key())
    return json_response(result.body, headers=_answer_headers(result))


@bp.post("/games/<game_id>/seats/<int:seat>/bot")
def seat_to_bot(game_id: str, seat: int) -> Response:
    check_game_id(game_id)
    check_seat(seat)
    token = bearer_token()
    body = json_body(_bot)
    c = ctx()
    view, version = service.assign_bot(c.store, c.settings, game_id, seat, body["bot"], token, body.get("budget_ms"))
    return json_response(view, headers={"ETag": etag(version), "Cache-Control": PRIVATE})


@bp.delete("/games/<game_id>/seats/<int:seat>/bot")
def seat_from_bot(game_id: str, seat: int) -> Response:
    check_game_id(game_id)
    check_seat(seat)
    token = bearer_token()
    c = ctx()
    view, version = service.take_seat_back(c.store, c.settings, game_id, seat, token)
    return json_response(view, headers={"ETag": etag(version), "Cache-Control": PRIVATE})


@bp.post("/games/<game_id>/moves")
def post_move(game_id: str) -> Response:
    """The one implementation is :func:`web.answers.move` (the event loop runs it too)."""
    c = ctx()
    return _respond(run(c.store, answers.move(c.settings, _asked(game_id))))


NO_ARGS: dict[str, str] = {}


def _asked(game_id: str) -> answers.Asked:
    """The request as :mod:`web.answers` reads it (the body through Werkzeug: size limits,
    chunked bodies, media types)."""
    environ = request.environ
    return answers.Asked(game_id, environ, request.args if environ.get("QUERY_STRING") else NO_ARGS, json_body)


def _respond(reply: answers.Reply) -> Response:
    if reply.body is None:
        return Response(status=reply.status, headers=reply.headers)
    return json_response(reply.body, reply.status, dict(reply.headers))


def _answer_headers(result: service.MoveResult) -> dict[str, str]:
    return dict(answers.change_headers(result))


@bp.get("/games/<game_id>/hint")
def get_hint(game_id: str) -> Response:
    check_game_id(game_id)
    token = bearer_token()
    bot = request.args.get("bot", bots.DEFAULT_BOT)
    if bot not in BOTS:
        raise ApiError(400, "invalid_parameter", f"bot is one of {', '.join(BOTS)}.")
    c = ctx()
    result = service.hint(c.store, c.settings, game_id, token, bot)
    return json_response(result, headers={"Cache-Control": PRIVATE})


@bp.get("/games/<game_id>/log")
def get_log(game_id: str) -> Response:
    check_game_id(game_id)
    lines = service.read_log(ctx().store, game_id)
    body = b"".join(line + b"\n" for line in lines)
    return Response(body, mimetype="application/x-ndjson",
                    headers={"Content-Disposition": f'attachment; filename="{game_id}.jsonl"'})
