"""Why the game service refuses a request: its errors, with stable codes and no HTTP.

:mod:`service.games` raises them; nothing has changed when one is raised. Each is of one
*kind* (the classes right under :class:`ServiceError`) and carries a stable ``code`` that
clients branch on (as the engine's :class:`engine.IllegalMove` does): ``Conflict("game_over",
"The game is over.")``. A few refusals have a class of their own, for the callers that tell
them apart. Whoever calls the service decides what a kind means to it: the HTTP layer
answers each kind with one status (the table ``web.problems.PROBLEMS``); the bot worker reads
the game again after a stale version, counts an illegal move as a bot's bug, and gives up
its turn on anything else.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """A refused request: ``code`` for programs, ``detail`` a sentence for people, and
    ``facts`` what the refusal may tell the caller besides (the current version, the seat
    to act, ...)."""

    def __init__(self, code: str, detail: str, **facts: Any) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.facts = facts


# -- the kinds ------------------------------------------------------------------------------
class NotFound(ServiceError):
    """No such game, or no such seat in it."""


class NotAuthenticated(ServiceError):
    """The request needs a seat's token, or its token is of no seat of the game."""


class NotAllowed(ServiceError):
    """The caller's seat may not do this (now)."""


class Conflict(ServiceError):
    """The game is not in a state that allows it."""


class StaleVersion(ServiceError):
    """The request was decided on a version of the game (``expected``) that is no longer
    the current one."""

    def __init__(self, current: int, expected: int | None) -> None:
        super().__init__("stale_version", f"The game is at version {current}, not {expected}; reload it.",
                         version=current)
        self.current = current


class Unprocessable(ServiceError):
    """The request is well formed but cannot be done as asked."""


class Unavailable(ServiceError):
    """The service could not do it now; the same request may succeed later (``retry_after``:
    seconds, when the service can tell)."""


class TooMany(ServiceError):
    """The caller has used its share (a quota of its address or API key); ``retry_after``
    says in how many seconds the share is there again, when a window ends."""


# -- refusals that callers tell apart -------------------------------------------------------
class GameNotFound(NotFound):
    def __init__(self, game_id: str) -> None:
        super().__init__("game_not_found", f"There is no game {game_id!r} (it may have expired).")


class MissingToken(NotAuthenticated):
    """No token where one is needed (``detail``: what needs it)."""

    def __init__(self, detail: str) -> None:
        super().__init__("missing_token", detail)


class InvalidToken(NotAuthenticated):
    def __init__(self) -> None:
        super().__init__("invalid_token", "The token does not belong to a seat of this game.")


class NotYourTurn(NotAllowed):
    def __init__(self, to_act: int | None, seat: int) -> None:
        super().__init__("not_your_turn", f"Seat {to_act} is to act, not seat {seat}.", to_act=to_act)
        self.to_act = to_act


class SeatControlDenied(NotAllowed):
    """Who may hand a seat to a bot or take it back: ``not_seat_owner``,
    ``turn_timeout_disabled``, ``seat_not_idle``."""


class GameOver(Conflict):
    def __init__(self) -> None:
        super().__init__("game_over", "The game is over.")


class IllegalMove(Unprocessable):
    """The engine refused the move (its reason code, ``docs/reason-codes.md``), or the
    action is malformed (``invalid_action``)."""
