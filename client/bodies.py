"""The JSON bodies the server answers, typed for readers and type checkers
(``openapi.yaml``'s schemas; the values are plain dicts)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


# -- what the server answers (openapi.yaml's schemas) -------------------------------------
class PublicSeat(TypedDict):
    seat: int
    team: int
    name: str | None
    bot: str | None
    budget_ms: int | None  # the expert's thinking time the seat set (None: the server's default)
    open: bool


class CreatedSeat(PublicSeat):
    token: str | None  # only for a person's seat, and only in the answer to create_game


class GameView(TypedDict):
    """``GET /games/{id}``: the game's public facts and the reader's ``view`` (engine's
    seat view: hand, melds, pile, ``legal`` summary; None while the game waits)."""

    id: str
    status: str  # waiting, playing, over
    version: int
    preset: str
    players: int
    seat: int | None
    seats: list[PublicSeat]
    view: dict[str, Any] | None
    rules: NotRequired[dict[str, Any]]
    dry_run: NotRequired[bool]


class CreatedGame(TypedDict):
    id: str
    status: str
    version: int
    preset: str
    players: int
    seat: None
    seats: list[CreatedSeat]
    view: dict[str, Any] | None
    rules: dict[str, Any]


class JoinedSeat(TypedDict):
    id: str
    seat: int
    team: int
    name: str
    token: str
    status: str
    version: int


class Hint(TypedDict):
    bot: str
    seat: int
    version: int
    action: dict[str, Any]


Action = dict[str, Any]
"""A move: the game log's action object, e.g. ``{"type": "discard", "card": "7H"}``."""

