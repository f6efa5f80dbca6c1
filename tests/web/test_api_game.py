"""A whole game over HTTP (WSGI app) by a client that reads only its seat view; the log it
leaves replays through the engine; events (long-poll and SSE) tell the same story."""

from __future__ import annotations

import threading
import time
from urllib.parse import quote

import orjson
import pytest
from api_helpers import Table, auth, four_humans, replay_log
from api_players import candidates
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from service.store import Store

MAX_MOVES = 3000


def play_to_the_end(t: Table, max_moves: int = MAX_MOVES) -> tuple[int, int]:
    """Each seat, in turn, reads its own view and tries candidates until one is accepted."""
    client = t.client
    moves = rejected = 0
    spectator, _ = t.view(None)
    while spectator["status"] != "over" and moves < max_moves:
        seat = spectator["view"]["to_act"]
        view, etag = t.view(seat)
        for action in candidates(view["view"]):
            r = client.post(f"/games/{t.id}/moves", json={"action": action},
                            headers=auth(t.tokens[seat], **{"If-Match": etag}))
            if r.status_code == 200:
                spectator = {"status": r.get_json()["status"], "view": r.get_json()["view"]}
                moves += 1
                break
            assert r.status_code == 422, r.get_json()
            assert r.mimetype == "application/problem+json" and r.get_json()["code"]
            rejected += 1
        else:
            raise AssertionError(f"no candidate accepted for seat {seat}: {view['view']['legal']}")
    return moves, rejected


def test_whole_game_over_http(client: FlaskClient, store: Store) -> None:
    t = Table(client, four_humans(seed=2024))
    moves, rejected = play_to_the_end(t)
    final, etag = t.view(None)
    assert final["status"] == "over" and final["view"]["phase"] == "over"
    assert final["view"]["result"]["game_end"] is True
    # the log: published now, complete, and it replays to the same end
    r = client.get(f"/games/{t.id}/log")
    assert r.status_code == 200 and r.mimetype == "application/x-ndjson"
    lines = [orjson.loads(x) for x in r.data.splitlines()]
    assert sum(1 for x in lines if "move" in x) == moves
    assert "game_end" in lines[-1]
    end = replay_log(lines)
    assert list(end.totals) == final["view"]["totals"]
    # one event per version, nothing lost or doubled
    assert store.event_count(t.id) == final["version"] == int(etag.strip('"'))
    # the stream keeps only the recent events (events_keep), consecutive up to the last
    kept = [int(e.fields["v"]) for e in store.events_after(t.id, "0-0", 100_000)]
    assert 100 <= len(kept) < 300 and kept == list(range(kept[0], final["version"] + 1))
    # finished games expire after the retention period
    ttl = store.redis.ttl(store.keys.state(t.id))
    assert 0 < ttl <= client.application.extensions["canasta"].settings.retention_seconds
    assert rejected >= 0


def test_long_poll_and_resume(client: FlaskClient) -> None:
    t = Table(client, four_humans())
    first = client.get(f"/games/{t.id}/events", headers=auth(t.tokens[1])).get_json()
    assert first["snapshot"]["seat"] == 1 and first["events"] == []
    last = first["last_id"]
    empty = client.get(f"/games/{t.id}/events?after={last}&wait=0.2", headers=auth(t.tokens[1])).get_json()
    assert empty == {"events": [], "last_id": last}
    _, etag = t.view(0)
    r = t.move(0, {"type": "draw"}, etag)
    version = r.get_json()["version"]
    page = client.get(f"/games/{t.id}/events?after={last}", headers=auth(t.tokens[1])).get_json()
    (event,) = page["events"]
    assert event["version"] == version and event["type"] == "move" and event["to_act"] == 0
    assert event["data"]["move"]["seat"] == 0 and "cards" not in event["data"]["move"]
    mine = client.get(f"/games/{t.id}/events?after={last}", headers=auth(t.tokens[0])).get_json()["events"][0]
    assert len(mine["data"]["move"]["cards"]) == 1  # the drawer alone sees what was drawn
    everything = client.get(f"/games/{t.id}/events?after=0").get_json()["events"]
    assert [e["version"] for e in everything] == list(range(1, version + 1))
    assert everything[0]["type"] == "created" and "deal" in everything[0]["data"]
    assert client.get(f"/games/{t.id}/events?after=bad").status_code == 400
    assert client.get(f"/games/{t.id}/events?wait=99").status_code == 400


def test_long_poll_wakes_up_on_a_move(app: Flask) -> None:
    client = app.test_client()
    t = Table(client, four_humans())
    last = client.get(f"/games/{t.id}/events").get_json()["last_id"]
    _, etag = t.view(0)
    timer = threading.Timer(0.3, lambda: t.move(0, {"type": "draw"}, etag))
    started = time.monotonic()
    timer.start()
    page = app.test_client().get(f"/games/{t.id}/events?after={last}&wait=2").get_json()
    timer.join()
    assert len(page["events"]) == 1 and time.monotonic() - started < 1.9


def _sse(client: FlaskClient, url: str, headers: dict[str, str]) -> list[dict]:
    r = client.get(url, headers={"Accept": "text/event-stream", **headers}, buffered=False)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    # a seat's stream holds its hand: stored by no cache; a spectator's may be (revalidated)
    seat = "Authorization" in headers or "access_token=" in url
    assert r.headers["Cache-Control"] == ("private, no-store" if seat else "no-cache")
    text = b"".join(r.response).decode()  # the test app ends streams after 1.5 s
    messages = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields: dict = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                fields["comment"] = line[1:].strip()
            else:
                name, _, value = line.partition(": ")
                fields[name] = orjson.loads(value) if name == "data" else value
        messages.append(fields)
    return messages


def test_sse_snapshot_events_pings_and_resume(client: FlaskClient) -> None:
    t = Table(client, four_humans())
    _, etag = t.view(0)
    t.move(0, {"type": "draw"}, etag)
    messages = _sse(client, f"/games/{t.id}/events", auth(t.tokens[2]))
    real = [m for m in messages if "event" in m]
    assert real[0]["event"] == "snapshot" and real[0]["data"]["seat"] == 2
    assert len(real[0]["data"]["view"]["hand"]) == 11
    assert any(m.get("comment") == "ping" for m in messages)
    # resume from the first event: the ones after it are replayed, no snapshot
    all_events = client.get(f"/games/{t.id}/events?after=0").get_json()["events"]
    resumed = [m for m in _sse(client, f"/games/{t.id}/events", {"Last-Event-ID": all_events[0]["id"]}) if "event" in m]
    assert [m["id"] for m in resumed] == [e["id"] for e in all_events[1:]]
    assert resumed[-1]["event"] == "move" and resumed[-1]["data"]["version"] == all_events[-1]["version"]
    # with a token in the query (EventSource cannot send headers)
    q = [m for m in _sse(client, f"/games/{t.id}/events?access_token={t.tokens[0]}", {}) if "event" in m]
    assert q[0]["data"]["seat"] == 0


def test_events_token_sent_twice_is_refused(client: FlaskClient) -> None:
    """RFC 6750 2: one way of sending the token per request (a malformed ``access_token``
    beside a good header used to be ignored; schemathesis found it)."""
    t = Table(client, four_humans())
    token = t.tokens[0]
    r = client.get(f"/games/{t.id}/events?after=0&access_token=not-a-token", headers=auth(token))
    assert r.status_code == 400 and r.get_json()["code"] == "invalid_parameter"
    r = client.get(f"/games/{t.id}/events?after=0&access_token={token}", headers=auth(token))
    assert r.status_code == 400
    r = client.get(f"/games/{t.id}/events?after=0&access_token={token}")
    assert r.status_code == 200 and r.get_json()["events"]


_CURSORS = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\A[0-9\u0660-\u0669\uff10-\uff19\u00b2]{1,21}-[0-9\u0660-\u0669]{1,21}\Z"),
    st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)).map(lambda p: f"{p[0]}-{p[1]}"),
)


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cursor=_CURSORS, seat=st.sampled_from([None, 0, 1]))
def test_a_forged_cursor_reads_only_the_readers_own_events_or_is_400(client: FlaskClient, cursor: str,
                                                                      seat: int | None) -> None:
    """Whatever ``after`` a reader sends (any text, digits of any script, an id from the
    future or the past, another game's), the answer is 400 ``invalid_event_id`` or events of
    this game as this reader reads them from the start (or its snapshot): never a 500, never
    another seat's or another game's event."""
    games = _cursor_games(client)
    t, other = games
    token = t.tokens[seat] if seat is not None else None
    own = client.get(f"/games/{t.id}/events?after=0", headers=auth(token)).get_json()["events"]
    foreign = {e["id"] for e in client.get(f"/games/{other.id}/events?after=0").get_json()["events"]}
    for forged in (cursor, next(iter(foreign))):
        r = client.get(f"/games/{t.id}/events", query_string={"after": forged}, headers=auth(token))
        if r.status_code == 400:
            assert r.get_json()["code"] == "invalid_event_id"
            continue
        assert r.status_code == 200, r.get_json()
        body = r.get_json()
        if "snapshot" in body:
            continue
        assert all(e in own for e in body["events"])
        assert body["events"] == own[len(own) - len(body["events"]):]


_CURSOR_GAMES: dict[int, tuple[Table, Table]] = {}


def _cursor_games(client: FlaskClient) -> tuple[Table, Table]:
    """Two games with a few moves each (made once per app: hypothesis calls the test often)."""
    key = id(client.application)
    if key not in _CURSOR_GAMES:
        tables = []
        for seed in (31, 32):
            t = Table(client, four_humans(seed=seed))
            for _ in range(3):
                seat = t.view(0)[0]["view"]["to_act"]
                view, etag = t.view(seat)
                for action in candidates(view["view"]):
                    if t.move(seat, action, etag).status_code == 200:
                        break
            tables.append(t)
        _CURSOR_GAMES[key] = (tables[0], tables[1])
    return _CURSOR_GAMES[key]


@pytest.mark.parametrize("bad", ["\u0661-\u0660", "0-\u0660", "\uff11-0"])
def test_an_event_id_of_other_digits_is_400(client: FlaskClient, bad: str) -> None:
    """Digits of other scripts (Arabic-Indic, full-width) are decimal digits to Python's
    ``\\d`` and ``int``, not to Redis: such an ``after`` was a 500 (Redis refused the XRANGE)."""
    t = Table(client, four_humans())
    for wait in ("", "&wait=1"):
        r = client.get(f"/games/{t.id}/events", query_string=f"after={quote(bad)}{wait}")
        assert r.status_code == 400 and r.get_json()["code"] == "invalid_event_id", r.get_json()


@pytest.mark.parametrize("bad", ["28034295391713460150-0463", "1-18446744073709551616"])
def test_an_event_id_beyond_64_bits_is_400(client: FlaskClient, bad: str) -> None:
    """Twenty digits fit the pattern but not Redis's 64-bit stream id: refused before Redis
    sees it (schemathesis found a 500), as ``after`` and as ``Last-Event-ID``."""
    t = Table(client, four_humans())
    r = client.get(f"/games/{t.id}/events?after={bad}&wait=1")
    assert r.status_code == 400 and r.get_json()["code"] == "invalid_event_id"
    r = client.get(f"/games/{t.id}/events", headers={"Last-Event-ID": bad, "Accept": "text/event-stream"})
    assert r.status_code == 400 and r.get_json()["code"] == "invalid_event_id"
    largest = f"{2**64 - 1}-{2**64 - 1}"
    r = client.get(f"/games/{t.id}/events?after={largest}")
    assert r.status_code == 200 and r.get_json()["events"] == []
