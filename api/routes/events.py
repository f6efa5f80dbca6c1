"""Events: Server-Sent Events, or a JSON long-poll for clients without SSE."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import orjson
from flask import Blueprint, Response, request, stream_with_context

from api import service
from api.errors import ApiError
from api.http import bearer_token, check_game_id, ctx, json_response
from api.store import Store, is_stream_id

bp = Blueprint("events", __name__)


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
    resume = _event_id(request.headers.get("Last-Event-ID"), "Last-Event-ID")
    record, last_id = c.store.snapshot(game_id)
    if record is None:
        raise ApiError(404, "game_not_found", f"There is no game {game_id!r} (it may have expired).")
    game = service.game_from_record(game_id, record)
    seat = service.authenticate(game, token)
    polling = "after" in request.args or "wait" in request.args
    if not polling and "text/event-stream" in request.headers.get("Accept", ""):
        if not c.event_readers.acquire(blocking=False):
            # A browser's EventSource gives up for good on any status but 200, so a stream
            # past the cap is not refused: it brings the reader up to date and ends, and the
            # reader comes back after ``retry`` (with Last-Event-ID) to try for a slot.
            return _sse_catch_up(c.store, game, seat, last_id, resume)
        try:
            return _sse(c.store, game, seat, last_id, resume, c.settings.sse_ping_seconds,
                        c.settings.sse_max_seconds, c.event_readers)
        except BaseException:
            c.event_readers.release()
            raise
    if after is None or wait <= 0:
        return _poll(c.store, game, seat, last_id, after, wait)
    _take_reader_slot(c.event_readers)
    try:
        return _poll(c.store, game, seat, last_id, after, wait)
    finally:
        c.event_readers.release()


def _take_reader_slot(readers: threading.BoundedSemaphore) -> None:
    """An open stream or a waiting poll holds one of the server's threads until it ends; past
    ``max_event_readers`` of them a reader is told to come back, so that moves always find a
    thread (instead of everyone waiting behind the readers)."""
    if not readers.acquire(blocking=False):
        raise ApiError(503, "event_readers_busy",
                       "This server holds as many open event readers as it may; retry shortly "
                       "(or poll without waiting).", headers={"Retry-After": "5"})


def _id_key(event_id: str) -> tuple[int, int]:
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq or 0)


def _missed(store: Store, game_id: str, cursor: str) -> bool:
    """Whether events after ``cursor`` were trimmed from the stream (``events_keep``): the
    oldest event held is not the game's first and is newer than the reader's cursor. (A
    reader whose own last event was trimmed but nothing after it may get a snapshot it did
    not strictly need; a snapshot is always correct.)"""
    first = store.first_event(game_id)
    return first is not None and first[1] > 1 and _id_key(cursor) < _id_key(first[0])


def _poll(store: Store, game: service.Game, seat: int | None, last_id: str, after: str | None, wait: float) -> Response:
    headers = {"Cache-Control": "no-store"}
    if after is None or _missed(store, game.id, after):
        body = {"snapshot": service.game_view(game, seat), "events": [], "last_id": last_id}
        return json_response(body, headers=headers)
    found = store.wait_events(game.id, after, int(wait * 1000))
    rendered = [service.render_event(e.id, e.fields, seat) for e in found]
    return json_response({"events": rendered, "last_id": rendered[-1]["id"] if rendered else after},
                         headers=headers)


def _sse_message(event_id: str, kind: str, data: object) -> str:
    return f"id: {event_id}\nevent: {kind}\ndata: {orjson.dumps(data).decode()}\n\n"


CATCH_UP_RETRY_MS = 5000


def _sse_catch_up(store: Store, game: service.Game, seat: int | None, last_id: str, resume: str | None) -> Response:
    """A stream that does not wait: what the reader missed (a snapshot, or the events after
    its Last-Event-ID), then the end, with a longer ``retry``. Holds no reader slot."""
    messages = [f"retry: {CATCH_UP_RETRY_MS}\n\n"]
    if resume is None or _missed(store, game.id, resume):
        messages.append(_sse_message(last_id, "snapshot", service.game_view(game, seat)))
    else:
        for event in store.events_after(game.id, resume):
            body = service.render_event(event.id, event.fields, seat)
            messages.append(_sse_message(event.id, body["type"], body))
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response("".join(messages), mimetype="text/event-stream", headers=headers)


def _sse(store: Store, game: service.Game, seat: int | None, last_id: str, resume: str | None,
         ping: float, max_seconds: float, readers: threading.BoundedSemaphore) -> Response:
    """The stream; its reader slot is given back when the server closes the response,
    however the stream ended (done, timed out, or the client went away)."""

    def stream() -> Iterator[str]:
        deadline = time.monotonic() + max_seconds
        cursor = resume
        over = game.status == "over"
        yield "retry: 2000\n\n"
        if cursor is None or _missed(store, game.id, cursor):
            snapshot = service.game_view(game, seat)
            yield _sse_message(last_id, "snapshot", snapshot)
            cursor = last_id
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if over:
                found = store.events_after(game.id, cursor)
                if not found:
                    return
            else:
                found = store.wait_events(game.id, cursor, max(1, int(min(ping, remaining) * 1000)))
            if not found:
                yield ": ping\n\n"
                continue
            for event in found:
                body = service.render_event(event.id, event.fields, seat)
                cursor = event.id
                over = over or body.get("status") == "over"
                yield _sse_message(event.id, body["type"], body)

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    response = Response(stream_with_context(stream()), mimetype="text/event-stream", headers=headers)
    response.call_on_close(readers.release)
    return response
