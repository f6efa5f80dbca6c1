"""What a game costs in Redis: the log folded into chunks, the event stream trimmed, and
readers that resume past the trim given a snapshot. Real Redis (``REDIS_URL`` or Valkey)."""

from __future__ import annotations

import random

import orjson
import pytest
from api_helpers import Table, auth, four_humans, replay_log
from flask.testing import FlaskClient

import bots
import engine
import service
from cli.replay_export import fetch_redis
from service import logcodec
from service.config import Settings
from service.store import Store


def _play(store: Store, settings: Settings, game_id: str, moves: int, seed: int = 1) -> int:
    """``moves`` random moves through the service (as the HTTP route makes them)."""
    rng = random.Random(seed)
    done = 0
    while done < moves:
        game = service.load_game(store, game_id)
        if game.status != "playing" or game.state is None:
            break
        seat = game.state.to_act
        action = bots.choose("random", game.state, seat, rng)
        service.apply_move(store, settings, service.MoveRequest(game_id, seat, action, game.version, answer_view=False))
        done += 1
    return done


@pytest.fixture
def long_game(client: FlaskClient, store: Store, settings: Settings) -> Table:
    t = Table(client, four_humans(seed=31))
    assert _play(store, settings, t.id, 300) == 300
    return t


def test_old_log_lines_are_folded_and_read_back_exactly(long_game: Table, store: Store,
                                                        settings: Settings) -> None:
    entries = store.redis.lrange(store.keys.log(long_game.id), 0, -1)
    chunks = [e for e in entries if logcodec.is_chunk(e)]
    plain = [e for e in entries if not logcodec.is_chunk(e)]
    assert len(chunks) >= 4 and len(plain) < logcodec.CHUNK  # folded as it went
    assert entries[:len(chunks)] == chunks  # chunks lead, plain lines follow
    lines = store.read_log(long_game.id)
    assert len(lines) == len(entries) - len(chunks) + logcodec.CHUNK * len(chunks)
    parsed = [orjson.loads(x) for x in lines]
    assert parsed[0]["log"] == "canasta-log/1" and "deal" in parsed[1]
    assert [x["move"] for x in parsed if "move" in x] == list(range(1, 301))  # nothing lost or doubled
    state = replay_log(parsed)  # the lines still replay through the engine
    assert state == service.load_game(store, long_game.id).state
    # the export tool reads the stored list the same way
    assert fetch_redis(long_game.id, settings.redis_url, store.keys.prefix).splitlines() == lines


def test_a_fold_happens_once_however_many_processes_try(client: FlaskClient, store: Store,
                                                          settings: Settings) -> None:
    t = Table(client, four_humans(seed=32))
    _play(store, settings, t.id, 70)  # 72 lines: folded once by the move that made 64
    key = store.keys.log(t.id)
    before = store.read_log(t.id)
    entries = store.redis.lrange(key, 0, -1)
    assert sum(logcodec.is_chunk(e) for e in entries) == 1
    assert store.compact_log(t.id, 0) is False  # a second process with the old count: no-op
    assert store.compact_log(t.id, 1) is False  # too few plain lines for another chunk
    assert store.read_log(t.id) == before
    assert store.redis.ttl(key) > 0  # the fold kept the log's expiry


def test_a_chunk_round_trips_any_lines() -> None:
    lines = [orjson.dumps({"move": n, "hand": 1, "seat": n % 4, "action": {"type": "draw"}}) for n in range(64)]
    lines.append("{\"x\":\"é ☃\"}".encode())
    chunk = logcodec.pack(lines)
    assert logcodec.is_chunk(chunk) and len(chunk) < sum(map(len, lines)) / 5
    assert logcodec.unpack(chunk) == lines
    assert logcodec.expand([chunk, b'{"y":1}']) == [*lines, b'{"y":1}']
    with pytest.raises(ValueError):
        logcodec.unpack(b"\x00L9abc")


def test_the_stream_keeps_the_recent_events_and_counts_all(long_game: Table, store: Store,
                                                           settings: Settings) -> None:
    version = service.load_game(store, long_game.id).version
    kept = [int(e.fields["v"]) for e in store.events_after(long_game.id, "0-0", 100_000)]
    assert settings.events_keep <= len(kept) < 3 * settings.events_keep
    assert kept == list(range(kept[0], version + 1))
    assert store.event_count(long_game.id) == version
    memory = store.memory_of_game(long_game.id)
    assert memory < 32 * 1024, f"{memory} bytes for a game at move 300"


def test_a_poll_from_a_trimmed_id_gets_a_snapshot(long_game: Table, client: FlaskClient, store: Store) -> None:
    events = store.events_after(long_game.id, "0-0", 100_000)
    first, recent = events[0].id, events[-3].id
    token = long_game.tokens[1]
    old = client.get(f"/games/{long_game.id}/events?after=1-0", headers=auth(token)).get_json()
    assert old["events"] == [] and old["snapshot"]["seat"] == 1 and old["last_id"] == events[-1].id
    assert old["snapshot"]["version"] == service.load_game(store, long_game.id).version
    again = client.get(f"/games/{long_game.id}/events?after=0", headers=auth(token)).get_json()
    assert "snapshot" in again
    held = client.get(f"/games/{long_game.id}/events?after={first}", headers=auth(token)).get_json()
    assert "snapshot" not in held and len(held["events"]) == len(events) - 1
    fresh = client.get(f"/games/{long_game.id}/events?after={recent}", headers=auth(token)).get_json()
    assert "snapshot" not in fresh and [e["id"] for e in fresh["events"]] == [e.id for e in events[-2:]]


def test_sse_resuming_from_a_trimmed_id_starts_with_a_snapshot(long_game: Table, client: FlaskClient,
                                                               store: Store) -> None:
    events = store.events_after(long_game.id, "0-0", 100_000)
    headers = auth(long_game.tokens[2], **{"Accept": "text/event-stream", "Last-Event-ID": "1-0"})
    r = client.get(f"/games/{long_game.id}/events", headers=headers, buffered=False)
    text = b""
    for part in r.response:
        text += part if isinstance(part, bytes) else part.encode()
        if b"\n\n" in text.split(b"retry: 2000\n\n", 1)[-1]:
            break
    r.close()
    first = text.split(b"retry: 2000\n\n", 1)[1].split(b"\n\n", 1)[0].decode()
    assert f"id: {events[-1].id}" in first and "event: snapshot" in first
    assert orjson.loads(first.split("data: ", 1)[1])["seat"] == 2


def test_the_state_is_stored_without_its_rules(long_game: Table, store: Store) -> None:
    raw = store.redis.hget(store.keys.state(long_game.id), "state")
    assert b'"rules"' not in raw
    meta = orjson.loads(store.redis.hget(store.keys.state(long_game.id), "meta"))
    state = service.parse_state(raw, meta)
    assert state.rules == engine.resolve("classic", 4)
    # a state written with its rules (before this format) is read as it is
    assert service.parse_state(orjson.dumps(state.to_json()), {"rules": {}}) == state


def test_open_streams_are_limited_per_token_and_address_and_come_back(redis_url: str, key_prefix: str) -> None:
    """A token (and an address) holds at most its share of open streams and waiting polls:
    past it, 429 too_many_streams with Retry-After, never a hang; a plain poll holds none;
    a closed stream gives its slot back. (This app runs under Flask's test client, where a
    stream waits in its own thread; tests/web/test_api_events_asgi.py runs the same limits
    on the event loop.)"""
    from web import create_app

    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix + ":streams", "test_seeds": True,
                      "rate_limit_enabled": False, "max_streams_per_token": 1, "max_streams_per_address": 3,
                      "sse_ping_seconds": 0.2, "sse_max_seconds": 5, "poll_max_wait": 1})
    client = app.test_client()
    t = Table(client, four_humans(seed=33))
    sse = {"Accept": "text/event-stream"}
    first = client.get(f"/games/{t.id}/events", headers={**sse, **auth(t.tokens[0])}, buffered=False)
    assert first.status_code == 200
    refused = client.get(f"/games/{t.id}/events", headers={**sse, **auth(t.tokens[0])})
    assert refused.status_code == 429 and refused.get_json()["code"] == "too_many_streams"
    assert refused.mimetype == "application/problem+json" and refused.headers["Retry-After"] == "5"
    busy = client.get(f"/games/{t.id}/events?after=0-0&wait=1", headers=auth(t.tokens[0]))
    _, etag = t.view(0)
    t.move(0, {"type": "draw"}, etag)
    events = client.get(f"/games/{t.id}/events?after=0", headers=auth(t.tokens[0])).get_json()["events"]
    assert len(events) >= 2
    assert busy.status_code == 200  # events were there already: nothing to wait for
    last = events[-1]["id"]
    waiting = client.get(f"/games/{t.id}/events?after={last}&wait=1", headers=auth(t.tokens[0]))
    assert waiting.status_code == 429 and waiting.get_json()["code"] == "too_many_streams"
    assert client.get(f"/games/{t.id}/events?after={last}", headers=auth(t.tokens[0])).status_code == 200  # holds nothing
    others = [client.get(f"/games/{t.id}/events", headers={**sse, **auth(t.tokens[seat])}, buffered=False) for seat in (1, 2)]
    assert [o.status_code for o in others] == [200, 200]
    by_address = client.get(f"/games/{t.id}/events", headers={**sse, **auth(t.tokens[3])})
    assert by_address.status_code == 429 and "address" in by_address.get_json()["detail"]
    for o in others:
        o.close()
    resumed = client.get(f"/games/{t.id}/events", headers={**sse, **auth(t.tokens[3]), "Last-Event-ID": events[0]["id"]},
                         buffered=False)
    head = next(resumed.response).decode()
    ids = [line[4:] for line in head.splitlines() if line.startswith("id: ")]
    assert ids == [e["id"] for e in events[1:]]
    resumed.close()
    first.close()
    again = client.get(f"/games/{t.id}/events", headers={**sse, **auth(t.tokens[0])}, buffered=False)
    assert again.status_code == 200
    again.close()
    for _ in range(3):  # waiting polls give their slot back when they answer
        assert client.get(f"/games/{t.id}/events?after={last}&wait=0.2", headers=auth(t.tokens[0])).status_code == 200
