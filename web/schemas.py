"""Request bodies (marshmallow 4; unknown fields are refused: 422)."""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

import bots

BOTS = bots.NAMES
CARD_PATTERN = r"^(?:[A2-9TJQK][SHDC]|JK)$"
RANKS = ("A", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")
MAX_CARDS = 200
MAX_MELDS = 40
MAX_TURN_TIMEOUT = 7 * 24 * 3600  # seconds


class StrictInt(fields.Integer):
    """An integer that is not a bool and not a string."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class StrictBool(fields.Field):
    """``true`` or ``false`` only."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise ValidationError("Not a boolean.")
        return value


def Card(*, required: bool = False) -> fields.String:  # noqa: N802 - a field factory
    return fields.String(required=required, validate=validate.Regexp(CARD_PATTERN, error="Not a card code."))


def Cards(*, required: bool = False, min_len: int = 1) -> fields.List:  # noqa: N802
    return fields.List(Card(), required=required, validate=validate.Length(min=min_len, max=MAX_CARDS))


def Rank(*, required: bool = False) -> fields.String:  # noqa: N802
    return fields.String(required=required, validate=validate.OneOf(RANKS))


def Melds(*, required: bool = False) -> fields.List:  # noqa: N802
    return fields.List(Cards(), required=required, validate=validate.Length(min=1, max=MAX_MELDS))


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class _Action(_Strict):
    type = fields.String(required=True)  # one of ACTION_TYPES: ActionField chose the schema by it


class _NoFields(_Action):
    pass


class _TakePile(_Action):
    with_ = Cards(min_len=0)
    onto = Rank()
    melds = Melds()

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        """The JSON name is the keyword ``with``."""
        if field_name == "with_":
            field_obj.data_key = "with"


class _Meld(_Action):
    melds = Melds(required=True)


class _Add(_Action):
    rank = Rank(required=True)
    cards = Cards(required=True)


class _Discard(_Action):
    card = Card(required=True)


class _Answer(_Action):
    yes = StrictBool(required=True)


# The action vocabulary of the log format (the engine's, ``engine/moves.py``; a test keeps
# the two equal): each type's fields, checked for shape here and judged by the engine.
_ACTION_SCHEMAS: dict[str, Schema] = {
    "draw": _NoFields(),
    "take_pile": _TakePile(),
    "meld": _Meld(),
    "add": _Add(),
    "discard": _Discard(),
    "ask_go_out": _NoFields(),
    "answer_go_out": _Answer(),
    "pass": _NoFields(),
}
ACTION_TYPES = tuple(_ACTION_SCHEMAS)


class ActionField(fields.Field):
    """A game log action object (docs/gamelog.md), checked for shape; the engine judges legality."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ValidationError("Not an object.")
        kind = value.get("type")
        schema = _ACTION_SCHEMAS.get(kind) if isinstance(kind, str) else None
        if schema is None:
            raise ValidationError({"type": [f"Must be one of: {', '.join(ACTION_TYPES)}."]})
        loaded = schema.load(value)
        if "with_" in loaded:
            loaded["with"] = loaded.pop("with_")
        return loaded


class MoveSchema(_Strict):
    action = ActionField(required=True)


class SeatSpecSchema(_Strict):
    name = fields.String()  # normalised and checked by the service (service.names: 422 invalid_name)
    bot = fields.String(validate=validate.OneOf(BOTS))
    budget_ms = StrictInt()  # the expert's thinking time; the service checks its limits

    @validates_schema
    def _one_of(self, data: dict[str, Any], **kwargs: Any) -> None:
        if ("name" in data) == ("bot" in data):
            raise ValidationError("A seat is either {name} or {bot}.")
        if "budget_ms" in data and "bot" not in data:
            raise ValidationError("budget_ms goes with a bot.")


class CreateGameSchema(_Strict):
    preset = fields.String(required=True, validate=validate.Length(min=1, max=40))
    players = StrictInt(validate=validate.Range(min=2, max=6))
    rules = fields.Dict(keys=fields.String(validate=validate.Length(max=64)),
                        values=fields.Raw(allow_none=True), validate=validate.Length(max=64))
    seats = fields.List(fields.Nested(SeatSpecSchema, allow_none=True), required=True,
                        validate=validate.Length(min=2, max=6))
    seed = StrictInt(validate=validate.Range(min=0, max=2**63 - 1))
    # seconds a person's seat may be to act before any seat may hand it to a bot (0: never)
    turn_timeout = StrictInt(validate=validate.Range(min=0, max=MAX_TURN_TIMEOUT))


class JoinSchema(_Strict):
    name = fields.String(required=True)  # normalised and checked by the service (service.names: 422 invalid_name)


class BotSchema(_Strict):
    bot = fields.String(required=True, validate=validate.OneOf(BOTS))
    budget_ms = StrictInt()  # the expert's thinking time; the service checks its limits
