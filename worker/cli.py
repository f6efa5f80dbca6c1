"""``canasta worker``: RQ workers that play bot seats, and the sweeper that keeps games moving.

No fork per job: each process is an RQ ``SimpleWorker`` (a bot run is ~10 ms; a forking
worker would spend more on the fork than on the run). ``--pool N`` runs N such processes
under one supervisor, which runs the sweeper and restarts a worker process that dies.
SIGTERM or Ctrl-C: every worker finishes its current job, then everything exits.

``--burst``: sweep, work until the queue is empty, and repeat until no game awaits a bot
(waiting out the lease of a worker that was killed); then exit. For tests and batch runs.

``--metrics-port``: the supervisor answers ``GET /metrics`` (Prometheus: every worker
process's bot metrics and the bot queue's depth; the access rule of the API's /metrics) for a
worker on a box of its own. Under ``canasta serve`` the API's ``/metrics`` shows them already.
Logs: JSON lines on stderr (``CANASTA_LOG_FORMAT=text`` for plain ones).
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import signal
import sys
import time
from types import FrameType
from typing import Any

from rq import SimpleWorker
from rq.utils import now as rq_now

from service import logs, metrics
from service.botqueue import SERIALIZER, BotKeys, lane_keys, rq_queues
from service.config import Settings, add_queue_url_option, queue_url_for
from service.procstat import StopFlag
from worker import runner
from worker.config import WorkerConfig
from worker.sweeper import Sweeper, sweep_once

log = logging.getLogger("canasta.worker")

DEFAULT_REDIS_URL = Settings.redis_url  # the API's default


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta worker", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--burst", action="store_true", help="exit when no game awaits a bot")
    p.add_argument("--pool", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--redis-url", default=None,
                   help=f"the games' Redis, one server or a redis+cluster:// URL (default: $REDIS_URL, else {DEFAULT_REDIS_URL})")
    add_queue_url_option(p)
    p.add_argument("--prefix", default=None, help="the API's key prefix (default: $CANASTA_KEY_PREFIX or canasta)")
    p.add_argument("--queue", default=None, help="RQ queue (default: <prefix>-bots)")
    p.add_argument("--budget-ms", type=float, default=None, help="expert thinking time per decision")
    p.add_argument("--no-sweeper", action="store_true", help="do not run the sweeper in this process")
    p.add_argument("-v", "--verbose", action="store_true", help="log every job")
    p.add_argument("--metrics-port", type=int, default=None,
                   help="answer GET /metrics on this port (every worker process's bot metrics and the queue's depth; "
                        "a token in $CANASTA_METRICS_TOKEN, else loopback clients only)")
    p.add_argument("--metrics-host", default="127.0.0.1", help="the address of --metrics-port (default 127.0.0.1)")
    return p


def _preload() -> None:
    """Import and build everything a job needs before the first job (no first-job stall)."""
    import bots
    import service.games  # noqa: F401
    import worker.runner  # noqa: F401

    for name in bots.NAMES:
        bots.get(name)


Urls = tuple[str, str]  # the games' Redis, the bot queue's Redis


def _connect(urls: Urls) -> Any:
    """The bot queue's client, paired with the games' (:func:`service.botqueue.pair`)."""
    from service.botqueue import pair
    from service.redis_io import connect

    games_url, queue_url = urls
    queue = connect(queue_url)
    return pair(queue, queue if games_url == queue_url else connect(games_url))


HEARTBEAT_SECONDS = 5.0  # RQ's own beats, at most this often (its worker key lives worker_ttl + 60 s)
SUSPENSION_CHECK_SECONDS = 1.0  # ``rq suspend`` is noticed within this (RQ asks before every job)
BURST_PATIENCE_SECONDS = 5.0  # --burst gives up when nothing moved for a lease and this long
BURST_PAUSE_SECONDS = 0.2  # --burst waits this long between rounds while games await a bot
SUPERVISE_SECONDS = 0.5  # the pool looks at its worker processes this often
SHUTDOWN_SECONDS = 30.0  # stopping, worker processes get this long to finish their jobs
PUBSUB_STOP_SECONDS = 2.0  # stopping, RQ's command listener (a daemon thread) gets this long to end


class BotWorker(SimpleWorker):
    """A SimpleWorker that honours a SIGTERM received before RQ installed its own handlers,
    stops without waiting on its command listener (:meth:`unsubscribe`), and spares the
    Redis round trips RQ spends on itself around every job.

    RQ registers a worker, starts its scheduler, and only then installs its signal handlers;
    a stop asked for in between would otherwise be lost (and the process run on).

    Round trips: RQ beats the worker's heartbeat three times per job, three commands each
    (9 round trips of ~35 for a bot run), and sets the worker's state to idle twice in a row.
    Here a beat of its own (no explicit ttl, outside a pipeline) is one pipelined round trip
    and is skipped when the last one is younger than ``HEARTBEAT_SECONDS``; a state that is
    already set is not sent again. Beats with a ttl or inside RQ's pipelines (job start and
    end, long jobs) are RQ's as before; job and execution heartbeats are untouched. RQ's
    check for ``rq suspend`` (one more round trip per job) runs at most once per
    ``SUSPENSION_CHECK_SECONDS``. Together: ~1 ms of CPU less per job (~1.7 ms instead of
    ~2.6 ms for a no-op job here).
    """

    stop_asked = False
    _suspension_checked = float("-inf")

    def check_for_suspension(self, burst: bool) -> None:
        t = time.monotonic()
        if t - self._suspension_checked < SUSPENSION_CHECK_SECONDS:
            return
        self._suspension_checked = t
        super().check_for_suspension(burst)

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        if pipeline is not None:
            super().heartbeat(timeout, pipeline=pipeline)
            return
        last = self.last_heartbeat
        if timeout is None and last is not None and last.tzinfo is not None:
            if 0 <= (rq_now() - last).total_seconds() < HEARTBEAT_SECONDS:
                return
        with self.connection.pipeline(transaction=False) as pipe:
            super().heartbeat(timeout, pipeline=pipe)
            pipe.execute()

    def set_state(self, state: str, pipeline: Any = None) -> None:
        if pipeline is None and state == getattr(self, "_state", None):
            return
        super().set_state(state, pipeline=pipeline)

    def _install_signal_handlers(self) -> None:
        super()._install_signal_handlers()
        if BotWorker.stop_asked:
            self._stop_requested = True

    def unsubscribe(self) -> None:
        """RQ's, in the order that cannot stall a stopping worker.

        RQ sends UNSUBSCRIBE and then stops its command listener thread. When the thread
        reads the reply first (a loaded machine: one stop in six here), it goes on to wait up
        to RQ's 60 s poll for a new subscription, and redis-py >= 8.2 joins it in ``stop()``:
        the worker hung for a minute, and a pool killed it. Stopping the thread first makes
        the reply its last read."""
        thread = self.pubsub_thread
        if not thread:
            return
        thread.stop(timeout=0)  # the flag only; the reply to UNSUBSCRIBE wakes the thread
        self.pubsub.unsubscribe()
        thread.join(PUBSUB_STOP_SECONDS)
        self.pubsub.close()

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        runner.STOP.set()  # the current run hands its game on after its next move
        super().request_stop(signum, frame)


def _ask_stop(signum: int, frame: FrameType | None) -> None:
    BotWorker.stop_asked = True
    runner.STOP.set()


def _make_worker(redis: Any, cfg: WorkerConfig) -> SimpleWorker:
    # the lanes in order (service.botqueue): a run of a person's game before any of a game of bots only
    return BotWorker(rq_queues(redis, cfg), connection=redis, serializer=SERIALIZER, log_job_description=False)


def run_single(url: Urls, cfg: WorkerConfig, burst: bool, sweeper: bool, level: str) -> int:
    """One worker process: SimpleWorker in the main thread (RQ's timeouts use SIGALRM)."""
    metrics.start_process()
    redis = _connect(url)
    if burst:
        return _burst(redis, cfg, sweeper, level)
    sweep = Sweeper(_connect(url), cfg) if sweeper else None
    if sweep:
        sweep.start()
    try:
        # no RQ scheduler: nothing of ours is scheduled (a failed run is the sweeper's to
        # replace), and a scheduler process died with a dropped connection for good
        _make_worker(redis, cfg).work(with_scheduler=False, logging_level=level)
    finally:
        if sweep:
            sweep.stop()
            sweep.join(5)
    return 0


def _burst(redis: Any, cfg: WorkerConfig, sweeper: bool, level: str) -> int:
    """Work and sweep until no game awaits a bot, or nothing moves for longer than a lease."""
    keys = BotKeys(cfg.prefix)
    patience = cfg.lease_seconds + BURST_PATIENCE_SECONDS
    last_progress = time.monotonic()
    while True:
        counts = sweep_once(redis, cfg) if sweeper else None
        if counts and (counts["enqueued"] or counts["replaced"]):
            log.warning("sweeper: %s", dict(counts))
        worked = _make_worker(redis, cfg).work(burst=True, with_scheduler=False, logging_level=level)
        if not sweeper or BotWorker.stop_asked:
            return 0
        if worked or (counts and (counts["enqueued"] or counts["replaced"])):
            last_progress = time.monotonic()
        pending = redis.zcard(keys.awaiting())
        if not pending:
            return 0
        if time.monotonic() - last_progress > patience:
            log.warning("burst: %d game(s) still await a bot; giving up after %.0f s", pending, patience)
            return 1
        time.sleep(BURST_PAUSE_SECONDS)


def _child(url: Urls, cfg: WorkerConfig, burst: bool, sweeper: bool, level: str) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _ask_stop)  # until RQ installs its own (see BotWorker)
    sys.exit(run_single(url, cfg, burst, sweeper, level))


def run_pool(url: Urls, cfg: WorkerConfig, n: int, burst: bool, sweeper: bool, level: str,
             stop: StopFlag | None = None) -> int:
    """N worker processes (forked after the heavy imports) and the sweeper in this one."""
    ctx = multiprocessing.get_context("fork")
    stop = stop or StopFlag()  # set by the signal handler: no threading.Event (service.procstat.StopFlag)

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGINT)}

    def spawn() -> multiprocessing.process.BaseProcess:
        # burst children sweep themselves (sweeps are idempotent); others leave it to us
        p = ctx.Process(target=_child, args=(url, cfg, burst, burst and sweeper, level), daemon=False)
        p.start()
        return p

    procs = [spawn() for _ in range(n)]
    sweep = Sweeper(_connect(url), cfg) if sweeper and not burst else None
    if sweep:
        sweep.start()
    code = 0
    try:
        while not stop.is_set():
            alive = [p for p in procs if p.is_alive()]
            if burst and not alive:
                code = max((p.exitcode or 0) for p in procs)
                break
            if not burst:
                for i, p in enumerate(procs):
                    if not p.is_alive():
                        log.warning("worker process %s exited with %s; starting another", p.pid, p.exitcode)
                        procs[i] = spawn()
            stop.wait(SUPERVISE_SECONDS)
    finally:
        for p in procs:
            if p.is_alive() and p.pid:
                os.kill(p.pid, signal.SIGTERM)  # RQ: warm shutdown, the current job ends first
        deadline = time.monotonic() + SHUTDOWN_SECONDS
        for p in procs:
            p.join(max(0.1, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(5)
        if sweep:
            sweep.stop()
            sweep.join(5)
        for s, handler in old.items():
            signal.signal(s, handler)
    return code


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    # a SIGTERM while starting up (imports take a second) is a clean stop, not a crash
    early_stop = StopFlag()

    def _early(signum: int, frame: FrameType | None) -> None:
        early_stop.set()
        _ask_stop(signum, frame)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _early)
    level = "INFO" if args.verbose else "WARNING"
    logs.setup(level)
    overrides: dict[str, Any] = {}
    if args.queue:
        overrides["queue"] = args.queue
    if args.budget_ms is not None:
        overrides["budget_ms"] = args.budget_ms
        os.environ["CANASTA_BOT_BUDGET_MS"] = str(args.budget_ms)  # jobs read their config from it
    cfg = WorkerConfig.from_env(args.prefix, **overrides)
    games_url = args.redis_url or os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
    try:
        url = (games_url, queue_url_for(games_url, args.queue_url))
    except ValueError as e:
        print(f"canasta worker: {e}", file=sys.stderr)
        return 2
    own_dir = None
    if args.metrics_port is not None and metrics.multiprocess_dir() is None:
        # alone on its box: a directory of its own, where its forked processes write (service.metrics)
        own_dir = os.environ[metrics.ENV_DIR] = metrics.fresh_dir()
    server = None
    try:
        _preload()
        if early_stop.is_set():
            return 0
        if args.metrics_port is not None:
            server = _serve_metrics(args.metrics_host, args.metrics_port, url, cfg)
        if args.pool <= 1:
            return run_single(url, cfg, args.burst, not args.no_sweeper, level)
        return run_pool(url, cfg, args.pool, args.burst, not args.no_sweeper, level, early_stop)
    finally:
        if server is not None:
            server.shutdown()
        if own_dir is not None:
            metrics.remove_dir(own_dir)


def _serve_metrics(host: str, port: int, url: Urls, cfg: WorkerConfig) -> Any:
    """``GET /metrics`` from this process (``--metrics-port``): the shared directory's metrics
    and the depth of each lane of the bot queue, read at the scrape."""
    depth = metrics.QueueDepth(_connect(url), lane_keys(cfg), "worker")
    server = metrics.serve_http(host, port, Settings.from_env().metrics_token, lambda: [depth])
    log.info("metrics: http://%s:%d/metrics", host, server.server_port)
    return server


if __name__ == "__main__":
    sys.exit(main())
