"""GET /games/{id}/events under granian (the ASGI app): the waiting is done by the process's
event hub on its event loop, not by a thread per listener. One Flask thread serves moves
while many streams and long-polls are open; every listener gets its own view's events,
as the poll renders them; Last-Event-ID resumes; heartbeats flow; a gone client gives its
stream back; one subscription per game and process."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
import requests
from api_players import candidates
from api_servers import api_server

from client import NO_RETRY, ApiProblem, Client
from service.redis_io import connect, is_cluster

PING = 0.3


@pytest.fixture(scope="module")
def base(redis_url: str, key_prefix: str) -> Iterator[str]:
    env = {"CANASTA_SSE_PING_SECONDS": str(PING), "CANASTA_SSE_MAX_SECONDS": "20", "CANASTA_POLL_MAX_WAIT": "10",
           "CANASTA_MAX_STREAMS_PER_TOKEN": "3"}
    with api_server(redis_url, key_prefix, threads=1, extra_env=env) as url:
        yield url


@dataclass
class Stream:
    """An SSE stream read in a thread: its events (with arrival times) and comments."""

    response: requests.Response
    events: list[tuple[float, str, str, dict[str, Any]]] = field(default_factory=list)  # (time, id, type, data)
    pings: list[float] = field(default_factory=list)

    def read(self) -> None:
        fields: dict[str, str] = {}
        try:
            for line in self.response.iter_lines(decode_unicode=True):
                if line == ": ping":
                    self.pings.append(time.monotonic())
                elif line == "" and "data" in fields:
                    self.events.append((time.monotonic(), fields["id"], fields["event"], orjson.loads(fields["data"])))
                    fields = {}
                elif ": " in line:
                    name, _, value = line.partition(": ")
                    fields[name] = value
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError, AttributeError):
            pass  # closed by the test, or by the server's stop at the module's end


def open_stream(base: str, game_id: str, token: str | None, **headers: str) -> Stream:
    h = {"Accept": "text/event-stream", **headers}
    if token:
        h["Authorization"] = f"Bearer {token}"
    r = requests.get(f"{base}/games/{game_id}/events", headers=h, stream=True, timeout=30)
    assert r.status_code == 200, r.text
    s = Stream(r)
    threading.Thread(target=s.read, daemon=True).start()
    return s


def new_game(api: Client, seed: int) -> tuple[str, dict[int, str]]:
    game = api.create_game("classic", [{"name": f"p{i}"} for i in range(4)], seed=seed)
    return game["id"], {s["seat"]: s["token"] for s in game["seats"]}


def play(api: Client, game_id: str, tokens: dict[int, str], moves: int) -> list[tuple[float, int]]:
    """``moves`` accepted moves; (time sent, new version) of each."""
    sent = []
    while len(sent) < moves:
        seat = api.game(game_id, tokens[0]).body["view"]["to_act"]
        r = api.game(game_id, tokens[seat])
        for action in candidates(r.body["view"]):
            t0 = time.monotonic()
            try:
                moved = api.move(game_id, tokens[seat], action, r.etag)
            except ApiProblem as e:
                assert e.status == 422, e
                continue
            assert time.monotonic() - t0 < 2, "a move waited behind the listeners"
            sent.append((t0, moved.body["version"]))
            break
    return sent


def wait_for(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_many_listeners_one_flask_thread_each_sees_its_own_view(base: str) -> None:
    with Client(base) as api:
        game_id, tokens = new_game(api, seed=41)
        viewers: list[int | None] = [None, 0, 1, 2, 3]
        streams = {v: [open_stream(base, game_id, tokens.get(v) if v is not None else None) for _ in range(2)]
                   for v in viewers}
        last = api.poll(game_id).last_id
        polls: dict[int, Any] = {}
        pollers = [threading.Thread(target=lambda s=s: polls.__setitem__(s, api.poll(game_id, tokens[s], after=last,
                                                                                       wait=8)))
                   for s in range(4)]
        for t in pollers:
            t.start()
        wait_for(lambda: all(len(s.events) == 1 for group in streams.values() for s in group))  # snapshots
        sent = play(api, game_id, tokens, 12)
        for t in pollers:
            t.join(10)
        assert all(p.events and p.events[0].body["version"] == sent[0][1] for p in polls.values())  # woken by the move
        last_version = sent[-1][1]
        wait_for(lambda: all(s.events[-1][3]["version"] == last_version for g in streams.values() for s in g))
        for v, group in streams.items():
            page = api.poll(game_id, tokens.get(v) if v is not None else None, after="0")
            expected = [(e.id, e.type, e.body) for e in page.events if e.body["version"] > 1]
            for s in group:
                assert s.events[0][2] == "snapshot"
                assert [(i, k, d) for _, i, k, d in s.events[1:]] == expected, f"viewer {v}"
        at = {version: t for t, version in sent}
        lag = [arrived - at[data["version"]] for g in streams.values() for s in g for arrived, _, _, data in s.events[1:]]
        assert max(lag) < 1.0
        for group in streams.values():
            for s in group:
                s.response.close()


def test_last_event_id_resumes_and_heartbeats_flow(base: str) -> None:
    with Client(base) as api:
        game_id, tokens = new_game(api, seed=42)
        play(api, game_id, tokens, 3)
        events = [e.id for e in api.poll(game_id, tokens[2], after="0").events]
        resumed = open_stream(base, game_id, tokens[2], **{"Last-Event-ID": events[0]})
        wait_for(lambda: len(resumed.events) == len(events) - 1)
        assert [i for _, i, _, _ in resumed.events] == events[1:]
        time.sleep(4 * PING)
        assert len(resumed.pings) >= 2
        sent = play(api, game_id, tokens, 1)
        wait_for(lambda: resumed.events[-1][3]["version"] == sent[0][1])
        resumed.response.close()


def test_stream_limits_refuse_with_429_and_a_gone_client_gives_its_stream_back(base: str, redis_url: str,
                                                                              key_prefix: str) -> None:
    with Client(base) as api:
        game_id, tokens = new_game(api, seed=43)
        held = [open_stream(base, game_id, tokens[1]) for _ in range(3)]
        r = requests.get(f"{base}/games/{game_id}/events", timeout=10,
                         headers={"Accept": "text/event-stream", "Authorization": f"Bearer {tokens[1]}"})
        assert r.status_code == 429 and r.headers["Content-Type"] == "application/problem+json"
        assert r.json()["code"] == "too_many_streams" and r.headers["Retry-After"]
        last = api.poll(game_id, tokens[1]).last_id
        with pytest.raises(ApiProblem) as refused:
            Client(base, retry=NO_RETRY).poll(game_id, tokens[1], after=last, wait=1)  # a waiting poll counts
        assert (refused.value.status, refused.value.code) == (429, "too_many_streams")
        # one subscription per game in the process, however many listen (a stream's head is
        # sent before its subscription, which on a cluster may wait on the hub's reader)
        channel = f"{key_prefix}:{{{game_id}}}:wake"
        client = connect(redis_url)
        on_node = {"target_nodes": client.get_node_from_key(channel)} if is_cluster(client) else {}
        wait_for(lambda: client.pubsub_shardnumsub(channel, **on_node)[0][1] > 0, 5)
        assert client.pubsub_shardnumsub(channel, **on_node)[0][1] == 1
        client.close()
        held[0].response.close()  # the client goes away: its stream is given back at once
        wait_for(lambda: requests.get(f"{base}/games/{game_id}/events?after={last}&wait=0.1", timeout=5,
                                      headers={"Authorization": f"Bearer {tokens[1]}"}).status_code == 200, 5)
        for s in held[1:]:
            s.response.close()



def test_a_head_long_poll_holds_no_flask_thread(base: str) -> None:
    """``HEAD`` is ``GET`` without a body, so Flask answers it from the events route, but the
    ASGI app hands only a ``GET`` to the event hub: a ``HEAD`` long-poll waited in a Flask
    thread for its whole ``wait``. With this server's one thread, a spectator (no token) held
    every request that Flask answers (a join, a hint, a dry run, a refused move) for 10 s per
    HEAD. A HEAD has no body to wait for: it is answered at once, with the GET's headers."""
    with Client(base) as api:
        game_id, _ = new_game(api, seed=44)
        last = api.poll(game_id).last_id
        answered: list[tuple[int, float]] = []

        def head() -> None:
            t0 = time.monotonic()
            r = requests.head(f"{base}/games/{game_id}/events?after={last}&wait=10", timeout=30)
            answered.append((r.status_code, time.monotonic() - t0))

        waiter = threading.Thread(target=head)
        waiter.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        assert requests.get(f"{base}/rules", timeout=30).status_code == 200  # a request only Flask answers
        assert time.monotonic() - t0 < 2, "a Flask request waited behind a HEAD long-poll"
        waiter.join(30)
        (status, took), = answered
        assert status == 200 and took < 2
