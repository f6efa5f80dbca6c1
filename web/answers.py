"""The answers to the two requests players make most, each written once: a move (``POST
/games/{id}/moves``, :func:`move`) and a read of a game (``GET /games/{id}``, :func:`read`).

Each is a generator of steps (:mod:`service.steps`): it reads the request through
:class:`Asked`, asks for the game and the compare-and-set as steps, and returns the
:class:`Reply`. Two drivers run it. Flask's routes (:mod:`web.routes.games`) run it in a
thread with the blocking Redis client and turn what it raises into problem+json. Under
granian the event loop runs it first (:mod:`web.loop_routes`), over one pipelined Redis
connection for the whole process; the loop hands the request to Flask, before anything of
it was written, when the answer is a refusal or a step it cannot take, and Flask runs the
same generator again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from marshmallow import Schema, ValidationError
from werkzeug.exceptions import HTTPException

import service
from service.config import Settings
from service.errors import ServiceError
from service.steps import Steps
from web.http import (
    _ETAG_RE,
    PRIVATE,
    LoadedBodies,
    bearer_of,
    bool_of,
    check_game_id,
    etag,
    etag_matches,
    idempotency_key_of,
    if_match_of,
    read_headers,
)
from web.problems import ApiError
from web.schemas import MoveSchema

move_schema = MoveSchema()
move_bodies = LoadedBodies()  # move bodies repeat: each distinct one is validated once

AUTHORIZATION = "HTTP_AUTHORIZATION"
IF_MATCH = "HTTP_IF_MATCH"
IF_NONE_MATCH = "HTTP_IF_NONE_MATCH"
IDEMPOTENCY_KEY = "HTTP_IDEMPOTENCY_KEY"


class Asked(NamedTuple):
    """What these answers read of a request, whichever interface it came by: the headers by
    their WSGI names (``HTTP_IF_MATCH``, ...), the query's arguments, and the body loaded by
    a schema (Flask reads it through Werkzeug; the loop takes only a plain JSON body that it
    already holds)."""

    game_id: str
    headers: Mapping[str, str]
    args: Mapping[str, str]
    body: Callable[[Schema, LoadedBodies | None], dict[str, Any]]


class Reply(NamedTuple):
    """An answer: its status, headers and JSON body (None: no body, a 304)."""

    status: int
    headers: list[tuple[str, str]]
    body: Any = None
    replayed: bool = False


def move(settings: Settings, asked: Asked) -> Steps[Reply]:
    """``POST /games/{id}/moves``: judge the move and apply it in one compare-and-set, or
    raise the refusal.

    A game this process has seen at the version ``If-Match`` names is used without reading
    it (the compare-and-set still checks that version); an error, or an answer replayed
    from the cached game, is answered from a fresh read instead, exactly as without it."""
    check_game_id(asked.game_id)
    token = bearer_of(asked.headers.get(AUTHORIZATION))
    if token is None:
        raise ApiError(401, "missing_token", "A move needs the bearer token of the seat that moves.",
                       headers={"WWW-Authenticate": "Bearer"})
    cached = _cached_for_move(asked)
    if cached is not None:
        try:
            reply = yield from _move(settings, asked, token, cached)
            if not reply.replayed:
                return reply
        except (ServiceError, ApiError, ValidationError, HTTPException):
            pass
    game = yield from service.loaded(asked.game_id)
    return (yield from _move(settings, asked, token, game))


def _cached_for_move(asked: Asked) -> service.Game | None:
    """The cached game at the version of a plain ``If-Match: "N"`` (not for dry runs)."""
    header = asked.headers.get(IF_MATCH)
    if header is None or "dry_run" in asked.args:
        return None
    m = _ETAG_RE.match(header.strip())
    return service.cached_game(asked.game_id, int(m.group(1))) if m else None


def _move(settings: Settings, asked: Asked, token: str, game: service.Game) -> Steps[Reply]:
    seat = service.authenticate(game, token)
    assert seat is not None
    dry_run = bool_of(asked.args, "dry_run")
    action = asked.body(move_schema, move_bodies)["action"]
    expected = if_match_of(asked.headers.get(IF_MATCH), game.version)
    key = idempotency_key_of(asked.headers.get(IDEMPOTENCY_KEY))
    move = service.MoveRequest(asked.game_id, seat, action, expected, key, dry_run)
    result = yield from service.move_steps(settings, move, game)
    return Reply(200, change_headers(result), result.body, replayed=result.replayed)


def change_headers(result: service.MoveResult) -> list[tuple[str, str]]:
    """A change's answer: its version, never stored by a cache (it holds a token or the
    mover's hand), and whether it is a key's stored answer given again."""
    headers = [("ETag", etag(result.version)), ("Cache-Control", PRIVATE)]
    if result.replayed:
        headers.append(("Idempotent-Replayed", "true"))
    return headers


def read(asked: Asked) -> Steps[Reply]:
    """``GET /games/{id}``: the reader's view (a seat's with its token, else a spectator's),
    or 304 while ``If-None-Match`` names the current version (the view of a reader at a
    version never changes)."""
    check_game_id(asked.game_id)
    token = bearer_of(asked.headers.get(AUTHORIZATION))
    game = yield from service.loaded(asked.game_id)
    seat = service.authenticate(game, token)
    headers = read_headers(game.version, seat)
    if etag_matches(asked.headers.get(IF_NONE_MATCH), game.version):
        return Reply(304, headers)
    return Reply(200, headers, service.game_view(game, seat, with_rules=True))
