"""The whole service on this machine for one player: what ``canasta serve`` runs (a private
Valkey unless a Redis URL is given, the API under granian, a bot worker), on a free
loopback port and quietly, so that ``canasta play`` needs no server started beforehand.

The parts are ``canasta serve``'s own (:mod:`web.serve`, :mod:`servers.embedded`). They run
in their own session, so that the terminal's Ctrl-C reaches only the player's program,
which then stops them in order; their output goes to a log file, kept when they fail.
Should the program die without stopping them (killed, or its terminal gone), a small
reaper process notices (the pipe it reads from closes) and stops them instead, so that no
server is left running for a game nobody plays.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from servers.embedded import EmbeddedRedis
from web.serve import _stop as stop_processes
from web.serve import api_command, api_env, part_name, wait_healthy, worker_available

STARTUP_SECONDS = 60.0  # a loaded 2-core machine takes a few seconds; a broken one fails sooner


class ServiceFailed(RuntimeError):
    """A part of the local service did not start; the message says where its log is."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalService:
    """``start()`` returns the API's base URL; ``stop()`` (or leaving a ``with`` block)
    stops every process it started. ``redis_url``: use that Redis instead of a private
    Valkey (one server, or a cluster with ``queue_url``, the bot queue's one server:
    ValueError at once without it, as ``canasta serve`` refuses). ``test_seeds``: let games be created with a known seed (a private server only
    ever deals to this player)."""

    def __init__(self, *, redis_url: str | None = None, queue_url: str | None = None, threads: int = 8,
                 bot_workers: int = 1, test_seeds: bool = False) -> None:
        from service.config import queue_url_for

        self.redis_url = redis_url
        # with a Redis URL: the queue's (service.config.queue_url_for); a private Valkey holds both
        self.queue_url = queue_url_for(redis_url, queue_url) if redis_url else None
        self.threads = threads
        self.bot_workers = bot_workers
        self.test_seeds = test_seeds
        self.base_url = ""
        self.embedded: EmbeddedRedis | None = None
        self.procs: list[subprocess.Popen[bytes]] = []
        self.reaper: subprocess.Popen[bytes] | None = None
        fd, name = tempfile.mkstemp(prefix="canasta-play-", suffix=".log")
        os.close(fd)
        self.log_path = Path(name)
        self._failed = False

    def __enter__(self) -> LocalService:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        try:
            return self._start()
        except BaseException:
            self._failed = True
            self.stop()
            raise

    def _start(self) -> str:
        url = self.redis_url
        if not url:
            self.embedded = EmbeddedRedis()
            url = self.embedded.start()
        port = free_port()
        env = api_env({**os.environ, "REDIS_URL": url}, self.threads)
        env.setdefault("CANASTA_LOG_FORMAT", "text")  # its log file is read by a person, when it fails
        if self.queue_url:  # the API's and the worker's
            env["CANASTA_QUEUE_URL"] = self.queue_url
        if self.test_seeds:
            env["CANASTA_TEST_SEEDS"] = "1"
        with self.log_path.open("ab") as log:
            api = subprocess.Popen(api_command("127.0.0.1", port, 1), env=env,
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
            self.procs.append(api)
            if worker_available():
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-m", "cli.main", "worker", "--redis-url", url, "--pool", str(self.bot_workers)],
                    env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))
        self.base_url = f"http://127.0.0.1:{port}"
        pids = [p.pid for p in self.procs] + ([self.embedded.pid] if self.embedded is not None else [])
        self.reaper = subprocess.Popen([sys.executable, "-m", "cli.local_service", *map(str, pids)],
                                       stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       start_new_session=True)
        if not wait_healthy(self.base_url, api, timeout=STARTUP_SECONDS):
            raise ServiceFailed(f"the local API server did not start; its log: {self.log_path}")
        return self.base_url

    def failed_parts(self) -> list[str]:
        """The parts that have stopped on their own (a running game needs them all)."""
        return [part_name(p) for p in self.procs if p.poll() is not None]

    def stop(self) -> None:
        """Stop everything started, in order: API and worker, then the Valkey. The log file
        is removed unless something failed."""
        try:
            stop_processes(self.procs)
        finally:
            self.procs = []
            if self.embedded is not None:
                self.embedded.stop()
                self.embedded = None
            if self.reaper is not None:
                if self.reaper.stdin is not None:  # always our pipe
                    self.reaper.stdin.close()  # nothing left to reap: it exits
                self.reaper.wait(10)
                self.reaper = None
            if not self._failed:
                self.log_path.unlink(missing_ok=True)


REAP_GRACE_SECONDS = 10.0


def reap(pids: list[int]) -> None:
    """Wait until the player's program has gone (our stdin, its pipe, closes), then stop
    whatever of ``pids`` still runs: SIGTERM, and SIGKILL after a grace period."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdin.buffer.read()
    alive = [pid for pid in pids if _signal(pid, signal.SIGTERM)]
    deadline = time.monotonic() + REAP_GRACE_SECONDS
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in alive if _signal(pid, 0)]
    for pid in alive:
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, sig: int) -> bool:
    """Send ``sig``; False when there is no such process (or it is not ours)."""
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


if __name__ == "__main__":
    reap([int(pid) for pid in sys.argv[1:]])
