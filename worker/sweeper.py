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
from typing import Any

from redis import RedisError

from api import metrics
from api.botqueue import ANY_VERSION, BotKeys, discard_awaiting, games_of
from api.keys import Keys
from api.service import game_from_record
from api.store import RECORD_FIELDS, record_of
from worker.config import WorkerConfig
from worker.recovery import ensure_job
from worker.runner import bot_to_act

log = logging.getLogger("canasta.worker")

BATCH = 500  # games of the awaiting set read per round trip
SCAN_COUNT = 1000  # keys a SCAN step of the deep sweep looks at


def sweep_once(redis: Any, cfg: WorkerConfig) -> Counter[str]:
    """One pass over the awaiting set; counts of what was found (``awaiting``, ``leased``, ...).
    ``redis``: the bot queue's client (the games': :func:`api.botqueue.games_of`)."""
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
            counts[ensure_job(redis, cfg, g, game.version)] += 1
    return counts


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
                    next_deep = time.monotonic() + self.cfg.deep_sweep_seconds
                counts = sweep_once(self.redis, self.cfg)
                if counts["enqueued"] or counts["replaced"]:
                    log.warning("sweeper: %s", dict(counts))  # a game was stalled: worth seeing
            except Exception as e:  # noqa: BLE001 - Redis hiccups: try again next time
                if isinstance(e, RedisError):
                    metrics.count_redis_error("worker")
                log.exception("sweeper pass failed")
            self._stop_event.wait(self.cfg.sweep_seconds)

    def stop(self) -> None:
        self._stop_event.set()
