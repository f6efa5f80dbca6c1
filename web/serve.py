"""``canasta serve``: granian (ASGI, ``web.asgi:create_asgi_app``), a bot worker pool and, without
``REDIS_URL``, a private embedded Valkey that keeps its data in a data directory (the
append-only file, fsynced before every reply): stopped and started again on the same
directory, it continues every game, its bot queue included. SIGTERM or Ctrl-C stops
everything it started: the children run in their own process group, so that a terminal's
Ctrl-C reaches only ``canasta serve``, which stops them in order (granian's main process
stops its workers; a worker that took the SIGINT itself first was an "Unexpected exit" to
granian, which started a new one and then waited for it)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from types import FrameType

from servers.embedded import DataDirInUse, EmbeddedRedis, default_data_dir
from service.config import add_queue_url_option
from service.metrics import ENV_DIR, fresh_dir, remove_dir
from service.procstat import StopFlag, die_with_parent
from web.asgi import DEFAULT_THREADS


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta serve", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--workers", type=int, default=2, help="API processes (granian workers; default 2)")
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                   help=f"Flask threads per API process (default {DEFAULT_THREADS}; open event streams and "
                        "waiting long-polls hold none: they wait on the process's event loop)")
    p.add_argument("--redis-url", default=None,
                   help="Redis URL, one server or a redis+cluster:// URL (default: $REDIS_URL, else an embedded Valkey)")
    add_queue_url_option(p)
    p.add_argument("--data-dir", default=None,
                   help=f"the embedded Valkey's data (default: $XDG_DATA_HOME/canasta, else {default_data_dir()}; "
                        "created if missing; unused with a Redis URL)")
    p.add_argument("--maxmemory", default=os.environ.get("CANASTA_VALKEY_MAXMEMORY", DEFAULT_MAXMEMORY),
                   help=f"the embedded Valkey's memory limit (default: $CANASTA_VALKEY_MAXMEMORY, else "
                        f"{DEFAULT_MAXMEMORY}; Valkey's units: 512mb, 2gb); new games are refused before it is "
                        "reached (CANASTA_STORE_FULL_RATIO), games in progress go on")
    p.add_argument("--bot-workers", type=int, default=2,
                   help="bot worker processes (default 2: a bot run waits on Redis part of the time, "
                        "so one more process than the API leaves free fills it; see BENCHMARKS.md)")
    p.add_argument("--no-bot-worker", action="store_true", help="do not start the bot worker")
    p.add_argument("--access-log", action="store_true", help="print granian's access log")
    return p


def worker_available() -> bool:
    """True when ``canasta worker`` (worker/cli.py) is installed."""
    try:
        return importlib.util.find_spec("worker.cli") is not None
    except ModuleNotFoundError:
        return False


DEFAULT_MAXMEMORY = "1gb"  # ~30 000 games in progress (docs/operations.md: memory per game)
# the embedded Valkey is started again when it dies, at most this often in this window; a
# server that keeps dying (a full disk, a broken append-only file) stops canasta serve instead
RESTARTS, RESTART_WINDOW_SECONDS = 5, 300.0
KILL_TIMEOUT_SECONDS = 2  # a worker that has not stopped by then is killed (granian waits forever)
# requests in flight per worker (granian's --backpressure; its default is backlog / workers,
# 512): every open event stream and waiting long-poll is one, so it must be well above them
REQUESTS_PER_WORKER = 20_000
BACKLOG = 4096  # connections waiting to be accepted (a crowd reconnecting at once)
HEADER_READ_SECONDS = 10.0  # CANASTA_HEADER_READ_SECONDS: a request's head must arrive within it
MAX_HEADER_READ_MS = 60_000  # granian's most


def header_read_ms(env: Mapping[str, str]) -> int:
    """How long a connection may take to send a request's headers, ms: ``CANASTA_HEADER_READ_SECONDS``
    of ``env`` (default :data:`HEADER_READ_SECONDS`, at most granian's 60 s)."""
    value = env.get("CANASTA_HEADER_READ_SECONDS", "").strip()
    seconds = float(value) if value else HEADER_READ_SECONDS
    return max(1, min(MAX_HEADER_READ_MS, int(seconds * 1000)))


def api_command(host: str, port: int, workers: int, access_log: bool = False,
                env: Mapping[str, str] | None = None, log_config: str | None = None) -> list[str]:
    """granian serving the ASGI app; a worker that dies is started again. Its Flask threads:
    ``CANASTA_THREADS`` in the environment (:func:`api_env`); its settings: ``env`` (default
    this process's environment), which it will run with; ``log_config``: a file of granian's
    own logging (:func:`write_log_config`).

    HTTP/1 only (``--http 1``), with a header read timeout: a connection that sends no
    complete request head within it (a slow-headers attack, a socket opened and left idle,
    an idle keep-alive connection) is closed. Measured with granian 2.8: under ``--http auto``
    the timeout starts only at the first byte (the protocol is sniffed first), so a socket
    that never sends one stayed open for good; under ``--http 1`` it starts at once. HTTP/2
    needs TLS in browsers, which a proxy in front terminates."""
    cmd = [
        sys.executable, "-m", "granian", "--interface", "asgi", "--factory",
        "--host", host, "--port", str(port), "--workers", str(workers),
        "--respawn-failed-workers", "--workers-kill-timeout", str(KILL_TIMEOUT_SECONDS),
        "--backlog", str(BACKLOG), "--backpressure", str(REQUESTS_PER_WORKER),
        "--http", "1", "--http1-header-read-timeout", str(header_read_ms(os.environ if env is None else env)),
        "--log-level", "warning",
    ]
    if access_log:
        cmd.append("--access-log")
    if log_config:
        cmd += ["--log-config", log_config]
    return cmd + ["web.asgi:create_asgi_app"]


def write_log_config(directory: str) -> str:
    """granian's logging in the service's format (``service.logs.granian_config``), as a file in
    ``directory`` (granian reads a file); its path."""
    import json

    from service.logs import granian_config

    path = os.path.join(directory, "granian-log.json")
    with open(path, "w") as f:
        json.dump(granian_config(), f)
    return path


def api_env(env: dict[str, str], threads: int) -> dict[str, str]:
    """``env`` with the API's Flask threads per process."""
    return {**env, "CANASTA_THREADS": str(max(1, threads))}


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as r:  # noqa: S310 - our loopback URL
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def part_name(proc: subprocess.Popen[bytes]) -> str:
    """What a child of ours runs, for messages: "granian --interface" or "cli.main worker"."""
    args = proc.args
    return " ".join(str(a) for a in args[2:4]) if isinstance(args, list) else str(args)


def _child() -> None:
    """A child's ``preexec_fn``: SIGTERM when ``canasta serve`` dies, even by SIGKILL (its own
    process group shields it from the terminal's signals, so this is how it learns)."""
    die_with_parent(signal.SIGTERM)


def _spawn(cmd: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, env=env, process_group=0, preexec_fn=_child)  # noqa: PLW1509 - no threads yet


def _stop(procs: list[subprocess.Popen[bytes]], timeout: float = 10.0) -> None:
    """SIGTERM every child, wait, then SIGKILL what is left."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


class ValkeyKeeper:
    """Starts the embedded Valkey again when it dies (killed, crashed), on its port and data
    directory: the API, the bot workers and their RQ queue reconnect by themselves, and the
    append-only file holds every write it answered. A server that dies more than
    :data:`RESTARTS` times in :data:`RESTART_WINDOW_SECONDS`, or cannot start, is not
    restarted: ``canasta serve`` then stops (exit 1) for its own supervisor to see."""

    def __init__(self, embedded: EmbeddedRedis) -> None:
        self.embedded = embedded
        self.restarts: list[float] = []

    def keep_alive(self) -> bool:
        """Check the server; restart it if it died. False: it cannot be kept alive."""
        if self.embedded.alive():
            return True
        now = time.monotonic()
        self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW_SECONDS]
        if len(self.restarts) >= RESTARTS:
            print(f"canasta serve: the Valkey died {len(self.restarts) + 1} times in {RESTART_WINDOW_SECONDS:.0f} s; "
                  "stopping (see valkey.log in the data directory)", file=sys.stderr, flush=True)
            return False
        self.restarts.append(now)
        print(f"canasta serve: the Valkey (pid {self.embedded.pid}) died; starting it again on "
              f"{self.embedded.data_dir}", file=sys.stderr, flush=True)
        try:
            self.embedded.restart()
        except Exception as e:  # noqa: BLE001 - whatever stops it from starting stops us
            print(f"canasta serve: the Valkey does not start again ({e}); stopping", file=sys.stderr, flush=True)
            return False
        print(f"canasta serve: the Valkey is back (pid {self.embedded.pid})", file=sys.stderr, flush=True)
        return True


def _warn_persistence(url: str) -> None:
    """Say what an external server lacks for durable games (``service.durability``)."""
    from service.config import Settings
    from service.durability import NEEDS, check_all
    from service.redis_io import connect

    client = None
    try:
        client = connect(url, max_block_seconds=0)  # a cluster's client asks its nodes at once
        problems = check_all(client).problems(Settings.from_env().durability)
    except Exception as e:  # noqa: BLE001 - not up yet: the API says so when it starts
        problems = [f"could not check the Redis server's persistence ({e})"]
    finally:
        if client is not None:
            client.close()
    for problem in problems:
        print(f"canasta serve: warning: {problem} (a durable game store needs {NEEDS})", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stop = StopFlag()  # set by the signal handler: no threading.Event (service.procstat.StopFlag)

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    embedded: EmbeddedRedis | None = None
    procs: list[subprocess.Popen[bytes]] = []
    code = 0
    run_dir: str | None = None
    try:
        url = args.redis_url or os.environ.get("REDIS_URL")
        if not url:
            data_dir = args.data_dir or default_data_dir()
            embedded = EmbeddedRedis(data_dir=data_dir, maxmemory=args.maxmemory or None)
            try:
                url = embedded.start()
            except DataDirInUse as e:
                print(f"canasta serve: {e}", file=sys.stderr, flush=True)
                return 1
            print(f"redis: {url}  (embedded Valkey; attach more workers with: canasta worker --redis-url {url})",
                  flush=True)
            print(f"data: {embedded.data_dir}  (append-only file, fsynced before every reply: a restart on "
                  "this directory continues every game)", flush=True)
        else:
            from service.config import queue_url_for

            try:
                queue_url_for(url, args.queue_url)
            except ValueError as e:
                print(f"canasta serve: {e}", file=sys.stderr, flush=True)
                return 2
            print(f"redis: {url}", flush=True)
            _warn_persistence(url)
        env = {**os.environ, "REDIS_URL": url}
        if args.queue_url:  # the API's and the worker's
            env["CANASTA_QUEUE_URL"] = args.queue_url
        # every API and bot worker process writes its metrics there; GET /metrics adds them up
        # (service.metrics: a fresh temporary directory per start, removed at the stop)
        run_dir = fresh_dir()
        env[ENV_DIR] = run_dir
        api = _spawn(api_command(args.host, args.port, args.workers, args.access_log, env, write_log_config(run_dir)),
                     api_env(env, args.threads))
        procs.append(api)
        if not args.no_bot_worker and worker_available():
            procs.append(_spawn([sys.executable, "-m", "cli.main", "worker", "--redis-url", url,
                                 "--pool", str(max(1, args.bot_workers))], env))
        base = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '') else args.host}:{args.port}"
        while not stop.is_set() and not wait_healthy(base, api, timeout=0.5):
            if api.poll() is not None:
                print("canasta serve: the API server exited", file=sys.stderr, flush=True)
                return 1
        if stop.is_set():
            return 0
        print(f"table: {base}/  (play in the browser)", flush=True)
        print(f"api: {base}  (OpenAPI: {base}/openapi.yaml)", flush=True)
        print(f"metrics: {base}/metrics  (Prometheus; {'with CANASTA_METRICS_TOKEN' if os.environ.get('CANASTA_METRICS_TOKEN') else 'loopback clients only'}; "
              "logs: JSON lines on stderr, docs/operations.md)", flush=True)
        print("create a game:\n  curl -s -X POST " + base + "/games -H 'Content-Type: application/json' "
              "-d '{\"preset\": \"finnish\", \"seats\": [{\"name\": \"you\"}, {\"bot\": \"standard\"}, "
              "{\"bot\": \"standard\"}, {\"bot\": \"standard\"}]}'", flush=True)
        keeper = ValkeyKeeper(embedded) if embedded is not None else None
        while not stop.wait(0.5):
            dead = [p for p in procs if p.poll() is not None]
            if dead:
                print(f"canasta serve: {part_name(dead[0])} exited with {dead[0].returncode}; stopping",
                      file=sys.stderr, flush=True)
                code = 1
                break
            if keeper is not None and not keeper.keep_alive():
                code = 1
                break
        return code
    finally:
        _stop(procs)
        if run_dir is not None:
            remove_dir(run_dir)
        if embedded is not None:
            embedded.stop()
        for s, handler in old.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    sys.exit(main())
