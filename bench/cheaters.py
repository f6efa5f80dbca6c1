"""Cheating players, to measure the fair-play audit (bench and tests only: the service never
imports this package, and no bot name reaches them).

Each cheater is the expert's search (:class:`bots.expert.Expert`: its candidates, standard-bot
rollouts, its leaf evaluation) run in worlds that carry cards the seat should not see:

- ``stock``: the next stock card (a);
- ``partner``: the partner's hand (b);
- ``opponent``: the next opponent's hand, the one its discards feed (c);
- ``all``: every other hand, at a fraction ``f`` of its decisions, else fair worlds (d).

A leaked hand is put into the world through the sampler's own door: the state handed to
:func:`bots.view.determinize` says the table "knows" every card of it (``known_from_pile``),
so the sampler deals the rest as it always does. Every decision is searched (the expert's
distilled judgment, which sees no worlds, would hide the leak).
"""

from __future__ import annotations

import random
from typing import Any

from bots.expert import Expert
from bots.simulate import Policy
from bots.standard import Standard
from bots.view import SeatView, determinize, holds_no_red_three
from engine.cards import IS_RED_THREE, KINDS
from engine.legal import legal_actions
from engine.moves import apply
from engine.rules import RuleOptions
from engine.state import State

LEAKS = ("stock", "partner", "opponent", "all")
WORLDS = 8  # worlds a decision
CANDIDATES = 4
HORIZON = 4  # a full round: the partner's turn is in the look-ahead


def _cards(hand: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(k for k in range(KINDS) for _ in range(hand[k]))


def shown_seats(rules: RuleOptions, seat: int, leak: str) -> set[int]:
    """The seats whose hands a leak of ``leak`` shows ``seat`` (none for the stock)."""
    if leak == "partner":
        return set(rules.partners(seat))
    if leak == "opponent":
        return {(seat + 1) % rules.players}  # the next seat: the one its discards feed
    if leak == "all":
        return set(range(rules.players)) - {seat}
    return set()


def leaked_world(state: State, seat: int, leak: str | None, rng: random.Random) -> State:
    """A sampled world in which the ``leak`` is true (None: a fair world)."""
    if leak in ("partner", "opponent", "all"):
        world = determinize(told(state, seat, leak), seat, rng)
        return world._replace(known_from_pile=state.known_from_pile)
    world = determinize(state, seat, rng)
    if leak == "stock" and state.stock_size and world.deck:
        world = with_stock_top(world, (state.deck[state.stock_pos],), seat)
    return world


def with_stock_top(world: State, top: tuple[int, ...], seat: int) -> State:
    """``world`` with its stock starting with ``top``: each card is swapped in from where the
    sampler put it (further down the stock, or another seat's hidden cards); a card that
    cannot be placed (a red three that a hand may not hold) leaves the rest as dealt."""
    deck = list(world.deck)
    hands = list(world.hands)
    known = world.known_from_pile or ((),) * world.rules.players
    for i, card in enumerate(top[:len(deck)]):
        if deck[i] == card:
            continue
        j = next((j for j in range(i + 1, len(deck)) if deck[j] == card), None)
        if j is not None:
            deck[i], deck[j] = deck[j], deck[i]
            continue
        out = deck[i]
        for p, hand in enumerate(hands):
            if p == seat or hand[card] <= known[p].count(card):
                continue
            if IS_RED_THREE[out] and holds_no_red_three(world, p):
                continue
            counts = list(hand)
            counts[card] -= 1
            counts[out] += 1
            hands[p] = tuple(counts)
            deck[i] = card
            break
        else:
            break
    return world._replace(deck=tuple(deck), hands=tuple(hands))


class Cheater:
    """The expert's search in leaked worlds; ``fraction`` of the decisions leak (the rest are fair)."""

    def __init__(self, leak: str, fraction: float = 1.0, worlds: int = WORLDS) -> None:
        if leak not in LEAKS:
            raise ValueError(f"unknown leak {leak!r}; leaks: {', '.join(LEAKS)}")
        self.leak = leak
        self.fraction = fraction
        self.worlds = worlds
        self.search = Expert(rollout=Standard(), horizon=HORIZON, max_candidates=CANDIDATES)

    def choose(self, state: State, seat: int, actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
        if len(actions) == 1:
            return actions[0]
        v = SeatView(state, seat)
        default = self.search.greedy.choose(v, actions, rng)
        candidates = self.search.candidates(v, actions, default)
        if len(candidates) <= 1:
            return default
        leak = self.leak if rng.random() < self.fraction else None
        totals = [0.0] * len(candidates)
        for _ in range(self.worlds):
            world = leaked_world(state, seat, leak, rng)
            seed = rng.getrandbits(32)
            for i, a in enumerate(candidates):
                value = self.search.rollout(world, seat, a, random.Random(seed))
                totals[i] += value if value is not None else -1e9
        best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
        return candidates[best]

    def policy(self, rng: random.Random) -> Policy:
        return lambda state, seat, actions: self.choose(state, seat, actions, rng)


def feeds(state: State, seat: int, discard: dict[str, Any]) -> bool:
    """Would this discard let the next seat take the pile (with the cards it truly holds)?"""
    after = apply(state, seat, discard)
    nxt = (seat + 1) % state.rules.players
    if after.phase != "draw" or after.to_act != nxt:  # the hand ended: nothing to feed
        return False
    return any(a["type"] == "take_pile" for a in legal_actions(after, nxt))


class Deliberate(Standard):
    """The standard bot told one hidden hand, using it as a person who saw it would, on the
    decisions where that hand decides the most (not through a search, whose own noise hid the
    leak: with the partner's hand, the search's choice changed as often as with another seed).

    The leaked hand comes in through the view's own door for cards the table knows a seat
    holds (``known_from_pile``), so the bot reads it wherever it reads known cards:

    - the cards left unseen (every take chance it estimates is over fewer, truer cards: with
      the partner's hand known, what the next opponent may hold is narrower);
    - the next opponent's take chance (its cards decide, not a sample) and each hand's cost
      when a side goes out (the partner's or the opponent's cards at their value, not about
      8 points a card).

    ``opponent`` (c) also never discards a card that lets that opponent take the pile when
    another discard would not.
    """

    def __init__(self, leak: str) -> None:
        if leak not in ("partner", "opponent"):
            raise ValueError(f"a deliberate cheater sees the partner's or the next opponent's hand, not {leak!r}")
        super().__init__()
        self.leak = leak

    def play(self, state: State, seat: int, actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
        if len(actions) == 1:
            return actions[0]
        v = SeatView(told(state, seat, self.leak), seat)
        choice = self.choose(v, actions, rng)
        if self.leak == "opponent" and choice["type"] == "discard" and feeds(state, seat, choice):
            safe = [a for a in actions if a["type"] == "discard" and not feeds(state, seat, a)]
            if safe:
                choice = self.choose(v, safe, rng)
        return choice

    def policy(self, rng: random.Random) -> Policy:
        return lambda state, seat, actions: self.play(state, seat, actions, rng)


def told(state: State, seat: int, leak: str) -> State:
    """``state`` in which the table "knows" every card of the hands a leak of ``leak`` shows ``seat``."""
    rules = state.rules
    shown = shown_seats(rules, seat, leak)
    known = state.known_from_pile or ((),) * rules.players
    return state._replace(known_from_pile=tuple(
        _cards(state.hands[p]) if p in shown else known[p] for p in range(rules.players)))
