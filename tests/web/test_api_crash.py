"""The game store is killed -9 in the middle of play: no move answered 200 is lost or applied
twice. Real processes: a durable Valkey (append-only file, fsynced before replies), an API
server process (granian), and client threads that play games over HTTP as a careful client
does: every move with an Idempotency-Key, retried with the same key after a 503 or a broken
connection until it gets an answer. While the store is down the API answers 503; after it is
restarted on the same data directory and port, 200 again. Then every move that got a 200 is
in the game's state and log exactly once, and every game is played to its end."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
import requests
from api_helpers import replay_log
from api_players import candidates
from api_servers import api_server, free_port

from servers.embedded import EmbeddedRedis
from service.store import Store

RULES = {"target_score": 1000}  # short games: each is played to its end
PLAYERS = 4


@dataclass
class Player:
    """One client thread's game: the moves the server answered 200, in order."""

    base: str
    game_id: str = ""
    tokens: dict[int, str] = field(default_factory=dict)
    accepted: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (seat, action)
    statuses: list[int] = field(default_factory=list)
    sent: int = 0
    over: bool = False

    def __post_init__(self) -> None:
        self.http = requests.Session()

    def call(self, method: str, path: str, **kw: Any) -> requests.Response:
        """A request retried after a 503 or a broken connection, as it is (same headers, same
        Idempotency-Key), until the server gives another answer."""
        deadline = time.monotonic() + 60
        while True:
            try:
                r = self.http.request(method, self.base + path, timeout=10, **kw)
            except requests.ConnectionError:
                self.statuses.append(0)
            else:
                self.statuses.append(r.status_code)
                if r.status_code != 503:
                    return r
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method} {path}: no answer but 503 for a minute")
            time.sleep(0.05)

    def start(self, seed: int) -> None:
        body = {"preset": "classic", "seats": [{"name": f"p{i}"} for i in range(PLAYERS)], "rules": RULES, "seed": seed}
        r = self.call("POST", "/games", json=body)
        assert r.status_code == 201, r.text
        created = r.json()
        self.game_id = created["id"]
        self.tokens = {s["seat"]: s["token"] for s in created["seats"]}

    def step(self) -> None:
        """One accepted move (the first candidate the server accepts)."""
        spectator = self.call("GET", f"/games/{self.game_id}").json()
        if spectator["status"] == "over":
            self.over = True
            return
        seat = spectator["view"]["to_act"]
        auth = {"Authorization": f"Bearer {self.tokens[seat]}"}
        r = self.call("GET", f"/games/{self.game_id}", headers=auth)
        view, etag = r.json()["view"], r.headers["ETag"]
        for action in candidates(view):
            self.sent += 1
            headers = {**auth, "If-Match": etag, "Idempotency-Key": f"{self.game_id}-{self.sent}"}
            r = self.call("POST", f"/games/{self.game_id}/moves", json={"action": action}, headers=headers)
            if r.status_code == 200:
                assert r.json()["version"] == int(etag.strip('"')) + 1
                self.accepted.append((seat, action))
                return
            assert r.status_code == 422, (r.status_code, r.text)  # illegal after all: try the next


def _wait_ready(base: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(base + "/readyz", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.05)
    raise TimeoutError("the API is not ready")


def crash_and_recover(tmp_path: Path, key_prefix: str, *, threads: int, kills: int, seed: int,
                      durability: str = "fsync") -> None:
    rng = random.Random(seed)
    data, port = tmp_path / "valkey", free_port()
    store_server = EmbeddedRedis(port=port, data_dir=data)
    url = store_server.start()
    prefix = f"{key_prefix}-crash"
    down_answers: list[int] = []
    try:
        with api_server(url, prefix, threads=8, extra_env={"CANASTA_DURABILITY": durability}) as base:
            players = [Player(base) for _ in range(threads)]
            for i, p in enumerate(players):
                p.start(seed * 100 + i)
            stop = threading.Event()
            failures: list[BaseException] = []

            def play(p: Player) -> None:
                try:
                    while not stop.is_set() and not p.over:
                        p.step()
                except BaseException as e:  # noqa: BLE001 - reported by the test
                    failures.append(e)

            workers = [threading.Thread(target=play, args=(p,), daemon=True) for p in players]
            for w in workers:
                w.start()
            for _ in range(kills):
                time.sleep(rng.uniform(0.3, 1.5))  # a random moment of play
                os.kill(store_server.pid, signal.SIGKILL)
                deadline = time.monotonic() + 5
                while store_server.alive() and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert not store_server.alive()
                time.sleep(rng.uniform(0.2, 0.8))  # down for a while: the API answers 503
                down_answers.append(requests.get(base + "/readyz", timeout=5).status_code)
                r = requests.get(f"{base}/games/{players[0].game_id}", timeout=5)
                down_answers.append(r.status_code)
                store_server.stop()  # what is left of it: its files, the directory's owner lock
                store_server = EmbeddedRedis(port=port, data_dir=data)  # the same directory and port
                store_server.start()
                _wait_ready(base)
            time.sleep(0.5)  # some play after the last restart
            stop.set()
            for w in workers:
                w.join(90)
            assert not failures, failures
            assert down_answers and set(down_answers) == {503}, down_answers
            assert any(503 in p.statuses for p in players), "no client met the outage: the test proves nothing"
            # every game is played to its end, through the same API
            for p in players:
                for _ in range(5000):
                    if p.over:
                        break
                    p.step()
                assert p.over
        # what the store holds: every accepted move exactly once, in order, and nothing else
        client = redis.Redis.from_url(url)
        try:
            store = Store(client, prefix)
            for p in players:
                lines = [orjson.loads(line) for line in store.read_log(p.game_id)]
                moves = [(x["seat"], x["action"]) for x in lines if "move" in x]
                assert [x["move"] for x in lines if "move" in x] == list(range(1, len(moves) + 1))
                assert moves == [(seat, orjson.loads(orjson.dumps(a))) for seat, a in p.accepted]
                final = replay_log(lines)
                assert final.phase == "over"
                record = store.load(p.game_id)
                assert record is not None and record.meta["status"] == "over"
                versions = [int(e[1][b"v"]) for e in client.xrange(store.keys.events(p.game_id))]
                # every version's event once, in order (the stream keeps the newest ones)
                assert versions == list(range(record.version - len(versions) + 1, record.version + 1))
                assert store.event_count(p.game_id) == record.version, client.xinfo_stream(store.keys.events(p.game_id))
            store.delete_all()
        finally:
            client.close()
    finally:
        store_server.stop()


def test_store_killed_mid_play_loses_nothing(tmp_path: Path, key_prefix: str) -> None:
    crash_and_recover(tmp_path, key_prefix, threads=3, kills=1, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "durability"), [(2, "fsync"), (3, "waitaof"), (4, "fsync")])
def test_store_killed_again_and_again(tmp_path: Path, key_prefix: str, seed: int, durability: str) -> None:
    crash_and_recover(tmp_path, key_prefix, threads=6, kills=4, seed=seed, durability=durability)
