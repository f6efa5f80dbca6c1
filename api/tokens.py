"""Seat tokens: 256 random bits from ``secrets``; only their SHA-256 is stored."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")


def new_token() -> str:
    """A bearer token (43 URL-safe characters, 256 bits)."""
    return secrets.token_urlsafe(32)


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
