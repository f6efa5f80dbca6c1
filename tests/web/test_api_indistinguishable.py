"""Fair play as a property: a seat cannot tell apart two games that differ only in cards it
cannot see.

For a seat S, two games are dealt (through the service, from decks this test chooses) whose
decks differ only in places S cannot see: the other hands and the stock (the pile is public:
every card in it was turned or discarded face up). Both are played in lockstep: at each step the seat to act plays an action
legal in both games (S's legal actions must be the same in both: it is asserted). Before
every step S asks the service everything it can ask, through the functions the HTTP
handlers call: its view, a dry run of each of its legal actions and of a few illegal ones,
a real illegal move (the error), a hint from every bot, the events rendered for it, and the
game log. The answers must be byte for byte the same (orjson) in both games, until S
legitimately learns a differing card: the facts S is entitled to (its hand, the table, the
sizes of everything: :func:`entitled`, read from the engine states, not from any answer)
differ, for instance after S draws or takes the pile, or a red three is laid; or until the
hand ends (its scores reveal every hand: the run stops there).

Three things differ between the two games by construction and are replaced before the
comparison: the game id, the event ids (Redis stream ids, times of day) and the deck
commitment (a salted SHA-256 of the deck, which differs for two decks by design: that is
how it hides the deck; both games are given the same salt, and the commitment is replaced
by a placeholder). Expert hints are thought with a rollout cap instead of a wall-clock
budget, which would make them depend on the machine's speed, not on the cards.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import engine
import service
from bots import NAMES as BOTS
from bots import Budget
from engine.cards import CODES, IS_RED_THREE
from service.config import Settings
from service.errors import ServiceError
from service.store import Store
from web.hub import Listener, deliver
from web.problems import service_problem

SALT = "5" * 32  # both decks of an example are committed with this salt
HINT_BUDGET = Budget(ms=60_000, rollouts=8)  # a cap, not the clock: the expert is repeatable
MAX_STEPS = 70  # moves per example (a hand lasts longer; most runs stop at a legitimate difference)
PRESETS = [("classic", 4), ("finnish", 4), ("bicycle", 4), ("finnish-2p", 2), ("finnish-3p", 3),
           ("norwegian", 3), ("wiki", 2)]
FIRST_TURN_RED_THREES = {"finnish", "bicycle", "finnish-2p", "finnish-3p"}  # dealt red threes laid later


# -- what S is entitled to know --------------------------------------------------------------
def entitled(s: engine.State, seat: int) -> tuple[Any, ...]:
    """Everything ``seat`` may know of ``s``: its hand, the table (melds, red threes, the whole
    pile (each card was laid face up) and its freeze, the wilds beside it, the stock's size,
    the hands' sizes, the cards everyone saw a seat take with the pile) and the turn's facts.
    Not the other hands' other cards, nor the stock."""
    return (s.phase, s.hand_no, s.dealer, s.to_act, s.turn, s.moves, s.totals, s.hands[seat],
            tuple(sum(h) for h in s.hands), s.stock_size, s.pile, s.pile_beside, s.known_from_pile,
            s.pile_frozen_by,
            s.pile_lock, s.melds, s.red_threes, s.minimums, s.melded, s.first_turn_done, s.penalties,
            s.drawn, s.permission, s.asked, s.turn_melded, s.turn_canasta)


# -- the two decks -------------------------------------------------------------------------
def hidden_positions(rules: engine.RuleOptions, deck: list[str], seat: int) -> list[int]:
    """Deck positions ``seat`` cannot see once dealt. ``engine.deal`` gives card i to seat
    i % players (the last seat deals the first hand), then turns the upcards face up (R1: all
    of them, also those that stay under the top); the rest is the stock."""
    state = engine.deal(engine.new_game(rules), deck, SALT)
    dealt = rules.players * rules.dealing.hand_size
    others = [i for i in range(dealt) if i % rules.players != seat]
    return others + list(range(state.stock_pos, len(deck)))


def other_deck(rules: engine.RuleOptions, deck: list[str], seat: int, swaps: list[tuple[int, int]],
               move_red_threes: bool) -> list[str]:
    """``deck`` with pairs of hidden positions swapped; red threes move only when
    ``move_red_threes``."""
    hidden = hidden_positions(rules, deck, seat)
    out = list(deck)
    for a, b in swaps:
        i, j = hidden[a % len(hidden)], hidden[b % len(hidden)]
        if not move_red_threes and (IS_RED_THREE[engine.parse_card(out[i])] or IS_RED_THREE[engine.parse_card(out[j])]):
            continue
        out[i], out[j] = out[j], out[i]
    return out


# -- the two games -------------------------------------------------------------------------
class Twin:
    """One of the two games, created through the service from a chosen deck."""

    def __init__(self, store: Store, cfg: Settings, preset: str, players: int, deck: list[str]) -> None:
        body = {"preset": preset, "players": players, "seats": [{"name": f"p{i}"} for i in range(players)]}
        created, _ = service.create_game(store, cfg, body, deck_source=lambda rules, hand: (list(deck), SALT))
        self.store, self.cfg = store, cfg
        self.id: str = created["id"]
        self.tokens = {s["seat"]: s["token"] for s in created["seats"]}
        self.commitment: str = created["view"]["commitment"]

    def render(self, value: Any) -> bytes:
        """``value`` as bytes, the game id and the deck commitment replaced by placeholders."""
        blob = orjson.dumps(value).replace(self.id.encode(), b"<game>")
        return blob.replace(self.commitment.encode(), b"<commitment>")

    def game(self) -> service.Game:
        return service.load_game(self.store, self.id)

    def move(self, seat: int, action: dict[str, Any], version: int, dry_run: bool = False) -> Any:
        try:
            return service.apply_move(self.store, self.cfg,
                                      service.MoveRequest(self.id, seat, action, version, dry_run=dry_run)).body
        except ServiceError as e:
            return service_problem(e).to_dict()


def _answer(call: Any) -> Any:
    try:
        return call()
    except ServiceError as e:
        return service_problem(e).to_dict()


def illegal_actions(s: engine.State, seat: int) -> list[dict[str, Any]]:
    """A few actions ``seat`` may try that are refused (or legal after all: then compared too)."""
    hand = s.hands[seat]
    missing = next(c for c in CODES if not hand[engine.parse_card(c)])
    held = [c for c in CODES if hand[engine.parse_card(c)]]
    return [
        {"type": "discard", "card": missing},
        {"type": "draw"} if s.phase == "play" else {"type": "meld", "melds": [held[:3]]},
        {"type": "take_pile", "with": held[:2]},
        {"type": "pass"},
        {"type": "answer_go_out", "yes": True},
        {"type": "add", "rank": "K", "cards": held[:1]},
    ]


def answers(twin: Twin, seat: int, legal: list[dict[str, Any]]) -> list[tuple[str, bytes]]:
    """Everything ``seat`` can ask now, as bytes, with the game's own id, event ids and deck
    commitment replaced (see the module docstring)."""
    game = twin.game()
    assert game.state is not None
    s = game.state
    token = twin.tokens[seat]
    out: list[tuple[str, Any]] = [("view", service.game_view(game, seat, with_rules=True))]
    tries = legal + illegal_actions(s, seat) if s.to_act == seat else [{"type": "draw"}]
    for action in tries:
        out.append((f"dry run {action}", twin.move(seat, action, game.version, dry_run=True)))
    out.append(("stale dry run", twin.move(seat, tries[0], game.version - 1, dry_run=True)))
    out.append(("illegal move", twin.move(seat, illegal_actions(s, seat)[0], game.version)))
    for bot in BOTS:
        out.append((f"hint {bot}", _answer(lambda bot=bot: service.hint(twin.store, twin.cfg, twin.id, token, bot,
                                                                        budget=HINT_BUDGET))))
    listener = Listener(twin.id, seat, "0-0")  # what the event hub hands an open stream of the seat
    deliver([(e.id, e.fields) for e in twin.store.events_after(twin.id, "0-0", 100_000)], [listener])
    events = [body for _, body in listener.take()]
    for n, event in enumerate(events):
        event["id"] = f"event-{n}"
    out.append(("events", events))
    out.append(("log", _answer(lambda: service.read_log(twin.store, twin.id))))
    return [(what, twin.render(value)) for what, value in out]


def assert_same(a: list[tuple[str, bytes]], b: list[tuple[str, bytes]], step: int) -> None:
    assert [w for w, _ in a] == [w for w, _ in b], f"step {step}: different requests"
    for (what, x), (_, y) in zip(a, b, strict=True):
        if x != y:
            at = next(i for i in range(min(len(x), len(y))) if x[i] != y[i]) if x[:len(y)] != y[:len(x)] else min(len(x), len(y))
            raise AssertionError(f"step {step}: the seat can tell the games apart by its {what}:\n"
                                 f"  game A: ...{x[max(0, at - 160):at + 120].decode()}...\n"
                                 f"  game B: ...{y[max(0, at - 160):at + 120].decode()}...")


def canonical(actions: list[dict[str, Any]]) -> list[bytes]:
    return sorted(orjson.dumps(a, option=orjson.OPT_SORT_KEYS) for a in actions)


def play_in_lockstep(store: Store, cfg: Settings, preset: str, players: int, deck_a: list[str],
                     deck_b: list[str], seat: int, rng: random.Random) -> int:
    """Play both games until the seat may tell them apart; returns the steps compared."""
    a = Twin(store, cfg, preset, players, deck_a)
    b = Twin(store, cfg, preset, players, deck_b)
    moved: tuple[Any, Any] | None = None  # the seat's last real move: both answers
    for step in range(MAX_STEPS):
        ga, gb = a.game(), b.game()
        sa, sb = ga.state, gb.state
        assert sa is not None and sb is not None
        if entitled(sa, seat) != entitled(sb, seat):
            return step  # the seat has legitimately seen a card that differs
        if sa.phase not in ("draw", "play", "answer") or sa.hand_no != 1:
            return step  # the hand ended: its scores show every hand
        if moved is not None:
            assert_same([("move answer", a.render(moved[0]))], [("move answer", b.render(moved[1]))], step)
        actor = sa.to_act
        legal_a, legal_b = engine.legal_actions(sa, actor), engine.legal_actions(sb, actor)
        if actor == seat:
            assert canonical(legal_a) == canonical(legal_b), f"step {step}: the seat's legal actions differ"
        assert_same(answers(a, seat, legal_a if actor == seat else []),
                    answers(b, seat, legal_b if actor == seat else []), step)
        common = [x for x in legal_a if x in legal_b]
        if not common:
            return step  # another seat's hidden hand allows different moves: nothing to play in both
        action = rng.choice(common)
        answer_a = a.move(actor, action, ga.version)
        answer_b = b.move(actor, action, gb.version)
        assert answer_a.get("version") == ga.version + 1 and answer_b.get("version") == gb.version + 1, (answer_a, answer_b)
        moved = (answer_a, answer_b) if actor == seat else None
    return MAX_STEPS


@st.composite
def twin_decks(draw: st.DrawFn) -> tuple[str, int, int, list[str], list[str]]:
    preset, players = draw(st.sampled_from(PRESETS), label="preset")
    rules = engine.resolve(preset, players)
    seat = draw(st.integers(0, players - 1), label="seat")
    deck, _, _ = engine.shuffle(rules, random.Random(draw(st.integers(0, 2**32), label="deck")))
    swaps = draw(st.lists(st.tuples(st.integers(0, 10**4), st.integers(0, 10**4)), min_size=1, max_size=8),
                 label="swaps")
    move_reds = preset in FIRST_TURN_RED_THREES and draw(st.booleans(), label="move red threes")
    if draw(st.booleans(), label="swap the next stock card"):  # what a dry-run draw would show
        hidden = hidden_positions(rules, deck, seat)
        stock_top = engine.deal(engine.new_game(rules), deck, SALT).stock_pos
        swaps.insert(0, (hidden.index(stock_top), swaps[0][1]))
    other = other_deck(rules, deck, seat, swaps, move_reds)
    return preset, players, seat, deck, other


def _check(store: Store, cfg: Settings, case: tuple[str, int, int, list[str], list[str]], seed: int) -> None:
    preset, players, seat, deck_a, deck_b = case
    assume(deck_a != deck_b)
    rules = engine.resolve(preset, players)
    dealt_a = engine.deal(engine.new_game(rules), deck_a, SALT)
    dealt_b = engine.deal(engine.new_game(rules), deck_b, SALT)
    assume(entitled(dealt_a, seat) == entitled(dealt_b, seat))  # e.g. a swapped card froze the pile
    play_in_lockstep(store, cfg, preset, players, deck_a, deck_b, seat, random.Random(seed))


FAST = hsettings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])


@FAST
@given(case=twin_decks(), seed=st.integers(0, 2**16))
def test_a_seat_cannot_tell_hidden_cards_apart(store: Store, settings: Settings, case: Any, seed: int) -> None:
    _check(store, settings, case, seed)


@pytest.mark.slow
@hsettings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(case=twin_decks(), seed=st.integers(0, 2**32))
def test_a_seat_cannot_tell_hidden_cards_apart_soak(store: Store, settings: Settings, case: Any, seed: int) -> None:
    _check(store, settings, case, seed)
