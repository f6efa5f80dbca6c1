"""Two API processes on one Redis: moves alternate between them, nothing is lost or doubled;
an event stream read from one sees the moves sent to the other."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from api_helpers import replay_log
from api_players import candidates
from api_servers import api_server

from client import ApiProblem, Client, Event
from service.store import Store


@pytest.fixture(scope="module")
def two_servers(redis_url: str, key_prefix: str):
    fast = {"CANASTA_SSE_PING_SECONDS": "0.5"}
    with api_server(redis_url, key_prefix, extra_env=fast) as a, api_server(redis_url, key_prefix, extra_env=fast) as b:
        clients = Client(a), Client(b)
        yield clients
        for c in clients:  # close idle keep-alive connections before the server stops
            c.http.close()


def test_moves_alternate_between_processes(two_servers: tuple[Client, Client], store: Store) -> None:
    a, b = two_servers
    game = a.create_game("classic", [{"name": f"p{i}"} for i in range(4)], seed=99)
    gid = game["id"]
    tokens = {s["seat"]: s["token"] for s in game["seats"]}
    # a reader on server B follows the game by SSE while moves go to both servers
    streamed: list[Event] = []
    done = threading.Event()

    def follow() -> None:
        for event in b.stream(gid, tokens[1], read_timeout=30):
            if event.type in ("move", "snapshot"):
                streamed.append(event)
            if event.type == "move" and event.body["moves"] >= 60 or done.is_set():
                return

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    deadline = time.monotonic() + 10
    while not streamed and time.monotonic() < deadline:  # its snapshot first: no move before the stream
        time.sleep(0.01)
    assert streamed and streamed[0].type == "snapshot"
    servers = [a, b]
    accepted = 0
    turn = 0
    while accepted < 150:
        spectator = servers[turn % 2].game(gid).body
        if spectator["status"] == "over":
            break
        seat = spectator["view"]["to_act"]
        r = servers[turn % 2].game(gid, tokens[seat])
        for action in candidates(r.body["view"]):
            turn += 1
            try:
                servers[turn % 2].move(gid, tokens[seat], action, r.etag, idempotency_key=f"m{accepted}")
            except ApiProblem as e:
                assert e.status == 422, e
                continue
            accepted += 1
            break
    final = a.game(gid).body
    # the same move sent to both servers at once: one wins
    seat = final["view"]["to_act"]
    view = b.game(gid, tokens[seat])
    action = candidates(view.body["view"])[0]
    results: list[int] = []

    def send(client: Client) -> None:
        try:
            results.append(client.move(gid, tokens[seat], action, view.etag).status)
        except ApiProblem as e:
            results.append(e.status)

    racers = [threading.Thread(target=send, args=(c,)) for c in (a, b, a, b)]
    for t in racers:
        t.start()
    for t in racers:
        t.join(10)
    assert Counter(results) in (Counter({200: 1, 412: 3}), Counter({200: 1, 412: 2, 422: 1}),
                                Counter({200: 1, 412: 1, 422: 2}), Counter({200: 1, 422: 3})), results
    accepted += 1
    reader.join(35)  # it stops at the 60th move (or sooner, if the game ended: its stream ends)
    done.set()
    final = b.game(gid).body
    assert store.event_count(gid) == final["version"]
    lines = [__import__("orjson").loads(x) for x in store.read_log(gid)]
    moves = [x for x in lines if "move" in x]
    assert [x["move"] for x in moves] == list(range(1, accepted + 1))
    replay_log(lines)
    # the stream read from B saw every move made through A and B, in order, once
    ids = [e.id for e in streamed if e.type == "move"]
    assert len(ids) == len(set(ids)) >= 60
    numbers = [e.body["moves"] for e in streamed if e.type == "move"]
    assert numbers == list(range(1, len(numbers) + 1))
