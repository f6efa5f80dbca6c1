"""Properties over random games of every preset and player count (hypothesis).

Each example plays a bounded random game (the random policy of ``canasta simulate``) and
checks, at every position: every card is somewhere exactly once; ``apply`` never changes its
input; the JSON form round-trips (also through orjson); every enumerated action is accepted;
nobody but the seat to act has an action, and that seat always has one; actions made illegal
on purpose (another seat, a card not held, the wrong phase) and fuzzed actions raise
``IllegalMove`` and nothing else. Whole games (to 1 500 points) end, replay to the same
states, and their scores add up.
"""

from __future__ import annotations

import os
import random
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots.simulate import play_game
from cli.engine_cmds import random_policy
from engine import IllegalMove, State, apply, deal, legal_actions, new_game, resolve, shuffle
from engine.cards import CODES
from replay.log import game_end_line
from tests.engine.helpers import all_cards, hand, pack_counter

CONFIGS = [
    ("classic", 4), ("finnish", 4), ("finnish-2p", 2), ("finnish-3p", 3), ("bicycle", 4),
    ("wiki", 2), ("wiki", 3), ("wiki", 4), ("wiki", 6),
    ("norwegian", 2), ("norwegian", 3), ("norwegian", 4), ("norwegian", 5), ("norwegian", 6),
]
SHORT = {"target_score": 1500}
# examples per preset and player count; more for a bug hunt: ENGINE_PROPERTY_EXAMPLES=200
EXAMPLES = int(os.environ.get("ENGINE_PROPERTY_EXAMPLES", "4"))
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=EXAMPLES)
IN_HAND = ("draw", "play", "answer")


def walk(preset: str, players: int, seed: int, moves: int, visit=None) -> tuple[State, list[Any]]:
    """Play up to ``moves`` random moves (dealing as needed); ``visit(state, seat, actions,
    chosen, after)`` sees every move. Returns the last state and the log (decks and moves)."""
    rules = resolve(preset, players, SHORT)
    rng = random.Random(seed)
    policy = random_policy(rng)
    state = new_game(rules)
    log: list[Any] = []
    while state.phase != "over" and len(log) < moves:
        if state.phase == "deal":
            deck, salt, _ = shuffle(rules, rng)
            state = deal(state, deck, salt)
            log.append(("deal", deck, salt))
            continue
        seat = state.to_act
        actions = legal_actions(state, seat)
        chosen = policy(state, seat, actions)
        after = apply(state, seat, chosen)
        if visit is not None:
            visit(state, seat, actions, chosen, after)
        log.append(("move", seat, chosen))
        state = after
    return state, log


def _check_json(state: State) -> None:
    data = state.to_json()
    assert State.from_json(data) == state
    wire = orjson.loads(orjson.dumps(data))
    assert wire == data
    assert State.from_json(wire) == state


@pytest.mark.parametrize("preset,players", CONFIGS)
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), moves=st.integers(1, 160))
def test_invariants_along_a_random_game(preset, players, seed, moves):
    pack = pack_counter(resolve(preset, players))

    def visit(state, seat, actions, chosen, after):
        frozen = orjson.dumps(state.to_json())
        assert actions, f"no legal action for seat {seat} in phase {state.phase}"
        for other in range(state.rules.players):
            if other != seat:
                assert legal_actions(state, other) == []
        for action in actions:
            try:
                apply(state, seat, action)
            except IllegalMove as e:
                pytest.fail(f"enumerated action {action} refused: {e}")
        assert orjson.dumps(state.to_json()) == frozen, "apply changed its input"
        assert all_cards(after) == pack
        assert after.moves == state.moves + 1
        _check_json(after)

    state, _ = walk(preset, players, seed, moves, visit)
    if state.phase in IN_HAND:
        assert legal_actions(state, state.to_act)


@pytest.mark.parametrize("preset,players", CONFIGS)
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), moves=st.integers(1, 200))
def test_same_deck_and_actions_same_states(preset, players, seed, moves):
    states: list[bytes] = []
    state, log = walk(preset, players, seed, moves, lambda s, *rest: states.append(orjson.dumps(rest[-1].to_json())))
    replay = new_game(resolve(preset, players, SHORT))
    i = 0
    for entry in log:
        if entry[0] == "deal":
            replay = deal(replay, entry[1], entry[2])
        else:
            replay = apply(replay, entry[1], entry[2])
            assert orjson.dumps(replay.to_json()) == states[i]
            i += 1
    assert replay == state


# -- actions made illegal on purpose ------------------------------------------------------------


def _not_held(state: State, seat: int, rng: random.Random) -> str:
    held = hand(state, seat)
    return rng.choice([c for c in CODES if not held[c]])


def mutations(state: State, seat: int, action: dict, rng: random.Random) -> list[tuple[int, dict]]:
    """Variants of a legal ``action`` that are certainly illegal."""
    out: list[tuple[int, dict]] = []
    for other in range(state.rules.players):
        if other != seat:
            out.append((other, action))
    kind = action["type"]
    if kind == "discard":
        out.append((seat, {**action, "card": _not_held(state, seat, rng)}))
    if kind == "take_pile" and "with" in action:
        cards = list(action["with"])
        cards[rng.randrange(len(cards))] = _not_held(state, seat, rng)
        out.append((seat, {**action, "with": cards}))
    if kind == "take_pile" and "onto" in action:
        out.append((seat, {**action, "onto": rng.choice([r for r in "A456789TJQK" if r != action["onto"]])}))
    if kind == "meld":
        groups = [list(g) for g in action["melds"]]
        g = rng.randrange(len(groups))
        groups[g][rng.randrange(len(groups[g]))] = _not_held(state, seat, rng)
        out.append((seat, {**action, "melds": groups}))
    if kind == "add":
        cards = list(action["cards"])
        cards[rng.randrange(len(cards))] = _not_held(state, seat, rng)
        out.append((seat, {**action, "cards": cards}))
    # the wrong phase
    if state.phase == "draw":
        held = [c for c, n in hand(state, seat).items() if n]
        out.append((seat, {"type": "discard", "card": rng.choice(held)}))
        out.append((seat, {"type": "meld", "melds": [held[:3]]}))
        out.append((seat, {"type": "answer_go_out", "yes": True}))
    elif state.phase == "play":
        out += [(seat, {"type": "draw"}), (seat, {"type": "pass"}), (seat, {"type": "answer_go_out", "yes": False})]
        if state.pile:
            out.append((seat, {"type": "take_pile", "onto": "K"}))
    elif state.phase == "answer":
        out += [(state.turn, {"type": "discard", "card": CODES[0]}), (seat, {"type": "draw"})]
    return out


@pytest.mark.parametrize("preset,players", CONFIGS)
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), moves=st.integers(1, 160))
def test_mutated_actions_are_rejected(preset, players, seed, moves):
    rng = random.Random(seed)

    def visit(state, seat, actions, chosen, after):
        for action in rng.sample(actions, min(3, len(actions))):
            for who, bad in mutations(state, seat, action, rng):
                with pytest.raises(IllegalMove) as info:
                    apply(state, who, bad)
                assert isinstance(info.value.code, str) and info.value.code

    state, _ = walk(preset, players, seed, moves, visit)
    if state.phase in ("deal", "over"):
        with pytest.raises(IllegalMove):
            apply(state, 0, {"type": "draw"})


# -- fuzzed actions ----------------------------------------------------------------------------------

CARDISH = st.one_of(
    st.sampled_from(CODES),
    st.sampled_from(["", "X", "10H", "jk", "3", "2", "K", "A", "3H ", "JK"]),
    st.integers(-3, 60),
    st.none(),
    st.booleans(),
)
JSONISH = st.recursive(
    st.one_of(CARDISH, st.text(max_size=4), st.floats(allow_nan=True)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8,
)
TYPES = ["draw", "take_pile", "meld", "add", "discard", "ask_go_out", "answer_go_out", "pass", "nope"]
FIELDS = ["with", "onto", "melds", "rank", "cards", "card", "yes", "extra"]
VALUES = {
    "with": st.one_of(st.lists(CARDISH, max_size=5), JSONISH),
    "onto": st.one_of(st.sampled_from(list("A23456789TJQK")), JSONISH),
    "melds": st.one_of(st.lists(st.lists(CARDISH, max_size=5), max_size=3), JSONISH),
    "rank": st.one_of(st.sampled_from(list("A23456789TJQK")), JSONISH),
    "cards": st.one_of(st.lists(CARDISH, max_size=5), JSONISH),
    "card": CARDISH,
    "yes": st.one_of(st.booleans(), JSONISH),
    "extra": JSONISH,
}


@st.composite
def fuzzed_action(draw):
    if draw(st.integers(0, 19)) == 0:
        return draw(JSONISH)
    action: dict[str, Any] = {"type": draw(st.sampled_from(TYPES))}
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=3, unique=True)):
        action[name] = draw(VALUES[name])
    return action


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=EXAMPLES * 15)
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 2**32 - 1),
    moves=st.integers(0, 150),
    actions=st.lists(fuzzed_action(), min_size=1, max_size=25),
    seats=st.lists(st.one_of(st.integers(-1, 6), st.none(), st.booleans(), st.text(max_size=2)), min_size=1, max_size=3),
)
def test_fuzzed_actions_raise_only_illegal_move(config, seed, moves, actions, seats):
    state, _ = walk(*config, seed, moves)
    frozen = orjson.dumps(state.to_json())
    for action in actions:
        for seat in [state.to_act, *seats]:
            try:
                after = apply(state, seat, action)
            except IllegalMove as e:
                assert e.code and isinstance(e.code, str)
            else:
                assert isinstance(after, State)
                assert all_cards(after) == pack_counter(state.rules) or not state.hands
    assert orjson.dumps(state.to_json()) == frozen


# -- whole games ----------------------------------------------------------------------------------------

PARTS = ("melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand")


@pytest.mark.parametrize("preset,players", CONFIGS)
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), max_hands=st.integers(1, 8), max_moves=st.integers(5, 400))
def test_every_game_ends_within_its_limits_and_scores_add_up(preset, players, seed, max_hands, max_moves):
    """Random play with the limits lowered (a house rule): the game ends at the target or at
    a limit, never later, and says which (docs/rules.md, "Limits")."""
    rules = resolve(preset, players, {**SHORT, "max_hands": max_hands, "max_moves_per_hand": max_moves})
    rng = random.Random(seed)
    record = play_game(rules, rng, random_policy(rng), max_moves=max_hands * max_moves)
    final = record.final
    assert final is not None and final.phase == "over"
    totals = [0] * rules.teams
    ends = [line for line in record.lines if "hand_end" in line]
    assert ends and record.lines[-1] == game_end_line(final.game_result)
    assert len(ends) <= max_hands
    moves_in_hand = record.moves_per_hand()
    for n, end in enumerate(ends, start=1):
        assert end["hand_end"] == n
        assert end["reason"] in ("went_out", "stock_exhausted", "red_three_last", "move_limit")
        assert moves_in_hand[n - 1] <= max_moves
        if end["reason"] == "move_limit":  # cut at its last move, and the game with it
            assert moves_in_hand[n - 1] == max_moves and n == len(ends)
        assert 0 <= end["by"] < rules.players
        assert [r["team"] for r in end["scores"]] == list(range(rules.teams))
        for r in end["scores"]:
            assert r["hand_total"] == sum(r[k] for k in PARTS)
            assert r["total"] == totals[r["team"]] + r["hand_total"]
            totals[r["team"]] = r["total"]
            assert r["penalties"] <= 0 and r["in_hand"] <= 0 and r["melds"] >= 0 and r["canasta_bonus"] >= 0
            mine = r["team"] == rules.team_of(end["by"])
            if end["reason"] == "went_out" and mine:
                assert r["going_out"] in (rules.scoring.going_out_bonus, rules.scoring.concealed_going_out_bonus)
            else:
                assert r["going_out"] == 0
        if n < len(ends):
            assert max(totals) < rules.scoring.target_score and end["reason"] != "move_limit"
    game = final.game_result
    if ends[-1]["reason"] == "move_limit":
        assert game["reason"] == "move_limit"
    elif max(totals) >= rules.scoring.target_score:
        assert game["reason"] == "target"
    else:
        assert game["reason"] == "hand_limit" and len(ends) == max_hands
    assert game["totals"] == totals == list(final.totals)
    best = max(totals)
    leaders = [t for t, v in enumerate(totals) if v == best]
    assert game["winner"] == (leaders[0] if len(leaders) == 1 else None)
    # the record replays to the same final state
    state = new_game(rules)
    for line in record.lines:
        if "deal" in line:
            state = deal(state, line["deck"], line["salt"], line["commitment"])
            assert state.dealer == line["dealer"]
            assert state.to_act == (line["dealer"] + 1) % rules.players
        elif "move" in line:
            state = apply(state, line["seat"], line["action"])
    assert state == final


# -- "able to go out" -------------------------------------------------------------------------------


def _goes_out_within(state: State, seat: int, depth: int) -> bool:
    """Some sequence of at most ``depth`` enumerated actions empties the hand (laying a red
    three is left out: its replacement card is unknown to the player)."""
    if depth == 0:
        return False
    for action in legal_actions(state, seat):
        if action["type"] == "ask_go_out" or (
            action["type"] == "meld" and any(c in ("3H", "3D") for g in action["melds"] for c in g)
        ):
            continue
        after = apply(state, seat, action)
        if after.hand_no == state.hand_no and after.phase in ("deal", "over"):
            if after.hand_result["reason"] == "went_out" and after.hand_result["by"] == seat:
                return True
        elif after.phase == "play" and after.to_act == seat and _goes_out_within(after, seat, depth - 1):
            return True
    return False


@pytest.mark.parametrize("preset,players", CONFIGS)
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1))
def test_able_to_go_out_is_never_missed(preset, players, seed):
    """R17 needs "able to go out" (asking while unable, a binding yes): whenever the
    enumerated actions go out within three moves, the engine's plan finds a way too."""
    from engine.moves import going_out_plan

    def visit(state, seat, actions, chosen, after):
        if state.phase == "play" and state.permission == -1 and sum(state.hands[seat]) <= 5:
            if _goes_out_within(state, seat, 3):
                assert going_out_plan(state, seat) is not None, (
                    f"missed: hand {sorted(hand(state, seat).elements())}, melds {state.melds[state.rules.team_of(seat)]}"
                )

    walk(preset, players, seed, 400, visit)


def test_views_share_nothing_with_the_state():
    """A view is its caller's to change: the state's results (shared by every view and by the
    service's cached copy of the state) stay as they were."""
    from engine import seat_view, spectator_view

    rules = resolve("classic", 4, SHORT)
    rng = random.Random(5)
    final = play_game(rules, rng, random_policy(rng), max_moves=50_000).final
    assert final is not None and final.hand_result is not None and final.game_result is not None
    before = orjson.dumps(final.to_json())
    for view in (seat_view(final, 0), spectator_view(final)):
        view["last_hand"]["scores"][0]["total"] = -1
        view["last_hand"]["scores"].clear()
        view["result"]["totals"].append(99)
        view["result"]["winner"] = 7
        view["totals"].append(1)
        view["hand_sizes"][0] = 50
    assert orjson.dumps(final.to_json()) == before


@pytest.mark.parametrize("preset,players", CONFIGS)
@PROPERTY
@given(seed=st.integers(0, 2**32 - 1))
def test_the_listed_plan_is_the_going_out_plan(preset, players, seed):
    """``legal_actions_and_plan`` answers what ``legal_actions`` and ``going_out_plan`` do,
    also where it did not search (the canasta bound rules a plan out)."""
    from engine.legal import legal_actions_and_plan
    from engine.moves import going_out_plan

    def visit(state, seat, actions, chosen, after):
        assert legal_actions_and_plan(state, seat) == (actions, going_out_plan(state, seat))

    walk(preset, players, seed, 400, visit)
