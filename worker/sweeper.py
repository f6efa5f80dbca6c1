"""The sweeper: every few seconds, make sure every game where a bot is to act has a live job.

Why our own: RQ notices a worker killed -9 only after its heartbeat expires and a live
worker's maintenance runs, up to ~11 minutes (rq/rq#2015). Our jobs hold a short per-game
lease instead; a game in the awaiting set with no lease and no queued or fresh job gets a
new one (:func:`worker.recovery.ensure_job`). Games that no longer await a bot leave the set.
A deep sweep (rarely) scans every game's state, for a game whose entry in the set was lost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from redis import RedisError
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.rate_limit import RateLimitRegistry

from service import metrics, retention
from service.botqueue import (
    ANY_VERSION,
    SERIALIZER,
    BotKeys,
    BotWork,
    discard_awaiting,
    games_of,
    rate_limit_keys_of,
)
from service.games import game_from_record
from service.keys import Keys
from service.store import RECORD_FIELDS, record_of
from worker.config import WorkerConfig
from worker.recovery import ensure_job, replace_job
from worker.runner import bot_to_act, settings_for, store_for

log = logging.getLogger("canasta.worker")

BATCH = 500  # games of the awaiting set read per round trip
SCAN_COUNT = 1000  # keys a SCAN step of the deep sweep looks at


def sweep_once(redis: Any, cfg: WorkerConfig) -> Counter[str]:
    """One pass over the awaiting set; counts of what was found (``awaiting``, ``leased``, ...).
    ``redis``: the bot queue's client (the games': :func:`service.botqueue.games_of`)."""
    keys, api_keys = BotKeys(cfg.prefix), Keys(cfg.prefix)
    games_redis = games_of(redis)
    counts: Counter[str] = Counter()
    start = 0
    while True:
        members = redis.zrange(keys.awaiting(), start, start + BATCH - 1, withscores=True)
        if not members:
            break
        start += len(members)
        games = [m.decode() if isinstance(m, bytes) else m for m, _ in members]
        with games_redis.pipeline(transaction=False) as pipe:
            for g in games:
                pipe.exists(keys.lease(g))
                pipe.hmget(api_keys.state(g), *RECORD_FIELDS)
            replies = pipe.execute()
        for i, g in enumerate(games):
            counts["awaiting"] += 1
            leased, fields = replies[2 * i], replies[2 * i + 1]
            if leased:
                counts["leased"] += 1
                continue
            record = record_of(fields)
            game = game_from_record(g, record) if record is not None else None
            if bot_to_act(game) is None:
                discard_awaiting(redis, cfg.prefix, g, game.version if game is not None else ANY_VERSION)
                counts["discarded"] += 1
                continue
            assert game is not None
            counts[ensure_job(redis, cfg, g, game.version, BotWork.of(g, game.meta, cfg))] += 1
    release_stale_shares(redis, cfg)
    return counts


def release_stale_shares(redis: Any, cfg: WorkerConfig) -> int:
    """Give back the client shares (RQ's rate limits of :mod:`service.botqueue`) that jobs no
    longer hold, and move the runs waiting for them to the queue: what RQ's own maintenance
    does only every ten minutes, and what it does not do at all for a job whose worker was
    killed (RQ calls it "started" until its heartbeat's registry is cleaned). A started job
    is alive while it holds its game's lease; one that does not, started longer than a lease
    ago, is dead: deleted, and its share given back. Returns the dead jobs found."""
    keys = [k.decode() if isinstance(k, bytes) else k for k in redis.smembers(RateLimitRegistry.rl_keys_key)]
    dead = 0
    for key in rate_limit_keys_of(cfg.prefix, keys):
        registry = RateLimitRegistry(key, connection=redis)
        for jid in registry.get_allowed_job_ids():
            if _dead(redis, cfg, jid):
                log.warning("job %s died holding its client's share; giving the share back", jid)
                try:
                    replace_job(redis, Job.fetch(jid, connection=redis, serializer=SERIALIZER))
                except NoSuchJobError:
                    registry.release_and_enqueue(jid)
                dead += 1
        registry.cleanup()
    return dead


def _dead(redis: Any, cfg: WorkerConfig, jid: str) -> bool:
    """Whether job ``jid`` is "started" but holds no lease of its game, since longer than a lease."""
    status, started_at = redis.hmget(Job.key_for(jid), "status", "started_at")
    if status is None or status.decode() != JobStatus.STARTED.value or not started_at:
        return False
    started = datetime.fromisoformat(started_at.decode().replace("Z", "+00:00"))
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    if (datetime.now(UTC) - started).total_seconds() < cfg.lease_seconds:
        return False
    game_id = jid.removeprefix("bot-").rsplit("-v", 1)[0]
    holder = games_of(redis).get(BotKeys(cfg.prefix).lease(game_id))
    return holder is None or holder.decode() != jid


def deep_sweep(redis: Any, cfg: WorkerConfig) -> int:
    """Scan every game of the prefix (every primary of a cluster); put the ones where a bot is
    to act in the awaiting set."""
    api_keys = Keys(cfg.prefix)
    games_redis = games_of(redis)
    found = 0
    pattern = api_keys.state("*")  # "<prefix>:{*}:state": braces are literal in a SCAN match
    for key in games_redis.scan_iter(match=pattern, count=SCAN_COUNT):
        k = key.decode() if isinstance(key, bytes) else key
        game_id = k[k.index("{") + 1:k.index("}")]
        record = record_of(games_redis.hmget(k, *RECORD_FIELDS))
        if record is None or record.meta.get("status") != "playing":
            continue
        game = game_from_record(game_id, record)
        if bot_to_act(game) is not None:
            redis.zadd(BotKeys(cfg.prefix).awaiting(), {game_id: game.version}, gt=True)
            found += 1
    return found


def expire_pass(redis: Any, cfg: WorkerConfig) -> list[str]:
    """The unfinished games that expired since the last pass (:func:`service.retention.expired`)."""
    settings = settings_for(cfg.prefix)
    gone = retention.expired(retention.Books(redis, cfg.prefix), games_of(redis), Keys(cfg.prefix).state,
                             settings.idle_seconds)
    if gone:
        metrics.count_games_expired(len(gone))
        log.info("%d unfinished game(s) expired after %d s without a change", len(gone), settings.idle_seconds)
    return gone


def archive_pass(redis: Any, cfg: WorkerConfig) -> int:
    """Archive the logs of the games that ended (:func:`service.retention.archive`)."""
    store = store_for(redis, cfg.prefix)

    def read_log(game_id: str) -> list[bytes] | None:
        return store.read_log(game_id) or None

    directory = Path(cfg.archive_dir) if cfg.archive_dir else None
    return retention.archive(retention.Books(redis, cfg.prefix), read_log, directory,
                             settings_for(cfg.prefix).retention_seconds)


class Sweeper(threading.Thread):
    """The sweep loop in a daemon thread of ``canasta worker``; :meth:`stop` ends it."""

    def __init__(self, redis: Any, cfg: WorkerConfig) -> None:
        super().__init__(name="canasta-sweeper", daemon=True)
        self.redis = redis
        self.cfg = cfg
        self._stop_event = threading.Event()

    def run(self) -> None:
        next_deep = time.monotonic()
        while not self._stop_event.is_set():
            try:
                if time.monotonic() >= next_deep:
                    deep_sweep(self.redis, self.cfg)
                    expire_pass(self.redis, self.cfg)
                    next_deep = time.monotonic() + self.cfg.deep_sweep_seconds
                counts = sweep_once(self.redis, self.cfg)
                if counts["enqueued"] or counts["replaced"]:
                    log.warning("sweeper: %s", dict(counts))  # a game was stalled: worth seeing
                archive_pass(self.redis, self.cfg)
            except Exception as e:  # noqa: BLE001 - Redis hiccups: try again next time
                if isinstance(e, RedisError):
                    metrics.count_redis_error("worker")
                log.exception("sweeper pass failed")
            self._stop_event.wait(self.cfg.sweep_seconds)

    def stop(self) -> None:
        self._stop_event.set()
