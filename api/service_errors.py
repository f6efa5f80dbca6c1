"""Why the game service refuses a request: its errors, with stable codes and no HTTP.

:mod:`api.service` raises them; nothing has changed when one is raised. Each is of one
*kind* (the classes right under :class:`ServiceError`) and has a stable ``code`` that
clients branch on. Whoever calls the service decides what a kind means to it: the HTTP
layer answers each kind with one status (the table ``api.errors.PROBLEMS``), the bot
worker reads the game again after anything but a stale version or an illegal move.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """A refused request. ``detail`` is a sentence for people; ``facts`` are what the
    refusal may tell the caller besides (the current version, the seat to act, ...)."""

    code: str = "refused"

    def __init__(self, detail: str, **facts: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.facts = facts


class CodedError(ServiceError):
    """A refusal whose code is chosen where it is raised (one class, several reasons)."""

    def __init__(self, code: str, detail: str, **facts: Any) -> None:
        super().__init__(detail, **facts)
        self.code = code


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
    """The request was decided on a version of the game that is no longer current."""

    code = "stale_version"

    def __init__(self, current: int, expected: int | None) -> None:
        super().__init__(f"The game is at version {current}, not {expected}; reload it.", version=current)
        self.current = current


class Unprocessable(ServiceError):
    """The request is well formed but cannot be done as asked."""


class Unavailable(ServiceError):
    """The service could not do it now; the same request may succeed later."""


# -- not found --------------------------------------------------------------------------------
class GameNotFound(NotFound):
    code = "game_not_found"

    def __init__(self, game_id: str) -> None:
        super().__init__(f"There is no game {game_id!r} (it may have expired).")


class SeatNotFound(NotFound):
    code = "seat_not_found"


# -- not authenticated ------------------------------------------------------------------------
class MissingToken(NotAuthenticated):
    code = "missing_token"


class InvalidToken(NotAuthenticated):
    code = "invalid_token"

    def __init__(self) -> None:
        super().__init__("The token does not belong to a seat of this game.")


# -- not allowed ------------------------------------------------------------------------------
class NotYourTurn(NotAllowed):
    code = "not_your_turn"

    def __init__(self, to_act: int | None, seat: int) -> None:
        super().__init__(f"Seat {to_act} is to act, not seat {seat}.", to_act=to_act)
        self.to_act = to_act


class SeatIsBot(NotAllowed):
    code = "seat_is_bot"

    def __init__(self, seat: int) -> None:
        super().__init__(f"Seat {seat} is played by a bot.")


class SeatControlDenied(CodedError, NotAllowed):
    """Who controls a seat: ``not_seat_owner``, ``turn_timeout_disabled``, ``seat_not_idle``."""


class GameNotOver(NotAllowed):
    code = "game_not_over"


# -- conflicts --------------------------------------------------------------------------------
class GameNotStarted(Conflict):
    code = "game_not_started"

    def __init__(self) -> None:
        super().__init__("The game starts when every seat is filled.")


class GameStarted(Conflict):
    code = "game_started"

    def __init__(self) -> None:
        super().__init__("The game has started.")


class GameOver(Conflict):
    code = "game_over"

    def __init__(self) -> None:
        super().__init__("The game is over.")


class GameNotPlaying(Conflict):
    code = "game_not_playing"


class SeatTaken(CodedError, Conflict):
    """The seat is not open: ``seat_taken`` (a person's or a bot's), ``already_bot``."""


class SeatNotBot(Conflict):
    code = "seat_not_bot"

    def __init__(self, seat: int) -> None:
        super().__init__(f"Seat {seat} is not played by a bot.")


class TooBusy(Conflict):
    """Every compare-and-set of the change lost to another change: nothing was changed."""

    code = "conflict"


# -- unprocessable ----------------------------------------------------------------------------
class IllegalMove(CodedError, Unprocessable):
    """The engine refused the move (its reason code, ``docs/reason-codes.md``), or the
    action is malformed (``invalid_action``)."""


class InvalidRules(Unprocessable):
    code = "invalid_rules"


class SeedNotAllowed(Unprocessable):
    code = "seed_not_allowed"

    def __init__(self) -> None:
        super().__init__("A seed is accepted only by a server started with test seeds enabled.")


class SeatCount(Unprocessable):
    code = "seat_count"

    def __init__(self, players: int, given: int) -> None:
        super().__init__(f"This game has {players} seats; {given} were given.")


class IdempotencyKeyReused(Unprocessable):
    code = "idempotency_key_reused"

    def __init__(self) -> None:
        super().__init__("This Idempotency-Key was used with another request body.")


# -- unavailable ------------------------------------------------------------------------------
class NoGameId(Unavailable):
    code = "unavailable"

    def __init__(self) -> None:
        super().__init__("Could not allocate a game id; try again.")
