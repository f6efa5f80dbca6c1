"""Metrics and logs over real processes: ``canasta serve`` itself (2 granian workers, a real
bot worker, its fresh PROMETHEUS_MULTIPROC_DIR), its stderr captured; and ``canasta worker
--metrics-port`` alone. Request ids, one JSON access line per request (an event stream's when
it ends), counts summed over processes, a bot game in the metrics, a worker killed -9."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from addresses import session_from
from api_servers import api_server, free_port, stop, wait_healthy
from metrics_helpers import json_lines, samples, total, value

from bench.moves import choose
from service import botqueue, procstat
from service.metrics import DIR_PREFIX, ENV_DIR
from service.store import Store, connect
from tests.conftest_redis import queue_client
from web.observe import REQUEST_ID_RE

ROOT = Path(__file__).resolve().parents[2]
SSE_SECONDS = 2  # CANASTA_SSE_MAX_SECONDS of the server: a stream's whole life
BOTS_GAME = {"preset": "classic", "rules": {"target_score": 50}, "seats": [{"bot": "random"}] * 4}
WAIT_SECONDS = 60.0


@dataclass
class Served:
    base: str
    proc: subprocess.Popen[bytes]
    stderr: Path
    prefix: str

    def scrape(self, **headers: str) -> str:
        r = requests.get(self.base + "/metrics", headers=headers, timeout=10)
        assert r.status_code == 200, r.text
        return r.text

    def granian_workers(self) -> list[int]:
        """The API's worker processes (granian's main process is a child of canasta serve)."""
        for child in procstat.children(self.proc.pid):
            if b"granian" in Path(f"/proc/{child}/cmdline").read_bytes():
                return procstat.children(child)
        return []

    def metrics_dir(self) -> Path:
        worker = self.granian_workers()[0]
        environ = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
        (found,) = [e.split(b"=", 1)[1].decode() for e in environ if e.startswith(ENV_DIR.encode() + b"=")]
        return Path(found)

    def access_lines(self) -> list[dict[str, Any]]:
        return [line for line in json_lines(self.stderr)[0] if line.get("logger") == "canasta.access"]


@pytest.fixture(scope="module")
def served(redis_url: str, key_prefix: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    prefix = key_prefix + ":serve"
    port = free_port()
    logs = tmp_path_factory.mktemp("serve")
    stderr = logs / "stderr.log"
    env = {**os.environ, "CANASTA_KEY_PREFIX": prefix, "CANASTA_TEST_SEEDS": "1", "CANASTA_RATE_LIMIT": "0",
           "CANASTA_BOT_BUDGET_MS": "5", "CANASTA_SSE_MAX_SECONDS": str(SSE_SECONDS), "CANASTA_SSE_PING_SECONDS": "1"}
    env.pop("CANASTA_METRICS_TOKEN", None)
    env.pop(ENV_DIR, None)
    with stderr.open("wb") as err, (logs / "stdout.log").open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--port", str(port), "--workers", "2",
                                 "--bot-workers", "1", "--redis-url", redis_url], env=env, cwd=ROOT, stdout=out, stderr=err)
    base = f"http://127.0.0.1:{port}"
    served = Served(base, proc, stderr, prefix)
    try:
        wait_healthy(base, proc, timeout=60)
        deadline = time.monotonic() + 30
        while len(served.granian_workers()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        yield served
    finally:
        run_dir = None
        try:
            run_dir = served.metrics_dir()
        except (ValueError, IndexError, OSError):
            pass
        stop(proc, timeout=30)
        botqueue.rq_queue(queue_client(redis_url), botqueue.config_for(prefix)).empty()
        Store(connect(redis_url), prefix).delete_all()
        if run_dir is not None:
            assert not run_dir.exists(), "canasta serve removes its metrics directory at the stop"


def _create(base: str, body: dict[str, Any]) -> dict[str, Any]:
    r = requests.post(base + "/games", json=body, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()


def _one_line_each(served: Served, ids: list[str], timeout: float = 10.0) -> dict[str, dict[str, Any]]:
    """The access line of each request id, once all are there: exactly one each."""
    deadline = time.monotonic() + timeout
    while True:
        lines = served.access_lines()
        found = {rid: [line for line in lines if line.get("request_id") == rid] for rid in ids}
        if all(found.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert all(len(each) == 1 for each in found.values()), {rid: len(each) for rid, each in found.items()}
    return {rid: each[0] for rid, each in found.items()}


def test_request_ids_and_one_json_line_per_request(served: Served) -> None:
    base = served.base
    game = _create(base, {"preset": "classic", "seed": 2, "seats": [{"name": f"p{i}"} for i in range(4)]})
    gid, token = game["id"], game["seats"][0]["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    ok = requests.get(f"{base}/games/{gid}", headers={**bearer, "X-Request-Id": "srv-ok"}, timeout=10)
    same = requests.get(f"{base}/games/{gid}", headers={**bearer, "If-None-Match": ok.headers["ETag"],
                                                       "X-Request-Id": "srv-304"}, timeout=10)
    problem = requests.get(f"{base}/games/{gid}", headers={"Authorization": "Bearer x", "X-Request-Id": "srv-401"},
                           timeout=10)
    gone = requests.get(f"{base}/nowhere", headers={"X-Request-Id": "srv-404"}, timeout=10)
    assert (ok.status_code, same.status_code, problem.status_code, gone.status_code) == (200, 304, 401, 404)
    for r, rid in ((ok, "srv-ok"), (same, "srv-304"), (problem, "srv-401"), (gone, "srv-404")):
        assert r.headers["X-Request-Id"] == rid
    started = time.monotonic()
    with requests.get(f"{base}/games/{gid}/events", headers={**bearer, "Accept": "text/event-stream",
                                                             "X-Request-Id": "srv-sse"}, stream=True, timeout=10) as sse:
        assert sse.status_code == 200 and sse.headers["X-Request-Id"] == "srv-sse"
        streamed = b"".join(sse.iter_content(None))  # the server ends it after SSE_SECONDS
    assert time.monotonic() - started >= SSE_SECONDS * 0.9
    made = {}
    for n, bad in enumerate(("x" * 10_240, "has space", "tab\there", "no/slash")):
        r = requests.get(f"{base}/healthz", headers={"X-Request-Id": bad}, timeout=10)
        assert r.status_code == 200 and r.headers["X-Request-Id"] != bad
        assert REQUEST_ID_RE.fullmatch(r.headers["X-Request-Id"])
        made[n] = r.headers["X-Request-Id"]
    # a newline inside the value (a folded line) or a bare CR never reaches the app: granian
    # refuses the request (and nothing is logged of it)
    for raw in (b"X-Request-Id: evil\r\n Injected: 1", b"X-Request-Id: evil\rInjected: 1"):
        with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=10) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + raw + b"\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 400")

    lines = _one_line_each(served, ["srv-ok", "srv-304", "srv-401", "srv-404", "srv-sse", *made.values()])
    read = lines["srv-ok"]
    assert {"time", "level", "logger", "msg", "request_id", "method", "route", "path", "status", "code", "duration_ms",
            "client", "bytes_out", "game", "version"} <= set(read)
    assert (read["route"], read["game"], read["version"], read["status"]) == ("/games/{game_id}", gid, game["version"], 200)
    assert read["bytes_out"] == len(ok.content) and read["client"] == "127.0.0.1" and read["time"].endswith("Z")
    assert lines["srv-304"]["status"] == 304 and lines["srv-304"]["bytes_out"] == 0
    assert (lines["srv-401"]["status"], lines["srv-401"]["code"]) == (401, "invalid_token")
    assert (lines["srv-404"]["route"], lines["srv-404"]["code"]) == ("other", "not_found")
    sse_line = lines["srv-sse"]
    assert sse_line["route"] == "/games/{game_id}/events" and sse_line["bytes_out"] == len(streamed)
    assert sse_line["duration_ms"] >= SSE_SECONDS * 900
    text = served.stderr.read_text()
    assert "x" * 100 not in text and "has space" not in text and "evil" not in text and "Injected" not in text
    objects, others = json_lines(served.stderr)
    assert objects and not [o for o in others if not o.startswith("canasta serve:")], others[:3]


def test_metrics_are_for_loopback_clients_not_forwarded_ones(served: Served) -> None:
    assert requests.get(served.base + "/metrics", timeout=10).status_code == 200
    assert session_from("127.0.0.2").get(served.base + "/metrics", timeout=10).status_code == 200
    proxied = requests.get(served.base + "/metrics", headers={"X-Forwarded-For": "203.0.113.7"}, timeout=10)
    assert proxied.status_code == 403 and proxied.json()["code"] == "metrics_not_local"


def test_request_counts_are_summed_over_the_api_processes(served: Served) -> None:
    """Requests on new connections reach both workers; the scrape counts every one, and the
    shared directory shows two API processes that answered some."""
    route = {"route": "/rules", "method": "GET", "status": "200"}
    before = value(served.scrape(), "canasta_http_requests_total", **route)
    n = 60
    for _ in range(n):
        with requests.Session() as fresh:  # a new connection each: the kernel spreads them over the workers
            assert fresh.get(served.base + "/rules", timeout=10).status_code == 200
    assert value(served.scrape(), "canasta_http_requests_total", **route) == before + n
    from prometheus_client.multiprocess import MultiProcessCollector

    answered = set()
    for worker in served.granian_workers():
        files = [str(p) for p in served.metrics_dir().glob(f"counter_{worker}.db")]
        for family in MultiProcessCollector.merge(files):
            if any(s.labels.get("route") == "/rules" and s.value > 0 for s in family.samples):
                answered.add(worker)
    assert len(answered) == 2, "both API processes answered some (a loaded kernel may favour one: rerun)"
    assert served.metrics_dir().name.startswith(DIR_PREFIX)


def _play_human_moves(base: str, moves: int, seed: int) -> str:
    """A game of one person (seat 0) and three random bots: ``moves`` of seat 0's moves, each
    chosen from its view's legal summary."""
    game = _create(base, {"preset": "classic", "seed": seed, "seats": [{"name": "me"}] + [{"bot": "random"}] * 3})
    gid, token = game["id"], game["seats"][0]["token"]
    rng = random.Random(seed)
    played = 0
    deadline = time.monotonic() + WAIT_SECONDS
    while played < moves and time.monotonic() < deadline:
        r = requests.get(f"{base}/games/{gid}", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        body = r.json()
        if body["status"] != "playing":
            break
        if body["view"]["to_act"] != 0:
            time.sleep(0.05)  # the bots play
            continue
        move = choose(body["view"], rng)
        assert move is not None
        r = requests.post(f"{base}/games/{gid}/moves", data=move, timeout=10,
                          headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                                   "If-Match": f'"{body["version"]}"'})
        assert r.status_code == 200, r.text
        played += 1
    assert played == moves
    return gid


def _wait_over(base: str, gid: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if requests.get(f"{base}/games/{gid}", timeout=10).json()["status"] == "over":
            return
        time.sleep(0.1)
    raise AssertionError(f"game {gid} did not end")


def test_a_bot_game_and_moves_show_in_the_metrics(served: Served) -> None:
    before = served.scrape()
    bots_game = _create(served.base, BOTS_GAME)
    _play_human_moves(served.base, 8, seed=3)
    _wait_over(served.base, bots_game["id"])
    text = served.scrape()

    def grew(name: str, by: float = 1, **labels: str) -> None:
        assert total(text, name, **labels) >= total(before, name, **labels) + by, (name, labels)

    grew("canasta_move_seconds_count", 8)
    grew("canasta_games_created_total", 2)
    grew("canasta_games_finished_total", 1)  # counted by the bot worker's process
    grew("canasta_bot_turn_seconds_count", 10, level="random")
    grew("canasta_bot_wait_seconds_count", 2, level="random")
    grew("canasta_bot_runs_total", 2, outcome="done")
    grew("canasta_http_requests_total", 8, route="/games/{game_id}/moves", method="POST", status="200")
    assert ("canasta_bot_queue_depth", (("lane", "persons"),)) in samples(text)
    assert ("canasta_bot_queue_depth", (("lane", "bots"),)) in samples(text)
    assert value(text, "canasta_open_listeners") == 0


def _open_stream(base: str, gid: str, token: str) -> socket.socket:
    """An SSE stream on a connection of its own, its head read."""
    port = int(base.rsplit(":", 1)[1])
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"GET /games/{gid}/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
              f"Authorization: Bearer {token}\r\n\r\n".encode())
    assert s.recv(4096).startswith(b"HTTP/1.1 200")
    return s


def _closed(s: socket.socket) -> bool:
    """Whether the server closed the stream (it sends nothing else but pings meanwhile)."""
    s.settimeout(0.05)
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return True
    except (TimeoutError, BlockingIOError):
        return False
    except OSError:
        return True


@pytest.mark.slow
def test_a_worker_killed_9_leaves_the_scrape_whole(served: Served) -> None:
    """Streams open on both workers; one worker is killed -9 and granian starts another:
    the scrape still answers, counts only the streams still open (the dead worker's are
    dropped), and no count went down."""
    game = _create(served.base, {"preset": "classic", "seed": 4, "seats": [{"name": f"p{i}"} for i in range(4)]})
    tokens = [s["token"] for s in game["seats"]]
    before = served.scrape()
    base_listeners = value(before, "canasta_open_listeners")
    streams = [_open_stream(served.base, game["id"], tokens[n % 4]) for n in range(8)]
    try:
        assert value(served.scrape(), "canasta_open_listeners") == base_listeners + 8
        workers = served.granian_workers()
        assert len(workers) == 2
        victim = workers[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = served.granian_workers()
            if len(now) == 2 and victim not in now:
                break
            time.sleep(0.1)
        wait_healthy(served.base, timeout=30)
        time.sleep(0.5)
        open_now = [s for s in streams if not _closed(s)]
        assert 0 < len(open_now) < 8, "the streams were spread over both workers (a loaded kernel may not: rerun)"
        after = served.scrape()
        assert value(after, "canasta_open_listeners") == base_listeners + len(open_now)
        for name in ("canasta_http_requests_total", "canasta_http_request_seconds_count", "canasta_games_created_total"):
            assert total(after, name) >= total(before, name), name
        assert not list(served.metrics_dir().glob(f"gauge_livesum_{victim}.db"))
        assert list(served.metrics_dir().glob(f"counter_{victim}.db"))  # kept: its counts are in the totals
    finally:
        for s in streams:
            s.close()
    exits = [line for line in json_lines(served.stderr)[0] if line.get("logger") == "_granian"]
    assert any("worker" in line["msg"].lower() for line in exits), "granian's own lines are JSON too"


def test_a_worker_alone_serves_its_metrics_with_a_token(redis_url: str, key_prefix: str, tmp_path: Path) -> None:
    """``canasta worker --pool 2 --metrics-port`` on a box of its own: its bot metrics and the
    queue's depth, behind CANASTA_METRICS_TOKEN; its logs are JSON; its directory is gone
    after it stops."""
    prefix = key_prefix + ":alone"
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "CANASTA_KEY_PREFIX": prefix, "CANASTA_BOT_BUDGET_MS": "5",
           "CANASTA_METRICS_TOKEN": "worker-secret", "TMPDIR": str(tmp_path)}
    env.pop(ENV_DIR, None)
    err = tmp_path / "worker.log"
    with err.open("wb") as out:
        worker = subprocess.Popen([sys.executable, "-m", "cli.main", "worker", "--pool", "2", "-v",
                                   "--redis-url", redis_url, "--metrics-port", str(port)],
                                  env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        with api_server(redis_url, prefix, extra_env={"CANASTA_METRICS_TOKEN": ""}) as base:
            gid = _create(base, BOTS_GAME)["id"]
            _wait_over(base, gid)
        deadline = time.monotonic() + 30
        while True:
            try:
                r = requests.get(url, headers={"Authorization": "Bearer worker-secret"}, timeout=5)
                if r.status_code == 200 and total(r.text, "canasta_bot_runs_total", outcome="done") >= 1:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "the worker's metrics did not show its bot runs"
            time.sleep(0.2)
        text = r.text
        assert total(text, "canasta_bot_turn_seconds_count", level="random") > 0
        assert total(text, "canasta_bot_wait_seconds_count") > 0
        assert value(text, "canasta_games_finished_total") == 1
        assert 'canasta_bot_queue_depth{lane="persons"}' in text and 'canasta_bot_queue_depth{lane="bots"}' in text
        assert requests.get(url, timeout=5).status_code == 401
        assert requests.get(url, headers={"Authorization": "Bearer wrong"}, timeout=5).status_code == 401
        run_dirs = list(tmp_path.glob(DIR_PREFIX + "*"))
        assert len(run_dirs) == 1
    finally:
        stop(worker, timeout=40)
        botqueue.rq_queue(queue_client(redis_url), botqueue.config_for(prefix)).empty()
        Store(connect(redis_url), prefix).delete_all()
    assert not list(tmp_path.glob(DIR_PREFIX + "*"))
    objects, others = json_lines(err)
    assert objects and not others, others[:3]
    assert any(line.get("logger", "").startswith("rq.") for line in objects)
