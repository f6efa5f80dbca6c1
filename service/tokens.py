"""Seat tokens: 256 random bits from ``secrets``; Redis holds only their SHA-256, and a
join's stored answer holds its token sealed with the join's Idempotency-Key."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

TOKEN_BYTES = 32
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")


def new_token() -> str:
    """A bearer token (43 URL-safe characters, 256 bits)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def new_game_id() -> str:
    """12 URL-safe characters (72 bits); never contains a brace, so it fits a hash tag."""
    return secrets.token_urlsafe(9)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def find_seat(token: str, seat_hashes: list[str | None]) -> int | None:
    """The seat whose stored hash matches ``token``; every seat is compared, in constant time."""
    digest = hash_token(token)
    found: int | None = None
    for seat, stored in enumerate(seat_hashes):
        candidate = stored or "0" * 64
        if hmac.compare_digest(digest, candidate) and stored:
            found = seat
    return found


# -- a join's token, sealed in its stored answer ----------------------------------------------
_SEAL_CONTEXT = b"canasta join token v1\0"


def _pad(secret: str, context: tuple[str, ...]) -> bytes:
    """32 bytes only the holder of ``secret`` can make, one set per ``context``."""
    message = _SEAL_CONTEXT + b"\0".join(part.encode("utf-8", "surrogatepass") for part in context)
    return hmac.new(secret.encode("utf-8", "surrogatepass"), message, hashlib.sha256).digest()


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def seal_token(token: str, secret: str, context: tuple[str, ...]) -> str:
    """``token`` (one of :func:`new_token`'s: 32 random bytes) enciphered with a one-time pad,
    HMAC-SHA256 keyed with ``secret`` (a join's Idempotency-Key) over ``context`` (the game,
    the seat, the client's address): the stored answer of a join keeps no token in clear,
    and only the same key from the same place opens it (:func:`unseal_token`)."""
    raw = base64.urlsafe_b64decode(token + "=")
    return base64.urlsafe_b64encode(_xor(raw, _pad(secret, context))).decode("ascii")


def unseal_token(sealed: str, secret: str, context: tuple[str, ...], token_hash: str) -> str | None:
    """The token :func:`seal_token` sealed, or None when ``secret`` or ``context`` is not the
    sealer's (the token it opens does not hash to ``token_hash``)."""
    try:
        raw = base64.urlsafe_b64decode(sealed)
    except (ValueError, TypeError):
        return None
    if len(raw) != TOKEN_BYTES:
        return None
    token = base64.urlsafe_b64encode(_xor(raw, _pad(secret, context))).rstrip(b"=").decode("ascii")
    return token if hmac.compare_digest(hash_token(token), token_hash) else None
