"""Games: create, read, join a seat, hand a seat to a bot and take it back, move, hint, log."""

from __future__ import annotations

from flask import Blueprint, Response, request, url_for
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

import bots
import service
from service.errors import ServiceError
from web.http import (
    _ETAG_RE,
    PRIVATE,
    LoadedBodies,
    bearer_token,
    bool_arg,
    check_game_id,
    check_seat,
    ctx,
    etag,
    etag_matches,
    idempotency_key,
    if_match_version,
    join_key,
    json_body,
    json_response,
    read_headers,
    request_client,
)
from web.problems import ApiError
from web.schemas import BOTS, BotSchema, CreateGameSchema, JoinSchema, MoveSchema

bp = Blueprint("games", __name__)

_create = CreateGameSchema()
_join = JoinSchema()
_bot = BotSchema()
move_schema = MoveSchema()
move_bodies = LoadedBodies()  # move bodies repeat: each distinct one is validated once (here and on the loop)


@bp.post("/games")
def create_game() -> Response:
    body = json_body(_create)
    c = ctx()
    result, version = service.create_game(c.store, c.settings, body, client=request_client())
    location = url_for("games.get_game", game_id=result["id"])
    return json_response(result, 201, {"Location": location, "ETag": etag(version), "Cache-Control": PRIVATE})


@bp.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    check_game_id(game_id)
    token = bearer_token()
    game = service.load_game(ctx().store, game_id)
    seat = service.authenticate(game, token)
    headers = dict(read_headers(game.version, seat))
    if etag_matches(request.environ.get("HTTP_IF_NONE_MATCH"), game.version):
        # the reader's view at a version never changes: a poller holding it gets 304
        return Response(status=304, headers=headers)
    return json_response(service.game_view(game, seat, with_rules=True), headers=headers)


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
    check_game_id(game_id)
    token = bearer_token()
    if token is None:
        raise ApiError(401, "missing_token", "A move needs the bearer token of the seat that moves.",
                       headers={"WWW-Authenticate": "Bearer"})
    cached = _cached_for_move(game_id)
    if cached is not None:
        # This process has seen the game at the version the mover names: skip the read.
        # The compare-and-set still checks that version; an error or a stale version is
        # answered from a fresh read instead, exactly as without the cache.
        try:
            return _post_move(game_id, token, cached)
        except (ServiceError, ApiError, ValidationError, HTTPException, _AskAgain):
            pass
    return _post_move(game_id, token, None)


class _AskAgain(Exception):
    """The cached try did not end in a fresh commit: answer from a fresh read."""


def _cached_for_move(game_id: str) -> service.Game | None:
    """The cached game at the version of a plain ``If-Match: "N"`` (not for dry runs)."""
    environ = request.environ
    header = environ.get("HTTP_IF_MATCH")
    if header is None or (environ.get("QUERY_STRING") and "dry_run" in request.args):
        return None
    m = _ETAG_RE.match(header.strip())
    return service.cached_game(game_id, int(m.group(1))) if m else None


def _post_move(game_id: str, token: str, cached: service.Game | None) -> Response:
    c = ctx()
    game = cached if cached is not None else service.load_game(c.store, game_id)
    seat = service.authenticate(game, token)
    assert seat is not None
    dry_run = bool_arg("dry_run")
    body = json_body(move_schema, move_bodies)
    expected = if_match_version(game.version)
    move = service.MoveRequest(game_id, seat, body["action"], expected, idempotency_key(), dry_run)
    result = service.apply_move(c.store, c.settings, move, game=game)
    if cached is not None and result.replayed:
        raise _AskAgain
    return json_response(result.body, headers=_answer_headers(result))


def _answer_headers(result: service.MoveResult) -> dict[str, str]:
    """A change's answer: its version, never stored by a cache (it holds a token or the
    mover's hand), and whether it is a key's stored answer given again."""
    headers = {"ETag": etag(result.version), "Cache-Control": PRIVATE}
    if result.replayed:
        headers["Idempotent-Replayed"] = "true"
    return headers


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
