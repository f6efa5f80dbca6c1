"""The game service without HTTP: create, join, hand a seat to a bot, view, move.

Every change is one compare-and-set (:meth:`api.store.Store.commit`). The bot worker calls
:func:`apply_move` exactly as the HTTP route does.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import redis

import engine
from api import eventcodec, gamelog, logcodec
from api.config import Settings
from api.errors import ApiError
from api.store import Record, Store
from api.tokens import find_seat, hash_token, new_game_id, new_token

log = logging.getLogger("canasta.api")

MAX_CAS_RETRIES = 8


# -- the game as loaded ------------------------------------------------------------------
@dataclass(frozen=True)
class Game:
    id: str
    version: int
    meta: dict[str, Any]
    state: engine.State | None

    @property
    def status(self) -> str:
        return str(self.meta["status"])

    def seat_hashes(self) -> list[str | None]:
        return [s.get("token") for s in self.meta["seats"]]

    def rules(self) -> engine.RuleOptions:
        return engine.RuleOptions.from_dict(self.meta["rules"])

    def is_bot(self, seat: int) -> bool:
        return bool(self.meta["seats"][seat].get("bot"))


class GameCache:
    """Parsed games of this process by (game id, version), most recent first.

    Every write of a game goes through ``commit.lua``, which bumps the version with the
    state and meta in one step, so a (game, version) pair names one state and one meta for
    good. Both are shared by every request that reads that version: engine states are
    immutable, and the service never changes a meta dict in place (a change builds a new
    dict, see ``join_seat``); callers must not either.
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, int], tuple[dict[str, Any], engine.State | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str, version: int) -> tuple[dict[str, Any], engine.State | None] | None:
        return self._items.get((game_id, version))  # a dict read is atomic; put() locks

    def put(self, game_id: str, version: int, meta: dict[str, Any], state: engine.State | None) -> None:
        with self._lock:
            self._items[(game_id, version)] = (meta, state)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


CACHE = GameCache()


def game_from_record(game_id: str, record: Record) -> Game:
    hit = CACHE.get(game_id, record.version)
    if hit is not None and (hit[1] is None) == (not record.state):
        return Game(game_id, record.version, hit[0], hit[1])
    state = parse_state(record.state, record.meta) if record.state else None
    CACHE.put(game_id, record.version, record.meta, state)
    return Game(game_id, record.version, record.meta, state)


def cached_game(game_id: str, version: int) -> Game | None:
    """The game at ``version`` if this process has seen it (it may no longer be current:
    a compare-and-set against ``version`` tells)."""
    hit = CACHE.get(game_id, version)
    if hit is None:
        return None
    return Game(game_id, version, hit[0], hit[1])


def _remember(game_id: str, version: int, meta: dict[str, Any], state: engine.State | None) -> None:
    """What was just committed, for the next request on this game."""
    CACHE.put(game_id, version, meta, state)


def load_game(store: Store, game_id: str) -> Game:
    record = store.load(game_id)
    if record is None:
        raise ApiError(404, "game_not_found", f"There is no game {game_id!r} (it may have expired).")
    return game_from_record(game_id, record)


def as_store(redis_or_store: Any, settings: Settings | None = None) -> Store:
    """Accept a :class:`Store` or a redis client (the worker's call)."""
    if isinstance(redis_or_store, Store):
        return redis_or_store
    settings = settings or Settings.from_env()
    return Store.for_settings(redis_or_store, settings)


# -- views ------------------------------------------------------------------------------
def public_seats(meta: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"seat": s["seat"], "team": s["team"], "name": s.get("name"), "bot": s.get("bot"),
         "open": s.get("name") is None and s.get("bot") is None}
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
    """The seat of ``token`` (None: no token, a spectator). 401 for a token of no seat."""
    if token is None:
        return None
    seat = find_seat(token, game.seat_hashes())
    if seat is None:
        raise ApiError(401, "invalid_token", "The token does not belong to a seat of this game.",
                       headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return seat


# -- events -----------------------------------------------------------------------------
def _envelope(kind: str, meta: dict[str, Any], state: engine.State | None) -> dict[str, Any]:
    in_hand = state is not None and state.phase in ("draw", "play", "answer")
    return {
        "type": kind,
        "status": meta["status"],
        "phase": state.phase if state is not None else None,
        "hand_no": state.hand_no if state is not None else 0,
        "moves": state.moves if state is not None else 0,
        "turn": state.turn if in_hand else None,
        "to_act": state.to_act if state is not None and state.to_act >= 0 else None,
    }


def _event_fields(envelope: dict[str, Any], per_viewer: dict[int | None, dict[str, Any]]) -> dict[str, bytes]:
    """The stream field ``w``: the envelope, the spectator's data and each seat's where it
    differs, compacted (:mod:`api.eventcodec`). Readers take their seat's data or else the
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
    data = fields.get(f"s{seat}") if seat is not None else None  # before api.eventcodec
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


# -- bots (hooks only) ------------------------------------------------------------------
def notify_bot(store: Store, game_id: str, state: engine.State | None, meta: dict[str, Any], version: int) -> None:
    """If a bot seat is to act, hand the turn to ``worker.jobs.enqueue_bot_turn`` (if present)."""
    if state is None or state.to_act < 0 or meta["status"] != "playing":
        return
    if not meta["seats"][state.to_act].get("bot"):
        return
    try:
        from worker.jobs import enqueue_bot_turn  # type: ignore[import-not-found]
    except ImportError:
        return
    try:
        enqueue_bot_turn(store.redis, game_id, version, prefix=store.keys.prefix)
    except Exception:  # noqa: BLE001 - a failed enqueue must not fail the accepted move
        log.exception("enqueue_bot_turn failed for %s v%s", game_id, version)


# -- create, join, hand to a bot ----------------------------------------------------------
def create_game(store: Store, settings: Settings, body: dict[str, Any], *,
                deck_source: DeckSource | None = None) -> tuple[dict[str, Any], int]:
    """``body`` is a loaded CreateGameSchema. Returns (response body, version).

    ``deck_source`` is for tests only (the fair-play property test deals two games from
    decks it chose): the deck of a hand dealt now, when every seat is filled at creation.
    """
    seed = body.get("seed")
    if seed is not None and not settings.test_seeds:
        raise ApiError(422, "seed_not_allowed",
                       "A seed is accepted only by a server started with test seeds enabled.")
    try:
        rules = engine.resolve(body["preset"], body.get("players"), body.get("rules") or None)
    except engine.RulesError as e:
        raise ApiError(422, "invalid_rules", str(e)) from None
    _check_playable(rules)
    specs = body["seats"]
    if len(specs) != rules.players:
        raise ApiError(422, "seat_count", f"This game has {rules.players} seats; {len(specs)} were given.")
    tokens: dict[int, str] = {}
    seats = []
    for n, spec in enumerate(specs):
        spec = spec or {}
        seat = {"seat": n, "team": rules.team_of(n), "name": spec.get("name"), "bot": spec.get("bot"), "token": None}
        if seat["name"] is not None:
            tokens[n] = new_token()
            seat["token"] = hash_token(tokens[n])
        seats.append(seat)
    for _ in range(MAX_CAS_RETRIES):
        game_id = new_game_id()
        meta = {"id": game_id, "preset": rules.preset, "rules": rules.to_dict(), "created": gamelog.now_rfc3339(),
                "status": "waiting", "seats": seats, "seed": seed,
                "turn_timeout": body.get("turn_timeout", DEFAULT_TURN_TIMEOUT)}
        state, lines = _start(game_id, meta, rules, deck_source) if _filled(meta) else (None, [])
        per_viewer = {v: {"seats": public_seats(meta), **({"deal": _deal_part(state, v)} if state else {})}
                      for v in _viewers(rules.players)}
        result = store.commit(game_id, 0, meta=meta, state=_state_blob(state),
                              event=_event_fields(_envelope("created", meta, state), per_viewer),
                              log_lines=lines, ttl=_ttl(settings, meta), events_keep=settings.events_keep,
                              turn_clock=state is not None)
        if result.outcome == "ok":
            break
    else:  # pragma: no cover - 72-bit ids do not collide
        raise ApiError(503, "unavailable", "Could not allocate a game id; try again.")
    _remember(game_id, result.version, meta, state)
    notify_bot(store, game_id, state, meta, result.version)
    game = Game(game_id, result.version, meta, state)
    response = game_view(game, None, with_rules=True)
    response["seats"] = [{**s, "token": tokens.get(s["seat"])} for s in response["seats"]]
    return response, result.version


def _check_playable(rules: engine.RuleOptions) -> None:
    """Deal one trial hand, so that rules the engine accepts but cannot play are refused
    now (422) rather than failing when the last seat is filled."""
    try:
        engine.deal(engine.new_game(rules), *engine.shuffle(rules, random.Random(0))[:2])
    except Exception as e:  # noqa: BLE001 - any failure means: not playable
        log.warning("rules accepted by resolve() but not playable: %r (%r)", rules, e)
        raise ApiError(422, "invalid_rules", "These rule options cannot be played together.") from None


def _seat_or_404(game: Game, seat: int) -> None:
    if not 0 <= seat < len(game.meta["seats"]):
        raise ApiError(404, "seat_not_found", f"Game {game.id} has seats 0 to {len(game.meta['seats']) - 1}.")


def join_seat(store: Store, settings: Settings, game_id: str, seat: int, name: str) -> dict[str, Any]:
    """Take an open seat; the game starts when the last seat is filled."""
    for _ in range(MAX_CAS_RETRIES):
        game = load_game(store, game_id)
        _seat_or_404(game, seat)
        current = game.meta["seats"][seat]
        if current.get("name") is not None or current.get("bot") is not None:
            raise ApiError(409, "seat_taken", f"Seat {seat} is already taken.")
        if game.status != "waiting":  # pragma: no cover - a started game has no open seat
            raise ApiError(409, "game_started", "The game has started.")
        token = new_token()
        meta = dict(game.meta)
        meta["seats"] = [dict(s) for s in game.meta["seats"]]
        meta["seats"][seat].update(name=name, token=hash_token(token))
        state, lines = _start(game_id, meta, game.rules()) if _filled(meta) else (None, [])
        per_viewer = {v: {"seat": seat, "name": name, **({"deal": _deal_part(state, v)} if state else {})}
                      for v in _viewers(len(meta["seats"]))}
        result = store.commit(game_id, game.version, meta=meta, state=_state_blob(state),
                              event=_event_fields(_envelope("joined", meta, state), per_viewer),
                              log_lines=lines, ttl=_ttl(settings, meta), events_keep=settings.events_keep,
                              turn_clock=state is not None)
        if result.outcome == "ok":
            _remember(game_id, result.version, meta, state)
            notify_bot(store, game_id, state, meta, result.version)
            return {"id": game_id, "seat": seat, "team": current["team"], "name": name, "token": token,
                    "status": meta["status"], "version": result.version}
    raise ApiError(409, "conflict", "The game changed too often while joining; try again.")


# -- who controls a seat ------------------------------------------------------------------
DEFAULT_TURN_TIMEOUT = 300  # seconds a person's seat may be to act before another seat may bot it


def turn_timeout(meta: dict[str, Any]) -> int:
    """The game's turn timeout, seconds (0: never); games created before it had the default."""
    return int(meta.get("turn_timeout", DEFAULT_TURN_TIMEOUT))


def _need_token(token: str | None) -> None:
    if token is None:
        raise ApiError(401, "missing_token", "This needs the bearer token of a seat of this game.",
                       headers={"WWW-Authenticate": "Bearer"})


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
        raise ApiError(409, "seat_taken", f"Seat {seat} is played by a bot; it belongs to nobody.")
    if target.get("bot") is not None:
        raise ApiError(409, "already_bot", f"Seat {seat} is already played by a bot.")
    timeout = turn_timeout(game.meta)
    if timeout == 0:
        raise ApiError(403, "turn_timeout_disabled",
                       f"Seat {seat} is a person's; this game has no turn timeout, so only seat {seat} "
                       "hands it to a bot.")
    state = game.state
    if game.status != "playing" or state is None or state.to_act != seat or record_turn_at is None:
        raise ApiError(403, "not_seat_owner",
                       f"Seat {seat} is a person's: only its own token hands it to a bot, or any seat once "
                       f"it has been to act for longer than the turn timeout ({timeout} s).")
    idle = (store.server_time_ms() - record_turn_at) / 1000
    if idle <= timeout:
        raise ApiError(403, "seat_not_idle",
                       f"Seat {seat} has been to act for {idle:.0f} s; another seat may hand it to a bot "
                       f"after {timeout} s.", idle_seconds=round(idle, 3), turn_timeout=timeout)
    return "turn_timeout"


def assign_bot(store: Store, settings: Settings, game_id: str, seat: int, bot: str, token: str | None) -> tuple[dict[str, Any], int]:
    """Hand a seat to a bot: its own token at any time ("play for me"); any seat of the game
    for an open seat, or for a person's seat that has been to act for longer than the game's
    turn timeout. 403 with a reason code otherwise (:func:`_may_hand_to_bot`)."""
    _need_token(token)
    for _ in range(MAX_CAS_RETRIES):
        record = store.load(game_id)
        if record is None:
            raise ApiError(404, "game_not_found", f"There is no game {game_id!r} (it may have expired).")
        game = game_from_record(game_id, record)
        caller = authenticate(game, token)
        assert caller is not None
        _seat_or_404(game, seat)
        if game.status == "over":
            raise ApiError(409, "game_over", "The game is over.")
        reason = _may_hand_to_bot(store, game, record.turn_at, seat, caller)
        meta = dict(game.meta)
        meta["seats"] = [dict(s) for s in game.meta["seats"]]
        meta["seats"][seat]["bot"] = bot
        state, lines = game.state, []
        started = False
        if game.status == "waiting" and _filled(meta):
            state, lines = _start(game_id, meta, game.rules())
            started = True
        per_viewer = {v: {"seat": seat, "bot": bot, "by": caller, "reason": reason,
                          **({"deal": _deal_part(state, v)} if started and state else {})}
                      for v in _viewers(len(meta["seats"]))}
        result = store.commit(game_id, game.version, meta=meta, state=_state_blob(state) if started else None,
                              event=_event_fields(_envelope("bot", meta, state), per_viewer),
                              log_lines=lines, ttl=_ttl(settings, meta), events_keep=settings.events_keep,
                              turn_clock=started)
        if result.outcome == "ok":
            _remember(game_id, result.version, meta, state)
            notify_bot(store, game_id, state, meta, result.version)
            updated = Game(game_id, result.version, meta, state)
            return game_view(updated, caller), result.version
    raise ApiError(409, "conflict", "The game changed too often; try again.")


def take_seat_back(store: Store, settings: Settings, game_id: str, seat: int, token: str | None) -> tuple[dict[str, Any], int]:
    """The person takes their seat back from the bot (only the seat's own token). A bot run
    playing the seat stops at its next move: its compare-and-set names the version before
    this change, and the run re-reads the game and finds no bot to act. The seat's turn
    clock restarts if it is to act."""
    _need_token(token)
    for _ in range(MAX_CAS_RETRIES):
        game = load_game(store, game_id)
        caller = authenticate(game, token)
        _seat_or_404(game, seat)
        if caller != seat:
            raise ApiError(403, "not_seat_owner", f"Only seat {seat}'s own token takes it back from a bot.")
        if game.status == "over":
            raise ApiError(409, "game_over", "The game is over.")
        bot = game.meta["seats"][seat].get("bot")
        if bot is None:
            raise ApiError(409, "seat_not_bot", f"Seat {seat} is not played by a bot.")
        meta = dict(game.meta)
        meta["seats"] = [dict(s) for s in game.meta["seats"]]
        meta["seats"][seat]["bot"] = None
        per_viewer = {v: {"seat": seat, "bot": bot, "by": caller} for v in _viewers(len(meta["seats"]))}
        to_act = game.state is not None and game.state.to_act == seat
        result = store.commit(game_id, game.version, meta=meta, state=None,
                              event=_event_fields(_envelope("bot_removed", meta, game.state), per_viewer),
                              log_lines=[], ttl=_ttl(settings, meta), events_keep=settings.events_keep,
                              turn_clock=to_act)
        if result.outcome == "ok":
            _remember(game_id, result.version, meta, game.state)
            updated = Game(game_id, result.version, meta, game.state)
            return game_view(updated, caller), result.version
    raise ApiError(409, "conflict", "The game changed too often; try again.")


# -- moves ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MoveResult:
    """The answer to a move: the mover's new view (empty when not asked for), the new
    version and, for a fresh commit, the committed game (``None`` for replays)."""

    body: dict[str, Any]
    version: int
    replayed: bool = False
    dry_run: bool = False
    game: Game | None = None


def _fingerprint(action: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(action, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _replay(record: bytes, fingerprint: str) -> MoveResult:
    stored = orjson.loads(record)
    if stored["fingerprint"] != fingerprint:
        raise ApiError(422, "idempotency_key_reused",
                       "This Idempotency-Key was used with another request body.")
    return MoveResult(stored["body"], int(stored["version"]), replayed=True)


def apply_move(
    redis: Any,
    game_id: str,
    seat: int,
    action: dict[str, Any],
    expected_version: int | None,
    idempotency_key: str | None = None,
    dry_run: bool = False,
    *,
    settings: Settings | None = None,
    game: Game | None = None,
    view: bool = True,
) -> MoveResult:
    """Check and apply one move in one compare-and-set; raise :class:`ApiError` otherwise.

    ``expected_version`` None means "whatever is current" (If-Match: *). Errors: 404 game,
    409 not started / over, 412 stale version, 403 not this seat's turn, 422 illegal move
    or a reused Idempotency-Key with another body. ``game``: the game as just loaded by the
    caller (saves a read; the compare-and-set still checks its version). ``view=False``
    (the bot worker): no response view is built (an Idempotency-Key needs one).
    """
    settings = settings or Settings.from_env()
    store = as_store(redis, settings)
    if game is None or game.id != game_id:
        game = load_game(store, game_id)
    fingerprint = _fingerprint(action) if idempotency_key is not None else ""  # only keys need it
    if idempotency_key is not None and not dry_run:
        record = store.get_idempotency(game_id, seat, idempotency_key, settings.idempotency_seconds)
        if record is not None:
            return _replay(record, fingerprint)
    if game.status == "waiting":
        raise ApiError(409, "game_not_started", "The game starts when every seat is filled.")
    if game.status == "over" or game.state is None:
        raise ApiError(409, "game_over", "The game is over.")
    if expected_version is not None and expected_version != game.version:
        raise ApiError(412, "stale_version",
                       f"The game is at version {game.version}, not {expected_version}; reload it.",
                       version=game.version)
    before = game.state
    if not 0 <= seat < before.rules.players:
        raise ApiError(404, "seat_not_found", "No such seat.")
    if before.to_act != seat:
        raise ApiError(403, "not_your_turn", f"Seat {before.to_act} is to act, not seat {seat}.",
                       to_act=before.to_act if before.to_act >= 0 else None)
    try:
        after_move = engine.apply(before, seat, action)
    except engine.IllegalMove as e:
        raise ApiError(422, e.code, e.message, title="Illegal move") from None
    except (engine.CardError, ValueError, TypeError, KeyError, IndexError):
        log.exception("the engine failed on action %r (an engine bug: answered 422)", action)
        raise ApiError(422, "invalid_action", "The action is malformed.", title="Illegal move") from None
    if dry_run:
        return MoveResult(dry_run_answer(game, seat, action, after_move), game.version, dry_run=True)

    meta = game.meta
    lines = [gamelog.encode(gamelog.move(after_move.moves, before.hand_no, seat, action))]
    final = after_move
    if after_move.phase in ("deal", "over") and after_move.hand_result is not None:
        lines.append(gamelog.encode(gamelog.hand_end(after_move.hand_result)))
    if after_move.phase == "over":
        meta = {**meta, "status": "over"}
        if after_move.game_result is not None:
            lines.append(gamelog.encode(gamelog.game_end(after_move.game_result)))
    elif after_move.phase == "deal":
        final, deal_line = _deal(after_move, meta.get("seed"))
        lines.append(deal_line)

    new_version = game.version + 1
    updated = Game(game_id, new_version, meta, final)
    body = game_view(updated, seat) if view or idempotency_key is not None else {}

    per_viewer: dict[int | None, dict[str, Any]] = {}
    if final is after_move:
        # describe_move differs by viewer only for the seat that moved (the cards it drew)
        shared = {"move": engine.describe_move(before, after_move, seat, action, None)}
        for viewer in _viewers(before.rules.players):
            per_viewer[viewer] = shared
        per_viewer[seat] = {"move": engine.describe_move(before, after_move, seat, action, seat)}
    else:
        for viewer in _viewers(before.rules.players):
            per_viewer[viewer] = {"move": engine.describe_move(before, after_move, seat, action, viewer),
                                  "deal": _deal_part(final, viewer)}
    idem = None
    if idempotency_key is not None:
        record = orjson.dumps({"fingerprint": fingerprint, "version": new_version, "body": body})
        idem = (seat, idempotency_key, record, settings.idempotency_seconds)
    result = store.commit(
        game_id, game.version,
        meta=meta if meta is not game.meta else None,
        state=_state_blob(final),
        event=_event_fields(_envelope("move", meta, final), per_viewer),
        log_lines=lines, ttl=_ttl(settings, meta), idem=idem, events_keep=settings.events_keep,
        turn_clock=True,
    )
    if result.outcome == "replay":
        return _replay(result.record, fingerprint)
    if result.outcome == "stale":
        raise ApiError(412, "stale_version",
                       f"The game is at version {result.version}, not {game.version}; reload it.",
                       version=result.version)
    _remember(game_id, result.version, meta, final)
    notify_bot(store, game_id, final, meta, result.version)
    if result.log_plain >= logcodec.CHUNK:
        _compact_log(store, game_id, result.log_chunks)
    return MoveResult(body, result.version, game=updated)


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
        ends = before.hand_size(seat) == 1 or (before.stock_size == 0 and before.rules.stock_out == "end")
        return ENDS_HAND if ends else ENDS_TURN
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


def _compact_log(store: Store, game_id: str, chunks: int) -> None:
    """Fold old log lines (:mod:`api.logcodec`); a failure only postpones it to a later move."""
    try:
        store.compact_log(game_id, chunks)
    except redis.RedisError:
        log.warning("log compaction of %s postponed", game_id, exc_info=True)


# -- reads ------------------------------------------------------------------------------
def read_log(store: Store, game_id: str) -> list[bytes]:
    game = load_game(store, game_id)
    if game.status != "over":
        raise ApiError(403, "game_not_over", "The log reveals every hand: it is published when the game ends.")
    return store.read_log(game_id)


def hint(store: Store, game_id: str, token: str | None, bot: str, *, settings: Settings | None = None,
         budget: Any = None) -> dict[str, Any]:
    """The action bot ``bot`` would choose for the token's seat (``bots.choose``).

    Bounded: an answer is kept in Redis for the game's version, the seat and the bot
    (``hint_cache_seconds``), so asking again costs a read; the expert thinks for
    ``hint_budget_ms`` of wall clock (``budget``, a ``bots.Budget``, replaces it: a
    rollout cap makes the expert repeatable, which tests need). The HTTP layer limits hints
    per token (``rate_limit_hints_per_token``). The bots see only the seat's view.
    """
    settings = settings or Settings.from_env()
    game = load_game(store, game_id)
    if token is None:
        raise ApiError(401, "missing_token", "A hint is for a seat: send its bearer token.",
                       headers={"WWW-Authenticate": "Bearer"})
    seat = authenticate(game, token)
    assert seat is not None
    if game.status != "playing" or game.state is None:
        raise ApiError(409, "game_not_playing", "Hints are given while the game is played.")
    if game.state.to_act != seat:
        raise ApiError(403, "not_your_turn", f"Seat {game.state.to_act} is to act, not seat {seat}.",
                       to_act=game.state.to_act if game.state.to_act >= 0 else None)
    keep = settings.hint_cache_seconds
    if keep > 0:
        cached = store.cached_hint(game_id, game.version, seat, bot)
        if cached is not None:
            return orjson.loads(cached)
    try:
        from bots import Budget, choose  # type: ignore[import-not-found]
    except ImportError:
        raise ApiError(501, "hints_unavailable", "Bots are not installed on this server.") from None
    action = choose(bot, game.state, seat, budget=budget if budget is not None else Budget(ms=settings.hint_budget_ms))
    answer = {"bot": bot, "seat": seat, "version": game.version, "action": action}
    if keep > 0:
        store.cache_hint(game_id, game.version, seat, bot, orjson.dumps(answer), keep)
    return answer
