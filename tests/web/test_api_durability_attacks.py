"""Attacks on the durability and exactly-once promises that the other tests leave open: a
reader that falls behind the trimmed event stream, a retry that meets a game changed since
its first try, a change made but not confirmed, a game idle for hours. Real Valkey, real hub."""

from __future__ import annotations

import asyncio
import random
import threading
from typing import Any

import orjson
import pytest
import redis
from api_helpers import Table, auth, four_humans, replay_log
from api_servers import api_server
from flask.testing import FlaskClient

import bots
import service
from client import NO_RETRY
from client import Client as ApiClient
from servers.embedded import EmbeddedRedis
from service import logcodec
from service.botqueue import BotKeys
from service.config import Settings
from service.store import Store
from web import create_app
from web import hub as hub_module
from web.hub import EventHub, Listener


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
    resumes from its cursor and gets a snapshot (``web/routes/events.py``)."""
    t = Table(client, four_humans(seed=61))
    record, last_id = store.snapshot(t.id)
    assert record is not None
    _play(store, settings, t.id, 3 * settings.events_keep)  # the stream is trimmed past the cursor

    async def scenario() -> tuple[Listener, bool]:
        hub = EventHub(hub_module.connect(settings.redis_url), store.keys)
        try:
            listener = Listener(t.id, 0, last_id, record.version)  # as the route hands it over
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


def _discard(t: Table, seat: int, etag: str) -> Any:
    view, _ = t.view(seat)
    return t.move(seat, {"type": "discard", "card": view["view"]["legal"]["discards"][0]}, etag)


def test_a_retry_with_a_stale_if_match_after_the_game_moved_on_replays(client: FlaskClient, store: Store) -> None:
    """The answer of a move is lost; the mover plays on; the old request is retried, with its
    old If-Match: the stored answer, not a 412 (and not a second move)."""
    t = Table(client, four_humans(seed=63))
    _, etag = t.view(0)
    key = {"Idempotency-Key": "lost-answer"}
    first = t.move(0, {"type": "draw"}, etag, **key)
    assert first.status_code == 200
    assert _discard(t, 0, first.headers["ETag"]).status_code == 200
    events = store.event_count(t.id)
    again = t.move(0, {"type": "draw"}, etag, **key)
    assert again.status_code == 200 and again.headers.get("Idempotent-Replayed") == "true"
    assert again.get_json() == first.get_json() and again.headers["ETag"] == first.headers["ETag"]
    assert store.event_count(t.id) == events


def test_a_dry_run_and_a_hint_write_no_game_key(client: FlaskClient, store: Store) -> None:
    """A dry run with an Idempotency-Key stores no answer (the real move with that key is then
    applied), and neither it nor a hint changes the game's keys."""
    t = Table(client, four_humans(seed=64))
    _, etag = t.view(0)
    keys = [store.keys.state(t.id), store.keys.events(t.id), store.keys.log(t.id)]
    before = [store.redis.dump(k) for k in keys]
    h = auth(t.tokens[0], **{"If-Match": etag, "Idempotency-Key": "dry-then-real"})
    dry = client.post(f"/games/{t.id}/moves?dry_run=true", json={"action": {"type": "draw"}}, headers=h)
    assert dry.status_code == 200 and dry.get_json()["dry_run"] is True
    assert client.get(f"/games/{t.id}/hint", headers=auth(t.tokens[0])).status_code == 200
    assert [store.redis.dump(k) for k in keys] == before
    idem = [k for k in store.redis.scan_iter(match=f"{store.keys.prefix}:{{{t.id}}}:idem:*")]
    assert idem == []
    real = client.post(f"/games/{t.id}/moves", json={"action": {"type": "draw"}}, headers=h)
    assert real.status_code == 200 and "Idempotent-Replayed" not in real.headers
    assert real.get_json()["version"] == int(etag.strip('"')) + 1


def test_a_retry_after_the_seat_was_handed_to_a_bot_replays(client: FlaskClient, store: Store) -> None:
    """The answer of a move is lost; before the retry the mover hands its seat to a bot
    ("play for me"). The move was applied: the retry gets its stored answer, not a refusal
    that says the seat is a bot's (which reads as: your move was not made)."""
    t = Table(client, four_humans(seed=65))
    _, etag = t.view(0)
    key = {"Idempotency-Key": "then-autoplay"}
    first = t.move(0, {"type": "draw"}, etag, **key)
    assert first.status_code == 200
    r = client.post(f"/games/{t.id}/seats/0/bot", json={"bot": "random"}, headers=auth(t.tokens[0]))
    assert r.status_code == 200, r.get_json()
    again = t.move(0, {"type": "draw"}, etag, **key)
    assert again.status_code == 200, again.get_json()
    assert again.headers.get("Idempotent-Replayed") == "true" and again.get_json() == first.get_json()


def test_a_move_answered_503_yet_applied_still_hands_the_turn_to_the_bot(key_prefix: str) -> None:
    """``waitaof``: the commit is made but its confirmation fails (503 not_durable). The move
    stands (a retry replays it): if a bot is to act after it, the bot queue must be told, as
    after a 200; else the game waits for the worker's deep sweep (a minute), or for good
    when the client never retries."""
    server = EmbeddedRedis(durable=False)  # no append-only file: every WAITAOF fails
    server.start()
    try:
        common = {"redis_url": server.url, "queue_url": server.url,  # the queue here too (a cluster run names another)
                  "key_prefix": key_prefix + ":nd", "test_seeds": True, "rate_limit_enabled": False}
        durable = create_app({**common, "durability": "waitaof"}).test_client()
        careless = create_app({**common, "durability": "off"}).test_client()
        t = Table(careless, {"preset": "finnish-2p", "seats": [{"name": "a"}, {"name": "b"}], "seed": 66})
        body, etag = t.view(0)
        mover = body["view"]["to_act"]
        other = 1 - mover
        r = careless.post(f"/games/{t.id}/seats/{other}/bot", json={"bot": "random"}, headers=auth(t.tokens[other]))
        assert r.status_code == 200, r.get_json()
        r = t.move(mover, {"type": "draw"}, r.headers["ETag"])
        assert r.status_code == 200, r.get_json()
        card = r.get_json()["view"]["legal"]["discards"][0]
        t.client = durable
        r = t.move(mover, {"type": "discard", "card": card}, r.headers["ETag"], **{"Idempotency-Key": "last"})
        assert r.status_code == 503 and r.get_json()["code"] == "not_durable"
        client = redis.Redis.from_url(server.url)
        store = Store(client, key_prefix + ":nd")
        game = service.load_game(store, t.id)
        assert game.state is not None and game.state.to_act == other  # the discard was made
        awaiting = client.zscore(BotKeys(store.keys.prefix).awaiting(), t.id)
        assert awaiting == game.version, "the bot was never told its turn came"
        client.close()
    finally:
        server.stop()


def test_every_change_restarts_the_expiry_of_every_key_of_the_game(client: FlaskClient, store: Store,
                                                                   settings: Settings) -> None:
    """A long game that went idle for hours: its keys' expiry ran down. The next change
    restarts it for the state, the events and the log alike (a fold of the log keeps it)."""
    t = Table(client, four_humans(seed=67))
    keys = [store.keys.state(t.id), store.keys.events(t.id), store.keys.log(t.id)]
    for k in keys:
        store.redis.expire(k, 5)  # about to expire
    _play(store, settings, t.id, 70)  # 72 log lines: one fold on the way
    assert logcodec.is_chunk(store.redis.lrange(keys[2], 0, 0)[0])  # folded
    for k in keys:
        assert settings.idle_seconds - 60 < store.redis.ttl(k) <= settings.idle_seconds, k


def test_a_version_lost_by_the_store_and_made_again_is_not_served_from_another_process_cache(
        client: FlaskClient, store: Store, redis_url: str, key_prefix: str) -> None:
    """The store loses the last change of a game after a process read it (a failover to a
    replica that lacked it with ``CANASTA_DURABILITY_REPLICAS=0``, a machine crash of an
    ``everysec`` server under ``waitaof``, ``off``): simulated by restoring the game's keys
    as they were. Another process then makes a different change at the same version. The
    first process must serve (and judge moves on) the game as stored, not the lost change
    it remembers under that version."""
    t = Table(client, four_humans(seed=68))
    body, etag = t.view(0)
    seat = body["view"]["to_act"]
    drawn = t.move(seat, {"type": "draw"}, etag)
    assert drawn.status_code == 200, drawn.get_json()
    discards = drawn.get_json()["view"]["legal"]["discards"]
    keys = [store.keys.state(t.id), store.keys.events(t.id), store.keys.log(t.id)]
    saved = [(k, store.redis.dump(k), store.redis.pttl(k)) for k in keys]
    lost = t.move(seat, {"type": "discard", "card": discards[0]}, drawn.headers["ETag"])
    assert lost.status_code == 200  # this process remembers the game at this version
    for k, dumped, ttl in saved:  # ... which the store then loses
        store.redis.restore(k, ttl, dumped, replace=True)
    other = next(c for c in discards if c != discards[0])
    with api_server(redis_url, key_prefix, threads=1) as base, ApiClient(base, retry=NO_RETRY) as api:
        made = api.move(t.id, t.tokens[seat], {"type": "discard", "card": other}, drawn.headers["ETag"])
        assert made.body["version"] == lost.get_json()["version"]  # the same version, another change
        # the next seat moves through the first process, on the version it remembers
        nxt = api.game(t.id, t.tokens[seat]).body["view"]["to_act"]
        r = t.move(nxt, {"type": "draw"}, made.etag)
        assert r.status_code == 200, r.get_json()
        truth = api.game(t.id, t.tokens[seat]).body
    here, _ = t.view(seat)
    assert here["view"] == truth["view"], "this process served the lost change it remembered"
    lines = [orjson.loads(line) for line in store.read_log(t.id)]
    assert replay_log(lines) == service.load_game(store, t.id).state, "the state stored is not the log's"


def test_one_idempotency_key_sent_to_two_processes_at_once_applies_once(app: Any, store: Store, redis_url: str,
                                                                        key_prefix: str) -> None:
    """A client whose first try hangs sends its retry to another API process while the first
    is still in flight: both get the same answer, and the move is made once."""
    t = Table(app.test_client(), four_humans(seed=69))
    _, etag = t.view(0)
    events = store.event_count(t.id)
    with api_server(redis_url, key_prefix, threads=2) as base, ApiClient(base, retry=NO_RETRY) as api:
        answers: list[Any] = [None] * 8
        barrier = threading.Barrier(len(answers))

        def send(i: int) -> None:
            barrier.wait()
            if i % 2:
                r = api.move(t.id, t.tokens[0], {"type": "draw"}, etag, idempotency_key="in-flight")
                answers[i] = (r.status, r.body)
            else:
                r2 = app.test_client().post(f"/games/{t.id}/moves", json={"action": {"type": "draw"}},
                                            headers=auth(t.tokens[0], **{"If-Match": etag,
                                                                         "Idempotency-Key": "in-flight"}))
                answers[i] = (r2.status_code, r2.get_json())

        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(answers))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
    assert {status for status, _ in answers} == {200}, answers
    assert len({orjson.dumps(body, option=orjson.OPT_SORT_KEYS) for _, body in answers}) == 1
    assert store.event_count(t.id) == events + 1


JOIN_KEY = "6f1d9c2e-41d7-4a8e-b3c5-0f3b9c2e7a10"  # random enough: a join's key is a secret


@pytest.mark.parametrize("key", ["join-1", "aaaaaaaaaaaaaaaa", "a" * 40, "1234567890" * 3, "abcdefaaaaaaaaaaaaaaaa"])
def test_a_guessable_join_key_is_refused(client: FlaskClient, store: Store, key: str) -> None:
    """A join's retry gets the seat's token with no token of its own: a short or repetitive
    key that another client could guess and send with the same name is refused (422
    ``weak_idempotency_key``), and nothing is joined."""
    created = client.post("/games", json={"preset": "classic", "seats": [{"name": "a"}, None, None, None]})
    assert created.status_code == 201, created.get_json()
    gid = created.get_json()["id"]
    events = store.event_count(gid)
    r = client.post(f"/games/{gid}/seats/1", json={"name": "bea"}, headers={"Idempotency-Key": key})
    assert r.status_code == 422 and r.get_json()["code"] == "weak_idempotency_key", r.get_json()
    assert client.get(f"/games/{gid}").get_json()["seats"][1]["open"] and store.event_count(gid) == events


def test_a_join_whose_answer_was_lost_is_retried_with_its_idempotency_key(client: FlaskClient, store: Store) -> None:
    """A join's answer (the seat's only copy of its bearer token) is lost on the way back; the
    client retries with the same Idempotency-Key: it must get that answer again, not a
    409 seat_taken that leaves the seat to a token nobody holds."""
    created = client.post("/games", json={"preset": "classic", "seats": [{"name": "a"}, None, None, None]}).get_json()
    gid = created["id"]
    events = store.event_count(gid)
    first = client.post(f"/games/{gid}/seats/1", json={"name": "bea"}, headers={"Idempotency-Key": JOIN_KEY})
    assert first.status_code == 200, first.get_json()
    again = client.post(f"/games/{gid}/seats/1", json={"name": "bea"}, headers={"Idempotency-Key": JOIN_KEY})
    assert again.status_code == 200, again.get_json()
    assert again.get_json() == first.get_json() and again.headers["ETag"] == first.headers["ETag"]
    assert "Idempotent-Replayed" not in first.headers and again.headers.get("Idempotent-Replayed") == "true"
    assert first.headers["Cache-Control"] == again.headers["Cache-Control"] == "private, no-store"  # a token
    assert store.event_count(gid) == events + 1  # joined once
    other = client.post(f"/games/{gid}/seats/1", json={"name": "cy"}, headers={"Idempotency-Key": JOIN_KEY})
    assert other.status_code == 422 and other.get_json()["code"] == "idempotency_key_reused"
    assert client.post(f"/games/{gid}/seats/1", json={"name": "cy"}).status_code == 409  # no key: taken
