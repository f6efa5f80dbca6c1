"""The standard bot: a sound club game by rules of thumb, on the table's public knowledge.

It plays like :class:`~bots.greedy.Greedy` where greedy's advice is sound, and changes the
places where greedy loses the race (issue 15: greedy takes the pile far more often than a
club player, completes fewer canastas and goes out half as often):

* **pile play with memory**: the pile is public card by card, so a take is judged by what
  the pile brings (cards that fit our melds and pairs, wilds), not by its size; a small or
  junk pile is left alone.
* **safe discards with the known cards**: the next opponent's cards taken with the pile are
  public; a discard it is known to be able to take with counts as a near-certain feed.
* **blocking**: when every ordinary discard would feed a rich pile to the next opponent, a
  black three blocks it, or a wild freezes it (when we are behind on the pile: the next
  opponent can take it and we cannot match that).
* **tempo**: go out when the public score estimate (the table, the going-out bonus, the
  hands' cards, the known ones at their value) says going out wins the hand, and always near
  the end of the stock or with the opponents near going out; answer the partner's "may I go
  out?" by the same estimate.

Melding, canasta building and the partner's melds are greedy's (:class:`~bots.greedy.Greedy`
already adds to the side's melds and completes canastas first). Measured (BENCHMARKS.md):
77% against greedy in ``finnish-2p``; even in four-player ``finnish``, where these rules do
not beat greedy's. Fast: one pass over the legal actions with table look-ups (p99 of CPU per
decision ~0.2 ms).
"""

from __future__ import annotations

from typing import Any

from bots.greedy import Greedy, table_points
from bots.odds import WILD_KINDS, at_least
from bots.view import SeatView, rank_counts
from engine.cards import IS_BLACK_THREE, IS_RED_THREE, IS_WILD, RANK_OF, VALUE, parse_card
from engine.state import NOT_FROZEN

Action = dict[str, Any]

BLOCK_PILE = 6  # pile size from which feeding it is worth a black three or a wild
FREEZE_COST = 70.0  # what a wild discarded to freeze the pile costs us (its meld value and more)
TAKE_MIN_GAIN = 30.0  # points a take must bring, net of what it spends, to beat a stock draw
PILE_FIT = 14.0  # a pile card that fits our melds or pairs a rank we hold
PILE_WILD = 30.0  # a wild that comes with the pile
PILE_JUNK = 2.0  # any other pile card (it is a card in hand, some use, some cost)
OPEN_BONUS = 60.0  # taking the pile to open (the pile is frozen against an unopened side)
BLACK_THREE_KEEP = 10.0  # a black three kept for a pile worth blocking


def known_counts(v: SeatView, seat: int, rank: int) -> tuple[int, int]:
    """Naturals of ``rank`` and wilds that ``seat`` is known to hold (taken with the pile)."""
    nat = wild = 0
    for k in v.known_from_pile(seat):
        if IS_WILD[k]:
            wild += 1
        elif RANK_OF[k] == rank:
            nat += 1
    return nat, wild


def take_chance_known(v: SeatView, seat: int, rank: int, unseen: list[int]) -> float:
    """The chance that ``seat`` can take a pile topped by ``rank``: its known cards decide
    where they suffice; the rest of its hand is a sample of the unseen cards."""
    team = v.team_of(seat)
    frozen = v.pile_frozen_for(team)
    if not frozen and v.melds(team)[rank] is not None:
        return 1.0
    nat, wild = known_counts(v, seat, rank)
    hidden = max(v.hand_size_of(seat) - len(v.known_from_pile(seat)), 0)
    total = sum(unseen)
    good = sum(unseen[k] for k in range(52) if RANK_OF[k] == rank and not IS_WILD[k])
    pair = at_least(total, good, hidden, 2 - nat)
    if frozen:
        return pair
    one = at_least(total, good, hidden, 1 - nat)
    if wild:
        return one
    wilds = sum(unseen[k] for k in WILD_KINDS)
    return min(1.0, pair + (one - pair) * at_least(total - good, wilds, max(hidden - 1, 0), 1))


class Standard(Greedy):
    """Greedy's structure with a club player's pile play, memory and tempo."""

    name = "standard"
    late_stock = 20
    go_out_margin = -20  # going out a little behind still wins the race for the next hands
    take_min_gain = TAKE_MIN_GAIN
    block_pile = BLOCK_PILE
    go_out_stock = 10  # stock size from which going out is always taken

    # -- drawing ----------------------------------------------------------------------------
    def worth_taking(self, score: float) -> bool:
        return score >= self.take_min_gain

    def take_score(self, v: SeatView, a: Action) -> float:
        """What the pile brings (each card judged by our melds and hand), less what it spends."""
        memo = v.memo.get("pile_gain")
        if memo is None:
            memo = v.memo["pile_gain"] = self.pile_gain(v)
        used = [parse_card(c) for c in a.get("with", [])]
        wilds = sum(1 for k in used if IS_WILD[k])
        cost = wilds * (45.0 if v.pile_size <= 4 else 15.0)
        gain = memo + 10.0 * len(a.get("melds", []))
        if not v.opened(v.team):
            gain += OPEN_BONUS
        return gain - cost

    def pile_gain(self, v: SeatView) -> float:
        side = v.melds(v.team)
        counts = rank_counts(v.hand)
        gain = 0.0
        for k in v.pile[:-1] + v.pile_beside:
            if IS_WILD[k]:
                gain += PILE_WILD
            elif IS_RED_THREE[k]:
                gain += 100.0 if not v.rules.melding.red_threes_optional else PILE_JUNK
            elif IS_BLACK_THREE[k]:
                gain += PILE_JUNK
            elif side[RANK_OF[k]] is not None or counts[RANK_OF[k]] >= 1:
                gain += PILE_FIT + VALUE[k] * 0.2
            else:
                gain += PILE_JUNK
        top = v.pile_top
        if top >= 0:
            gain += PILE_FIT + VALUE[top] * 0.5
        return gain

    # -- going out --------------------------------------------------------------------------
    def want_go_out(self, v: SeatView) -> bool:
        if self.threat(v) or v.stock_size <= self.go_out_stock:
            return True
        ours: float = table_points(v, v.team) + v.rules.scoring.going_out_bonus
        ours -= self.in_hand_cost(v, v.partners)
        theirs = max(
            table_points(v, t) - self.in_hand_cost(v, [p for p in v.opponents if v.team_of(p) == t])
            for t in range(v.teams) if t != v.team
        )
        return ours - theirs >= self.go_out_margin

    @staticmethod
    def in_hand_cost(v: SeatView, seats: Any) -> float:
        """About 8 points a card in those hands, the known cards at their value."""
        cost = 0.0
        for p in seats:
            known = v.known_from_pile(p)
            cost += 8.0 * (v.hand_size_of(p) - len(known)) + sum(VALUE[k] for k in known)
        return cost

    def answer_yes(self, v: SeatView) -> bool:
        """Say yes when our side's table is worth the stop: its canastas are there and little is
        left in hand, or the opponents are about to go out."""
        if self.threat(v) or v.hand_size <= 2 or v.hand_value <= 50:
            return True
        return self.want_go_out(v) and v.hand_value <= 100

    # -- discarding -------------------------------------------------------------------------
    def discard_score(self, v: SeatView, kind: int, unseen: list[int]) -> float:
        if IS_WILD[kind]:
            return self.freeze_score(v, unseen)
        if IS_BLACK_THREE[kind]:
            # a block: spend it on a pile worth blocking, or late to shed it; else keep it
            return -40.0 if v.pile_size >= self.block_pile or self.late(v) else BLACK_THREE_KEEP
        return super().discard_score(v, kind, unseen)

    def freeze_score(self, v: SeatView, unseen: list[int]) -> float:
        """A wild discarded to freeze a rich pile the next opponent would take and we would
        not: worth it when every other discard feeds it; otherwise never."""
        nxt = v.next_opponent()
        if (nxt is None or v.pile_frozen_by != NOT_FROZEN or v.pile_size < self.block_pile
                or not v.rules.pile.discard_wild_freezes):
            return 1000.0
        mine = v.memo.get("our_take")
        if mine is None:
            mine = v.memo["our_take"] = self.our_pile_hold(v)
        if mine:
            return 1000.0  # not behind on the pile: our side can take it too
        return FREEZE_COST + (v.pile_size + 1) * self.pile_card * 0.5

    def our_pile_hold(self, v: SeatView) -> bool:
        """Our side holds a natural pair of some rank in hand: it could take a frozen pile."""
        return any(n >= 2 for n in rank_counts(v.hand)[3:])

    def danger(self, v: SeatView, kind: int, unseen: list[int]) -> float:
        nxt = v.next_opponent()
        if nxt is None:
            return 0.0
        team = v.team_of(nxt)
        chance = take_chance_known(v, nxt, RANK_OF[kind], unseen)
        if not v.opened(team):
            chance *= 0.5  # it must also reach its opening minimum
        return chance * ((v.pile_size + 1) * self.pile_card + 20)
