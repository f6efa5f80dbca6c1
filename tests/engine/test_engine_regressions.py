"""Regressions: behaviour the contract asks for that an earlier engine got wrong."""

from __future__ import annotations

from engine import describe_move, new_game, resolve
from tests.engine.helpers import discard, draw, play, skip_stock, start


def test_to_json_returns_fresh_data():
    """``to_json`` is "plain data": changing what it returned changes neither the state nor
    any later dump (the API may add fields to what it sends)."""
    state = new_game(resolve("classic"))
    data = state.to_json()
    data["rules"]["target_score"] = 1
    assert new_game(resolve("classic")).to_json()["rules"]["target_score"] == 5000
    ended = play(skip_stock(start("classic"), 0), (0, {"type": "pass"}))
    ended.to_json()["hand_result"]["scores"][0]["total"] = 123456
    assert ended.hand_result["scores"][0]["total"] != 123456



def test_event_names_red_threes_laid_at_the_next_first_turn():
    """finnish lays dealt red threes at each seat's first turn. The move that starts that turn
    (the previous seat's discard) is the only event that can show them: "red threes laid by
    the engine are public" (describe_move)."""
    state = start("finnish", hands={1: ["3H"]}, stock=["9C", "8C"])
    before = play(state, (0, draw()))
    after = play(before, (0, discard("9C")))
    assert len(after.red_threes[1]) == 1  # seat 1's red three was laid
    event = describe_move(before, after, 0, discard("9C"), None)
    assert "3H" in str(event)


def test_states_stored_before_the_pile_fields_still_load():
    """A state stored by an earlier version has no ``pile_beside``, ``known_from_pile`` or
    ``minimum_waived``: it loads with them empty, and its rules' former ``ask_go_out`` value is
    read as what it meant."""
    from engine import State

    state = play(start("finnish"), (0, draw()))
    data = state.to_json()
    for name in ("pile_beside", "known_from_pile", "minimum_waived"):
        del data[name]
    data["rules"]["ask_go_out"] = "after_stock_draw"
    for name in ("pile_red_threes", "opening_from_pile", "discarded_wilds"):
        del data["rules"][name]
    old = State.from_json(data)
    assert old.rules.going_out.ask_go_out == "after_stock_draw_before_melds"
    assert old._replace(rules=state.rules) == state
