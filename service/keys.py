"""Redis key names. Every key of one game shares the hash tag ``{<game id>}``."""

from __future__ import annotations

import re

GAME_ID_RE = re.compile(r"^[A-Za-z0-9_-]{12}$")


class Keys:
    """Key names under one prefix (env ``CANASTA_KEY_PREFIX``)."""

    def __init__(self, prefix: str) -> None:
        if not prefix or "{" in prefix or "}" in prefix:
            raise ValueError("the key prefix must be non-empty and contain no braces")
        self.prefix = prefix

    def _game(self, game_id: str, suffix: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:{suffix}"

    def state(self, game_id: str) -> str:
        """Hash: version, meta (JSON), state (engine JSON)."""
        return self._game(game_id, "state")

    def events(self, game_id: str) -> str:
        """Stream: one entry per version."""
        return self._game(game_id, "events")

    def log(self, game_id: str) -> str:
        """List: the game log lines (docs/gamelog.md), JSON text."""
        return self._game(game_id, "log")

    def idem(self, game_id: str, seat: int, key: str) -> str:
        """String: the stored response of an Idempotency-Key, scoped per seat."""
        return self._game(game_id, f"idem:{seat}:{key}")

    def hint(self, game_id: str, version: int, seat: int, bot: str) -> str:
        """String: a hint's answer, for one version, seat and bot (expires; never shared
        between seats: each seat's hint reads its own hand)."""
        return self._game(game_id, f"hint:{version}:{seat}:{bot}")

    def wake(self, game_id: str) -> str:
        """Pub/sub channel: the new version after every change."""
        return self._game(game_id, "wake")

    def rate(self, kind: str, ident: str, window: int) -> str:
        """String: a rate-limit counter. The hash tag is the identity (an address, a token's
        hash), so that the counters of one identity (``tok``, ``hint``) share a slot on a
        cluster and are counted in one script call (:meth:`service.store.Store.rate_limit`)."""
        tag = ident.replace("{", "").replace("}", "") or "-"
        return f"{self.prefix}:rl:{{{tag}}}:{kind}:{window}"

    def all_pattern(self) -> str:
        return f"{self.prefix}:*"
