"""What becomes of games that end or that nobody plays: the books the service keeps of them.

A game's keys expire by themselves (``CANASTA_IDLE_SECONDS`` after its last change while
unfinished, ``CANASTA_RETENTION_SECONDS`` after its end), so the store needs no cleaner.
Two sorted sets on the bot queue's Redis (one server, also beside a cluster) let the
operator see and keep what goes:

* ``<prefix>:games:open`` (game id -> created at, s): every unfinished game. The worker's
  sweeper finds the ones whose keys expired (nobody moved them for the idle time): counted
  as expired (``canasta_games_expired_total``) and dropped from the set;
* ``<prefix>:games:finished`` (game id -> ended at, s): every finished game whose log is
  not yet archived. With ``CANASTA_ARCHIVE_DIR`` set on the workers, the sweeper writes
  each one's log to ``<dir>/<day it ended>/<game id>.jsonl`` (``canasta replay validate``
  reads it) well before the retention lets it go; without it, entries older than the
  retention are dropped.

Writes here follow a game's commit and never fail it: a lost entry only means a game is not
counted or archived (its log can still be exported with ``canasta replay export`` while it
is kept).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import redis

log = logging.getLogger("canasta.retention")

BATCH = 200  # games looked at per round trip


class Books:
    """The two sets of one key prefix, on the bot queue's Redis ``queue``."""

    def __init__(self, queue: Any, prefix: str) -> None:
        self.queue = queue
        self.open_key = f"{prefix}:games:open"
        self.finished_key = f"{prefix}:games:finished"

    def opened(self, game_id: str) -> None:
        self._write(("zadd", self.open_key, {game_id: int(time.time())}))

    def finished(self, game_id: str) -> None:
        now = int(time.time())
        with self.queue.pipeline(transaction=False) as pipe:
            pipe.zrem(self.open_key, game_id)
            pipe.zadd(self.finished_key, {game_id: now})
            self._run(pipe.execute)

    def open_games(self) -> int:
        return int(self.queue.zcard(self.open_key))

    def _write(self, command: tuple[Any, ...]) -> None:
        name, *args = command
        self._run(lambda: getattr(self.queue, name)(*args))

    @staticmethod
    def _run(call: Any) -> None:
        try:
            call()
        except redis.RedisError:
            log.warning("the books of games could not be written (a game may go uncounted)", exc_info=True)


def expired(books: Books, games: Any, state_key: Any, idle_seconds: int) -> list[str]:
    """The open games whose keys are gone although they were not finished (expired after
    ``idle_seconds`` without a change); dropped from the set. ``games``: the games' Redis;
    ``state_key(id)``: a game's state key there."""
    cutoff = time.time() - idle_seconds
    candidates = [m.decode() if isinstance(m, bytes) else str(m)
                  for m in books.queue.zrangebyscore(books.open_key, "-inf", cutoff, start=0, num=BATCH * 10)]
    gone: list[str] = []
    for i in range(0, len(candidates), BATCH):
        batch = candidates[i:i + BATCH]
        with games.pipeline(transaction=False) as pipe:
            for g in batch:
                pipe.exists(state_key(g))
            found = pipe.execute()
        gone.extend(g for g, exists in zip(batch, found, strict=True) if not exists)
    if gone:
        books.queue.zrem(books.open_key, *gone)
    return gone


def archive(books: Books, read_log: Any, directory: Path | None, retention_seconds: int) -> int:
    """Write the logs of finished games to ``directory`` (None: drop the entries older than
    the retention instead); the games archived. ``read_log(id)``: a game's log lines, or
    None when it is gone."""
    if directory is None:
        books.queue.zremrangebyscore(books.finished_key, "-inf", time.time() - retention_seconds)
        return 0
    done = 0
    for member, ended in books.queue.zrange(books.finished_key, 0, BATCH - 1, withscores=True):
        game_id = member.decode() if isinstance(member, bytes) else str(member)
        lines = read_log(game_id)
        if lines:
            day = time.strftime("%Y-%m-%d", time.gmtime(ended))
            target = directory / day / f"{game_id}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(".jsonl.part")
            partial.write_bytes(b"".join(line + b"\n" for line in lines))
            os.replace(partial, target)  # whole or not at all: a reader never sees half a log
            done += 1
        else:
            log.warning("game %s ended but its log is gone before it was archived", game_id)
        books.queue.zrem(books.finished_key, game_id)
    return done
