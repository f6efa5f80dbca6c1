"""API keys: what an operator issues (``canasta keys``) to a backend that creates many games
from one address, such as a tournament site, with quotas of its own.

A key is shown once, when it is issued; the store keeps only its SHA-256 (a key is 192
random bits: no salt or slow hash is needed against guessing, and a stolen store yields no
key). Every record lives under one hash tag (``{apikeys}``), so that on a Redis Cluster a
key's two entries change together. A revoked key is deleted: the next request that shows it
is refused (no process caches keys).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import asdict, dataclass, fields
from typing import Any

import orjson

SECRET_PREFIX = "ck_"  # so that a leaked key is recognisable (secret scanners, logs)
SECRET_BYTES = 24  # 192 bits, 32 characters of base64url
SECRET_RE = re.compile(r"^ck_[A-Za-z0-9_-]{32}$")
ID_BYTES = 5  # a key's public id: 10 hex digits, for lists, logs and revocation
MAX_NAME = 80


@dataclass(frozen=True)
class ApiKey:
    """An issued key's public record: its id, the operator's name for it, when it was issued,
    and its quotas (0: no limit), which replace the per-address ones for what it creates."""

    id: str
    name: str
    created: str
    games_per_window: int
    bot_games: int
    bot_runs: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ApiKey:
        return cls(**{f.name: data[f.name] for f in fields(cls)})


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKeys:
    """The keys under one key prefix, on the games' Redis (``redis``: a client of one server
    or of a cluster)."""

    def __init__(self, redis: Any, prefix: str) -> None:
        self.redis = redis
        self.by_hash = f"{prefix}:{{apikeys}}:by-hash"  # SHA-256 of the secret -> the record (JSON)
        self.by_id = f"{prefix}:{{apikeys}}:by-id"  # public id -> SHA-256 of the secret

    def issue(self, name: str, *, games_per_window: int, bot_games: int, bot_runs: int,
              created: str) -> tuple[str, ApiKey]:
        """A new key: (the secret, shown once; its record)."""
        name = name.strip()
        if not name or len(name) > MAX_NAME or not name.isprintable():
            raise ValueError(f"a key's name is 1 to {MAX_NAME} printable characters")
        for label, value in (("games_per_window", games_per_window), ("bot_games", bot_games),
                             ("bot_runs", bot_runs)):
            if value < 0:
                raise ValueError(f"{label} must not be negative")
        secret = SECRET_PREFIX + secrets.token_urlsafe(SECRET_BYTES)
        key = ApiKey(secrets.token_hex(ID_BYTES), name, created, games_per_window, bot_games, bot_runs)
        digest = _digest(secret)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.by_hash, digest, orjson.dumps(key.to_dict()))
            pipe.hset(self.by_id, key.id, digest)
            pipe.execute()
        return secret, key

    def verify(self, secret: str) -> ApiKey | None:
        """The record of ``secret``, or None (malformed, unknown or revoked)."""
        if not SECRET_RE.match(secret):
            return None
        raw = self.redis.hget(self.by_hash, _digest(secret))
        return ApiKey.from_dict(orjson.loads(raw)) if raw is not None else None

    def all(self) -> list[ApiKey]:
        """Every key's record, oldest first."""
        keys = [ApiKey.from_dict(orjson.loads(raw)) for raw in self.redis.hvals(self.by_hash)]
        return sorted(keys, key=lambda k: (k.created, k.id))

    def revoke(self, key_id: str) -> bool:
        """Delete the key ``key_id``; False when there is none."""
        digest = self.redis.hget(self.by_id, key_id)
        if digest is None:
            return False
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(self.by_hash, digest)
            pipe.hdel(self.by_id, key_id)
            pipe.execute()
        return True
