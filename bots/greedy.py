"""The greedy bot: one action at a time, by hand-written rules of thumb.

Why rules and not search: it must be fast (the expert runs it thousands of times per
decision inside rollouts) and explainable. Each rule below names the Canasta advice it
encodes: open as soon as you can, take a rich pile, build canastas, keep a natural pair
when the pile is frozen, never feed the opponents' melds, discard black threes and dead
singletons, dump high cards late, go out when the hand is won or the opponents threaten.
"""

from __future__ import annotations

import random
from typing import Any

from bots.odds import take_chance
from bots.view import SeatView, wild_count
from engine.cards import (
    IS_BLACK_THREE,
    IS_RED_THREE,
    IS_WILD,
    RANK_OF,
    VALUE,
    parse_card,
    parse_rank,
)
from engine.state import GRANTED, Meld

Action = dict[str, Any]

IN_HAND_CARD = 8  # the average cost of a card left in a hand
CANASTA_ADD = 45.0  # an add that completes a canasta: above every other meld or add once open


def table_points(v: SeatView, team: int) -> int:
    """What ``team`` has on the table now: meld cards, canasta bonuses, red threes."""
    rules = v.rules
    total = 0
    for m in v.melds(team):
        if m is None:
            continue
        total += m.value
        if m.is_canasta(rules):
            total += rules.scoring.natural_canasta_bonus if m.is_natural() else rules.scoring.mixed_canasta_bonus
    return total + v.red_three_score(team)


class Greedy:
    """Stateless: every decision is a function of the seat view and the legal actions."""

    name = "greedy"
    # Tunable weights, in points; instance attributes so that tournaments can compare variants.
    pile_card = 12  # what one pile card given to the opponents is worth to them
    pair_keep = 14  # a natural pair held back (it can take a frozen pile)
    triple_keep = 18  # three or more of a rank not yet melded
    melded_rank_keep = 10  # a card that fits our side's meld
    late_stock = 16  # stock size from which a hand is "late"
    go_out_margin = 0  # the estimated lead that makes going out worth it
    wild_add = 12.0  # adding a wild that does not complete a canasta, early in a hand
    early_shed = 0.15  # a discard's points count this much toward shedding it, early in a hand
    late_shed = 0.6  # and late, when they would count against us

    def __init__(self, **weights: float) -> None:
        for name, value in weights.items():
            if not hasattr(type(self), name):
                raise ValueError(f"unknown greedy weight {name!r}")
            setattr(self, name, value)

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        if len(actions) == 1:
            return actions[0]
        phase = v.phase
        if phase == "answer":
            return {"type": "answer_go_out", "yes": self.answer_yes(v)}
        if phase == "draw":
            return self.draw_phase(v, actions)
        return self.play_phase(v, actions, rng)

    # -- situation --------------------------------------------------------------------------
    @staticmethod
    def threat(v: SeatView) -> bool:
        """An opposing side can go out soon: it has its canastas (or one short) and a short hand."""
        if "threat" in v.memo:
            return v.memo["threat"]
        v.memo["threat"] = Greedy._threat(v)
        return v.memo["threat"]

    @staticmethod
    def _threat(v: SeatView) -> bool:
        need = v.rules.going_out.canastas_to_go_out
        for seat in v.opponents:
            if v.canastas(v.team_of(seat)) >= need - (1 if need > 1 else 0) and v.hand_size_of(seat) <= 5:
                return True
        return False

    def late(self, v: SeatView) -> bool:
        late = v.memo.get("late")
        if late is None:
            late = v.memo["late"] = v.stock_size <= self.late_stock or self.threat(v)
        return late

    # -- answering "may I go out?" ----------------------------------------------------------
    def answer_yes(self, v: SeatView) -> bool:
        """Yes when our side loses little by stopping now: a light hand, a late hand, a lead."""
        if v.hand_size <= 2 or v.hand_value <= 40 or self.late(v):
            return True
        me, best_opp = v.totals[v.team], max(v.totals[t] for t in range(v.teams) if t != v.team)
        return me >= best_opp + 1000 and v.hand_value <= 90

    # -- drawing ----------------------------------------------------------------------------
    def draw_phase(self, v: SeatView, actions: list[Action]) -> Action:
        takes = [a for a in actions if a["type"] == "take_pile"]
        if takes:
            best = max(takes, key=lambda a: self.take_score(v, a))
            if self.worth_taking(self.take_score(v, best)) or not any(a["type"] == "draw" for a in actions):
                return best
        for kind in ("draw", "pass"):
            for a in actions:
                if a["type"] == kind:
                    return a
        return actions[0]

    def worth_taking(self, score: float) -> bool:
        """Whether a take of :meth:`take_score` ``score`` beats drawing (when both may be done)."""
        return score > 0

    def take_score(self, v: SeatView, a: Action) -> float:
        """A rich pile is worth the cards it brings; a wild spent on a small pile is not.
        (A method, not a static one: the standard bot's judges by its own measures.)"""
        used = [parse_card(c) for c in a.get("with", [])]
        wilds = sum(1 for k in used if IS_WILD[k])
        gain = v.pile_size * 8 + 10 * len(a.get("melds", []))
        cost = wilds * (40 if v.pile_size <= 3 else 12) + len(used)
        return gain - cost

    # -- playing ----------------------------------------------------------------------------
    @staticmethod
    def plan_in_reach(v: SeatView) -> list[Action] | None:
        """The engine's plan to go out, looked for only while our side is at most one canasta
        short of going out (a plan may complete that one; the search costs)."""
        if v.canastas(v.team) + 1 < v.rules.going_out.canastas_to_go_out:
            return None
        return v.going_out_plan()

    def play_phase(self, v: SeatView, actions: list[Action], rng: random.Random) -> Action:
        plan = self.plan_in_reach(v)
        if plan and (v.permission == GRANTED or self.want_go_out(v)):
            if v.permission != GRANTED and self.want_ask(v) and {"type": "ask_go_out"} in actions:
                return {"type": "ask_go_out"}
            if plan[0] in actions:
                return plan[0]
        best, best_score = None, 0.0
        for a in actions:
            if a["type"] in ("meld", "add"):
                score = self.meld_score(v, a)
                if score > best_score:
                    best, best_score = a, score
        if best is not None:
            return best
        discards = [a for a in actions if a["type"] == "discard"]
        if discards:
            unseen = v.unseen_counts()
            return min(discards, key=lambda a: (self.discard_score(v, parse_card(a["card"]), unseen), a["card"]))
        return rng.choice(actions)

    def want_go_out(self, v: SeatView) -> bool:
        """Go out when it locks in a lead, or when waiting risks more than it can win.

        The estimate is public: meld points, canasta bonuses and red threes on the table,
        the going-out bonus, and about 8 points against each card still in hand.
        """
        if self.threat(v) or v.stock_size <= 8:
            return True
        ours = table_points(v, v.team) + v.rules.scoring.going_out_bonus
        ours -= IN_HAND_CARD * sum(v.hand_size_of(p) for p in v.partners)
        theirs = max(
            table_points(v, t) - IN_HAND_CARD * sum(v.hand_size_of(p) for p in v.opponents if v.team_of(p) == t)
            for t in range(v.teams) if t != v.team
        )
        return ours - theirs >= self.go_out_margin

    @staticmethod
    def want_ask(v: SeatView) -> bool:
        """Ask when the partner holds enough cards that only they can judge the cost."""
        return bool(v.partners) and sum(v.hand_size_of(p) for p in v.partners) >= 5

    @staticmethod
    def lays_red_three(a: Action) -> bool:
        """A meld action that lays one optional red three (it scores, and is replaced)."""
        groups: list[list[str]] = a["melds"] if a["type"] == "meld" else []
        return len(groups) == 1 and len(groups[0]) == 1 and IS_RED_THREE[parse_card(groups[0][0])]

    def meld_score(self, v: SeatView, a: Action) -> float:
        rules = v.rules
        late = self.late(v)
        if a["type"] == "meld":
            groups = [[parse_card(c) for c in g] for g in a["melds"]]
            if self.lays_red_three(a):
                return 100.0  # optional red three: lay it (it scores, and is replaced)
            if not v.opened(v.team):
                return 60.0 + sum(len(g) for g in groups)  # open as soon as possible
            score = 0.0
            for g in groups:
                wilds = sum(1 for k in g if IS_WILD[k])
                nat = len(g) - wilds
                if wilds == 0:
                    score += 25 + nat
                elif late or wild_count(v.hand) >= 2 + wilds:
                    score += 8 + nat
                else:
                    score -= 2  # keep the pair and the wild: a pair takes a frozen pile
            return score
        # add
        rank = parse_rank(a["rank"])
        cards = [parse_card(c) for c in a["cards"]]
        meld = v.melds(v.team)[rank]
        assert meld is not None
        wilds = sum(1 for k in cards if IS_WILD[k])
        nat = len(cards) - wilds
        grown = Meld(rank, meld.cards + tuple(cards), meld.wilds + wilds, meld.hidden)  # for the engine's canasta test
        if grown.is_canasta(rules) and not meld.is_canasta(rules):
            return CANASTA_ADD + nat
        if wilds:
            if late:
                return 4.0
            return self.wild_add
        if nat == 1 and v.hand_rank_counts()[rank] > 1:
            return 1.0  # the "one natural" variant: the full add scores higher
        if (nat == 2 and v.pile_frozen_for(v.team) and v.pile_size >= 6 and v.hand_size >= 5
                and not late):
            return -1.0  # keep a natural pair of a melded rank: a trap for a frozen pile
        return 20.0 + nat

    def discard_score(self, v: SeatView, kind: int, unseen: list[int]) -> float:
        """Lower is a better discard: what it gives the next opponent plus what it keeps for us."""
        if IS_WILD[kind]:
            return 1000.0
        if IS_RED_THREE[kind]:
            return 500.0
        if IS_BLACK_THREE[kind]:
            return -30.0 if v.pile_size >= 3 or not self.late(v) else -5.0
        rank = RANK_OF[kind]
        counts = v.hand_rank_counts()
        n = counts[rank]
        keep = 0.0
        if v.melds(v.team)[rank] is not None:
            keep += self.melded_rank_keep
        if n >= 3:
            keep += self.triple_keep
        elif n == 2:
            keep += self.pair_keep
        late = self.late(v)
        keep -= VALUE[kind] * (self.late_shed if late else self.early_shed)  # shed points late in the hand
        return self.danger(v, kind, unseen) + keep

    def danger(self, v: SeatView, kind: int, unseen: list[int]) -> float:
        """What the next seat expects to gain if this card tops the pile (points)."""
        n = v.players
        nxt = (v.seat + 1) % n
        team = v.team_of(nxt)
        if team == v.team:
            return 0.0
        rank = RANK_OF[kind]
        frozen = v.pile_frozen_for(team)
        has_meld = v.melds(team)[rank] is not None
        chance = take_chance(unseen, v.hand_size_of(nxt), rank, frozen, has_meld)
        if not v.opened(team):
            chance *= 0.5  # it must also reach its opening minimum
        return chance * ((v.pile_size + 1) * self.pile_card + 20)

