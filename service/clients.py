"""Who creates a game, for its quotas and its bots' fair share: a client address, or an API
key an operator issued (:mod:`service.apikeys`).

A game remembers its client (``meta["client"]``: ``a:<digest of the address>`` or
``k:<key id>``; an address is never stored in clear) and the bot runs that client may have
at once, so that the bot worker schedules it fairly without looking the key up
(:mod:`service.botqueue`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from service.apikeys import ApiKey
from service.config import Settings

ADDRESS_DIGEST_HEX = 16  # 64 bits of SHA-256: tells addresses apart, names none


@dataclass(frozen=True)
class Quotas:
    """What one client may use (0: no limit): games created per ``window`` seconds,
    unfinished games of bots only at once, bot runs queued or playing at once per lane."""

    games_per_window: int
    window: int
    bot_games: int
    bot_runs: int


@dataclass(frozen=True)
class Client:
    """A request's client: ``ident`` names it in Redis keys and in a game's meta; ``key_id``
    is the API key's public id (None for an address)."""

    ident: str
    quotas: Quotas
    key_id: str | None = None

    @classmethod
    def of_address(cls, address: str | None, settings: Settings) -> Client:
        """An address's client; its creation quotas are off with the rate limits
        (``CANASTA_RATE_LIMIT=0``), its bots' fair share never is."""
        digest = hashlib.sha256((address or "unknown").encode("utf-8", "surrogatepass")).hexdigest()
        on = settings.rate_limit_enabled
        return cls(f"a:{digest[:ADDRESS_DIGEST_HEX]}",
                   Quotas(settings.create_per_address if on else 0, settings.create_window,
                          settings.bot_games_per_address if on else 0, settings.bot_runs_per_client))

    @classmethod
    def of_key(cls, key: ApiKey, settings: Settings) -> Client:
        return cls(f"k:{key.id}", Quotas(key.games_per_window, settings.create_window, key.bot_games, key.bot_runs),
                   key_id=key.id)


def unlimited(settings: Settings) -> Client:
    """The client of games made by the operator's own tools (benchmarks, tests, ``canasta
    play``'s local service): no quota."""
    return Client("local", Quotas(0, settings.create_window, 0, 0))
