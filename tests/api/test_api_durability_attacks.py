"""Attacks on the durability and exactly-once promises that the other tests leave open:
a reader that falls behind the trimmed event stream, a retry that meets a seat changed
since its first try. Real Valkey, real event hub."""

from __future__ import annotations

import asyncio
import random

import orjson
from api_helpers import Table, auth, four_humans
from flask.testing import FlaskClient

import bots
from api import create_app, service
from api import hub as hub_module
from api.config import Settings
from api.hub import EventHub, Listener
from api.store import Store


def _play(store: Store, settings: Settings, game_id: str, moves: int, seed: int = 1) -> None:
    """``moves`` random moves through the service, as the HTTP route makes them."""
    rng = random.Random(seed)
    for _ in range(moves):
        game = service.load_game(store, game_id)
        assert game.status == "playing" and game.state is not None
        seat = game.state.to_act
        action = bots.choose("random", game.state, seat, rng)
        service.apply_move(store, settings, service.MoveRequest(game_id, seat, action, game.version, answer_view=False))


def test_a_hub_listener_behind_the_trimmed_stream_is_not_handed_a_gap(client: FlaskClient, store: Store,
                                                                      settings: Settings) -> None:
    """A listener whose cursor falls behind the stream's trim (the hub lagged, or a fast bot
    game ran on between the route's read and the hand-off) must not be handed the events
    after the trim as if they followed its cursor: it is ended instead, so that its client
    resumes from its cursor and gets a snapshot (``api/routes/events.py``)."""
    t = Table(client, four_humans(seed=61))
    record, last_id = store.snapshot(t.id)
    assert record is not None
    _play(store, settings, t.id, 3 * settings.events_keep)  # the stream is trimmed past the cursor

    async def scenario() -> tuple[Listener, bool]:
        hub = EventHub(hub_module.connect(settings.redis_url), store.keys)
        try:
            listener = Listener(t.id, 0, last_id)
            await hub.listen(listener)
            await asyncio.wait_for(listener.wake.wait(), 5)
            return listener, listener.closed  # before the hub's own close ends every listener
        finally:
            await hub.close()

    listener, ended = asyncio.run(scenario())
    versions = [body["version"] for _, body in listener.take()]
    assert ended or versions[:1] == [record.version + 1], f"handed {versions[:3]}... after v{record.version}"
    assert versions == list(range(record.version + 1, record.version + 1 + len(versions)))


def test_a_slow_sse_reader_behind_the_trimmed_stream_is_not_handed_a_gap(store: Store, settings: Settings) -> None:
    """The same attack on a stream a thread serves (a plain WSGI server): the client reads
    the head, then stops reading while the game runs on past the trim; the thread must not
    then send what the stream still holds as if it followed the client's last event."""
    app = create_app(settings.with_overrides({"sse_max_seconds": 60.0}))
    client = app.test_client()
    t = Table(client, four_humans(seed=62))
    record, _ = store.snapshot(t.id)
    assert record is not None
    r = client.get(f"/games/{t.id}/events", headers=auth(t.tokens[1], Accept="text/event-stream"), buffered=False)
    parts = iter(r.response)
    head = next(parts)
    assert b"event: snapshot" in head
    _play(store, settings, t.id, 3 * settings.events_keep)  # the client reads nothing meanwhile
    rest = b""
    for part in parts:  # the stream either ends (the client resumes: a snapshot) or goes on without a gap
        rest += part
        if b"\ndata: " in rest.split(b": ping\n\n")[-1]:
            break
    r.close()
    versions = [orjson.loads(line[len(b"data: "):])["version"] for line in rest.split(b"\n") if line.startswith(b"data: ")]
    assert versions == list(range(record.version + 1, record.version + 1 + len(versions))), versions[:3]
