"""`canasta serve` heals: its embedded Valkey killed -9 while a person and bots play is started
again on its data directory, the API is ready again within 10 s, the bots play on, and no move
answered 200 is lost; a Valkey that keeps dying stops `canasta serve` (exit 1) instead."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from test_api_serve import Serve

from client import Client, RetryPolicy
from servers.embedded import running_on

PATIENT = RetryPolicy(attempts=60, backoff=0.1, max_backoff=0.5)  # a client that retries through an outage


def plainest(legal: dict[str, Any]) -> dict[str, Any]:
    if legal.get("must_answer_go_out"):
        return {"type": "answer_go_out", "yes": True}
    if legal.get("may_draw") or legal.get("may_pass"):
        return {"type": "draw" if legal.get("may_draw") else "pass"}
    return {"type": "discard", "card": legal["discards"][0]}


class Person(threading.Thread):
    """Plays seat 0 as fast as it may, through outages, and keeps every move answered 200."""

    def __init__(self, client: Client, game_id: str, token: str) -> None:
        super().__init__(daemon=True)
        self.seat = client.seat(game_id, token)
        self.answered: list[tuple[int, dict[str, Any]]] = []
        self.errors: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                view = self.seat.view()
                if view["status"] != "playing":
                    return
                if not self.seat.my_turn:
                    time.sleep(0.02)
                    continue
                action = plainest(view["view"]["legal"])
                body = self.seat.move(action)  # an Idempotency-Key, the same on every retry of this move
                self.answered.append((body["version"], action))
            except Exception as e:  # noqa: BLE001 - an outage: read again and go on (the key replays)
                self.errors.append(f"{type(e).__name__}: {str(e)[:80]}")
                time.sleep(0.1)

    def wait_moves(self, n: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while len(self.answered) < n and time.monotonic() < deadline and self.is_alive():
            time.sleep(0.05)
        return len(self.answered) >= n


def _valkey_pid(data: Path) -> int:
    pid = running_on(data)
    assert pid, "no Valkey runs on the data directory"
    return pid


@pytest.mark.slow
def test_a_killed_valkey_comes_back_the_bots_play_on_and_no_answered_move_is_lost(tmp_path: Path) -> None:
    data = tmp_path / "data"
    serve = Serve(data, "--workers", "2", "--bot-workers", "2", env={"CANASTA_EVENTS_KEEP": "0"}).ready()
    try:
        client = Client(serve.base, retry=PATIENT, timeout=10)
        game = client.create_game("classic", [{"name": "ann"}, {"bot": "random"}, {"bot": "standard"},
                                              {"bot": "random"}])
        person = Person(client, game["id"], str(game["seats"][0]["token"]))
        person.start()
        assert person.wait_moves(10, 60), person.errors
        before = len(person.answered)
        pid = _valkey_pid(data)
        killed_at = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        psutil.Process(pid).wait(5) if psutil.pid_exists(pid) else None
        ready = None
        with Client(serve.base, timeout=1, retry=RetryPolicy(attempts=0)) as probe:
            while time.monotonic() - killed_at < 30:
                try:
                    if probe.ready():
                        ready = time.monotonic() - killed_at
                        break
                except Exception:  # noqa: BLE001 - not answering yet
                    pass
                time.sleep(0.05)
        assert ready is not None and ready <= 10, f"not ready again within 10 s ({ready})"
        assert _valkey_pid(data) != pid
        # the bots play on: the person gets its turn back again and again
        assert person.wait_moves(before + 10, 60), (len(person.answered), person.errors[-5:])
        person.halt.set()
        person.join(30)
        # every move answered 200 is in the game, at its version, as it was made
        moves: dict[int, Any] = {}
        after = "0-0"
        while True:
            page = client.poll(game["id"], person.seat.token, after=after)
            if not page.events:
                break
            for event in page.events:
                if event.move is not None:
                    moves[event.version] = event.move
            after = page.last_id
        for version, action in person.answered:
            assert version in moves and moves[version]["seat"] == 0, version
            assert moves[version]["action"] == action, (version, moves[version], action)
        assert "starting it again" in serve.text() and "the Valkey is back" in serve.text()
        assert serve.proc.poll() is None  # canasta serve itself never stopped
    finally:
        serve.stop()


@pytest.mark.slow
def test_a_valkey_that_keeps_dying_stops_canasta_serve(tmp_path: Path) -> None:
    data = tmp_path / "data"
    serve = Serve(data).ready()
    try:
        deadline = time.monotonic() + 60
        while serve.proc.poll() is None and time.monotonic() < deadline:
            pid = running_on(data)
            if pid:
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.3)
        assert serve.proc.wait(30) == 1
        deadline = time.monotonic() + 5  # the output's reader catches up
        while "stopping" not in serve.text() and time.monotonic() < deadline:
            time.sleep(0.05)
        said = [line for line in serve.text().splitlines() if line.startswith("canasta serve:")]
        # it gave up: six deaths in the window, or a restart the killing caught mid-start, or
        # (on a machine slow enough that six restarts take longer than a worker's 20 s of
        # reconnecting) a worker that gave up on the Valkey first, which stops it all the same
        assert said[-1].startswith(("canasta serve: the Valkey died 6 times",
                                    "canasta serve: the Valkey does not start again",
                                    "canasta serve: cli.main worker exited with 1")), said
        assert "; stopping" in said[-1], said
        assert not running_on(data)
    finally:
        serve.stop()
