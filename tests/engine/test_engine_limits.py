"""The limits on a game's length, and the bounds of every number (docs/rules.md, "Limits",
"Bounds").

The limits are not rules of the seed texts but the service's bound on a game's cost, so no
test here quotes a seed: each ``test_limit_*`` says so instead (``test_engine_seed_quotes``
checks that it does).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from bots.simulate import play_game
from cli.engine_cmds import random_policy
from engine import (
    RuleOptions,
    RulesError,
    State,
    apply,
    deal,
    legal_actions,
    new_game,
    resolve,
    shuffle,
)
from engine.rules import (
    _KINDS,
    BOUNDS,
    DEFAULT_MAX_HANDS,
    DEFAULT_MAX_MOVES_PER_HAND,
    GROUP_OF,
    LIMIT_OPTIONS,
    MAX_HANDS_CAP,
    MAX_MOVES_PER_HAND_CAP,
    MAX_OPENING_PAIRS,
    MAX_TARGET,
)
from engine.state import HAND_LIMIT, MOVE_LIMIT, TARGET
from tests.engine.helpers import discard, draw, meld, play, row, skip_stock, start

PARTS = ("melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand")


def _five_moves(overrides: dict, totals: list[int] | None = None) -> State:
    """Classic: seat 0 draws, opens with three aces and discards; seat 1 draws and discards."""
    state = start("classic", overrides=overrides, totals=totals, hands={0: ["AH", "AS", "AD"]},
                  stock=["9C", "8D"])
    return play(state, (0, draw()), (0, meld(["AH", "AS", "AD"])), (0, discard("9C")), (1, draw()),
                (1, discard("8D")))


def test_limit_a_hand_is_cut_at_the_move_limit():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): at its
    ``max_moves_per_hand``-th move a hand that goes on ends, by the seat to act; it is scored
    as a hand that ends without a going out (the melds count, the cards in hand count
    against, no going-out bonus), and the game ends with it, won by the higher total."""
    state = _five_moves({"max_moves_per_hand": 5})
    result = state.hand_result
    assert (result["reason"], result["by"], state.hand_moves, state.moves) == (MOVE_LIMIT, 2, 5, 5)
    assert state.phase == "over" and state.to_act == -1
    ours, theirs = row(state, 0), row(state, 1)
    assert ours["melds"] == 60 and ours["going_out"] == 0 == theirs["going_out"]
    assert ours["in_hand"] < 0 and theirs["in_hand"] < 0 and theirs["melds"] == 0
    for r in (ours, theirs):
        assert r["hand_total"] == sum(r[k] for k in PARTS) and r["total"] == r["hand_total"]
    game = state.game_result
    assert game["reason"] == MOVE_LIMIT and game["totals"] == list(state.totals)
    assert game["winner"] == (0 if ours["total"] > theirs["total"] else 1)


def test_limit_a_hand_below_the_move_limit_goes_on():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): one move fewer than
    the limit, the hand goes on; the count starts again with each hand."""
    state = _five_moves({"max_moves_per_hand": 6})
    assert state.phase == "draw" and state.to_act == 2 and state.hand_moves == 5
    assert state.hand_result is None and state.game_result is None


def test_limit_a_tie_at_the_move_limit_has_no_winner():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): equal totals when a
    limit ends the game are a draw, as at the target (winner null)."""
    scored = _five_moves({"max_moves_per_hand": 5})
    ours, theirs = (row(scored, t)["hand_total"] for t in (0, 1))
    start_totals = [max(0, theirs - ours), max(0, ours - theirs)]
    state = _five_moves({"max_moves_per_hand": 5}, totals=start_totals)
    assert state.totals[0] == state.totals[1]
    assert state.game_result["winner"] is None and state.game_result["reason"] == MOVE_LIMIT


def test_limit_the_game_ends_after_its_last_hand():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): when the hand numbered
    ``max_hands`` ends with no side at the target, the game ends after it; the higher total
    wins. Before that hand the game goes on."""
    def one_hand(totals, max_hands):
        state = start("classic", overrides={"max_hands": max_hands}, totals=totals,
                      hands={0: ["AH", "AS", "AD"]}, stock=["9C"])
        state = play(state, (0, draw()), (0, meld(["AH", "AS", "AD"])))
        return play(skip_stock(state, 0), (0, discard("9C")))  # seat 1 cannot take: the hand ends

    ended = one_hand([1200, 3100], 1)
    assert ended.hand_result["reason"] == "stock_exhausted" and ended.phase == "over"
    game = ended.game_result
    assert game["reason"] == HAND_LIMIT and max(game["totals"]) < 5000
    assert game["winner"] == (0 if game["totals"][0] > game["totals"][1] else 1)
    assert one_hand([1200, 3100], 2).phase == "deal"  # hand 1 of 2: the game goes on


def test_limit_the_target_wins_over_the_hand_limit():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): a side that reaches the
    target in the last hand the limit allows ends the game at the target."""
    aces = ["AH", "AS", "AD", "AC", "AH", "AS", "AD"]
    state = start("classic", overrides={"max_hands": 1}, totals=[4990, 0], hands={0: aces}, stock=["9C"])
    state = play(state, (0, draw()), (0, meld(aces)))
    state = play(skip_stock(state, 0), (0, discard("9C")))
    assert state.totals[0] >= 5000 and state.game_result["reason"] == TARGET


def test_limit_a_house_rule_lowers_a_limit_and_random_play_meets_it():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): a client may lower
    either limit (here to 2 hands of at most 60 moves); random play, which need never reach
    a target of 50 000, ends there."""
    rules = resolve("norwegian", 6, {"target_score": 50000, "max_hands": 2, "max_moves_per_hand": "60"})
    assert (rules.limits.max_hands, rules.limits.max_moves_per_hand) == (2, 60)
    rng = random.Random(3)
    record = play_game(rules, rng, random_policy(rng))
    final = record.final
    assert final is not None and final.game_result["reason"] in (HAND_LIMIT, MOVE_LIMIT)
    assert len(record.hands) <= 2 and final.hand_moves <= 60


def test_limit_the_defaults_and_their_caps():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): every preset gets the
    default limits; a client may raise them to the caps and no further, and may not lift
    them (null, no limit, is what old logs mean by leaving them out, never a choice)."""
    for name in ("classic", "finnish-2p", "norwegian"):
        limits = resolve(name).limits
        assert (limits.max_hands, limits.max_moves_per_hand) == (DEFAULT_MAX_HANDS, DEFAULT_MAX_MOVES_PER_HAND)
    assert resolve("classic", overrides={"max_hands": MAX_HANDS_CAP}).limits.max_hands == MAX_HANDS_CAP
    with pytest.raises(RulesError, match=f"max_hands must be 1 to {MAX_HANDS_CAP}, not {MAX_HANDS_CAP + 1}$"):
        resolve("classic", overrides={"max_hands": MAX_HANDS_CAP + 1})
    with pytest.raises(RulesError, match=f"max_moves_per_hand must be 1 to {MAX_MOVES_PER_HAND_CAP}, not null$"):
        resolve("classic", overrides={"max_moves_per_hand": None})
    with pytest.raises(RulesError, match="max_hands must be 1 to"):
        RuleOptions.from_dict({**resolve("classic").to_dict(), "max_hands": "none"})


def test_limit_the_move_limit_never_changes_what_is_legal():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): the limit ends a hand,
    it never refuses a move; one move before it, a player who can go out still may (the
    rules' look-ahead does not count moves)."""
    aces, kings = ["AH", "AS", "AD", "AC", "AH", "AS", "AD"], ["KH", "KS", "KD", "KC"]
    state = start("classic", overrides={"max_moves_per_hand": 3}, hands={0: aces + kings}, stock=["9C"])
    state = play(state, (0, draw()), (0, meld(aces, kings)))
    assert state.hand_moves == 2 and state.phase == "play"
    unlimited = state._replace(rules=state.rules.with_values({"max_moves_per_hand": None}))
    assert legal_actions(state, 0) == legal_actions(unlimited, 0)
    assert {"type": "discard", "card": "9C"} in legal_actions(state, 0)
    went_out = play(state, (0, discard("9C")))
    assert went_out.hand_result["reason"] == "went_out"  # the hand's last move, not cut
    assert went_out.game_result is None and went_out.hand_moves == 3


def test_limit_a_state_stored_before_limits_loads():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): a stored state has no
    ``hand_moves`` (its hand counts from here), its rules no limits (the defaults apply),
    and the result of a game it holds as over no ``reason`` (it ended at the target)."""
    state = _five_moves({"max_moves_per_hand": 5})
    data = state.to_json()
    del data["hand_moves"]
    for name in LIMIT_OPTIONS:
        del data["rules"][name]
    del data["game_result"]["reason"]
    loaded = State.from_json(data)
    assert loaded.hand_moves == 0 and loaded.game_result["reason"] == TARGET
    assert loaded.rules.limits.max_hands == DEFAULT_MAX_HANDS
    assert State.from_json(state.to_json()) == state


def test_limit_a_game_stored_out_of_range_loads_and_ends_at_the_limits():
    """House limit, not a rule of the seeds (docs/rules.md, "Limits"): four random players at
    a target of 10^15 played for ever before the ranges; such a game, stored then, loads as
    it is and ends at its hand limit (here 3: stored without one, it gets the default, 1 000
    hands, as ``test_limit_a_state_stored_before_limits_loads`` shows)."""
    rules = resolve("classic").with_values({"target_score": 10**15})
    rng = random.Random(8)
    play = random_policy(rng)
    state = new_game(rules)
    deck, salt, _ = shuffle(rules, rng)
    data = deal(state, deck, salt).to_json()
    data["rules"]["max_hands"] = 3
    del data["rules"]["max_moves_per_hand"]
    del data["hand_moves"]
    with pytest.raises(RulesError, match="target_score must be 1 to"):
        RuleOptions.from_dict(data["rules"])
    state = State.from_json(data)
    assert state.rules.scoring.target_score == 10**15
    assert state.rules.limits.max_moves_per_hand == DEFAULT_MAX_MOVES_PER_HAND
    while state.phase != "over":
        if state.phase == "deal":
            deck, salt, _ = shuffle(rules, rng)
            state = deal(state, deck, salt)
            continue
        state = apply(state, state.to_act, play(state, state.to_act, legal_actions(state, state.to_act)))
    assert state.game_result["reason"] == HAND_LIMIT and state.hand_no == 3


# -- bounds --------------------------------------------------------------------------------------


def _group_value(name: str) -> object:
    rules = resolve("classic")
    return getattr(getattr(rules, GROUP_OF[name]), name) if name in GROUP_OF else getattr(rules, name)


def test_every_whole_number_option_has_bounds():
    """Every option whose value is a number (not one of a list of choices) has a range;
    ``opening_minimums`` has its own (pairs, thresholds, minimums)."""
    numbers = {n for n, k in _KINDS.items() if k.base is int and not k.choices}
    assert numbers - {"opening_minimums"} == set(BOUNDS)
    for name, (lo, hi) in BOUNDS.items():
        value = _group_value(name)
        assert (value is None and _KINDS[name].nullable) or lo <= value <= hi, name


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_a_value_out_of_bounds_is_refused_naming_the_option_and_its_range(name):
    lo, hi = BOUNDS[name]
    for bad in (lo - 1, hi + 1):
        with pytest.raises(RulesError) as info:
            RuleOptions.from_dict({**resolve("classic").to_dict(), name: bad})
        message = str(info.value)
        assert message.startswith(f"{name} must be ") and f"{lo} to {hi}, not {bad}" in message


def test_a_huge_value_is_not_echoed_in_full():
    """The API answers 422 invalid_rules with this sentence: it quotes at most 20 digits."""
    def refusal(value):
        with pytest.raises(RulesError) as info:
            resolve("classic", overrides={"target_score": value})
        return str(info.value)

    assert refusal(10**15) == f"target_score must be 1 to {MAX_TARGET}, not 1000000000000000"
    assert refusal(10**400) == f"target_score must be 1 to {MAX_TARGET}, not a number of more than 20 digits"
    assert refusal(-(10**30)).endswith("not a negative number of more than 20 digits")
    long = refusal("x" * 5000)  # quoted as every refusal quotes a value (engine.text.quote)
    assert len(long) < 200 and long.endswith("… (5000 characters)")
    assert len(refusal("9" * 5000)) < 200  # int() of it is refused by Python: "not a whole number"
    with pytest.raises(RulesError) as info:
        resolve("classic", overrides={"decks": 10**100})
    assert str(info.value) == "decks must be one of 2, 3, not a number of more than 20 digits"


def test_opening_minimums_are_bounded():
    too_many = [[1000 * k, 50] for k in range(MAX_OPENING_PAIRS + 1)]
    for value, words in [
        (too_many, f"1 to {MAX_OPENING_PAIRS}"),
        ([[0, 5000]], "a minimum 0 to 1000, not [0, 5000]"),
        ([[10**20, 50]], f"a threshold must be 0 to {MAX_TARGET}"),
        ([[-5, 50]], "not [-5, 50]"),
        ("50", "[threshold, minimum] pairs"),
    ]:
        with pytest.raises(RulesError, match=re.escape(words)):
            resolve("classic", overrides={"opening_minimums": value})
    assert resolve("classic", overrides={"opening_minimums": [[0, 0]]}).melding.opening_minimums == ((0, 0),)


def test_new_game_reads_the_limits_as_data():
    rules = resolve("classic", overrides={"max_hands": 7, "max_moves_per_hand": 99})
    assert new_game(rules).rules.limits.max_hands == 7
    assert rules.to_dict()["max_hands"] == 7 and RuleOptions.from_dict(rules.to_dict()) == rules


def _doc_rows(section: str) -> list[tuple[list[str], list[int]]]:
    """The rows of the table of docs/rules.md's ``## <section>``: the option names of the
    first column, the numbers of the others but the last (``5 000`` is 5000)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    text = doc.split(f"\n## {section}", 1)[1].split("\n## ", 1)[0]
    rows: list[tuple[list[str], list[int]]] = []
    for line in text.splitlines():
        if rows and not line.startswith("|"):
            break  # the first table ends
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) >= 3:
            numbers = [int(n.replace(" ", "")) for n in re.findall(r"-?\d+(?: \d{3})*", " | ".join(cells[1:-1]))]
            rows.append((re.findall(r"`([a-z_]+)`", cells[0]), numbers))
    return rows


def test_the_rules_doc_gives_every_range_and_the_limits_defaults():
    ranges = {name: numbers for names, numbers in _doc_rows("Bounds") for name in names}
    assert set(BOUNDS) <= set(ranges)
    for name, (lo, hi) in BOUNDS.items():
        assert lo in ranges[name] and hi in ranges[name], name
    limits = {names[0]: numbers for names, numbers in _doc_rows("Limits")}
    assert limits == {"max_hands": [DEFAULT_MAX_HANDS, 1, MAX_HANDS_CAP],
                      "max_moves_per_hand": [DEFAULT_MAX_MOVES_PER_HAND, 1, MAX_MOVES_PER_HAND_CAP]}
