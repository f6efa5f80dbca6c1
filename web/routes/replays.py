"""Replays: a game log turned into the positions a viewer steps through (``POST /replay``)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from replay.frames import BadLog, frames_of
from web.http import json_response, raw_body
from web.problems import ApiError

bp = Blueprint("replays", __name__)

LOG_TYPES = ("application/x-ndjson", "application/jsonl")


@bp.post("/replay")
def replay() -> Response:
    if request.mimetype not in LOG_TYPES:
        raise ApiError(415, "unsupported_media_type",
                       "Send the game log (canasta-log/1, JSON Lines) as application/x-ndjson.")
    try:
        frames = frames_of(raw_body())
    except BadLog as e:
        where: dict[str, Any] = {k: v for k, v in (("line", e.line), ("move", e.move)) if v is not None}
        raise ApiError(422, e.code, e.describe(), title="The game log cannot be replayed", **where) from None
    return json_response(frames.to_json(), headers={"Cache-Control": "no-store"})
