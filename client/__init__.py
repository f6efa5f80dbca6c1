"""The Python client of the Canasta API: one object per server, one per seat.

    from client import Client

    api = Client("http://127.0.0.1:8000")
    game = api.create_game("finnish", [{"name": "ann"}, {"bot": "greedy"}, {"bot": "greedy"}, {"bot": "greedy"}])
    ann = api.seat(game["id"], game["seats"][0]["token"])
    for event in ann.stream():                 # Server-Sent Events, resumed after a dropped stream
        ann.view()                             # 304 (no body) while nothing changed
        if ann.my_turn and ann.legal["may_draw"]:
            ann.move({"type": "draw"})         # If-Match and Idempotency-Key are sent for you

Every endpoint of ``openapi.yaml`` has a method here; bodies are the JSON the contract
describes (plain dicts, typed below as ``TypedDict`` for readers and type checkers). What
the client does for its caller, and why:

* **Versions.** A move must name the version it was decided on (``If-Match``), so that a
  move decided on an old table is refused (412) instead of applied to a new one. A
  :class:`Seat` remembers the last ``ETag`` it saw and sends it; a 412 is raised as
  :class:`StaleVersion` with the current version, never retried: the move may no longer be
  legal, so only the caller can decide again.
* **Idempotency.** Every move carries an ``Idempotency-Key``; a retry of the same move (by
  the client after a dropped connection, or by the caller after :class:`Unreachable`)
  sends the same key, so the server applies it once and answers the retry with the stored
  answer.
* **Retries**, only where they cannot change the outcome (:class:`RetryPolicy`): 429 (the
  rate limiter refused before anything happened) always; 503 and lost connections for
  reads, replays and moves (a move's key and If-Match make a second try harmless), not for
  creating a game or taking a seat; 409 ``conflict`` (the server gave up a busy
  compare-and-set and changed nothing). ``Retry-After`` is honoured.
* **Errors** are ``application/problem+json``; they are raised as :class:`ApiProblem`
  carrying ``status``, ``code`` and ``detail``.
* **Events**: :meth:`Client.stream` reads Server-Sent Events (``Accept: text/event-stream``)
  and reconnects with ``Last-Event-ID`` after the server's ``retry:`` delay;
  :meth:`Client.long_poll` reads the JSON long-poll instead, for networks that buffer
  streams. Both yield :class:`Event` objects, snapshots of the reader's view included.

``bench/api.py`` drives the API with raw sockets instead: it measures the server, and a
client library's own costs would hide them.
"""

from client.bodies import Action, CreatedGame, CreatedSeat, GameView, Hint, JoinedSeat, PublicSeat
from client.events import Event, EventsPage, EventStream, LongPoll, SseDecoder, SseMessage
from client.problems import (
    NO_RETRY,
    ApiProblem,
    RetryPolicy,
    StaleVersion,
    Unreachable,
    parse_retry_after,
    problem_of,
)
from client.server import Client, Seat, tokens_of
from client.wire import Reply, SourceAddressAdapter, new_idempotency_key, session_from

__all__ = [
    "NO_RETRY", "Action", "ApiProblem", "Client", "CreatedGame", "CreatedSeat", "Event", "EventStream", "EventsPage",
    "GameView", "Hint", "JoinedSeat", "LongPoll", "PublicSeat", "Reply", "RetryPolicy", "Seat", "SourceAddressAdapter",
    "SseDecoder", "SseMessage", "StaleVersion", "Unreachable", "new_idempotency_key", "parse_retry_after",
    "problem_of", "session_from", "tokens_of",
]
