"""Small HTTP helpers shared by the blueprints."""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from flask import Response, current_app, request
from marshmallow import Schema

from engine.rules import MAX_PLAYERS
from service.apikeys import ApiKeys
from service.clients import Client
from service.config import Settings
from service.games import JoinKey
from service.keys import GAME_ID_RE
from service.store import Store
from service.tokens import TOKEN_RE
from web.problems import ApiError
from web.stream_limits import StreamLimits

JSON = "application/json"
_ETAG_RE = re.compile(r'^"([0-9]{1,18})"$')
_WEAK_ETAG_RE = re.compile(r'^W/"[0-9]{1,18}"$')  # never current: If-Match compares strongly
_IDEM_RE = re.compile(r"^[\x21-\x7e]{1,255}$")
IDEMPOTENCY_KEY_HEX = 40  # hex digits of an Idempotency-Key's hash in its Redis key (160 bits)
# Cache-Control (RFC 9111) of an answer that holds a token or a seat's hand: no cache, the
# browser's own included, may store it ("no-cache" would let it store and revalidate)
PRIVATE = "private, no-store"
# a spectator's view of a game: public, and any cache may keep it if it asks (ETag) first
REVALIDATE = "no-cache"


class FailureCount:
    """A count, in this process, of failures that were let through rather than refused (the
    rate limiter that could not count lets requests in): logged each time, and shown by
    ``GET /healthz`` so that a limiter that is off does not go unseen."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> int:
        with self._lock:
            self.value += 1
            return self.value


@dataclass(frozen=True)
class Ctx:
    """Per-process objects: the settings, the Redis store (no game state), the counts of
    open event streams, and of the rate limiter's failures."""

    settings: Settings
    store: Store
    stream_limits: StreamLimits
    rate_limiter_failures: FailureCount = field(default_factory=FailureCount)

    @property
    def api_keys(self) -> ApiKeys:
        return ApiKeys(self.store.redis, self.settings.key_prefix)


def ctx() -> Ctx:
    return current_app.extensions["canasta"]


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    resp = Response(orjson.dumps(body), status=status, mimetype=JSON)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def etag(version: int) -> str:
    return f'"{version}"'


def read_headers(version: int, seat: int | None) -> list[tuple[str, str]]:
    """The headers of ``GET /games/{id}`` (200 or 304), the same on both paths (Flask and
    the event loop): a seat's view is :data:`PRIVATE`, a spectator's :data:`REVALIDATE`."""
    return [("ETag", etag(version)), ("Cache-Control", PRIVATE if seat is not None else REVALIDATE),
            ("Vary", "Authorization")]


def etag_matches(header: str | None, version: int) -> bool:
    """Whether ``If-None-Match`` names ``version`` (or is ``*``)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    tags = {part.strip().removeprefix("W/") for part in header.split(",")}
    return etag(version) in tags


API_KEY_HEADER = "HTTP_X_API_KEY"  # X-Api-Key: an operator's key (canasta keys), for creating games


def request_client() -> Client:
    """Who sends this request, for its quotas: the API key in ``X-Api-Key`` (401
    ``invalid_api_key`` when it is no live key), else the client address."""
    c = ctx()
    secret = request.environ.get(API_KEY_HEADER)
    if secret is None:
        return Client.of_address(request.remote_addr, c.settings)
    key = c.api_keys.verify(secret.strip())
    if key is None:
        raise ApiError(401, "invalid_api_key", "X-Api-Key is not a key this server issued (or it was revoked).")
    return Client.of_key(key, c.settings)


def check_game_id(game_id: str) -> str:
    if not GAME_ID_RE.match(game_id):
        raise ApiError(404, "game_not_found", "There is no such game.")
    return game_id


MAX_SEAT_NUMBER = 9999  # past this a seat of a path is refused unread (no game has it)


def check_seat(seat: int) -> int:
    """A seat number of a path, refused before it goes any further when it is absurd: a
    number of a thousand digits would be quoted back, and is no JSON number. (A seat the
    game lacks is the service's ``seat_not_found``, after the game.)"""
    if seat > MAX_SEAT_NUMBER:
        raise ApiError(404, "seat_not_found", f"A game has seats 0 to {MAX_PLAYERS - 1} at most.")
    return seat


class LoadedBodies:
    """Bodies a schema has accepted, by their exact bytes: loading is a pure function of
    them, and players send the same few bodies over and over (``{"action":{"type":"draw"}}``,
    a discard of one of 54 cards). A hit returns a fresh copy of what the schema gave the
    first time; only small bodies are kept, at most ``size`` of them."""

    MAX_BYTES = 512

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._items: OrderedDict[bytes, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, raw: bytes) -> Any | None:
        hit = self._items.get(raw)
        return orjson.loads(hit) if hit is not None else None

    def put(self, raw: bytes, loaded: Any) -> None:
        if len(raw) > self.MAX_BYTES:
            return
        with self._lock:
            self._items[raw] = orjson.dumps(loaded)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def json_body(schema: Schema, memo: LoadedBodies | None = None) -> dict[str, Any]:
    """The request's JSON object loaded by ``schema`` (415, 400 or 422 otherwise)."""
    content_type = request.environ.get("CONTENT_TYPE")
    if content_type != JSON:  # the common case needs no header parsing
        mimetype = request.mimetype or ""
        if mimetype != JSON and not (mimetype.startswith("application/") and mimetype.endswith("+json")):
            raise ApiError(415, "unsupported_media_type", "Send the body as application/json.")
    return load_body(raw_body(), schema, memo)


def load_body(raw: bytes, schema: Schema, memo: LoadedBodies | None = None) -> dict[str, Any]:
    """``raw`` JSON loaded by ``schema``: 400 ``invalid_json``, or the schema's ValidationError."""
    if memo is not None:
        hit = memo.get(raw)
        if hit is not None:
            return hit
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ApiError(400, "invalid_json", "The body is not valid JSON.") from None
    loaded = schema.load(data)
    if memo is not None:
        memo.put(raw, loaded)
    return loaded


SMALL_BODY = 4096
_BODY_KEY = "canasta.body"


def raw_body() -> bytes:
    """The request body, read once per request (a move may be tried twice:
    ``routes.games.post_move``). A small body with a Content-Length is read straight from
    the server's input; anything else goes through Werkzeug (size limit: 413, chunked
    bodies, disconnects)."""
    environ = request.environ
    raw: bytes | None = environ.get(_BODY_KEY)
    if raw is not None:
        return raw
    length = environ.get("CONTENT_LENGTH") or ""
    small = min(SMALL_BODY, ctx().settings.max_body_bytes)  # a larger one is Werkzeug's 413
    if ascii_number(length) and int(length) <= small and "HTTP_TRANSFER_ENCODING" not in environ:
        n = int(length)
        raw = environ["wsgi.input"].read(n) if n else b""
        if len(raw) != n:
            raise ApiError(400, "invalid_json", "The body ended before its Content-Length.")
    else:
        raw = request.get_data(cache=True)
    environ[_BODY_KEY] = raw
    return raw


def ascii_number(text: str) -> bool:
    """``text`` is one or more ASCII digits: ``str.isdigit`` also takes other scripts' digits
    (Arabic-Indic, full-width, a superscript two), which ``int()`` or Redis refuse."""
    return text.isascii() and text.isdigit()


# the query parameter that carries a bearer token where a client cannot send headers
# (EventSource), RFC 6750 2.3
ACCESS_TOKEN = "access_token"


def query_token() -> str | None:
    """The request's ``?access_token=`` (None: not sent), unchecked."""
    if not request.environ.get("QUERY_STRING"):
        return None
    return request.args.get(ACCESS_TOKEN)


def bearer_token(*, query: bool = False) -> str | None:
    """The ``Authorization: Bearer`` token (or ``?access_token=`` where allowed)."""
    token = bearer_of(request.environ.get("HTTP_AUTHORIZATION"), check=False)
    from_query = query_token() if query else None
    if from_query is not None:
        if token is not None:  # RFC 6750 2: one method per request
            raise ApiError(400, "invalid_parameter",
                           f"Send the token once: in Authorization or in {ACCESS_TOKEN}, not both.")
        token = from_query
    return checked_token(token)


def bearer_of(header: str | None, *, check: bool = True) -> str | None:
    """The token of an ``Authorization`` header (None: no header); 401 for another scheme
    or, with ``check``, a token that cannot be one of ours (:func:`checked_token`)."""
    if header is None:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise ApiError(401, "invalid_token", "Use Authorization: Bearer <token>.",
                       headers={"WWW-Authenticate": 'Bearer error="invalid_request"'})
    return checked_token(value.strip()) if check else value.strip()


def checked_token(token: str | None) -> str | None:
    """``token``, unless it cannot be a seat's (401 ``invalid_token``)."""
    if token is not None and not TOKEN_RE.match(token):
        raise ApiError(401, "invalid_token", "The token does not belong to a seat of this game.",
                       headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return token


def if_match_of(header: str | None, current: int) -> int | None:
    """The version ``If-Match`` asks for (428 when missing; None for ``*``): ``current``
    when it is among the listed ETags (RFC 9110 13.1.1: any match will do), else the newest
    listed (a stale version), else -1 (only weak ETags: never current). A part that is no
    ETag of this API (``"<digits>"``, or weak ``W/"<digits>"``) is 400: a client that sent
    ``17`` without its quotes learns that, not that its version is stale."""
    if header is not None and (m := _ETAG_RE.match(header)) is not None:
        return int(m.group(1))  # one strong ETag, as every client sends: current or stale, it is the one asked for
    if header is None or not header.strip():
        raise ApiError(428, "precondition_required",
                       "Send If-Match with the game's ETag (GET /games/{id} gives it).")
    if header.strip() == "*":
        return None
    versions = []
    for part in (p.strip() for p in header.split(",")):
        if m := _ETAG_RE.match(part):
            versions.append(int(m.group(1)))
        elif not _WEAK_ETAG_RE.match(part):
            raise ApiError(400, "invalid_parameter",
                           'If-Match holds the game\'s ETag, such as "17" (GET /games/{id} gives it), a list of them, or *.')
    if current in versions:
        return current
    return max(versions) if versions else -1


def idempotency_key_of(value: str | None) -> str | None:
    """An ``Idempotency-Key`` header's value hashed into a safe Redis key part (None: no key).
    A move's key replays the mover's answer only to the seat's own token (the stored answer
    is kept per seat), so any well-formed key will do."""
    if value is None:
        return None
    _check_key_form(value)
    return _key_ref(value)


def _check_key_form(value: str) -> None:
    if not _IDEM_RE.match(value):
        raise ApiError(400, "invalid_idempotency_key", "An Idempotency-Key is 1 to 255 visible ASCII characters.")


def _key_ref(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:IDEMPOTENCY_KEY_HEX]


# A join's key is a secret: its retry gets the seat's token with no token of its own.
JOIN_KEY_MIN_CHARS = 22  # 22 base64url characters carry 132 bits; a UUID has 32 hex digits
# length x the Shannon entropy of its characters' counts: 16 random bytes in base64url or as
# a UUID's hex carry 72 to 98 of these (the least of a million of each: 72, 90); "aaaa..." 0
JOIN_KEY_MIN_BITS = 48


def join_key() -> JoinKey | None:
    """A join's ``Idempotency-Key`` (None: none sent), for the client address the join
    comes from (:class:`service.games.JoinKey`; behind a trusted proxy, the address it
    names): 400 for a malformed key, 422 ``weak_idempotency_key`` for a guessable one
    (:func:`weak_key`)."""
    value = request.environ.get("HTTP_IDEMPOTENCY_KEY")
    if value is None:
        return None
    _check_key_form(value)
    why = weak_key(value)
    if why is not None:
        raise ApiError(422, "weak_idempotency_key",
                       f"A join's Idempotency-Key gives its retry the seat's token, so it must be unguessable: {why}. "
                       "Send a random UUID, or 16 random bytes in base64url.")
    return JoinKey(_key_ref(value), value, request.remote_addr or "")


def _period(text: str) -> int:
    """The smallest p with text[i] == text[i + p] for every i (Knuth-Morris-Pratt's border)."""
    border = [0] * len(text)
    k = 0
    for i in range(1, len(text)):
        while k and text[i] != text[k]:
            k = border[k - 1]
        if text[i] == text[k]:
            k += 1
        border[i] = k
    return len(text) - (border[-1] if text else 0)


def weak_key(value: str) -> str | None:
    """Why ``value`` is too easily guessed to be a join's key, or None. Simple checks that
    refuse what no random generator makes (they cannot prove a key random): at least
    :data:`JOIN_KEY_MIN_CHARS` characters, not a shorter string repeated (``abcabc...``,
    ``1234567890123...``), and at least :data:`JOIN_KEY_MIN_BITS` bits by the count of each
    character (length x Shannon entropy: ``aaaa...`` has 0)."""
    n = len(value)
    if n < JOIN_KEY_MIN_CHARS:
        return f"it has {n} characters, not at least {JOIN_KEY_MIN_CHARS}"
    if _period(value) <= n // 2:
        return "it repeats a shorter string"
    bits = -sum(c * math.log2(c / n) for c in Counter(value).values())
    if bits < JOIN_KEY_MIN_BITS:
        return f"its characters carry {bits:.0f} bits, not at least {JOIN_KEY_MIN_BITS}"
    return None


def bool_of(args: Mapping[str, str], name: str) -> bool:
    """A query argument that is true or false (absent: false; 400 otherwise)."""
    value = args.get(name)
    if value is None:
        return False
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise ApiError(400, "invalid_parameter", f"{name} is true or false.")
