"""Every Prometheus metric of the service, made here and only here: their names are a contract
(dashboards, alerts, the lead's retention job); ``docs/operations.md`` says what each tells an
operator and what to alert on.

**Several processes.** The API runs as several granian worker processes (respawned when one
dies) and the bot worker as forked processes. With ``PROMETHEUS_MULTIPROC_DIR`` set
(``canasta serve`` makes a fresh directory per start, :func:`fresh_dir`, and gives it to every
process it starts; ``canasta worker --metrics-port`` alone makes its own) each process writes
its values to memory-mapped files there, and a scrape (:func:`exposition`) adds up the files
of every process, live or dead: counters and histograms keep what a dead process counted.
Gauges of open things (``canasta_open_listeners``) count live processes only: the files of a
process that is gone are dropped at the next scrape (:func:`forget_dead`: granian respawns a
worker killed by a signal without telling anyone; measured: its listeners stayed counted
until then, ``tests/web/test_api_metrics_serve.py``), and a new process drops any left under its
own pid (:func:`start_process`). Without the variable each process keeps its own (tests,
``web:create_app()`` under any WSGI server, ``canasta worker`` without ``--metrics-port``).

prometheus_client decides at its import whether it writes files, so it is imported here only
when the first metric is made (:func:`get`), after the command has set the directory.
"""

from __future__ import annotations

import glob
import hmac
import ipaddress
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

ENV_DIR = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DIR_PREFIX = "canasta-metrics-"  # fresh_dir: <tmp>/canasta-metrics-<pid of its maker>-<random>

# buckets, seconds: a request (an event stream lives up to CANASTA_SSE_MAX_SECONDS, 300),
# a move (ms on a quiet server), a bot job's wait in the queue, one bot decision and move
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
MOVE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
BOT_WAIT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
BOT_TURN_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
REFUSED = frozenset({429, 503})  # answers counted by their problem code too
COMPONENTS = ("api", "worker", "hub")  # canasta_redis_errors_total{component}


class Metrics:
    """The metrics of one process (:func:`get`)."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics, values

        disable_created_metrics()  # one process's *_created series: noise, and absent with several
        if multiprocess_dir() is not None:
            # prometheus_client asks the kernel for the pid at every increment (to notice a
            # fork): ~1 us each, a fifth of the metrics' cost per request. The pid is kept
            # here instead, and renewed in a forked child (MultiProcessValue's documented
            # process_identifier; the metrics made below take this class)
            values.ValueClass = values.MultiProcessValue(process_identifier=_pid)
        self.http_requests = Counter(
            "canasta_http_requests", "HTTP requests answered, by route template (unknown paths: other), "
            "method and status.", ["route", "method", "status"])
        self.http_seconds = Histogram(
            "canasta_http_request_seconds", "Time from a request's arrival to the end of its answer, by "
            "route template (an event stream: its whole life).", ["route"], buckets=REQUEST_BUCKETS)
        self.move_seconds = Histogram(
            "canasta_move_seconds", "Server-side time of a move applied (POST /games/{game_id}/moves answered "
            "200, not a dry run), on the event loop or through Flask.", buckets=MOVE_BUCKETS)
        self.refusals = Counter(
            "canasta_refusals", "429 and 503 answers by status and problem code (rate_limited, "
            "too_many_streams, redis_unavailable, not_durable, ...).", ["status", "code"])
        self.redis_errors = Counter(
            "canasta_redis_errors", "Redis commands that failed (a connection lost, a timeout, a reply "
            "that did not come), by component: api, worker, hub.", ["component"])
        self.open_listeners = Gauge(
            "canasta_open_listeners", "Open SSE streams and waiting long-polls, over the live API "
            "processes.", multiprocess_mode="livesum")
        self.games_created = Counter("canasta_games_created", "Games created.")
        self.games_finished = Counter("canasta_games_finished", "Games played to their end.")
        self.games_expired = Counter("canasta_games_expired", "Games removed by the retention job "
                                     "(count_games_expired).")
        self.bot_wait = Histogram(
            "canasta_bot_wait_seconds", "Time from a bot job's enqueue to its start, by the level of "
            "the bot to act (none: no bot was).", ["level"], buckets=BOT_WAIT_BUCKETS)
        self.bot_turn = Histogram(
            "canasta_bot_turn_seconds", "One bot turn: the decision and its move, by bot level.",
            ["level"], buckets=BOT_TURN_BUCKETS)
        self.bot_runs = Counter(
            "canasta_bot_runs", "Bot jobs (runs of bot turns) by outcome: done, handed_off, handed_over, "
            "busy, moved_on, no_bot, gone, error.", ["outcome"])
        self._requests: dict[tuple[str, str, int], tuple[Any, Any]] = {}  # label children, made once

    def request(self, route: str, method: str, status: int) -> tuple[Any, Any]:
        """The (counter, histogram) children of a request's labels."""
        key = (route, method, status)
        found = self._requests.get(key)
        if found is None:
            found = self._requests[key] = (self.http_requests.labels(route, method, str(status)),
                                           self.http_seconds.labels(route))
        return found


_metrics: Metrics | None = None
_made = threading.Lock()
_pids = [os.getpid()]


def _pid() -> int:
    return _pids[0]


def _forked() -> None:
    _pids[0] = os.getpid()


os.register_at_fork(after_in_child=_forked)


def get() -> Metrics:
    """This process's metrics, made at the first call (prometheus_client imported then)."""
    global _metrics
    found = _metrics
    if found is None:
        with _made:
            if _metrics is None:
                _metrics = Metrics()
            found = _metrics
    return found


def multiprocess_dir() -> str | None:
    """The shared directory of this process's metrics (None: one process's own)."""
    path = os.environ.get(ENV_DIR)
    return path if path and os.path.isdir(path) else None


def start_process() -> Metrics:
    """A new process: forget any open things a dead process of the same pid left counted,
    then make the metrics."""
    path = multiprocess_dir()
    if path is not None:
        _mark_dead(os.getpid(), path)
    return get()


# -- what the service counts (one function per fact; the callers name no metric) -----------------
def observe_request(route: str, method: str, status: int, seconds: float, code: str | None) -> None:
    """An answered request (:mod:`web.observe`); a 429 or 503 counts by its problem ``code``."""
    m = get()
    counter, histogram = m.request(route, method, status)
    counter.inc()
    histogram.observe(seconds)
    if status in REFUSED:
        m.refusals.labels(str(status), code or "none").inc()


def observe_move(seconds: float) -> None:
    """A move applied, ``seconds`` from its arrival to its answer."""
    get().move_seconds.observe(seconds)


def count_redis_error(component: str) -> None:
    """A Redis command of ``component`` (:data:`COMPONENTS`) failed."""
    get().redis_errors.labels(component).inc()


def listener_opened() -> None:
    """An SSE stream or a waiting long-poll holds its slot (``web.stream_limits``)."""
    get().open_listeners.inc()


def listener_closed() -> None:
    get().open_listeners.dec()


def count_game_created() -> None:
    get().games_created.inc()


def count_game_finished() -> None:
    get().games_finished.inc()


def count_games_expired(n: int = 1) -> None:
    """``n`` games removed because their retention ran out (the retention job calls this)."""
    if n > 0:
        get().games_expired.inc(n)


def observe_bot_wait(level: str, seconds: float) -> None:
    """A bot job started ``seconds`` after its enqueue; ``level``: the bot to act (or none)."""
    get().bot_wait.labels(level).observe(max(0.0, seconds))


def observe_bot_turn(level: str, seconds: float) -> None:
    """One bot decision and its move took ``seconds``."""
    get().bot_turn.labels(level).observe(seconds)


def count_bot_run(outcome: str) -> None:
    get().bot_runs.labels(outcome).inc()


# -- the scrape -------------------------------------------------------------------------------
class QueueDepth:
    """``canasta_bot_queue_depth{lane}``: the bot jobs waiting in each lane's RQ queue, read
    from the queue's Redis at each scrape (``lanes``: lane name -> Redis key of its list).
    A Redis that does not answer leaves the metric out of that scrape (and counts an error)."""

    def __init__(self, redis: Any, lanes: dict[str, str], component: str) -> None:
        self.redis, self.lanes, self.component = redis, lanes, component

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        try:
            with self.redis.pipeline(transaction=False) as pipe:
                for key in self.lanes.values():
                    pipe.llen(key)
                depths = pipe.execute()
        except Exception:  # noqa: BLE001 - a scrape never fails for the queue: the rest is answered
            count_redis_error(self.component)
            return
        family = GaugeMetricFamily("canasta_bot_queue_depth", "Bot jobs waiting in each lane of the bot "
                                   "queue (read from Redis at the scrape).", labels=["lane"])
        for lane, depth in zip(self.lanes, depths, strict=True):
            family.add_metric([lane], float(depth))
        yield family


class _Forward:
    """This process's own registry inside a scrape's registry (one-process mode)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def collect(self) -> Iterable[Any]:
        return self.registry.collect()


def exposition(extra: Iterable[Any] = ()) -> bytes:
    """The text a scrape answers: every process's metrics (the shared directory's, dead
    processes' open things dropped first) or this one's, and ``extra`` collectors."""
    from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector

    get()  # every metric is in the answer, at 0 before it counted anything
    registry = CollectorRegistry()
    path = multiprocess_dir()
    if path is not None:
        forget_dead(path)
        MultiProcessCollector(registry, path=path)
    else:
        registry.register(_Forward(REGISTRY))
    for collector in extra:
        registry.register(collector)
    return bytes(generate_latest(registry))


_PID_RE = re.compile(r"^gauge_live[a-z]+_(\d+)\.db$")


def forget_dead(path: str, alive: Callable[[int], bool] | None = None) -> list[int]:
    """Drop the open-things gauges of processes that are gone (``mark_process_dead``), which
    nobody else does: granian respawns a dead worker without a hook. Returns their pids."""
    alive = alive or pid_alive
    dead = sorted({int(m.group(1)) for name in os.listdir(path) if (m := _PID_RE.match(name))
                   and not alive(int(m.group(1)))})
    for pid in dead:
        _mark_dead(pid, path)
    return dead


def _mark_dead(pid: int, path: str) -> None:
    from prometheus_client.multiprocess import mark_process_dead

    mark_process_dead(pid, path)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not reaped, does not)."""
    if os.path.isdir("/proc/self"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:  # no /proc: ask the kernel
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- the shared directory (canasta serve, canasta worker --metrics-port) -----------------------
def fresh_dir() -> str:
    """A new, empty directory for one run's metrics, in the temporary directory (``$TMPDIR``):
    the files are scratch written at every request, worth nothing after the run, and must not
    mix with an earlier run's (a dead pid's counters would be added up again). Directories of
    earlier runs whose maker is gone (killed before it could remove its own) go first."""
    base = tempfile.gettempdir()
    for old in glob.glob(os.path.join(base, DIR_PREFIX + "*")):
        owner = os.path.basename(old)[len(DIR_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not pid_alive(int(owner)):
            shutil.rmtree(old, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-")


def remove_dir(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


# -- who may scrape ----------------------------------------------------------------------------
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def refusal(token: str, address: str | None, authorization: str | None, forwarded: bool) -> tuple[int, str, str] | None:
    """Whether a scrape is refused: (status, code, detail), or None. With ``token``
    (``CANASTA_METRICS_TOKEN``) only ``Authorization: Bearer <token>`` may scrape, from
    anywhere; without one only a loopback client that no proxy ``forwarded`` (a proxy on the
    same box would make every client loopback)."""
    if token:
        given = (authorization or "")
        if given[:7].lower() == "bearer " and hmac.compare_digest(given[7:].strip().encode(), token.encode()):
            return None
        return 401, "metrics_token_required", "GET /metrics needs the metrics token (Authorization: Bearer)."
    if not forwarded and is_loopback(address):
        return None
    return 403, "metrics_not_local", ("GET /metrics is answered to loopback clients only; set CANASTA_METRICS_TOKEN "
                                      "to scrape from elsewhere.")


def is_loopback(address: str | None) -> bool:
    try:
        ip = ipaddress.ip_address((address or "").strip("[]"))
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


# -- a scrape endpoint of its own (canasta worker --metrics-port) -------------------------------
def serve_http(host: str, port: int, token: str, extra: Callable[[], Iterable[Any]]) -> Any:
    """Answer ``GET /metrics`` on ``host:port`` from a daemon thread of this process, with the
    same access rule as the API's (:func:`refusal`); ``extra``: the scrape's own collectors.
    Returns the server (``shutdown()`` stops it)."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
            pass

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if environ.get("PATH_INFO") != "/metrics" or environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"GET /metrics\n"]
        forwarded = any(name in environ for name in FORWARDING_HEADERS)
        refused = refusal(token, environ.get("REMOTE_ADDR"), environ.get("HTTP_AUTHORIZATION"), forwarded)
        if refused is not None:
            status, code, detail = refused
            start_response(f"{status} {'Unauthorized' if status == 401 else 'Forbidden'}",
                           [("Content-Type", "text/plain"), *([("WWW-Authenticate", "Bearer")] if status == 401 else [])])
            return [f"{code}: {detail}\n".encode()]
        body = exposition(extra())
        start_response("200 OK", [("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(body)))])
        return [body]

    server = make_server(host, port, app, Server, handler_class=Quiet)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
