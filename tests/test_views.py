"""Hidden information: a seat's view and its events depend only on what the seat may see."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine.cards import counts, expand
from engine.state import State

CASES = [("classic", 4), ("finnish", 4), ("finnish-2p", 2), ("wiki", 6), ("norwegian", 5), ("bicycle", 4)]


def _scramble_hidden(s: State, seat: int, rng: random.Random) -> State:
    """Deal the cards ``seat`` cannot see (other hands, the stock) anew, keeping every size."""
    others = [p for p in range(s.rules.players) if p != seat]
    hidden = [k for p in others for k in expand(s.hands[p])] + list(s.stock)
    rng.shuffle(hidden)
    hands = list(s.hands)
    pos = 0
    for p in others:
        n = sum(s.hands[p])
        hands[p] = counts(hidden[pos:pos + n])
        pos += n
    deck = s.deck[: s.stock_pos] + tuple(hidden[pos:])
    return s._replace(hands=tuple(hands), deck=deck)


def _random_position(preset: str, players: int, seed: int, moves: int) -> State:
    rules = engine.resolve(preset, players)
    rng = random.Random(seed)
    s = engine.deal(engine.new_game(rules), *engine.shuffle(rules, rng)[:2])
    for _ in range(moves):
        if s.phase != "draw" and s.phase != "play" and s.phase != "answer":
            break
        s = engine.apply(s, s.to_act, rng.choice(engine.legal_actions(s, s.to_act)))
    return s


@pytest.mark.parametrize("preset,players", CASES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 120))
def test_seat_view_ignores_hidden_cards(preset, players, seed, moves):
    s = _random_position(preset, players, seed, moves)
    rng = random.Random(seed)
    for seat in range(players):
        other = _scramble_hidden(s, seat, rng)
        assert engine.seat_view(s, seat) == engine.seat_view(other, seat)
        assert engine.spectator_view(s) == engine.spectator_view(_scramble_hidden(s, -1, rng))


@pytest.mark.parametrize("preset,players", CASES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 100))
def test_events_show_drawn_cards_only_to_the_drawer(preset, players, seed, moves):
    s = _random_position(preset, players, seed, moves)
    if s.phase not in ("draw", "play", "answer"):
        return
    seat = s.to_act
    for action in engine.legal_actions(s, seat):
        after = engine.apply(s, seat, action)
        for viewer in [None, *range(players)]:
            event = engine.describe_move(s, after, seat, action, viewer)
            if viewer != seat:
                assert "cards" not in event
            # an event never names a card of a hand other than the viewer's, unless it was melded or laid
            public = set(map(str, action.get("with", []))) | {c for m in action.get("melds", []) for c in m}
            public |= set(action.get("cards", [])) | {action.get("card")} | set(event.get("red_threes_laid", []))
            named = set(event.get("cards", []))
            if viewer == seat:
                assert named <= set(engine.seat_view(after, seat)["hand"]) | public
