"""Live servers for tests: granian subprocesses (the ASGI app, as ``canasta serve`` runs it) on
loopback, stopped by the test."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from client import Client
from web.serve import api_command, api_env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(base: str, proc: subprocess.Popen | None = None, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    with Client(base, timeout=1) as client:
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}")
            if client.health():
                return
            time.sleep(0.1)
    raise TimeoutError(f"{base} did not answer /healthz")


def stop(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextmanager
def api_server(redis_url: str, prefix: str, *, threads: int = 4, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """One granian worker on a free loopback port; yields its base URL."""
    port = free_port()
    env = api_env({**os.environ, "REDIS_URL": redis_url, "CANASTA_KEY_PREFIX": prefix, "CANASTA_TEST_SEEDS": "1",
                   "CANASTA_RATE_LIMIT": "0", **(extra_env or {})}, threads)
    cmd = api_command("127.0.0.1", port, 1, env=env)
    proc = subprocess.Popen(cmd, env=env, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                            stdout=subprocess.DEVNULL, stderr=sys.stderr)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        yield base
    finally:
        stop(proc)


@contextmanager
def bot_worker(redis_url: str, prefix: str, *, budget_ms: int = 5) -> Iterator[subprocess.Popen]:
    """``canasta worker`` (a real RQ worker process) playing the bot seats of ``prefix``'s games."""
    env = {**os.environ, "REDIS_URL": redis_url, "CANASTA_KEY_PREFIX": prefix, "CANASTA_BOT_BUDGET_MS": str(budget_ms)}
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "worker", "--redis-url", redis_url], env=env,
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                            stdout=subprocess.DEVNULL, stderr=sys.stderr)
    try:
        yield proc
    finally:
        stop(proc)
