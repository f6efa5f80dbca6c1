"""The game service without HTTP: create, join, hand a seat to a bot, view, move.

Every change of a game (create, join, a seat to a bot and back, a move, a bot's move) takes
one path, :func:`commit_change`: one compare-and-set (:meth:`service.store.Store.commit`), then
the committed game is remembered and the bot queue told. Refusals are the errors of
:mod:`service.errors` (the HTTP layer answers them). The bot worker calls
:func:`apply_move` exactly as the HTTP route does.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import orjson
import redis

import bots
import engine
from service import botqueue, eventcodec, gamelog, logcodec, metrics, names, quotas, retention
from service.clients import Client, unlimited
from service.config import Settings
from service.errors import (
    Conflict,
    GameNotFound,
    GameOver,
    IllegalMove,
    InvalidToken,
    MissingToken,
    NotAllowed,
    NotFound,
    NotYourTurn,
    SeatControlDenied,
    ServiceError,
    StaleVersion,
    Unavailable,
    Unprocessable,
)
from service.steps import Commit as StepCommit
from service.steps import Load, Recall, Settle, Steps, run
from service.store import Commit, NotDurable, Record, Store
from service.tokens import find_seat, hash_token, new_game_id, new_token, seal_token, unseal_token

log = logging.getLogger("canasta.api")

MAX_CAS_RETRIES = 8  # game ids a creation tries (a clash of random ids is next to impossible)
# A join or a seat change tries its compare-and-set again on a fresh read for this long before
# it gives up (a conflict): a bot run playing every seat of a game commits every few ms, and
# on a busy machine a person taking a seat back lost eight tries in a row to it.
SEAT_CHANGE_SECONDS = 3.0
SEAT_CHANGE_PAUSE_SECONDS = 0.002  # at most, at random, between two tries: out of step with a bot's pace
NEW_GAME = 0  # the version a game's compare-and-set expects when it creates the game


# -- the game as loaded ------------------------------------------------------------------
@dataclass(frozen=True)
class Game:
    id: str
    version: int
    meta: dict[str, Any]
    state: engine.State | None
    commit_id: bytes | None = None  # of the commit that made this version (Record.commit_id)

    @property
    def status(self) -> str:
        return str(self.meta["status"])

    def seat_hashes(self) -> list[str | None]:
        return [s.get("token") for s in self.meta["seats"]]

    def rules(self) -> engine.RuleOptions:
        return engine.RuleOptions.from_dict(self.meta["rules"])

    def is_bot(self, seat: int) -> bool:
        return bool(self.meta["seats"][seat].get("bot"))

    @property
    def players(self) -> int:
        return len(self.meta["seats"])


CacheEntry = tuple[dict[str, Any], engine.State | None, bytes | None]  # meta, state, commit id


class GameCache:
    """Parsed games of this process by (game id, version), most recent first.

    Every write of a game goes through ``commit.lua``, which bumps the version with the
    state and meta in one step, so a (game, version) pair names one state and one meta
    as long as the store keeps what it answered. One that loses a change (a failover to a
    replica that lacked it, a crash of a server that had not fsynced it) may make another
    change at the same version: so each entry keeps the id of the commit it was read at,
    a read from the store uses it only for the same commit, and a move judged on it names
    that commit in its compare-and-set. Meta and state are shared by every request that
    reads that version: engine states are immutable, and the service never changes a meta
    dict in place (a change builds a new dict, see ``join_seat``); callers must not either.
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, int], CacheEntry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str, version: int) -> tuple[dict[str, Any], engine.State | None] | None:
        entry = self.entry(game_id, version)
        return entry[:2] if entry is not None else None

    def entry(self, game_id: str, version: int) -> CacheEntry | None:
        return self._items.get((game_id, version))  # a dict read is atomic; put() locks

    def put(self, game_id: str, version: int, meta: dict[str, Any], state: engine.State | None,
            commit_id: bytes | None = None) -> None:
        with self._lock:
            self._items[(game_id, version)] = (meta, state, commit_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


CACHE = GameCache()


def game_from_record(game_id: str, record: Record) -> Game:
    hit = CACHE.entry(game_id, record.version)
    if hit is not None and (hit[1] is None) == (not record.state) and hit[2] == record.commit_id:
        return Game(game_id, record.version, hit[0], hit[1], hit[2])
    state = parse_state(record.state, record.meta) if record.state else None
    CACHE.put(game_id, record.version, record.meta, state, record.commit_id)
    return Game(game_id, record.version, record.meta, state, record.commit_id)


def cached_game(game_id: str, version: int) -> Game | None:
    """The game at ``version`` if this process has seen it (it may no longer be current,
    or no longer the store's: a compare-and-set against its version and commit tells)."""
    hit = CACHE.entry(game_id, version)
    if hit is None:
        return None
    return Game(game_id, version, hit[0], hit[1], hit[2])


def load_game(store: Store, game_id: str) -> Game:
    return run(store, loaded(game_id))


def loaded(game_id: str) -> Steps[Game]:
    """The game as Redis holds it now (404 ``game_not_found`` when there is none)."""
    record = yield Load(game_id)
    if record is None:
        raise GameNotFound(game_id)
    return game_from_record(game_id, record)


def _load_record(store: Store, game_id: str) -> Record:
    record = store.load(game_id)
    if record is None:
        raise GameNotFound(game_id)
    return record


# -- views ------------------------------------------------------------------------------
def public_seats(meta: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"seat": s["seat"], "team": s["team"], "name": s.get("name"), "bot": s.get("bot"),
         "budget_ms": s.get("budget_ms"), "open": s.get("name") is None and s.get("bot") is None}
        for s in meta["seats"]
    ]


def engine_view(state: engine.State | None, seat: int | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return engine.seat_view(state, seat) if seat is not None else engine.spectator_view(state)


def game_view(game: Game, seat: int | None, *, with_rules: bool = False) -> dict[str, Any]:
    """What ``GET /games/{id}`` answers: the game's public facts and the reader's view."""
    meta = game.meta
    body: dict[str, Any] = {
        "id": game.id,
        "status": meta["status"],
        "version": game.version,
        "preset": meta["preset"],
        "players": len(meta["seats"]),
        "seat": seat,
        "seats": public_seats(meta),
        "turn_timeout": turn_timeout(meta),
        "view": engine_view(game.state, seat),
    }
    if with_rules:
        body["rules"] = meta["rules"]
    return body


def authenticate(game: Game, token: str | None) -> int | None:
    """The seat of ``token`` (None: no token, a spectator); :class:`InvalidToken` for a
    token of no seat."""
    if token is None:
        return None
    seat = find_seat(token, game.seat_hashes())
    if seat is None:
        raise InvalidToken()
    return seat


def _seat_of(game: Game, token: str | None, needs: str) -> int:
    """The seat of ``token``, which this request needs (``needs``: the sentence saying so)."""
    if token is None:
        raise MissingToken(needs)
    seat = authenticate(game, token)
    assert seat is not None
    return seat


# -- events -----------------------------------------------------------------------------
def _envelope(kind: str, meta: dict[str, Any], state: engine.State | None) -> dict[str, Any]:
    if state is None:
        return {"type": kind, "status": meta["status"], "phase": None, "hand_no": 0, "moves": 0, "turn": None,
                "to_act": None}
    return {
        "type": kind,
        "status": meta["status"],
        "phase": state.phase,
        "hand_no": state.hand_no,
        "moves": state.moves,
        "turn": state.turn if state.phase in ("draw", "play", "answer") else None,
        "to_act": state.to_act if state.to_act >= 0 else None,
    }


def _event_fields(envelope: dict[str, Any], per_viewer: dict[int | None, dict[str, Any]]) -> dict[str, bytes]:
    """The stream field ``w``: the envelope, the spectator's data and each seat's where it
    differs, compacted (:mod:`service.eventcodec`). Readers take their seat's data or else the
    spectator's."""
    shared = per_viewer[None]
    public = orjson.dumps(shared)
    seats: dict[int, bytes] = {}
    for viewer, data in per_viewer.items():
        if viewer is None or data is shared:  # the same object: the same data
            continue
        blob = orjson.dumps(data)
        if blob != public:
            seats[viewer] = blob
    return {eventcodec.WFIELD: eventcodec.encode_entry(orjson.dumps(envelope), public, seats)}


def _viewers(players: int) -> list[int | None]:
    return [None, *range(players)]


def _deal_part(state: engine.State, viewer: int | None) -> dict[str, Any]:
    return {"hand": state.hand_no, "dealer": state.dealer, "commitment": state.commitment,
            "view": engine_view(state, viewer)}


def _entry_parts(fields: dict[str, bytes], seat: int | None) -> tuple[bytes, bytes]:
    """The envelope's JSON and the data JSON ``seat`` may read, of any entry format."""
    entry = fields.get(eventcodec.WFIELD)
    if entry is not None:
        envelope, public, seats = eventcodec.decode_entry(entry)
        return envelope, seats.get(seat, public) if seat is not None else public
    packed = fields.get(eventcodec.FIELD)
    if packed is not None:  # plain ``e`` and the data in ``z``
        return fields["e"], eventcodec.data_for(packed, seat)
    data = fields.get(f"s{seat}") if seat is not None else None  # before service.eventcodec
    return fields["e"], data if data is not None else fields["p"]


def event_envelope(fields: dict[str, bytes]) -> dict[str, Any]:
    """What happened and whose turn it is now (type, status, phase, turn, to_act, ...):
    the part of a stream entry that is the same for every reader."""
    return orjson.loads(_entry_parts(fields, None)[0])


def render_event(event_id: str, fields: dict[str, bytes], seat: int | None) -> dict[str, Any]:
    """One stream entry as ``seat`` (or a spectator) may read it."""
    envelope, data = _entry_parts(fields, seat)
    body = {"id": event_id, "version": int(fields["v"])}
    body.update(orjson.loads(envelope))
    body["data"] = orjson.loads(data)
    return body


# -- dealing ----------------------------------------------------------------------------
# A test-only seam: (rules, hand number) -> (deck, salt) for a hand dealt at creation.
# Only :func:`create_game`'s keyword takes one; no route passes it, so no request can.
DeckSource = Callable[[engine.RuleOptions, int], tuple[list[str], str]]


def _deal(state: engine.State, seed: int | None, deck_source: DeckSource | None = None) -> tuple[engine.State, bytes]:
    """Deal the next hand (secure shuffle, a test seed, or a test's deck) and its log line."""
    if deck_source is not None:
        deck, salt = deck_source(state.rules, state.hand_no + 1)
        commitment = engine.commitment(salt, deck)
    else:
        rng = random.Random(f"{seed}:{state.hand_no + 1}") if seed is not None else None
        deck, salt, commitment = engine.shuffle(state.rules, rng)
    new = engine.deal(state, deck, salt)
    return new, gamelog.encode(gamelog.deal(new.hand_no, new.dealer, deck, salt, commitment))


def _start(game_id: str, meta: dict[str, Any], rules: engine.RuleOptions,
           deck_source: DeckSource | None = None) -> tuple[engine.State, list[bytes]]:
    """Every seat is filled: the header line and the first deal."""
    meta["status"] = "playing"
    header = gamelog.header(game_id, meta["rules"], meta["seats"], meta["created"])
    state, deal_line = _deal(engine.new_game(rules), meta.get("seed"), deck_source)
    return state, [gamelog.encode(header), deal_line]


def _filled(meta: dict[str, Any]) -> bool:
    return all(s.get("name") is not None or s.get("bot") is not None for s in meta["seats"])


def _state_blob(state: engine.State | None) -> bytes | None:
    """The state as stored: its JSON without the rule options, which the game's meta holds
    once (a third of the state's size)."""
    if state is None:
        return None
    return orjson.dumps(state.to_json(rules=False))


def parse_state(blob: bytes, meta: dict[str, Any]) -> engine.State:
    """:func:`_state_blob` read back (states stored with their rules are read as they are)."""
    data = orjson.loads(blob)
    if "rules" not in data:
        data["rules"] = meta["rules"]
    return engine.State.from_json(data)


def _ttl(settings: Settings, meta: dict[str, Any]) -> int:
    return settings.retention_seconds if meta["status"] == "over" else settings.idle_seconds


# -- the one commit path -------------------------------------------------------------------
PerViewer = dict[int | None, dict[str, Any]]  # an event's data for each viewer (None: spectators)


@dataclass(frozen=True)
class Change:
    """One change of a game, ready to commit: what the game becomes, what each viewer is
    told (the event), and the lines it adds to the game log.

    ``meta`` and ``state`` are the game's after the change; whichever is the very object
    the game had before is not written again (a move keeps the meta, a seat change the
    state). ``turn_clock``: the seat to act starts waiting now (the turn timeout's clock).
    ``idem``: the answer stored for an Idempotency-Key, (seat, key, record, ttl).
    """

    kind: str  # the event's type: created, joined, bot, bot_removed, move
    meta: dict[str, Any]
    state: engine.State | None
    data: PerViewer
    log_lines: list[bytes] = field(default_factory=list)
    turn_clock: bool = False
    idem: tuple[int, str, bytes, int] | None = None

    def game(self, game_id: str, version: int) -> Game:
        """The game as this change makes it, at ``version``."""
        return Game(game_id, version, self.meta, self.state)


def for_each_viewer(players: int, data: Callable[[int | None], dict[str, Any]]) -> PerViewer:
    return {viewer: data(viewer) for viewer in _viewers(players)}


def commit_change(store: Store, settings: Settings, game_id: str, before: Game | None, change: Change, *,
                  by_bot_run: bool = False) -> Commit:
    """The one way a game changes (:func:`commit_steps`), with the blocking client."""
    return run(store, commit_steps(settings, game_id, before, change, by_bot_run=by_bot_run))


def commit_steps(settings: Settings, game_id: str, before: Game | None, change: Change, *,
                 by_bot_run: bool = False) -> Steps[Commit]:
    """The one way a game changes: one compare-and-set against ``before``'s version
    (``None``: the game is created), which writes the state, the meta, the event, the log
    lines and the idempotency record together and is durable when it returns
    (:meth:`service.store.Store.commit`, :mod:`service.durability`). Then, for ``ok``: the
    committed game is remembered for the next request (:data:`CACHE`) and, when there is
    anything to do (:func:`must_settle`), :func:`settle`: the bot queue is told when a bot is
    to act (not after the bot run's own moves, ``by_bot_run``: it plays on), and old log
    lines are folded. ``stale`` and ``replay`` wrote nothing."""
    try:
        result = yield StepCommit(game_id, commit_args(settings, game_id, before, change))
    except NotDurable as e:
        yield Settle(partial(not_durable, by_bot_run=by_bot_run), (game_id, change, e))
        raise
    if result.outcome == "ok":
        remember(game_id, change, result)
        if must_settle(change, result, by_bot_run=by_bot_run):
            yield Settle(partial(settle, by_bot_run=by_bot_run), (game_id, change, result))
    return result


def commit_args(settings: Settings, game_id: str, before: Game | None, change: Change) -> dict[str, Any]:
    """The keyword arguments of :meth:`service.store.Store.commit` (and ``commit_commands``) for
    ``change`` against ``before``: only what changed is written."""
    state_changed = before is None or change.state is not before.state
    meta_changed = before is None or change.meta is not before.meta
    return {
        "game_id": game_id, "expected_version": before.version if before is not None else NEW_GAME,
        "meta": change.meta if meta_changed else None,
        "state": _state_blob(change.state) if state_changed else None,
        "event": _event_fields(_envelope(change.kind, change.meta, change.state), change.data),
        "log_lines": change.log_lines, "ttl": _ttl(settings, change.meta), "idem": change.idem,
        "events_keep": settings.events_keep, "turn_clock": change.turn_clock,
        "expected_commit_id": before.commit_id if before is not None else None,
    }


def not_durable(store: Store, game_id: str, change: Change, error: NotDurable, *, by_bot_run: bool = False) -> None:
    """A change made but not confirmed on disk (answered 503) stands unless the server loses
    it, so a bot to act after it is told now (a retry only replays; the client may not retry)."""
    if error.commit is not None and error.commit.outcome == "ok" and not by_bot_run:
        _notify_bots(store, game_id, change, error.commit.version)


def remember(game_id: str, change: Change, result: Commit) -> None:
    """Keep the game as ``change`` made it (an ``ok`` commit) for this process's next request;
    count a game created or finished (``service.metrics``: every ``ok`` commit, on the loop's path,
    Flask's and the bot worker's, passes here once)."""
    CACHE.put(game_id, result.version, change.meta, change.state, result.event_id.encode())
    if change.kind == "created":
        metrics.count_game_created()
    elif change.kind == "move" and change.meta["status"] == "over":
        metrics.count_game_finished()


def must_settle(change: Change, result: Commit, *, by_bot_run: bool = False) -> bool:
    """Whether :func:`settle` has anything to do (it talks to Redis only then)."""
    return ((not by_bot_run and _bot_to_act(change)) or result.log_plain >= logcodec.CHUNK
            or change.meta["status"] == "over")


def settle(store: Store, game_id: str, change: Change, result: Commit, *, by_bot_run: bool = False) -> None:
    """After an ``ok`` commit: tell the bot queue when a bot is to act (not after a bot run's
    own moves), and fold old log lines."""
    if not by_bot_run:
        _notify_bots(store, game_id, change, result.version)
    if result.log_plain >= logcodec.CHUNK:
        _compact_log(store, game_id, result.log_chunks)
    if change.kind == "move" and change.meta["status"] == "over":
        _finished(store, game_id, change.meta)


def _finished(store: Store, game_id: str, meta: dict[str, Any]) -> None:
    """The game ended: its client may start another game of bots only, and the books of
    games (:mod:`service.retention`) have it for its log's archive."""
    if meta.get("bots_only") and meta.get("client"):
        quotas.release_bot_game(store, meta["client"], game_id)
    retention.Books(store.queue, store.keys.prefix).finished(game_id)


def _bot_to_act(change: Change) -> bool:
    state = change.state
    if state is None or state.to_act < 0 or change.meta["status"] != "playing":
        return False
    return bool(change.meta["seats"][state.to_act].get("bot"))


def _notify_bots(store: Store, game_id: str, change: Change, version: int) -> None:
    """If a bot seat is to act, hand the turn to the bot worker (:mod:`service.botqueue`)."""
    if not _bot_to_act(change):
        return
    try:
        cfg = botqueue.config_for(store.keys.prefix)
        botqueue.notify(store.queue, cfg, game_id, version, botqueue.BotWork.of(game_id, change.meta, cfg))
    except Exception:  # noqa: BLE001 - a failed enqueue must not fail the accepted change (the sweeper retries)
        log.exception("enqueueing the bots of %s v%s failed", game_id, version)


def _compact_log(store: Store, game_id: str, chunks: int) -> None:
    """Fold old log lines (:mod:`service.logcodec`); a failure only postpones it to a later change."""
    try:
        store.compact_log(game_id, chunks)
    except redis.RedisError:
        log.warning("log compaction of %s postponed", game_id, exc_info=True)


# -- create, join, hand to a bot ----------------------------------------------------------
def create_game(store: Store, settings: Settings, body: dict[str, Any], *, client: Client | None = None,
                deck_source: DeckSource | None = None) -> tuple[dict[str, Any], int]:
    """``body`` is a loaded CreateGameSchema. Returns (response body, version).

    ``client``: who asks (an address or an API key), whose quotas the game counts on
    (:mod:`service.quotas`: room in the store, games per window, games of bots only at once);
    None: the operator's own tools, unlimited. The game remembers its client for its bots'
    fair share (:mod:`service.botqueue`).

    ``deck_source`` is for tests only (the fair-play property test deals two games from
    decks it chose): the deck of a hand dealt now, when every seat is filled at creation.
    """
    seed = body.get("seed")
    if seed is not None and not settings.test_seeds:
        raise Unprocessable("seed_not_allowed", "A seed is accepted only by a server started with test seeds enabled.")
    try:
        rules = engine.resolve(body["preset"], body.get("players"), body.get("rules") or None)
    except engine.RulesError as e:
        raise Unprocessable("invalid_rules", str(e)) from None
    _check_playable(rules)
    specs = body["seats"]
    if len(specs) != rules.players:
        raise Unprocessable("seat_count", f"This game has {rules.players} seats; {len(specs)} were given.")
    tokens: dict[int, str] = {}
    seats = []
    for n, spec in enumerate(specs):
        spec = spec or {}
        name = seat_name(spec["name"], n) if spec.get("name") is not None else None
        seat = {"seat": n, "team": rules.team_of(n), "name": name, "bot": spec.get("bot"), "token": None}
        if spec.get("bot") is not None:
            seat["budget_ms"] = bot_budget(spec["bot"], spec.get("budget_ms"))
        if seat["name"] is not None:
            tokens[n] = new_token()
            seat["token"] = hash_token(tokens[n])
        seats.append(seat)
    client = client if client is not None else unlimited(settings)
    bots_only = all(s["bot"] is not None for s in seats)
    quotas.check_room(store, settings)
    quotas.count_creation(store, client)
    for _ in range(MAX_CAS_RETRIES):
        game_id = new_game_id()
        if bots_only:
            quotas.reserve_bot_game(store, settings, client, game_id)
        meta = {"id": game_id, "preset": rules.preset, "rules": rules.to_dict(), "created": gamelog.now_rfc3339(),
                "status": "waiting", "seats": seats, "seed": seed,
                "turn_timeout": body.get("turn_timeout", DEFAULT_TURN_TIMEOUT),
                "client": client.ident, "bot_runs": client.quotas.bot_runs, "bots_only": bots_only}
        change = _creation(game_id, meta, rules, deck_source)
        result = commit_change(store, settings, game_id, None, change)
        if result.outcome == "ok":
            retention.Books(store.queue, store.keys.prefix).opened(game_id)
            break
        if bots_only:  # pragma: no cover - 72-bit ids do not collide
            quotas.release_bot_game(store, client.ident, game_id)
    else:  # pragma: no cover - 72-bit ids do not collide
        raise Unavailable("unavailable", "Could not allocate a game id; try again.")
    response = game_view(change.game(game_id, result.version), None, with_rules=True)
    response["seats"] = [{**s, "token": tokens.get(s["seat"])} for s in response["seats"]]
    return response, result.version


def _creation(game_id: str, meta: dict[str, Any], rules: engine.RuleOptions, deck_source: DeckSource | None) -> Change:
    """A new game: its seats, and the first deal when every seat is filled already."""
    state, lines = _start(game_id, meta, rules, deck_source) if _filled(meta) else (None, [])
    return Change("created", meta, state,
                  for_each_viewer(rules.players, lambda v: {"seats": public_seats(meta), **_deal_news(state, v)}),
                  lines, turn_clock=state is not None)


def _check_playable(rules: engine.RuleOptions) -> None:
    """Deal one trial hand, so that rules the engine accepts but cannot play are refused
    now (invalid_rules) rather than failing when the last seat is filled."""
    try:
        engine.deal(engine.new_game(rules), *engine.shuffle(rules, random.Random(0))[:2])
    except Exception as e:  # noqa: BLE001 - any failure means: not playable
        log.warning("rules accepted by resolve() but not playable: %r (%r)", rules, e)
        raise Unprocessable("invalid_rules", "These rule options cannot be played together.") from None


def _check_seat_exists(game: Game, seat: int) -> None:
    if not 0 <= seat < game.players:
        raise NotFound("seat_not_found", f"Game {game.id} has seats 0 to {game.players - 1}.")


def _deal_news(state: engine.State | None, viewer: int | None) -> dict[str, Any]:
    """The first deal, for an event that starts the game (``state``; None: not started)."""
    return {"deal": _deal_part(state, viewer)} if state is not None else {}


def _with_seat(meta: dict[str, Any], seat: int, **fields: Any) -> dict[str, Any]:
    """A new meta in which seat ``seat`` has ``fields`` (a meta is never changed in place:
    :class:`GameCache` shares it)."""
    new = dict(meta)
    new["seats"] = [dict(s) for s in meta["seats"]]
    new["seats"][seat].update(fields)
    return new


class _Replayed(Exception):
    """A seat change's Idempotency-Key was committed meanwhile (by a try still in flight):
    its stored answer."""

    def __init__(self, record: bytes) -> None:
        super().__init__("replayed")
        self.record = record


def _change_seats(store: Store, settings: Settings, game_id: str,
                  decide: Callable[[Game, Record], Change], busy: str) -> Game:
    """A change of who sits where: ``decide`` checks the game as read (raising a refusal)
    and says the change; the compare-and-set is tried again on a fresh read when another
    change won, for up to :data:`SEAT_CHANGE_SECONDS` (then a ``conflict``: ``busy``).
    :class:`_Replayed` when the change's Idempotency-Key was answered meanwhile."""
    deadline = time.monotonic() + SEAT_CHANGE_SECONDS
    while True:
        record = _load_record(store, game_id)
        game = game_from_record(game_id, record)
        change = decide(game, record)
        result = commit_change(store, settings, game_id, game, change)
        if result.outcome == "ok":
            return change.game(game_id, result.version)
        if result.outcome == "replay":
            raise _Replayed(result.record)
        if time.monotonic() >= deadline:
            raise Conflict("conflict", busy)
        time.sleep(random.random() * SEAT_CHANGE_PAUSE_SECONDS)


JOIN_KEY = "join:{}"  # a join's Idempotency-Key, apart from the seat's move keys


@dataclass(frozen=True)
class JoinKey:
    """A join's Idempotency-Key. Its retry gets the seat's token with no token of its own,
    so the key is a secret (the HTTP layer refuses a guessable one) and the stored answer
    keeps the token sealed (:func:`service.tokens.seal_token`) with ``secret``, the key itself,
    for ``client``, the address the join came from: only the same key from the same address
    opens it. ``ref`` (a hash of the key) names the stored answer."""

    ref: str
    secret: str
    client: str

    def context(self, game_id: str, seat: int) -> tuple[str, ...]:
        return game_id, str(seat), self.client


def seat_name(raw: str, seat: int) -> str:
    """A person's name for ``seat``, normalised (:func:`service.names.normalise_name`), or 422
    ``invalid_name`` with its ``reason`` (and the ``character`` at fault)."""
    try:
        return names.normalise_name(raw)
    except names.NameRefused as e:
        facts = {"reason": e.reason, "seat": seat, **({"character": e.character} if e.character else {})}
        raise Unprocessable("invalid_name", f"Seat {seat}: {e.detail}", **facts) from None


def join_seat(store: Store, settings: Settings, game_id: str, seat: int, name: str,
              key: JoinKey | None = None) -> MoveResult:
    """Take an open seat; the game starts when the last seat is filled. The answer is the
    new seat (its token) and the version, ``replayed`` when a key's stored answer.

    ``key``: the answer, the seat's only copy of its token, is stored with the join, and a
    retry with the same key (and name) from the same address gets it again: a join whose
    answer was lost does not leave the seat to a token nobody holds. The stored answer holds
    the token sealed (:class:`JoinKey`); a replay from elsewhere is refused
    (``join_from_elsewhere``)."""
    name = seat_name(name, seat)
    token = new_token()
    idem = JOIN_KEY.format(key.ref) if key is not None else None
    fingerprint = _fingerprint({"join": name}) if key is not None else ""
    if key is not None and idem is not None:
        stored = store.get_idempotency(game_id, seat, idem, settings.idempotency_seconds)
        if stored is not None:
            return _replay_join(stored, fingerprint, key, game_id, seat)

    def decide(game: Game, record: Record) -> Change:
        _check_seat_exists(game, seat)
        current = game.meta["seats"][seat]
        if current.get("name") is not None or current.get("bot") is not None:
            raise Conflict("seat_taken", f"Seat {seat} is already taken.")
        if game.status != "waiting":  # pragma: no cover - a started game has no open seat
            raise Conflict("game_started", "The game has started.")
        meta = _with_seat(game.meta, seat, name=name, token=hash_token(token))
        state, lines = _start(game_id, meta, game.rules()) if _filled(meta) else (None, [])
        record_idem = None
        if key is not None and idem is not None:
            answer = _joined(game_id, seat, name, None, meta, game.version + 1)
            stored = orjson.dumps({"fingerprint": fingerprint, "version": game.version + 1, "body": answer,
                                   "sealed": seal_token(token, key.secret, key.context(game_id, seat)),
                                   "check": hash_token(token)})
            record_idem = (seat, idem, stored, settings.idempotency_seconds)
        return Change("joined", meta, state,
                      for_each_viewer(game.players, lambda v: {"seat": seat, "name": name, **_deal_news(state, v)}),
                      lines, turn_clock=state is not None, idem=record_idem)

    try:
        joined = _change_seats(store, settings, game_id, decide, "The game changed too often while joining; try again.")
    except _Replayed as e:
        assert key is not None
        return _replay_join(e.record, fingerprint, key, game_id, seat)
    return MoveResult(_joined(game_id, seat, name, token, joined.meta, joined.version), joined.version)


def _replay_join(record: bytes, fingerprint: str, key: JoinKey, game_id: str, seat: int) -> MoveResult:
    """A join's stored answer given again, its token unsealed: only for the key and the
    address that made the join (a record of an older version, with no sealed token, is
    given to nobody)."""
    replayed = _replay(record, fingerprint)
    stored = orjson.loads(record)
    sealed, check = stored.get("sealed"), stored.get("check")
    token = unseal_token(sealed, key.secret, key.context(game_id, seat), check) if sealed and check else None
    if token is None:
        raise NotAllowed("join_from_elsewhere", "This join was made from another address: its answer (the seat's "
                                                "token) is given again only to the address that made it.")
    return replace(replayed, body={**replayed.body, "token": token})


def _joined(game_id: str, seat: int, name: str, token: str | None, meta: dict[str, Any],
            version: int) -> dict[str, Any]:
    """The answer to a join (the game as the join made it)."""
    return {"id": game_id, "seat": seat, "team": meta["seats"][seat]["team"], "name": name, "token": token,
            "status": meta["status"], "version": version}


# -- who controls a seat ------------------------------------------------------------------
DEFAULT_TURN_TIMEOUT = 300  # seconds a person's seat may be to act before another seat may bot it
NO_TURN_TIMEOUT = 0  # a game's turn_timeout that never lets another seat bot a person


def turn_timeout(meta: dict[str, Any]) -> int:
    """The game's turn timeout, seconds (0: never); games created before it had the default."""
    return int(meta.get("turn_timeout", DEFAULT_TURN_TIMEOUT))


def _need_token(token: str | None) -> None:
    if token is None:
        raise MissingToken("This needs the bearer token of a seat of this game.")


def _may_hand_to_bot(store: Store, game: Game, record_turn_at: int | None, seat: int, caller: int) -> str:
    """Why ``caller`` may hand ``seat`` to a bot (``owner``, ``open_seat``, ``turn_timeout``),
    or the refusal: only the seat's own token hands a person's seat over, except once that
    seat has been to act for longer than the game's turn timeout (measured on the Redis
    server's clock, the one every API process shares)."""
    target = game.meta["seats"][seat]
    if caller == seat:
        return "owner"
    if target.get("name") is None:
        if target.get("bot") is None:
            return "open_seat"
        raise Conflict("seat_taken", f"Seat {seat} is played by a bot; it belongs to nobody.")
    if target.get("bot") is not None:
        raise Conflict("already_bot", f"Seat {seat} is already played by a bot.")
    timeout = turn_timeout(game.meta)
    if timeout == NO_TURN_TIMEOUT:
        raise SeatControlDenied("turn_timeout_disabled",
                                f"Seat {seat} is a person's; this game has no turn timeout, so only seat {seat} "
                                "hands it to a bot.")
    state = game.state
    if game.status != "playing" or state is None or state.to_act != seat or record_turn_at is None:
        raise SeatControlDenied("not_seat_owner",
                                f"Seat {seat} is a person's: only its own token hands it to a bot, or any seat once "
                                f"it has been to act for longer than the turn timeout ({timeout} s).")
    idle = (store.server_time_ms(game.id) - record_turn_at) / 1000
    if idle <= timeout:
        raise SeatControlDenied("seat_not_idle",
                                f"Seat {seat} has been to act for {idle:.0f} s; another seat may hand it to a bot "
                                f"after {timeout} s.", idle_seconds=round(idle, 3), turn_timeout=timeout)
    return "turn_timeout"


def bot_budget(bot: str, budget_ms: int | None) -> int | None:
    """The thinking time a seat asks for its bot, checked: only a level that thinks for a
    budget takes one (``budget_not_supported``), within ``bots.BUDGET_LIMITS_MS``
    (``budget_out_of_range``). None: the bot worker's default."""
    if budget_ms is None:
        return None
    if bot not in bots.BUDGETED:
        raise Unprocessable("budget_not_supported",
                            f"The {bot} bot thinks for no budget; only {', '.join(sorted(bots.BUDGETED))} take budget_ms.")
    low, high = bots.BUDGET_LIMITS_MS
    if not low <= budget_ms <= high:
        raise Unprocessable("budget_out_of_range", f"budget_ms is from {low} to {high} milliseconds.",
                            min_budget_ms=low, max_budget_ms=high)
    return budget_ms


def assign_bot(store: Store, settings: Settings, game_id: str, seat: int, bot: str, token: str | None,
               budget_ms: int | None = None) -> tuple[dict[str, Any], int]:
    """Hand a seat to a bot: its own token at any time ("play for me"); any seat of the game
    for an open seat, or for a person's seat that has been to act for longer than the game's
    turn timeout. Refused otherwise with a reason code (:func:`_may_hand_to_bot`).
    ``budget_ms``: the expert's thinking time per decision (:func:`bot_budget`)."""
    _need_token(token)
    budget_ms = bot_budget(bot, budget_ms)
    caller: int | None = None

    def decide(game: Game, record: Record) -> Change:
        nonlocal caller
        caller = authenticate(game, token)
        assert caller is not None
        _check_seat_exists(game, seat)
        if game.status == "over":
            raise GameOver()
        reason = _may_hand_to_bot(store, game, record.turn_at, seat, caller)
        meta = _with_seat(game.meta, seat, bot=bot, budget_ms=budget_ms)
        state, started = game.state, False
        lines: list[bytes] = []
        if game.status == "waiting" and _filled(meta):
            state, lines = _start(game_id, meta, game.rules())
            started = True
        by = caller
        return Change("bot", meta, state,
                      for_each_viewer(game.players, lambda v: {"seat": seat, "bot": bot, "by": by, "reason": reason,
                                                               **_deal_news(state if started else None, v)}),
                      lines, turn_clock=started)

    updated = _change_seats(store, settings, game_id, decide, "The game changed too often; try again.")
    return game_view(updated, caller), updated.version


def take_seat_back(store: Store, settings: Settings, game_id: str, seat: int, token: str | None) -> tuple[dict[str, Any], int]:
    """The person takes their seat back from the bot (only the seat's own token). A bot run
    playing the seat stops at its next move: its compare-and-set names the version before
    this change, and the run re-reads the game and finds no bot to act. The seat's turn
    clock restarts if it is to act."""
    _need_token(token)
    caller: int | None = None

    def decide(game: Game, record: Record) -> Change:
        nonlocal caller
        caller = authenticate(game, token)
        _check_seat_exists(game, seat)
        if caller != seat:
            raise SeatControlDenied("not_seat_owner", f"Only seat {seat}'s own token takes it back from a bot.")
        if game.status == "over":
            raise GameOver()
        bot = game.meta["seats"][seat].get("bot")
        if bot is None:
            raise Conflict("seat_not_bot", f"Seat {seat} is not played by a bot.")
        by = caller
        return Change("bot_removed", _with_seat(game.meta, seat, bot=None, budget_ms=None), game.state,
                      for_each_viewer(game.players, lambda v: {"seat": seat, "bot": bot, "by": by}),
                      turn_clock=game.state is not None and game.state.to_act == seat)

    updated = _change_seats(store, settings, game_id, decide, "The game changed too often; try again.")
    return game_view(updated, caller), updated.version


# -- moves ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MoveRequest:
    """One move as asked for: by ``seat`` of ``game_id``, decided on ``expected_version``
    (None: whatever is current, ``If-Match: *``).

    ``idempotency_key``: a retry with the same key gets the first answer, and the move is
    applied once. ``dry_run``: only judged (:func:`dry_run_answer`). ``answer_view``: False
    builds no view for the answer (the bot worker's moves; a key needs one anyway).
    ``by_bot_run``: the bot worker's move for a bot's seat, by the run that holds the game:
    only it moves a seat a bot plays, and it plays on after the move, so the bot queue is
    not told.
    """

    game_id: str
    seat: int
    action: dict[str, Any]
    expected_version: int | None
    idempotency_key: str | None = None
    dry_run: bool = False
    answer_view: bool = True
    by_bot_run: bool = False


@dataclass(frozen=True)
class MoveResult:
    """The answer to a move: the mover's new view (empty when not asked for), the new
    version and, for a fresh commit, the committed game (``None`` for replays)."""

    body: dict[str, Any]
    version: int
    replayed: bool = False
    dry_run: bool = False
    game: Game | None = None


def apply_move(store: Store, settings: Settings, move: MoveRequest, *, game: Game | None = None) -> MoveResult:
    """:func:`move_steps` with the blocking client (the bot worker's moves)."""
    return run(store, move_steps(settings, move, game))


def move_steps(settings: Settings, move: MoveRequest, game: Game | None = None) -> Steps[MoveResult]:
    """Judge ``move`` and apply it in one compare-and-set, or raise the refusal: the game
    or the seat not found, not started or over, a stale version, not the seat's turn, a
    bot's seat, an illegal move, a reused Idempotency-Key with another action.

    ``game``: the game as the caller just read it, or as this process cached it (saves a
    read; the compare-and-set checks its version and commit).

    A move sent again with its Idempotency-Key is answered as it was the first time,
    whatever changed since (the seat handed to a bot, the game over, a newer version): the
    compare-and-set finds the key's stored answer before it looks at the version
    (``replay``), and a refusal looks for it (:class:`Recall`) before it is raised.
    """
    if game is None or game.id != move.game_id:
        game = yield from loaded(move.game_id)
    fingerprint = move_fingerprint(move)
    try:
        after = judge_move(game, move)
    except ServiceError:
        if move.idempotency_key is not None and not move.dry_run:
            record = yield Recall(move.game_id, move.seat, move.idempotency_key, settings.idempotency_seconds)
            if record is not None:
                return _replay(record, fingerprint)
        raise
    if move.dry_run:
        return MoveResult(dry_run_answer(game, move.seat, move.action, after), game.version, dry_run=True)
    prepared = prepare_move(settings, game, move, after, fingerprint)
    result = yield from commit_steps(settings, game.id, game, prepared.change, by_bot_run=move.by_bot_run)
    return move_result(prepared, result)


@dataclass(frozen=True)
class PreparedMove:
    """A move judged legal, ready for its compare-and-set: the change, the game it makes
    and the mover's answer (stored with an Idempotency-Key)."""

    game: Game  # as judged: the compare-and-set expects its version and commit
    change: Change
    updated: Game
    body: dict[str, Any]
    fingerprint: str


def move_fingerprint(move: MoveRequest) -> str:
    """What an Idempotency-Key's stored answer is checked against ("" without a key)."""
    return _fingerprint(move.action) if move.idempotency_key is not None else ""


def judge_move(game: Game, move: MoveRequest) -> engine.State:
    """The state after ``move`` in ``game``, or the refusal: a bot's seat, the game not
    being played at the version the mover saw, not the mover's turn, an illegal move."""
    if not move.by_bot_run and 0 <= move.seat < game.players and game.is_bot(move.seat):
        raise NotAllowed("seat_is_bot", f"Seat {move.seat} is played by a bot.")
    return _judge(_state_to_move(game, move), move)


def prepare_move(settings: Settings, game: Game, move: MoveRequest, after: engine.State,
                 fingerprint: str) -> PreparedMove:
    """What the commit of a judged move (``after``: :func:`judge_move`) writes, and its answer."""
    assert game.state is not None  # judge_move checked it
    change = _move_change(game, move, game.state, after)
    updated = change.game(game.id, game.version + 1)
    body = game_view(updated, move.seat) if move.answer_view or move.idempotency_key is not None else {}
    if move.idempotency_key is not None:
        record = orjson.dumps({"fingerprint": fingerprint, "version": updated.version, "body": body})
        change = replace(change, idem=(move.seat, move.idempotency_key, record, settings.idempotency_seconds))
    return PreparedMove(game, change, updated, body, fingerprint)


def move_result(prepared: PreparedMove, result: Commit) -> MoveResult:
    """The answer to a prepared move's compare-and-set: the stored answer of its key
    (``replay``), a stale version, or the mover's new view."""
    if result.outcome == "replay":
        return _replay(result.record, prepared.fingerprint)
    if result.outcome == "stale":
        raise StaleVersion(result.version, prepared.game.version)
    return MoveResult(prepared.body, result.version,
                      game=replace(prepared.updated, commit_id=result.event_id.encode()))


def _fingerprint(action: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(action, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _replay(record: bytes, fingerprint: str) -> MoveResult:
    stored = orjson.loads(record)
    if stored["fingerprint"] != fingerprint:
        raise Unprocessable("idempotency_key_reused", "This Idempotency-Key was used with another request body.")
    return MoveResult(stored["body"], int(stored["version"]), replayed=True)


def _state_to_move(game: Game, move: MoveRequest) -> engine.State:
    """The state ``move`` is made in, if the game is being played at the version the
    mover saw and it is the mover's turn."""
    if game.status == "waiting":
        raise Conflict("game_not_started", "The game starts when every seat is filled.")
    if game.status == "over" or game.state is None:
        raise GameOver()
    if move.expected_version is not None and move.expected_version != game.version:
        raise StaleVersion(game.version, move.expected_version)
    state = game.state
    if not 0 <= move.seat < state.rules.players:
        raise NotFound("seat_not_found", "No such seat.")
    if state.to_act != move.seat:
        raise NotYourTurn(state.to_act if state.to_act >= 0 else None, move.seat)
    return state


def _judge(state: engine.State, move: MoveRequest) -> engine.State:
    """The engine's verdict: the state after the move, or :class:`IllegalMove`."""
    try:
        return engine.apply(state, move.seat, move.action)
    except engine.IllegalMove as e:
        raise IllegalMove(e.code, e.message) from None
    except (engine.CardError, ValueError, TypeError, KeyError, IndexError):
        log.exception("the engine failed on action %r (an engine bug: answered invalid_action)", move.action)
        raise IllegalMove("invalid_action", "The action is malformed.") from None


def _move_change(game: Game, move: MoveRequest, before: engine.State, after: engine.State) -> Change:
    """What the move changes: its log lines (and the hand's and the game's end), the next
    hand dealt when this one ended, the meta's status when the game ended, and what each
    viewer is told (the cards drawn only to the mover; a new deal's hand only to its seat)."""
    seat, action = move.seat, move.action
    meta = game.meta
    lines = [gamelog.encode(gamelog.move(after.moves, before.hand_no, seat, action))]
    final = after
    if after.phase in ("deal", "over") and after.hand_result is not None:
        lines.append(gamelog.encode(gamelog.hand_end(after.hand_result)))
    if after.phase == "over":
        meta = {**meta, "status": "over"}
        if after.game_result is not None:
            lines.append(gamelog.encode(gamelog.game_end(after.game_result)))
    elif after.phase == "deal":
        final, deal_line = _deal(after, meta.get("seed"))
        lines.append(deal_line)
    if final is after:
        # describe_move differs by viewer only for the seat that moved (the cards it drew)
        shared = {"move": engine.describe_move(before, after, seat, action, None)}
        data: PerViewer = dict.fromkeys(_viewers(before.rules.players), shared)
        data[seat] = {"move": engine.describe_move(before, after, seat, action, seat)}
    else:
        data = for_each_viewer(before.rules.players, lambda v: {
            "move": engine.describe_move(before, after, seat, action, v), "deal": _deal_part(final, v)})
    return Change("move", meta, final, data, lines, turn_clock=True)


# -- dry runs ---------------------------------------------------------------------------
# Why a legal dry run's resulting view is withheld (``view_withheld``); stable codes.
DRAWS_CARDS = "draws_cards"  # cards come from the stock: the view would name them
TAKES_PILE = "takes_pile"  # the pile's cards under its top would be named
ENDS_TURN = "ends_turn"  # the next seat's turn would begin (finnish, bicycle: its dealt red threes laid)
ENDS_HAND = "ends_hand"  # the hand's scores sum every hand
WITHHELD = (DRAWS_CARDS, TAKES_PILE, ENDS_TURN, ENDS_HAND)


def withheld_reason(before: engine.State, after: engine.State, seat: int, action: dict[str, Any]) -> str | None:
    """Why the mover may not see ``after`` as the answer to a dry run, or None when it may.

    Legality is a function of what the mover knows; the resulting view often is not. So the
    view is shown only for a move that draws no card, takes no pile and ends neither the
    turn nor the hand. The reason is decided by the action and by facts the mover knows
    (its hand, the stock's size), never by the hidden part of the outcome: a draw is
    ``draws_cards`` even when the card drawn happens to end the hand.
    """
    kind = action["type"]
    if kind == "draw":
        return DRAWS_CARDS
    if kind == "take_pile":
        return TAKES_PILE
    if kind == "pass":
        return ENDS_HAND  # only with an empty stock, and it always ends the hand
    if kind == "discard":  # going out, or an empty stock that ends the hand (R21 "end")
        ends = before.hand_size(seat) == 1 or (before.stock_size == 0 and before.rules.dealing.stock_out == "end")
        return ENDS_HAND if ends else ENDS_TURN
    if kind == "answer_go_out" and before.stock_size == 0 and before.drawn == "":
        # asked before the draw on an empty stock (R17, R21): whether the asker can still take
        # the pile, and so whether the answer ends the hand, is the asker's hidden hand
        return ENDS_HAND
    if after.hand_no != before.hand_no or after.phase in ("deal", "over"):
        return ENDS_HAND  # going out by melding: the mover's own cards decide it
    if after.turn != before.turn:  # pragma: no cover - only a discard ends a turn
        return ENDS_TURN
    if after.stock_pos != before.stock_pos:
        return DRAWS_CARDS  # a red three laid under optional red threes is replaced
    return None


def dry_run_answer(game: Game, seat: int, action: dict[str, Any], after: engine.State) -> dict[str, Any]:
    """The answer to a legal dry run: the game as it is (nothing changed: the current
    version and status), ``legal: true``, and the mover's view after the move, unless
    :func:`withheld_reason` withholds it (``view`` null, ``view_withheld`` the reason)."""
    assert game.state is not None
    reason = withheld_reason(game.state, after, seat, action)
    body = game_view(Game(game.id, game.version, game.meta, None if reason else after), seat)
    body.update(dry_run=True, legal=True, view_withheld=reason)
    return body


# -- reads ------------------------------------------------------------------------------
def read_log(store: Store, game_id: str) -> list[bytes]:
    game = load_game(store, game_id)
    if game.status != "over":
        raise NotAllowed("game_not_over", "The log reveals every hand: it is published when the game ends.")
    return store.read_log(game_id)


def hint(store: Store, settings: Settings, game_id: str, token: str | None, bot: str, *,
         budget: bots.Budget | None = None) -> dict[str, Any]:
    """The action bot ``bot`` would choose for the token's seat (:func:`bots.choose`).

    Bounded: an answer is kept in Redis for the game's version, the seat and the bot
    (``hint_cache_seconds``), so asking again costs a read; the expert thinks for
    ``hint_budget_ms`` of wall clock (``budget`` replaces it: a rollout cap makes the expert
    repeatable, which tests need). The HTTP layer limits hints per token
    (``rate_limit_hints_per_token``). The bots see only the seat's view.
    """
    game = load_game(store, game_id)
    seat = _seat_of(game, token, "A hint is for a seat: send its bearer token.")
    if game.status != "playing" or game.state is None:
        raise Conflict("game_not_playing", "Hints are given while the game is played.")
    if game.state.to_act != seat:
        raise NotYourTurn(game.state.to_act if game.state.to_act >= 0 else None, seat)
    keep = settings.hint_cache_seconds
    if keep > 0:
        cached = store.cached_hint(game_id, game.version, seat, bot)
        if cached is not None:
            return orjson.loads(cached)
    action = bots.choose(bot, game.state, seat, budget=budget if budget is not None else bots.Budget(ms=settings.hint_budget_ms))
    answer = {"bot": bot, "seat": seat, "version": game.version, "action": action}
    if keep > 0:
        store.cache_hint(game_id, game.version, seat, bot, orjson.dumps(answer), keep)
    return answer
