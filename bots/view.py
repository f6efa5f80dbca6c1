"""What one seat may see, and sampled worlds consistent with it.

Bots never receive a :class:`engine.State`. :func:`bots.choose` wraps the state in a
:class:`SeatView` that exposes only what ``seat_view`` shows a player: its own hand, every
meld and red three, the pile (every card: all were laid face up) and its freeze, the cards
each seat took with the pile and still holds, hand sizes, stock size, scores and the turn
flags. A search bot that needs whole states builds them with :func:`determinize`, which
fills every hidden place (the other hands' unknown cards, the stock) from the cards the seat
has not seen, shuffled by the bot's own rng. So a bot's choice cannot depend on a
hidden card: the wrapper is the only road to the state, and the test
``tests/worker/test_bots.py::test_no_peeking`` checks it by permuting hidden cards.
"""

from __future__ import annotations

import random
from functools import lru_cache
from operator import attrgetter
from typing import Any

from engine.cards import (
    IS_RED_THREE,
    JOKERS_PER_DECK,
    KINDS,
    SUITED_CARDS,
    TWO,
    WILDS,
    hand_value,
)
from engine.moves import going_out_plan
from engine.rules import RuleOptions
from engine.scoring import red_three_score
from engine.state import NOT_FROZEN, Meld, State

Action = dict[str, Any]

# SeatView.memo keys of the facts the view itself derives
PLAN, RANK_COUNTS, CANASTAS = "going_out_plan", "rank_counts", "canastas"


def _fact(path: str) -> Any:
    """A read-only property of :class:`SeatView`: the public fact at ``path`` of the held state
    (``"turn"``, ``"rules.players"``). One line a fact, and no Python frame per read
    (``operator.attrgetter``): rollouts read these thousands of times a decision."""
    return property(attrgetter(f"_s.{path}"))


class SeatView:
    """Read-only facts a seat may see. Holds the state privately: use only the properties.

    Why a wrapper and not a copy: bots read a view thousands of times per second inside
    rollouts; building a new record each time would cost more than the decision itself.
    """

    __slots__ = ("_s", "seat", "team", "memo")

    def __init__(self, state: State, seat: int) -> None:
        self._s = state
        self.seat = seat
        self.team = state.rules.team_of(seat)  # read by nearly every rule of a bot
        self.memo: dict[str, Any] = {}  # derived facts a bot computes once per decision

    # -- the table -------------------------------------------------------------------------
    rules: RuleOptions = _fact("rules")
    players: int = _fact("rules.players")
    teams: int = _fact("rules.teams")

    def team_of(self, seat: int) -> int:
        return self._s.rules.team_of(seat)

    @property
    def partners(self) -> tuple[int, ...]:
        return self._s.rules.partners(self.seat)

    @property
    def opponents(self) -> tuple[int, ...]:
        """Opposing seats in playing order after this seat (the next one first)."""
        rules = self._s.rules
        return _opponents(rules.players, rules.teams, self.seat)

    def next_opponent(self) -> int | None:
        """The seat that plays next, if it is an opponent (it is the one a discard feeds)."""
        nxt = (self.seat + 1) % self._s.rules.players
        return nxt if self._s.rules.team_of(nxt) != self.team else None

    phase: str = _fact("phase")
    turn: int = _fact("turn")
    to_act: int = _fact("to_act")
    totals: tuple[int, ...] = _fact("totals")
    hand_no: int = _fact("hand_no")
    moves: int = _fact("moves")

    # -- own hand --------------------------------------------------------------------------
    @property
    def hand(self) -> tuple[int, ...]:
        return self._s.hands[self.seat]

    @property
    def hand_size(self) -> int:
        return sum(self._s.hands[self.seat])

    def hand_size_of(self, seat: int) -> int:
        return sum(self._s.hands[seat])

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(sum(h) for h in self._s.hands)

    @property
    def hand_value(self) -> int:
        return hand_value(self._s.hands[self.seat])

    # -- public cards ----------------------------------------------------------------------
    stock_size: int = _fact("stock_size")

    @property
    def pile_size(self) -> int:
        """The cards a taker gets: the pile and any wilds laid beside it (R13)."""
        return len(self._s.pile) + len(self._s.pile_beside)

    @property
    def pile_top(self) -> int:
        return self._s.pile[-1] if self._s.pile else -1

    pile: tuple[int, ...] = _fact("pile")  # every card, bottom first (public: each was laid face up)
    pile_beside: tuple[int, ...] = _fact("pile_beside")

    def known_from_pile(self, seat: int) -> tuple[int, ...]:
        """Cards the table saw ``seat`` take with the pile and not yet meld or discard."""
        known = self._s.known_from_pile
        return known[seat] if known else ()

    pile_frozen_by: int = _fact("pile_frozen_by")
    pile_lock: int = _fact("pile_lock")

    def pile_frozen_for(self, team: int) -> bool:
        return self._s.pile_frozen_by != NOT_FROZEN or not self._s.opened(team)

    def melds(self, team: int) -> tuple[Meld | None, ...]:
        return self._s.melds[team]

    def red_threes(self, team: int) -> tuple[int, ...]:
        return self._s.red_threes[team]

    def opened(self, team: int) -> bool:
        return self._s.opened(team)

    def canastas(self, team: int) -> int:
        """``team``'s canastas; every side's counted once per view (bots ask several times)."""
        counts = self.memo.get(CANASTAS)
        if counts is None:
            s = self._s
            counts = self.memo[CANASTAS] = [s.canastas(t) for t in range(s.rules.teams)]
        count: int = counts[team]
        return count

    def red_three_score(self, team: int) -> int:
        """What ``team``'s laid red threes count now (R20: a bonus, or a debt while unopened)."""
        return red_three_score(self._s, team)

    def minimum(self, team: int) -> int:
        return self._s.minimums[team]

    def penalties(self, team: int) -> int:
        return self._s.penalties[team]

    # -- turn flags ------------------------------------------------------------------------
    def holds_no_red_three(self, seat: int) -> bool:
        return holds_no_red_three(self._s, seat)

    drawn: str = _fact("drawn")
    permission: int = _fact("permission")
    asked: bool = _fact("asked")
    turn_melded: bool = _fact("turn_melded")

    # -- derived, from visible facts only -------------------------------------------------
    def going_out_plan(self) -> list[Action] | None:
        """The engine's plan to go out from here; it reads only this seat's hand and melds.
        Searched once per view (a bot and the expert's candidates both ask), unless
        :meth:`knowing_plan` handed it over."""
        if PLAN not in self.memo:
            self.memo[PLAN] = going_out_plan(self._s, self.seat)
        plan: list[Action] | None = self.memo[PLAN]
        return plan

    def knowing_plan(self, plan: list[Action] | None) -> SeatView:
        """This view, told the answer of :meth:`going_out_plan` (``engine.legal_actions_and_plan``
        searched it while listing the actions): a rollout does not search twice."""
        self.memo[PLAN] = plan
        return self

    def hand_rank_counts(self) -> tuple[int, ...]:
        """:func:`rank_counts` of this hand, counted once per view: the discard and meld scores
        read it for every action."""
        counts = self.memo.get(RANK_COUNTS)
        if counts is None:
            counts = self.memo[RANK_COUNTS] = tuple(rank_counts(self._s.hands[self.seat]))
        return counts

    def unseen_counts(self) -> list[int]:
        """Per kind: copies this seat has not seen (other hands' unknown cards, the stock)."""
        if "unseen" not in self.memo:
            self.memo["unseen"] = unseen_counts(self._s, self.seat)
        return self.memo["unseen"]


@lru_cache(maxsize=256)
def _opponents(players: int, teams: int, seat: int) -> tuple[int, ...]:
    """Cached by the seating's numbers, not by the rules (hashing them costs more than this).
    Seats sit in turn by team: ``RuleOptions.team_of`` is the seat modulo the teams."""
    return tuple((seat + k) % players for k in range(1, players) if (seat + k) % players % teams != seat % teams)


def unseen_counts(s: State, seat: int) -> list[int]:
    """The pack minus what ``seat`` sees: its hand, every meld, laid red threes, the pile, the
    wilds beside the pile, and the cards other seats are known to hold (``known_from_pile``)."""
    rules = s.rules
    left = [copies - held for copies, held in zip(_pack(rules.dealing.decks), s.hands[seat], strict=True)]
    for side in s.melds:
        for m in side:
            if m is not None:
                for k in m.cards:
                    left[k] -= 1
    for laid in s.red_threes:
        for k in laid:
            left[k] -= 1
    for k in s.pile:
        left[k] -= 1
    for k in s.pile_beside:
        left[k] -= 1
    if s.known_from_pile:
        for p, known in enumerate(s.known_from_pile):
            if p != seat:
                for k in known:
                    left[k] -= 1
    return [n if n > 0 else 0 for n in left]


@lru_cache(maxsize=8)
def _pack(decks: int) -> tuple[int, ...]:
    """Copies per kind in a pack of ``decks`` decks."""
    return (decks,) * SUITED_CARDS + (JOKERS_PER_DECK * decks,)


def holds_no_red_three(s: State, seat: int) -> bool:
    """Where red threes must be laid (R2, R14), a seat that has had its first turn has laid any
    it was dealt or drew: none of the unseen ones is in its hand (a state without turn flags
    counts every seat as past it)."""
    return not s.rules.melding.red_threes_optional and (not s.first_turn_done or s.first_turn_done[seat])


def determinize(s: State, seat: int, rng: random.Random) -> State:
    """A whole state that ``seat`` cannot tell from ``s``: hidden cards dealt again at random.

    Only :func:`unseen_counts` and public facts are read, never a hidden card. The pile is
    public (every card in it was laid face up) and stays as it is; the cards the table saw
    another seat take with the pile stay in that seat's hand (``known_from_pile``); the rest
    of the other hands and the stock are dealt from the unseen cards. Red threes are not put
    in the hands of seats that have had their first turn (they would have been laid).
    """
    rules = s.rules
    pool_counts = unseen_counts(s, seat)
    others = [p for p in range(rules.players) if p != seat]
    known = s.known_from_pile
    placed_hand: dict[int, list[int]] = {p: list(known[p]) if known else [] for p in others}
    reds: list[int] = []
    pool: list[int] = []
    for k, n in enumerate(pool_counts):
        if n:
            (reds if IS_RED_THREE[k] and not rules.melding.red_threes_optional else pool).extend([k] * n)
    rng.shuffle(pool)
    sizes = {p: sum(s.hands[p]) for p in others}
    stock_n = s.stock_size
    # red threes go to the stock or to hands that may still hold them
    holders = [p for p in others if not holds_no_red_three(s, p)]
    slots = [("stock", -1)] * stock_n + [
        ("hand", p) for p in holders for _ in range(sizes[p] - len(placed_hand[p]))
    ]
    placed_stock: list[int] = []
    if reds:
        picks = rng.sample(range(len(slots)), min(len(reds), len(slots))) if slots else []
        for k, i in zip(reds, picks, strict=False):
            where, p = slots[i]
            (placed_stock if where == "stock" else placed_hand[p]).append(k)
        pool.extend(reds[len(picks):])  # nowhere plausible: anywhere
    # fill: other hands, then the stock
    pos = 0
    hands = list(s.hands)
    for p in others:
        need = max(sizes[p] - len(placed_hand[p]), 0)
        cards = placed_hand[p] + pool[pos:pos + need]
        pos += need
        counts = [0] * KINDS
        for k in cards:
            counts[k] += 1
        hands[p] = tuple(counts)
    stock = placed_stock + pool[pos:]
    rng.shuffle(stock)
    return s._replace(hands=tuple(hands), deck=tuple(stock[:stock_n]), stock_pos=0)


def rank_counts(hand: tuple[int, ...]) -> list[int]:
    """Naturals per rank index (0..12); wilds and threes are counted under their own ranks
    (so twos, all wild, count none)."""
    out = [hand[b] + hand[b + 1] + hand[b + 2] + hand[b + 3] for b in range(0, SUITED_CARDS, 4)]
    out[TWO] = 0
    return out


def wild_count(hand: tuple[int, ...]) -> int:
    return sum(hand[k] for k in WILDS)
