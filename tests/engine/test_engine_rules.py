"""Rule options: the groups in code, the flat wire format, and the combinations refused."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path
from typing import Any

import pytest

from engine import (
    IllegalMove,
    RuleOptions,
    RulesError,
    deal,
    legal_actions,
    new_game,
    resolve,
    shuffle,
)
from engine import apply as apply_move
from engine.cards import counts, parse_card
from engine.rules import _CHOICES, _ONE_WAY, GROUP_OF, OPTION_NAMES, PRESETS
from engine.turns import replace_at
from tests.engine.helpers import make_deck, skip_stock

ENGINE = Path(__file__).resolve().parents[2] / "engine"

# The options' names on the wire (API bodies, views, log headers, house rules), as every
# earlier version wrote them: renaming or dropping one breaks stored games and old logs.
WIRE_NAMES = {
    "preset", "players", "team_size", "decks", "hand_size", "draw_count", "target_score",
    "upcard_wild_freezes", "upcard_red_three_freezes", "upcard_black_three_freezes", "dealt_red_threes",
    "pile_red_threes", "min_naturals", "max_wilds", "wild_ratio", "one_meld_per_rank", "canasta_size",
    "canasta_min_naturals", "natural_canasta_bonus", "mixed_canasta_bonus", "opening_minimums",
    "negative_opening_minimum", "opening_from_pile", "discard_wild_freezes", "discard_black_three_freezes",
    "red_three_discard_locks_round", "discarded_wilds", "red_threes_optional", "black_three_meld_on_going_out",
    "canastas_to_go_out", "ask_go_out", "ask_unable_penalty", "going_out_bonus", "concealed_going_out_bonus",
    "hidden_canasta_bonus", "concealed_scope", "concealed_minimum", "red_three_bonus", "red_three_all_bonus",
    "red_three_unopened", "stock_out", "last_red_three_ends", "red_three_in_hand_penalty",
    "lone_last_card_completes_draw", "max_hands", "max_moves_per_hand",
}
CONFIGS = [(name, n) for name, p in PRESETS.items() for n in sorted(p.by_players)]


def test_the_wire_names_are_the_same():
    assert set(OPTION_NAMES) == WIRE_NAMES and len(OPTION_NAMES) == len(WIRE_NAMES)
    assert set(GROUP_OF) == WIRE_NAMES - {"preset", "players", "team_size"}


@pytest.mark.parametrize("preset,players", CONFIGS)
def test_to_dict_is_flat_and_from_dict_its_inverse(preset, players):
    rules = resolve(preset, players)
    flat = rules.to_dict()
    assert set(flat) == WIRE_NAMES
    assert all(not isinstance(v, RuleOptions | tuple) for v in flat.values())  # JSON-ready
    assert RuleOptions.from_dict(flat) == rules
    for name, group in GROUP_OF.items():
        value = getattr(getattr(rules, group), name)
        assert flat[name] == ([list(p) for p in value] if name == "opening_minimums" else value)


def test_a_header_of_an_earlier_version_still_reads():
    """A log header written before the groups: flat, in the old order, with a former value."""
    old = {
        "preset": "finnish", "players": 4, "team_size": 2, "decks": 2, "hand_size": 11, "draw_count": 1,
        "target_score": 5000, "ask_go_out": "after_stock_draw", "opening_minimums": [[0, 50], [3000, 120], [1500, 90]],
        "red_three_all_bonus": None, "black_three_meld_on_going_out": True,
    }
    rules = RuleOptions.from_dict(old)
    assert rules.going_out.ask_go_out == "after_stock_draw_before_melds"
    assert rules.melding.opening_minimums == ((3000, 120), (1500, 90), (0, 50))
    assert rules.scoring.red_three_all_bonus is None and rules.dealing.hand_size == 11


def test_house_rules_are_flat_names_and_land_in_their_group():
    rules = resolve("classic", overrides={"discarded_wilds": "beside_pile", "target_score": "1500",
                                          "max_wilds": "none", "wild_ratio": "at_most_naturals"})
    assert rules.pile.discarded_wilds == "beside_pile"
    assert rules.scoring.target_score == 1500
    assert rules.melding.max_wilds is None
    assert rules == resolve("classic").with_values(
        {"discarded_wilds": "beside_pile", "target_score": 1500, "max_wilds": None, "wild_ratio": "at_most_naturals"}
    )


# (preset, house rules, words of the message): each a value or a combination the engine cannot play
REFUSED = [
    ("classic", {"last_red_three_ends": False}, "last_red_three_ends false needs red_threes_optional"),
    ("norwegian", {"last_red_three_ends": True}, "last_red_three_ends needs red threes laid automatically"),
    ("classic", {"min_naturals": 3}, "min_naturals 3 is not supported"),
    ("classic", {"one_meld_per_rank": False}, "one_meld_per_rank false is not supported"),
    ("classic", {"lone_last_card_completes_draw": False}, "lone_last_card_completes_draw false is not supported"),
    ("classic", {"pile_red_threes": "to_hand"}, "pile_red_threes to_hand needs red_threes_optional"),
    ("classic", {"red_three_discard_locks_round": True}, "red_three_discard_locks_round needs red_threes_optional"),
    ("norwegian", {"discard_wild_freezes": False}, "discarded_wilds beside_pile needs discard_wild_freezes"),
    ("classic", {"max_wilds": None}, "max_wilds null (no cap) needs wild_ratio"),
    ("classic", {"max_wilds": -1}, "max_wilds must be null or 0 to 20, not -1"),
    ("classic", {"decks": 4}, "decks must be one of 2, 3, not 4"),
    ("classic", {"draw_count": 3}, "draw_count must be one of 1, 2, not 3"),
    ("classic", {"team_size": 4}, "team_size must be one of 1, 2, 3, not 4"),
    ("classic", {"ask_go_out": "whenever"}, "ask_go_out must be one of"),
    ("wiki", {"players": 3, "team_size": 2}, "team_size 2 does not divide players 3"),
    ("classic", {"hand_size": 23}, "hand_size 23 for players 4 leaves fewer than 20"),
    ("classic", {"canasta_min_naturals": 8}, "canasta_size and canasta_min_naturals are inconsistent"),
    ("classic", {"canasta_min_naturals": 1}, "canasta_min_naturals must be 2 to 15, not 1"),
    ("classic", {"opening_minimums": []}, "opening_minimums needs 1 to 10"),
    ("classic", {"canastas_to_go_out": 0}, "canastas_to_go_out must be 1 to 5, not 0"),
    ("classic", {"ask_unable_penalty": -5}, "ask_unable_penalty must be 0 to 5000, not -5"),
    ("classic", {"target_score": 0}, "target_score must be 1 to 50000, not 0"),
    ("classic", {"concealed_going_out_bonus": 50}, "concealed_going_out_bonus must be at least going_out_bonus"),
    ("classic", {"decks": "two"}, "decks must be a whole number"),
    ("classic", {"red_threes_optional": "maybe"}, "red_threes_optional must be true or false"),
    ("classic", {"house_rule": 1}, "unknown rule option"),
    ("classic", {"preset": "wiki"}, "preset cannot be overridden"),
]


@pytest.mark.parametrize("preset,overrides,message", REFUSED)
def test_a_combination_the_engine_cannot_play_is_refused_with_a_reason(preset, overrides, message):
    with pytest.raises(RulesError, match=re.escape(message)):
        resolve(preset, overrides=overrides)


@pytest.mark.parametrize("preset,overrides,message", [r for r in REFUSED if "preset" not in r[1]])
def test_from_dict_refuses_the_same(preset, overrides, message):
    with pytest.raises(RulesError, match=re.escape(message)):
        RuleOptions.from_dict({**resolve(preset).to_dict(), **overrides})


def test_a_choice_of_one_value_says_why():
    assert set(_ONE_WAY) == {n for n, choices in _CHOICES.items() if len(choices) == 1}


def _option_reads() -> set[str]:
    """The option names the engine reads as attributes, outside ``validate`` and its helpers."""
    names: set[str] = set()
    for path in ENGINE.glob("*.py"):
        tree = ast.parse(path.read_text())
        if path.name == "rules.py":
            tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and "validate" in n.name)]
        names.update(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute))
    return names


def test_every_option_is_read_by_the_engine():
    """An option nothing reads is a house rule that silently does nothing. A choice of one
    value (the only way the engine plays that rule) is exempt: other values are refused."""
    fixed = {n for n, choices in _CHOICES.items() if len(choices) == 1}
    assert set(GROUP_OF) - fixed - _option_reads() == set()


def _random_overrides(rng: random.Random) -> dict[str, Any]:
    """Some options changed at random, within their types."""
    out: dict[str, Any] = {}
    for name, group in GROUP_OF.items():
        if rng.random() > 0.3:
            continue
        if name in _CHOICES:
            out[name] = rng.choice(_CHOICES[name])
        elif isinstance(getattr(getattr(resolve("classic"), group), name), bool):
            out[name] = rng.random() < 0.5
    for name, values in {"max_wilds": [None, 0, 1, 2, 4], "canasta_size": [5, 6, 8], "canasta_min_naturals": [3, 5],
                         "canastas_to_go_out": [1, 2, 3], "hand_size": [7, 9, 13], "ask_unable_penalty": [0, 50]}.items():
        if rng.random() < 0.2:
            out[name] = rng.choice(values)
    return out


def _play_one_hand(rules: RuleOptions, rng: random.Random) -> None:
    state = new_game(rules)
    deck, salt, _ = shuffle(rules, rng)
    state = deal(state, deck, salt)
    while state.phase not in ("deal", "over"):
        actions = legal_actions(state, state.to_act)
        assert actions, f"no legal action for seat {state.to_act} ({state.phase}, move {state.moves})"
        state = apply_move(state, state.to_act, rng.choice(actions))


def test_every_combination_accepted_plays_a_hand_to_its_end():
    """Random house rules: whatever ``validate`` accepts, random play ends the hand, every
    position offers a legal action and every action offered is accepted."""
    rng = random.Random(12)
    played = 0
    while played < 40:
        preset, players = rng.choice(CONFIGS)
        try:
            rules = resolve(preset, players, _random_overrides(rng))
        except RulesError:
            continue
        _play_one_hand(rules, rng)
        played += 1



def _one_card_left_and_a_red_three_last(rules: RuleOptions) -> Any:
    """Seat 0 holds one card (no canasta to go out) and draws the last stock card: 3H."""
    state = deal(new_game(rules), make_deck(rules, stock_bottom=["3H"]))
    state = state._replace(hands=replace_at(state.hands, 0, counts([parse_card("9H")])))
    return apply_move(skip_stock(state, 1), 0, {"type": "draw"})


def test_why_a_last_red_three_must_end_the_hand_where_red_threes_are_laid():
    """The refusal of ``last_red_three_ends`` false with red threes laid automatically, shown:
    the red three drawn last is laid, nothing replaces it, and the player, down to one card,
    can neither meld, nor add, nor discard it. (With ``red_threes_optional`` the red three
    stays in the hand.) As played, the hand ends there."""
    unplayable = _one_card_left_and_a_red_three_last(resolve("classic").with_values({"last_red_three_ends": False}))
    assert unplayable.phase == "play" and sum(unplayable.hands[0]) == 1 and unplayable.red_threes[0]
    assert legal_actions(unplayable, 0) == []
    assert _one_card_left_and_a_red_three_last(resolve("classic")).hand_result["reason"] == "red_three_last"


def test_why_min_naturals_is_two():
    """The refusal of ``min_naturals`` other than 2, shown: the move search (legal actions, the
    plans to go out and to take the pile) builds melds from two naturals, and with three
    required it offers moves that the rules then refuse."""
    unplayable = resolve("classic").with_values({"min_naturals": 3})
    rng = random.Random(5)
    with pytest.raises(IllegalMove, match="natural cards"):
        for _ in range(20):
            _play_one_hand(unplayable, rng)
