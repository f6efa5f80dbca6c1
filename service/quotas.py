"""Quotas of a new game: room in the store, games created per client, games of bots only.

Checked by :func:`service.games.create_game` before it writes anything, in this order:

1. **Room in the store** (:func:`check_room`): once the game store's memory reaches
   ``store_full_ratio`` of its ``maxmemory`` (or of ``store_max_bytes``), new games are
   refused with 503 ``store_full``; the games in progress keep every byte they need for
   their moves. Read from ``INFO memory`` at most once a second per process (every primary
   of a cluster: the fullest counts).
2. **Games created per client** (:func:`count_creation`): a fixed-window counter per client
   (address or API key; the same script as the rate limits), apart from the per-request
   rate limits: 429 ``creation_quota`` with ``Retry-After`` at the window's end.
3. **Games of bots only at once** (:func:`reserve_bot_game`): such a game needs nobody to
   keep it going, so a client may have only so many unfinished ones (429
   ``too_many_bot_games``). The client's games of bots only are a sorted set; a reservation
   prunes the finished and the expired ones and adds the new game in one script, so that
   requests racing each other cannot pass the limit together.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import orjson
import redis

from service.clients import Client
from service.config import Settings
from service.errors import TooMany, Unavailable
from service.redis_io import Script, execute, is_cluster
from service.store import Store

ROOM_CHECK_SECONDS = 1.0  # how long one reading of the store's memory is trusted
STORE_FULL_RETRY_SECONDS = 60
# a reservation whose game was never written (the creation failed after it) is forgotten
# after this long; a game's own key says whether it lives afterwards
RESERVATION_GRACE_MS = 60_000


class _Room:
    """The last reading of the store's memory use, shared by the threads of a process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.read_at = float("-inf")
        self.share = 0.0


_room = _Room()


def memory_share(client: Any, budget: int) -> float:
    """The game store's memory use as a share of its ``maxmemory`` (``budget`` where the
    server has none; 0.0 when neither is known), the fullest primary of a cluster."""
    infos = client.info("memory", target_nodes="primaries") if is_cluster(client) else {"": client.info("memory")}
    if is_cluster(client) and "used_memory" in infos:  # one node: redis-py answers its dict itself
        infos = {"": infos}
    share = 0.0
    for info in infos.values():
        limit = int(info.get("maxmemory") or 0) or budget
        if limit > 0:
            share = max(share, int(info.get("used_memory", 0)) / limit)
    return share


def check_room(store: Store, settings: Settings) -> None:
    """503 ``store_full`` when the store is too full for a new game (above)."""
    if settings.store_full_ratio <= 0:
        return
    now = time.monotonic()
    if now - _room.read_at >= ROOM_CHECK_SECONDS:
        with _room.lock:
            if now - _room.read_at >= ROOM_CHECK_SECONDS:
                _room.share = memory_share(store.redis, settings.store_max_bytes)
                _room.read_at = time.monotonic()
    if _room.share >= settings.store_full_ratio:
        raise Unavailable("store_full", "The game store is nearly full: no new game is started now; games in "
                          "progress go on. Try again later.", retry_after=STORE_FULL_RETRY_SECONDS)


def forget_room_reading() -> None:
    """Read the store's memory afresh at the next check (tests)."""
    _room.read_at = float("-inf")


def count_creation(store: Store, client: Client) -> None:
    """Count one game created by ``client``; 429 ``creation_quota`` beyond its quota."""
    q = client.quotas
    if q.games_per_window <= 0:
        return
    wait_ms = store.rate_limit([("create", client.ident, q.games_per_window)], q.window)
    if wait_ms > 0:
        retry = max(1, -(-wait_ms // 1000))
        raise TooMany("creation_quota", f"This client has created its {q.games_per_window} games for this "
                      f"{_duration(q.window)}; more in {retry} s (an operator issues API keys for more).",
                      retry_after=retry, limit=q.games_per_window, window_seconds=q.window)


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return "hour" if seconds == 3600 else f"{seconds // 3600} hours"
    return f"{seconds} s"


# KEYS[1]: the client's games of bots only (member: game id, score: reserved at, ms).
# ARGV: now (ms), limit, the set's lifetime (ms), the new game's id, then the members found
# over (finished, expired, or reserved long ago for a game never written). Drops those, then
# adds the new game if the client is under its limit. Returns 1 (reserved) or 0.
RESERVE = Script("""
local now, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 5, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
if redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
""")
# a client's set outlives its games: a game of bots only ends within its hand and move limits
# long before a day, or expires after the idle time
BOT_GAMES_SET_MS = 24 * 3600 * 1000


def bot_games_key(store: Store, ident: str) -> str:
    return f"{store.keys.prefix}:{{client:{ident}}}:botgames"


def reserve_bot_game(store: Store, settings: Settings, client: Client, game_id: str) -> None:
    """Reserve a place for game ``game_id`` of bots only; 429 ``too_many_bot_games`` when the
    client has as many unfinished ones as it may."""
    limit = client.quotas.bot_games
    if limit <= 0:
        return
    key = bot_games_key(store, client.ident)
    over = _over(store, store.redis.zrange(key, 0, -1, withscores=True))
    (reserved,) = execute(store.redis, RESERVE.command([key], [_now_ms(), limit, BOT_GAMES_SET_MS, game_id, *over]), scripts=(RESERVE,))
    if not reserved:
        raise TooMany("too_many_bot_games", f"This client already has {limit} unfinished games of bots only; "
                      "start another when one ends (or expires).", retry_after=60, limit=limit)


def release_bot_game(store: Store, ident: str, game_id: str) -> None:
    """The game of bots only ``game_id`` ended: its client may start another."""
    try:
        store.redis.zrem(bot_games_key(store, ident), game_id)
    except redis.RedisError:  # the next reservation prunes it
        pass


def _now_ms() -> int:
    return int(time.time() * 1000)


def _over(store: Store, members: list[Any]) -> list[str]:
    """The reserved games that no longer count: over, or gone (expired), unless reserved
    moments ago (the game is being written)."""
    if not members:
        return []
    now = _now_ms()
    ids = [m.decode() if isinstance(m, bytes) else str(m) for m, _ in members]
    with store.redis.pipeline(transaction=False) as pipe:
        for g in ids:
            pipe.hget(store.keys.state(g), "meta")
        metas = pipe.execute()
    over = []
    for game_id, (_, score), meta in zip(ids, members, metas, strict=True):
        if meta is None:
            if now - score > RESERVATION_GRACE_MS:
                over.append(game_id)
        elif orjson.loads(meta).get("status") == "over":
            over.append(game_id)
    return over
