"""One run of bot turns: load, check, choose, apply through the API's move path, repeat.

Moves go through :func:`service.games.apply_move` with the version just read as the expected
version: the same compare-and-set as a person's move, so a move is applied at most once
whoever else (a retry, a second job, the sweeper's replacement) plays the same game. The
moves say they are the run's own (``by_bot_run``): the run plays on, so the service
enqueues nothing after them. See :mod:`worker.recovery` for who is responsible for a game when.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Any

import bots
from service import metrics
from service.botqueue import (
    ANY_VERSION,
    DISCARD,
    BotKeys,
    BotWork,
    discard_awaiting,
    discard_command,
    games_of,
)
from service.config import Settings
from service.errors import IllegalMove, ServiceError, StaleVersion
from service.games import Game, MoveRequest, apply_move, game_from_record
from service.keys import Keys
from service.procstat import StopFlag
from service.store import Store
from worker.config import WorkerConfig
from worker.lease import Lease
from worker.recovery import ensure_job

log = logging.getLogger("canasta.worker")

FALLBACK_AFTER = 2  # failed attempts after which a run plays the random bot
# Set when this worker process is asked to stop (worker/cli.py): a run then hands its game to
# a new job after its next move instead of playing out its time slice, so that a stop takes
# a move's time, not a slice's; the queued job goes on when a worker is back. Set from signal
# handlers: a StopFlag, not a threading.Event (service.procstat.StopFlag says why).
STOP = StopFlag()
MAX_ILLEGAL = 3  # illegal choices in one run before it gives up (the job then fails and retries)

_settings: dict[str, Settings] = {}
_stores: dict[tuple[int, str], Store] = {}


def settings_for(prefix: str) -> Settings:
    s = _settings.get(prefix)
    if s is None:
        s = _settings[prefix] = Settings.from_env({"key_prefix": prefix})
    return s


def store_for(redis: Any, prefix: str) -> Store:
    """The store of the games of the bot queue on ``redis`` (:func:`service.botqueue.games_of`)."""
    key = (id(redis), prefix)
    s = _stores.get(key)
    if s is None or s.queue is not redis:
        s = _stores[key] = Store.for_settings(games_of(redis), settings_for(prefix), queue=redis)
    return s


def seat_budget_ms(game: Game, seat: int, default: float) -> float:
    """The thinking time of the bot at ``seat``: the seat's own ``budget_ms`` (set when the
    seat was handed to the bot, checked by the service), else the worker's default."""
    budget = game.meta["seats"][seat].get("budget_ms")
    return float(budget) if budget is not None else default


def bot_to_act(game: Game | None) -> str | None:
    """The bot name of the seat to act, or None when nobody or a human is to act."""
    if game is None or game.status != "playing" or game.state is None:
        return None
    seat = game.state.to_act
    if seat < 0 or game.state.phase not in ("draw", "play", "answer"):
        return None
    return game.meta["seats"][seat].get("bot") or None


class BotRun:
    """Plays one game's bots for one job; holds the game's lease while it plays. ``redis``:
    the bot queue's client (the games' is paired with it: :func:`service.botqueue.games_of`)."""

    def __init__(self, redis: Any, cfg: WorkerConfig, game_id: str, token: str, waited: float | None = None) -> None:
        self.redis = redis
        self.waited = waited  # seconds the job waited in the queue (observed once the bot to act is known)
        self.cfg = cfg
        self.game_id = game_id
        self.store = store_for(redis, cfg.prefix)
        self.settings = settings_for(cfg.prefix)
        self.lease = Lease(self.store.redis, BotKeys(cfg.prefix).lease(game_id), token, cfg.lease_ms)
        self.state_key = Keys(cfg.prefix).state(game_id)
        self.moves = 0
        self.illegal = 0

    def load(self) -> Game | None:
        record = self.store.load(self.game_id)
        return game_from_record(self.game_id, record) if record is not None else None

    def run(self, version: int | None, attempt: int = 0) -> dict[str, Any]:
        """Play from ``version`` (``attempt``: runs of this game that failed before); None:
        from whatever version the game is at (a run that lost its connection plays on where
        it may have moved the game before)."""
        try:
            return self._run(version, attempt)
        finally:
            self.lease.release()

    def _run(self, version: int | None, attempt: int) -> dict[str, Any]:
        game = self.load()
        if self.waited is not None:
            metrics.observe_bot_wait(bot_to_act(game) or "none", self.waited)
        if game is None:
            discard_awaiting(self.redis, self.cfg.prefix, self.game_id, ANY_VERSION)
            return self._result("gone", None)
        if version is not None and game.version != version:
            return self._result("moved_on", game)  # whoever moved it on is responsible now
        if bot_to_act(game) is None:
            discard_awaiting(self.redis, self.cfg.prefix, self.game_id, game.version)
            return self._result("no_bot", game)
        if not self.lease.acquire():
            return self._result("busy", game)  # the holder re-reads after releasing
        started = time.monotonic()
        while True:
            game, handoff = self._play(attempt, started, game)
            if handoff:
                self.lease.release()
                assert game is not None
                ensure_job(self.redis, self.cfg, self.game_id, game.version, BotWork.of(self.game_id, game.meta, self.cfg),
                           grace_seconds=0)
                return self._result("handed_off", game)
            # Release, and read the version with the release: a move that raced with it is
            # ours to play. The game at a version never changes, so an unchanged version
            # means the game in hand is current (no read). Its wait is forgotten in the same
            # round trip when no bot is to act in it (a removal at this version never hides
            # a newer wait: the awaiting set's scores only grow).
            settled = game is not None and bot_to_act(game) is None
            together = self.store.redis is self.redis  # the awaiting set is on the games' server
            also = (discard_command(self.cfg.prefix, self.game_id, game.version),) if settled and game and together else ()
            current, _ = self.lease.release_and_version(self.state_key, *also, scripts=(DISCARD,) if also else ())
            if settled and game is not None and not together:
                discard_awaiting(self.redis, self.cfg.prefix, self.game_id, game.version)
            if game is None or current != game.version:
                game = self.load()
                settled = False
            if bot_to_act(game) is None:
                if game is not None and not settled:
                    discard_awaiting(self.redis, self.cfg.prefix, self.game_id, game.version)
                return self._result("done", game)
            if not self.lease.acquire():
                return self._result("handed_over", game)

    def _play(self, attempt: int, started: float, game: Game | None) -> tuple[Game | None, bool]:
        """Move while a bot is to act, from ``game`` (None: read it); (the last game read or
        committed, whether the time slice ran out)."""
        renewed = time.monotonic()
        while True:
            if game is None:
                game = self.load()
            name = bot_to_act(game)
            if name is None:
                return game, False
            assert game is not None and game.state is not None
            time_slice = self.cfg.slice_of(BotWork.of(self.game_id, game.meta, self.cfg).lane)
            if self.moves and (time.monotonic() - started > time_slice or STOP.is_set()):
                return game, True  # let other games' jobs run (or the worker stop); a new job goes on
            seat = game.state.to_act
            level = name if attempt < FALLBACK_AFTER and self.illegal == 0 else "random"
            began = time.perf_counter()
            action = self.decide(level, game, seat)
            move = MoveRequest(self.game_id, seat, action, game.version, answer_view=False, by_bot_run=True)
            try:
                result = apply_move(self.store, self.settings, move, game=game)
            except StaleVersion:
                game = None
                continue  # someone else moved: read again
            except IllegalMove as e:
                game = None
                self.illegal += 1
                log.error("bot %s chose an illegal move: %s %s: %s", name, action, e.code, e.detail)
                if self.illegal >= MAX_ILLEGAL:
                    raise
                continue
            except ServiceError:  # not its turn, the game over, gone: whatever it is now
                return self.load(), False
            self.moves += 1
            metrics.observe_bot_turn(level, time.perf_counter() - began)
            game = result.game  # as committed: the next move needs no read (None for a replay: read)
            now = time.monotonic()
            if now - renewed > self.cfg.renew_seconds:
                renewed = now
                if not self.lease.renew() and not self.lease.acquire():
                    return self.load(), False  # another job took the game over

    def decide(self, name: str, game: Game, seat: int) -> dict[str, Any]:
        """The bot's action; its rng is seeded by public facts only (game, version, seat)."""
        assert game.state is not None
        rng = random.Random(f"{self.game_id}:{game.version}:{seat}")
        try:
            return bots.choose(name, game.state, seat, rng, seat_budget_ms(game, seat, self.cfg.budget_ms))
        except Exception:  # noqa: BLE001 - a bot bug must not stall a game: play a legal move
            log.exception("bot %s failed in game %s v%s; playing random", name, self.game_id, game.version)
            return bots.choose("random", game.state, seat, rng)

    def _result(self, outcome: str, game: Game | None) -> dict[str, Any]:
        return {"outcome": outcome, "game": self.game_id, "moves": self.moves,
                "version": game.version if game is not None else None}
