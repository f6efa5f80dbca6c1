"""The API's action vocabulary is the engine's: every action type, with the same required
and optional fields (web/schemas.py checks the shape, engine/moves.py judges the move)."""

from __future__ import annotations

from engine import moves
from web.schemas import _ACTION_SCHEMAS, ACTION_TYPES


def _engine_fields() -> dict[str, tuple[set[str], set[str]]]:
    return getattr(moves, "ACTION_FIELDS", None) or moves._FIELDS  # type -> (required, optional)


def test_the_same_action_types() -> None:
    assert set(ACTION_TYPES) == set(_engine_fields())


def test_the_same_fields_for_each_type() -> None:
    engine_fields = _engine_fields()
    for kind, schema in _ACTION_SCHEMAS.items():
        names = {f.data_key or name for name, f in schema.fields.items()} - {"type"}
        required = {f.data_key or name for name, f in schema.fields.items() if f.required} - {"type"}
        assert (required, names - required) == tuple(set(x) for x in engine_fields[kind]), kind
