"""`canasta serve` without REDIS_URL: it answers, SIGTERM leaves no process behind, and started
again on the same data directory it continues every game (its Valkey keeps an append-only file)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests
from api_players import candidates
from api_servers import free_port, wait_healthy

from client import ApiProblem, Client


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _valkey_on(port: int) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["name", "cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if "valkey-server" in cmd and f":{port}" in cmd:
            found.append(p)
    return found


class Serve:
    """``canasta serve`` as a subprocess (no REDIS_URL: its embedded Valkey), output captured."""

    def __init__(self, data_dir: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CANASTA_DURABILITY")}, **(env or {})}
        env["CANASTA_KEY_PREFIX"] = "serve-test"
        env["CANASTA_BOT_BUDGET_MS"] = "5"
        env["CANASTA_TEST_SEEDS"] = "1"  # the tests deal known hands
        self.proc = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--port", str(self.port),
                                      "--workers", "1", "--threads", "4", "--bot-workers", "1",
                                      "--data-dir", str(data_dir), *extra],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)  # its own process group, as in a terminal
        self.output: list[str] = []
        reader = threading.Thread(target=lambda: self.output.extend(iter(self.proc.stdout.readline, "")), daemon=True)
        reader.start()

    def text(self) -> str:
        return "".join(self.output)

    def ready(self) -> Serve:
        wait_healthy(self.base, self.proc, timeout=60)
        deadline = time.monotonic() + 10
        while not any("curl" in line for line in self.output) and time.monotonic() < deadline:
            time.sleep(0.05)
        return self

    def redis_port(self) -> int:
        return int(re.search(r"redis://127\.0\.0\.1:(\d+)", self.text()).group(1))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)


def test_serve_starts_and_stops_cleanly(tmp_path: Path) -> None:
    data = tmp_path / "new" / "data"  # created if missing
    serve = Serve(data)
    try:
        serve.ready()
        base = serve.base
        assert requests.get(base + "/readyz", timeout=5).json() == {"status": "ready"}
        text = serve.text()
        redis_port = serve.redis_port()
        assert "curl -s -X POST " + base + "/games" in text
        assert f"data: {data}" in text and "append-only file" in text
        assert f"table: {base}/" in text
        assert requests.get(base + "/", timeout=5).headers["Content-Type"].startswith("text/html")
        children = _descendants(serve.proc.pid)
        valkeys = _valkey_on(redis_port)
        assert len(valkeys) == 1, "the embedded Valkey is running"
        assert any("granian" in " ".join(c.cmdline()) for c in children)
        r = requests.post(base + "/games", json={"preset": "classic", "seats": [{"name": "a"}, None, None, None]}, timeout=5)
        assert r.status_code == 201
        # a second serve on the same data directory refuses to start a second Valkey on it
        second = Serve(data)
        assert second.proc.wait(30) == 1
        assert "already runs on" in second.text()
    finally:
        code = serve.stop()
    assert code == 0, serve.text()
    _, alive = psutil.wait_procs(children + valkeys, timeout=10)
    assert not alive, f"left behind: {alive}"
    assert not _valkey_on(redis_port)
    assert any((data / "appendonlydir").iterdir())  # the data stays


def test_serve_stopped_and_started_again_continues_every_game(tmp_path: Path) -> None:
    """SIGTERM, then ``canasta serve`` on the same data directory: the games are where they
    were, and a bot run that was queued when it stopped is played after the restart."""
    data = tmp_path / "canasta"
    serve = Serve(data, "--no-bot-worker").ready()  # bot runs stay queued
    try:
        c = Client(serve.base)
        people = c.create_game("classic", [{"name": f"p{i}"} for i in range(4)], seed=3)
        tokens = {s["seat"]: s["token"] for s in people["seats"]}
        played = 0
        while played < 12:
            view = c.game(people["id"], tokens[0]).body
            seat = view["view"]["to_act"]
            r = c.game(people["id"], tokens[seat])
            action = candidates(r.body["view"])
            for a in action:
                try:
                    c.move(people["id"], tokens[seat], a, r.etag, idempotency_key=f"k{played}")
                except ApiProblem as e:
                    assert e.status == 422, e
                    continue
                played += 1
                break
        bots = c.create_game("finnish", [{"name": "ann"}, {"bot": "greedy"}, {"bot": "greedy"}, {"bot": "greedy"}],
                             seed=4)
        ann = bots["seats"][0]["token"]
        r = c.game(bots["id"], ann)
        r = c.move(bots["id"], ann, {"type": "draw"}, r.etag, idempotency_key="ann-1")
        card = r.body["view"]["legal"]["discards"][0]
        r = c.move(bots["id"], ann, {"type": "discard", "card": card}, r.headers["ETag"], idempotency_key="ann-2")
        queued_at = r.body["version"]
        assert r.body["view"]["to_act"] == 1  # a bot is to act; its run waits in the queue
        before = {seat: c.game(people["id"], tokens[seat]).body for seat in range(4)}
        c.http.close()
    finally:
        assert serve.stop() == 0, serve.text()
    serve = Serve(data).ready()  # the same directory, a new port, with its bot worker
    try:
        c = Client(serve.base)
        after = {seat: c.game(people["id"], tokens[seat]).body for seat in range(4)}
        assert after == before  # every seat's view, version and all
        view = c.game(people["id"], tokens[0]).body
        r = c.game(people["id"], tokens[view["view"]["to_act"]])
        assert any(_accepted(c, people["id"], tokens[view["view"]["to_act"]], a, r.etag)
                   for a in candidates(r.body["view"]))  # the game goes on
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            body = c.game(bots["id"], ann).body
            if body["status"] == "over" or body["view"]["to_act"] == 0:
                break
            time.sleep(0.1)
        assert body["version"] > queued_at and (body["status"] == "over" or body["view"]["to_act"] == 0), body
        c.http.close()
    finally:
        assert serve.stop() == 0, serve.text()


def _accepted(c: Client, game_id: str, token: str, action: dict, etag: str) -> bool:
    try:
        c.move(game_id, token, action, etag)
    except ApiProblem as e:
        assert e.status == 422, e
        return False
    return True


STOP_SECONDS = 3.0  # the bound for stopping everything, listeners connected


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_serve_stops_within_3_s_with_listeners_connected_and_bots_mid_run(tmp_path: Path, how: str) -> None:
    """Ctrl-C in a terminal (SIGINT to the whole process group) or SIGTERM to ``canasta
    serve``: the API, the bot workers and the Valkey are gone within 3 s while an SSE stream
    and a long-poll are open and bots are playing, and nothing prints an error."""
    serve = Serve(tmp_path / "data").ready()
    c = Client(serve.base)
    game = c.create_game("classic", [{"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}, {"bot": "random"}])
    stream = requests.get(f"{serve.base}/games/{game['id']}/events", headers={"Accept": "text/event-stream"},
                          stream=True, timeout=30)
    assert stream.status_code == 200
    lines = stream.iter_lines()
    assert next(lines).startswith(b"retry:")
    last = c.poll(game["id"]).last_id
    poller = threading.Thread(target=lambda: _quietly(lambda: requests.get(
        f"{serve.base}/games/{game['id']}/events?after={last}&wait=30", timeout=30)), daemon=True)
    poller.start()
    deadline = time.monotonic() + 10
    while c.game(game["id"]).body["version"] < 20 and time.monotonic() < deadline:
        time.sleep(0.05)  # the bots are playing
    children = _descendants(serve.proc.pid)
    redis_port = serve.redis_port()
    assert len(_valkey_on(redis_port)) == 1 and any("granian" in " ".join(p.cmdline()) for p in children)
    started = time.monotonic()
    if how == "ctrl-c":
        os.killpg(serve.proc.pid, signal.SIGINT)
    else:
        serve.proc.send_signal(signal.SIGTERM)
    code = serve.proc.wait(30)
    _, alive = psutil.wait_procs(children, timeout=max(0.1, STOP_SECONDS - (time.monotonic() - started)))
    took = time.monotonic() - started
    print(f"stopped in {took:.2f} s")
    assert not alive, f"left behind: {[(p.pid, _cmdline(p)) for p in alive]}"
    assert not _valkey_on(redis_port)
    assert took < STOP_SECONDS, took
    assert code == 0, serve.text()
    text = serve.text().lower()
    assert "traceback" not in text and "error" not in text and "sigkill" not in text, serve.text()
    stream.close()
    c.http.close()


def test_serve_killed_takes_its_api_and_workers_with_it_and_starts_again(tmp_path: Path) -> None:
    """Its children run in their own process group (a terminal's Ctrl-C reaches only serve,
    which stops them in order), so nothing of the terminal's reaches them: when ``canasta
    serve`` is killed with SIGKILL the API server, its workers and the bot workers still stop
    (SIGTERM from the kernel at their parent's death). The daemonized Valkey outlives it; a
    serve started again on the same directory (a supervisor's restart) stops that orphan and
    continues every game with its own."""
    data = tmp_path / "data"
    serve = Serve(data).ready()
    c = Client(serve.base)
    game = c.create_game("classic", [{"name": "ann"}, {"name": "bo"}, {"name": "cy"}, {"name": "di"}])
    c.http.close()
    children = _descendants(serve.proc.pid)
    redis_port = serve.redis_port()
    orphan = _valkey_on(redis_port)
    assert any("granian" in _cmdline(p) for p in children) and any("worker" in _cmdline(p) for p in children)
    assert all(os.getpgid(p.pid) != os.getpgid(serve.proc.pid) for p in children)
    serve.proc.kill()
    serve.proc.wait(10)
    _, alive = psutil.wait_procs(children, timeout=15)
    again = None
    try:
        assert not alive, f"left behind: {[(p.pid, _cmdline(p)) for p in alive]}"
        assert len(orphan) == 1 and not _gone(orphan[0])
        again = Serve(data).ready()
        assert _gone(orphan[0])
        c = Client(again.base)
        assert c.game(game["id"], game["seats"][0]["token"]).body["version"] == game["version"]
        c.http.close()
    finally:
        if again is not None:
            assert again.stop() == 0, again.text()
        for p in alive + [p for p in orphan if not _gone(p)]:
            p.kill()


def _gone(p: psutil.Process) -> bool:
    """Ended (a zombie too: whoever adopted it has not reaped it yet)."""
    try:
        return p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _quietly(call: Any) -> None:
    try:
        call()
    except requests.RequestException:
        pass


def test_serve_help() -> None:
    out = subprocess.run([sys.executable, "-m", "cli.main", "serve", "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "--workers" in out.stdout and "--threads" in out.stdout


def _cmdline(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return "(gone)"
