"""The speed-ups of the move path answer exactly as the plain path: the per-process game
cache (and the move that skips the read when its If-Match version is cached), the compact
event data, the one-call rate limiter and the lean Redis commands."""

from __future__ import annotations

import orjson
import pytest
from api_helpers import Table, four_humans
from flask.testing import FlaskClient

import service
from service import eventcodec
from service.config import Settings
from service.redis_io import pack
from service.store import RATE_LIMIT, Store


def _draw_phase_seat(t: Table) -> tuple[int, str]:
    view, etag = t.view(None)
    return view["view"]["to_act"], etag


def test_a_stale_cached_version_is_answered_from_a_fresh_read(client: FlaskClient, store: Store,
                                                               settings: Settings) -> None:
    t = Table(client, four_humans(seed=11))
    seat, _ = _draw_phase_seat(t)
    view, etag = t.view(seat)  # this process caches the game at this version
    version = int(etag.strip('"'))
    assert service.CACHE.get(t.id, version) is not None
    # another process moves (here: the service directly, as the bot worker does)
    service.apply_move(store, settings, service.MoveRequest(t.id, seat, {"type": "draw"}, version))
    # the mover's If-Match names the cached, now stale version: 412 with the current one
    r = t.move(seat, {"type": "draw"}, etag)
    assert r.status_code == 412, r.get_json()
    assert r.get_json()["code"] == "stale_version" and r.get_json()["version"] == version + 1
    # the same answer without the cache
    service.CACHE.clear()
    r2 = t.move(seat, {"type": "draw"}, etag)
    assert (r2.status_code, r2.get_json()) == (r.status_code, r.get_json())


def test_errors_on_the_cached_path_equal_the_plain_path(client: FlaskClient) -> None:
    t = Table(client, four_humans(seed=12))
    seat, _ = _draw_phase_seat(t)
    _, etag = t.view(seat)
    other = (seat + 1) % 4
    tries = [
        (other, {"type": "draw"}, {}),  # not this seat's turn
        (seat, {"type": "discard", "card": "AS"}, {}),  # not in the draw phase
        (seat, {"type": "nonsense"}, {}),  # schema
    ]
    answers = []
    for cached in (True, False):
        if not cached:
            service.CACHE.clear()
        got = []
        for who, action, extra in tries:
            r = t.move(who, action, etag, **extra)
            got.append((r.status_code, r.get_json()))
        answers.append(got)
    assert answers[0] == answers[1]
    assert [a[0] for a in answers[0]] == [403, 422, 422]


def test_an_idempotent_retry_on_the_cached_path_replays(client: FlaskClient) -> None:
    t = Table(client, four_humans(seed=13))
    seat, _ = _draw_phase_seat(t)
    _, etag = t.view(seat)
    first = t.move(seat, {"type": "draw"}, etag, **{"Idempotency-Key": "k-1"})
    again = t.move(seat, {"type": "draw"}, etag, **{"Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.get_json() == first.get_json()


def test_the_cache_holds_immutable_states_and_is_bounded() -> None:
    cache = service.GameCache(size=3)
    for v in range(1, 6):
        cache.put("g", v, {"status": "playing"}, None)
    assert cache.get("g", 1) is None and cache.get("g", 2) is None
    assert cache.get("g", 5) == ({"status": "playing"}, None)
    service.CACHE.put("gcachetest01", 3, {"status": "waiting", "seats": []}, None)
    a, b = service.cached_game("gcachetest01", 3), service.cached_game("gcachetest01", 3)
    assert a is not None and b is not None and a.meta is b.meta  # one parsed meta per version


def test_the_service_never_changes_a_cached_meta(client: FlaskClient) -> None:
    """Cached metas are shared by every request on that version: joining, handing a seat to a
    bot and moving must build new dicts, never change the one read."""
    import copy

    created = client.post("/games", json={"preset": "classic", "seats": [{"name": "a"}, None, None, None]}).get_json()
    gid = created["id"]
    token = created["seats"][0]["token"]
    seen = []
    for step in range(3):
        version = int(client.get(f"/games/{gid}").headers["ETag"].strip('"'))
        cached = service.cached_game(gid, version)
        assert cached is not None
        seen.append((cached.meta, copy.deepcopy(cached.meta)))
        if step == 0:
            assert client.post(f"/games/{gid}/seats/1", json={"name": "b"}).status_code == 200
        else:
            r = client.post(f"/games/{gid}/seats/{step + 1}/bot", json={"bot": "random"},
                            headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200
    for meta, before in seen:
        assert meta == before


def test_event_data_codec_round_trip() -> None:
    public = orjson.dumps({"move": {"seat": 2, "action": {"type": "draw"}, "move": 7, "drew": 1}})
    mine = orjson.dumps({"move": {"seat": 2, "action": {"type": "draw"}, "move": 7, "drew": 1, "cards": ["9S"]}})
    blob = eventcodec.encode(public, {2: mine})
    assert len(blob) < len(public)
    assert eventcodec.decode(blob) == (public, {2: mine})
    assert eventcodec.data_for(blob, 2) == mine
    assert eventcodec.data_for(blob, 1) == eventcodec.data_for(blob, None) == public
    assert eventcodec.decode(eventcodec.encode(b"{}", {})) == (b"{}", {})


@pytest.mark.parametrize("seat", [None, 0, 1, 3])
def test_old_and_new_event_entries_render_alike(seat: int | None) -> None:
    envelope = {"type": "move", "status": "playing", "phase": "play", "hand_no": 1, "moves": 7, "turn": 1,
                "to_act": 1}
    shared = {"move": {"seat": 1, "action": {"type": "draw"}, "move": 7, "drew": 1}}
    per_viewer = {None: shared, 0: shared, 1: {"move": {**shared["move"], "cards": ["KH"]}}, 2: shared, 3: shared}
    new = {**service.games._event_fields(envelope, per_viewer), "v": b"8"}
    assert set(new) == {"v", "w"}
    public, seats = orjson.dumps(shared), {1: orjson.dumps(per_viewer[1])}
    with_z = {"v": b"8", "e": orjson.dumps(envelope), "z": eventcodec.encode(public, seats)}
    oldest = {"v": b"8", "e": orjson.dumps(envelope), "p": public, "s1": seats[1]}
    rendered = service.render_event("1-0", new, seat)
    assert rendered == service.render_event("1-0", with_z, seat) == service.render_event("1-0", oldest, seat)
    assert service.event_envelope(new) == envelope


def test_stream_entries_hold_the_compact_data(client: FlaskClient, store: Store) -> None:
    t = Table(client, four_humans(seed=14))
    seat, etag = _draw_phase_seat(t)
    assert t.move(seat, {"type": "draw"}, etag).status_code == 200
    last = store.events_after(t.id, "0-0")[-1]
    assert set(last.fields) == {"v", "w"}
    assert len(last.fields["w"]) < 80  # envelope and data of a draw, deflated
    assert service.event_envelope(last.fields)["type"] == "move"
    mine = service.render_event(last.id, last.fields, seat)["data"]["move"]
    theirs = service.render_event(last.id, last.fields, (seat + 1) % 4)["data"]["move"]
    assert len(mine["cards"]) == mine["drew"] and "cards" not in theirs


def test_rate_limit_counts_every_key_in_one_call(store: Store) -> None:
    counters = [("addr", "fast-paths-test", 2), ("tok", "fast-paths-test", 1)]
    try:
        assert store.rate_limit(counters, 10) == 0  # 1st request: within both limits
        wait = store.rate_limit(counters, 10)  # 2nd: over the token's limit
        assert 0 < wait <= 10_000
        assert int(store.redis.get(store.keys.rate("addr", "fast-paths-test", 10))) == 2
        assert int(store.redis.get(store.keys.rate("tok", "fast-paths-test", 10))) == 2
    finally:
        store.redis.delete(*(store.keys.rate(k, i, 10) for k, i, _ in counters))


def test_lean_commands_pack_and_reload_a_lost_script(store: Store) -> None:
    assert pack(("SET", "k", b"\x00v", 7)) == b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n\x00v\r\n$1\r\n7\r\n"
    assert pack(("é", bytearray(b"x"), memoryview(b"yz"), True)) == b"*4\r\n$2\r\n\xc3\xa9\r\n$1\r\nx\r\n$2\r\nyz\r\n$1\r\n1\r\n"
    assert store.execute("HMGET", store.keys.state("nosuchgame01"), "version") == [None]
    key = store.keys.rate("addr", "fast-paths-noscript", 10)
    server = store.redis.get_redis_connection(store.redis.get_node_from_key(key)) if store.cluster else store.redis
    server.script_flush()  # as after a server restart (or a failover): EVALSHA answers NOSCRIPT
    assert server.script_exists(RATE_LIMIT.sha) == [False]
    try:
        assert store.rate_limit([("addr", "fast-paths-noscript", 5)], 10) == 0
        assert server.script_exists(RATE_LIMIT.sha) == [True]  # loaded on the server that answered
    finally:
        store.redis.delete(store.keys.rate("addr", "fast-paths-noscript", 10))


def test_loaded_move_bodies_are_memoised_as_fresh_copies(client: FlaskClient) -> None:
    from web.http import LoadedBodies

    memo = LoadedBodies(size=2)
    memo.put(b'{"action":{"type":"draw"}}', {"action": {"type": "draw"}})
    first, second = memo.get(b'{"action":{"type":"draw"}}'), memo.get(b'{"action":{"type":"draw"}}')
    assert first == second == {"action": {"type": "draw"}} and first is not second
    first["action"]["type"] = "pass"  # a caller changing its copy changes nothing stored
    assert memo.get(b'{"action":{"type":"draw"}}') == {"action": {"type": "draw"}}
    memo.put(b"x" * 600, {"big": True})  # large bodies are not kept
    assert memo.get(b"x" * 600) is None
    memo.put(b"1", {"a": 1})
    memo.put(b"2", {"a": 2})
    assert memo.get(b'{"action":{"type":"draw"}}') is None  # bounded, oldest out
    # through the route: the same invalid body is refused every time, never remembered
    t = Table(client, four_humans(seed=15))
    seat, etag = _draw_phase_seat(t)
    for _ in range(2):
        r = t.move(seat, {"type": "draw", "extra": 1}, etag)
        assert r.status_code == 422 and r.get_json()["code"] == "invalid_request"
