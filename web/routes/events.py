"""Events: Server-Sent Events, or a JSON long-poll for clients without SSE.

The checks (game, token, parameters, stream limits) and whatever is there already are
answered here, in a worker thread. The waiting is handed to the process's event hub
(``web/hub.py``) when the server runs the ASGI app (``web/asgi.py``): an open stream then
costs no thread. Under a plain WSGI server (or Flask's test client) this thread waits
itself, reading the game's stream with ``XREAD BLOCK``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, request

import service
from service.config import Settings
from service.store import Snapshot, Store, is_stream_id
from web.http import PRIVATE, REVALIDATE, bearer_token, check_game_id, ctx, json_response
from web.hub import Handoff, Listener, id_key, sse_message
from web.problems import ApiError

bp = Blueprint("events", __name__)

HANDOFF_KEY = "canasta.handoff"  # the ASGI scope's box for a Handoff (web/asgi.py)
SSE_RETRY_MS = 2000  # EventSource reconnects after this
SSE_HEADERS = {"Cache-Control": REVALIDATE, "X-Accel-Buffering": "no"}  # a spectator's stream
POLL_HEADERS = {"Cache-Control": "no-store"}  # a spectator's long-poll
SEAT_SSE_HEADERS = {**SSE_HEADERS, "Cache-Control": PRIVATE}  # a seat's: its hand
SEAT_POLL_HEADERS = {**POLL_HEADERS, "Cache-Control": PRIVATE}


def _poll_headers(seat: int | None) -> dict[str, str]:
    return SEAT_POLL_HEADERS if seat is not None else POLL_HEADERS


def _sse_headers(seat: int | None) -> dict[str, str]:
    return SEAT_SSE_HEADERS if seat is not None else SSE_HEADERS


def _event_id(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if value == "0":
        return "0-0"
    if not is_stream_id(value):
        raise ApiError(400, "invalid_event_id", f"{name} is an event id such as 1718000000000-0.")
    return value


def _wait_arg(limit: float) -> float:
    raw = request.args.get("wait")
    if raw is None:
        return 0.0
    try:
        wait = float(raw)
    except ValueError:
        raise ApiError(400, "invalid_parameter", "wait is a number of seconds.") from None
    if not 0 <= wait <= 60:
        raise ApiError(400, "invalid_parameter", "wait is between 0 and 60 seconds.")
    return min(wait, limit)


@bp.get("/games/<game_id>/events")
def events(game_id: str) -> Response:
    check_game_id(game_id)
    c = ctx()
    token = bearer_token(query=True)
    after = _event_id(request.args.get("after"), "after")
    wait = _wait_arg(c.settings.poll_max_wait)
    if request.method == "HEAD":
        # no body to wait for; the ASGI app hands only a GET to the hub, so a HEAD that waited
        # would hold a Flask thread for its whole wait
        wait = 0.0
    resume = _event_id(request.headers.get("Last-Event-ID"), "Last-Event-ID")
    polling = "after" in request.args or "wait" in request.args
    # every read a poll or a resumed stream needs, in one round trip
    read = c.store.snapshot_after(game_id, after if polling else resume)
    if read.record is None:
        raise ApiError(404, "game_not_found", f"There is no game {game_id!r} (it may have expired).")
    game = service.game_from_record(game_id, read.record)
    seat = service.authenticate(game, token)
    if not polling and "text/event-stream" in request.headers.get("Accept", ""):
        return _sse(c.store, c.settings, game, seat, read, resume, token)
    if after is None or _missed(read.first, after):
        body = {"snapshot": service.game_view(game, seat), "events": [], "last_id": read.last_id}
        return json_response(body, headers=_poll_headers(seat))
    found = read.after
    if found or wait <= 0:
        return _page(found, seat, after)
    version = game.version if after == read.last_id else None  # the version at the cursor, if known
    release = c.stream_limits.acquire(token, request.remote_addr or "unknown")
    box = _handoff_box()
    if box is not None:  # the hub waits; these headers go with its answer
        box["handoff"] = Handoff("poll", Listener(game.id, seat, after, version), wait, 0.0, release)
        return json_response({}, headers=_poll_headers(seat))
    try:
        found = c.store.wait_events(game.id, after, int(wait * 1000))
        if found and version is not None and int(found[0].fields["v"]) != version + 1:
            found = []  # the trim passed the cursor meanwhile: asked again, it gets a snapshot
        return _page(found, seat, after)
    finally:
        release()


def _handoff_box() -> dict[str, Any] | None:
    """Where the ASGI app takes a :class:`Handoff` from; None under a WSGI server."""
    scope = request.environ.get("asgi.scope")
    return scope.get(HANDOFF_KEY) if scope is not None else None


def _page(found: list[Any], seat: int | None, after: str) -> Response:
    rendered = [service.render_event(e.id, e.fields, seat) for e in found]
    return json_response({"events": rendered, "last_id": rendered[-1]["id"] if rendered else after},
                         headers=_poll_headers(seat))


def _missed(first: tuple[str, int] | None, cursor: str) -> bool:
    """Whether events after ``cursor`` were trimmed from the stream (``events_keep``): the
    oldest event held (``first``: its id and version) is not the game's first and is newer
    than the reader's cursor. (A reader whose own last event was trimmed but nothing after
    it may get a snapshot it did not strictly need; a snapshot is always correct.)"""
    return first is not None and first[1] > 1 and id_key(cursor) < id_key(first[0])


def _sse(store: Store, settings: Settings, game: service.Game, seat: int | None, read: Snapshot,
         resume: str | None, token: str | None) -> Response:
    """The stream's first message (``retry``), then a snapshot of the reader's view or the
    events after its Last-Event-ID; then the waiting, by the hub or by this thread. A game
    that is over has nothing to wait for: its stream ends there."""
    head = [f"retry: {SSE_RETRY_MS}\n\n".encode()]
    cursor = resume
    version: int | None = None  # the version at the cursor, if known (web.hub.Listener)
    if cursor is None or _missed(read.first, cursor):
        head.append(sse_message(read.last_id, "snapshot", service.game_view(game, seat)))
        cursor, version = read.last_id, game.version
    else:
        if cursor == read.last_id:
            version = game.version
        for event in read.after:
            body = service.render_event(event.id, event.fields, seat)
            head.append(sse_message(event.id, body["type"], body))
            cursor, version = event.id, int(event.fields["v"])
    headers = _sse_headers(seat)
    if game.status == "over":
        return Response(iter([b"".join(head)]), mimetype="text/event-stream", headers=headers)
    release = ctx().stream_limits.acquire(token, request.remote_addr or "unknown")
    box = _handoff_box()
    if box is not None:
        box["handoff"] = Handoff("sse", Listener(game.id, seat, cursor, version), settings.sse_max_seconds,
                                 settings.sse_ping_seconds, release)
        return Response(iter([b"".join(head)]), mimetype="text/event-stream", headers=headers)
    stream = _sse_in_thread(store, game.id, seat, cursor, version, head, settings)
    response = Response(stream, mimetype="text/event-stream", headers=headers)  # needs no request context
    response.call_on_close(release)
    return response


def _sse_in_thread(store: Store, game_id: str, seat: int | None, cursor: str, version: int | None,
                   head: list[bytes], settings: Settings) -> Iterator[bytes]:
    """The waiting of a stream under a WSGI server: this thread, ``XREAD BLOCK``. The stream
    ends when its next event is not the next version (``version``: at the cursor): a slow
    client fell behind the trim, and resuming from its cursor it gets a snapshot."""
    yield b"".join(head)
    deadline = time.monotonic() + settings.sse_max_seconds
    while (remaining := deadline - time.monotonic()) > 0:
        found = store.wait_events(game_id, cursor, max(1, int(min(settings.sse_ping_seconds, remaining) * 1000)))
        if not found:
            yield b": ping\n\n"
            continue
        over = False
        for event in found:
            if version is not None and int(event.fields["v"]) != version + 1:
                return
            body = service.render_event(event.id, event.fields, seat)
            cursor, version = event.id, int(event.fields["v"])
            over = over or body.get("status") == "over"
            yield sse_message(event.id, body["type"], body)
        if over:
            return

