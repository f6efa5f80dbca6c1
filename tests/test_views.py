"""Hidden information: a seat's view and its events depend only on what the seat may see."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine.cards import IS_WILD, RANK_OF, THREE, counts, expand
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


# -- public knowledge: the pile's cards and the cards known to come with it -------------------
def _upcards(s: State, deck: list[str]) -> list[int]:
    """R1, read from the deck alone: after the deal, cards are turned face up until one is
    neither a wild nor a three."""
    rules = s.rules
    out = []
    for code in deck[rules.players * rules.dealing.hand_size:]:
        k = engine.parse_card(code)
        out.append(k)
        if not (IS_WILD[k] or RANK_OF[k] == THREE):
            break
    return out


def _within(part: list[int], whole: Counter[int]) -> bool:
    return not Counter(part) - whole


@pytest.mark.parametrize("preset,players", CASES + [("norwegian", 3), ("finnish-3p", 3)])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), moves=st.integers(20, 250))
def test_public_knowledge_holds_only_cards_laid_face_up(preset, players, seed, moves):
    """Every seat's view shows the pile card by card and the cards each seat took with it;
    both must come from cards laid face up this hand (the upcards, the discards), each at most
    once, and the pile must be the face-up cards laid on it since it was last taken, in order."""
    rules = engine.resolve(preset, players, {"target_score": 1500})
    rng = random.Random(seed)
    s = engine.new_game(rules)
    face_up: Counter[int] = Counter()
    pile: list[int] = []  # the pile as the table saw it built
    for _ in range(moves):
        if s.phase == "over":
            break
        if s.phase == "deal":
            deck, salt, _ = engine.shuffle(rules, rng)
            s = engine.deal(s, deck, salt)
            pile = _upcards(s, deck)
            face_up = Counter(pile)
        else:
            action = rng.choice(engine.legal_actions(s, s.to_act))
            after = engine.apply(s, s.to_act, action)
            if action["type"] == "discard":
                card = engine.parse_card(action["card"])
                face_up[card] += 1
                if not (IS_WILD[card] and rules.pile.discarded_wilds == "beside_pile"):
                    pile.append(card)
            elif action["type"] == "take_pile":
                pile = []
            s = after
            if s.phase not in ("draw", "play", "answer"):
                continue  # the hand ended: its scores show every hand anyway
        for seat in range(players):
            view = engine.seat_view(s, seat)
            assert [engine.parse_card(c) for c in view["pile"]["cards"]] == pile
            public = [engine.parse_card(c) for c in view["pile"]["cards"] + view["pile"]["beside"]]
            for p, known in enumerate(view["known_from_pile"]):
                held = [engine.parse_card(c) for c in known]
                assert _within(held, Counter(expand(s.hands[p]))), "known cards are in that hand"
                public += held
            assert _within(public, face_up), (public, face_up)
        assert engine.spectator_view(s)["known_from_pile"] == engine.seat_view(s, 0)["known_from_pile"]
