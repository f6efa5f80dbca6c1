"""The asker: an outside-like partnership player, eager to take the pile and to ask to go out.

Written from the rules (docs/rules.md) and the legal actions alone: no bot of ours beneath
it (not :mod:`bots.greedy`, :mod:`bots.standard` nor :mod:`bots.expert`), so that nothing
tuned in them, and no habit of theirs, carries over. Its model is the outside bot of issue 37
("eager to take the pile and to ask to go out", no look-ahead): a plain club player's rules
of thumb, each one a piece of common Canasta advice.

The design was fixed on 2026-12-07 before the style was played against any bot of ours (only
its legality and its agreement with the standard bot were looked at), and is not to be
changed after results against our levels: it is a held-out opponent.

* **Going out** (its character): whenever the engine lists "may I go out?" in the play phase
  (only when it holds a way out) it asks, at every chance, before anything else; it
  says yes to every ask of its partner; and it goes out whenever the engine has a plan for it
  (granted, or where asking is no longer allowed), whatever the score.
* **The pile**: it takes the pile whenever it may and the take spends no wild from hand, or
  the pile holds :data:`RICH_PILE` cards or more; with the stock empty, any take. Of the
  ways to take it, the one that spends the fewest wilds, then the fewest cards from hand
  (onto a meld of its side before a natural pair), then lays the most melds (an opening).
* **Melding as it goes**: it opens at the first chance (fewest wilds, then the most cards);
  once open it lays every natural meld and adds every natural card to its side's melds at
  once (no holding back), completes a canasta before anything else, and spends a wild only
  on a meld of three naturals or more, onto a meld of :data:`WILD_ONTO` cards or more, or
  late in the hand (:data:`LATE_STOCK`, or an opposing side has a canasta).
* **Discards**: the cheapest by a sum of what it risks and what it keeps: a card the next
  opponent's side can add to its melds with the open pile is near certain to feed it; other
  ranks are dangerous by how many of their naturals it has not seen, times the pile's size;
  a pair or a triple in hand and a rank its side has melded are kept; high cards are shed
  a little early and more late. A black three blocks a pile of :data:`BLOCK_PILE` cards or
  more (else it is kept for one); wilds and red threes are never thrown away while any other
  card may be.
"""

from __future__ import annotations

import random
from typing import Any

from bots.view import SeatView
from engine.cards import (
    IS_BLACK_THREE,
    IS_RED_THREE,
    IS_WILD,
    RANK_OF,
    VALUE,
    parse_card,
    parse_rank,
)
from engine.state import GRANTED

Action = dict[str, Any]
ASK = {"type": "ask_go_out"}

RICH_PILE = 5  # a pile this big is taken even when a wild must be spent on it
WILD_ONTO = 5  # a wild goes onto a meld that reaches this many cards with it (near a canasta)
LATE_STOCK = 15  # stock size from which the hand is late: wilds go down, high cards go
BLOCK_PILE = 3  # pile size from which a black three is discarded to block it
SURE_FEED = 200.0  # a discard the next opponent's side can lay on its meld with the open pile
FEED_CARD = 6.0  # what each pile card is worth to the next opponent, times the chance it takes
PAIR_KEEP = 15.0  # a natural pair in hand (it takes a frozen pile, it becomes a meld)
TRIPLE_KEEP = 25.0
MELDED_KEEP = 30.0  # a rank our side has melded (it would have been added; keep it)
EARLY_SHED, LATE_SHED = 0.3, 1.0  # a card's points count this much toward shedding it


def _cards(a: Action) -> list[int]:
    """The kinds an action lays from hand (a meld's groups, an add's or a take's cards)."""
    if a["type"] == "meld":
        return [parse_card(c) for g in a["melds"] for c in g]
    if a["type"] == "take_pile":
        return [parse_card(c) for c in a.get("with", [])] + [parse_card(c) for g in a.get("melds", []) for c in g]
    return [parse_card(c) for c in a.get("cards", [])]


def _wilds(kinds: list[int]) -> int:
    return sum(1 for k in kinds if IS_WILD[k])


class Asker:
    name = "asker"

    def choose(self, v: SeatView, actions: list[Action], rng: random.Random, budget: Any = None) -> Action:
        if len(actions) == 1:
            return actions[0]
        if v.phase == "answer":
            return {"type": "answer_go_out", "yes": True}
        if v.phase == "draw":
            return self.draw(v, actions)
        if ASK in actions and v.permission != GRANTED:
            return ASK
        plan = v.going_out_plan()
        if plan and plan[0] in actions:
            return plan[0]
        melds = [(self.meld_score(v, a), i) for i, a in enumerate(actions) if a["type"] in ("meld", "add")]
        if melds:
            score, i = max(melds)
            if score > 0:
                return actions[i]
        discards = [a for a in actions if a["type"] == "discard"]
        if discards:
            return min(discards, key=lambda a: (self.discard_cost(v, parse_card(a["card"])), a["card"]))
        return rng.choice(actions)

    # -- the draw ----------------------------------------------------------------------------
    def draw(self, v: SeatView, actions: list[Action]) -> Action:
        takes = [a for a in actions if a["type"] == "take_pile"]
        plain = [a for a in actions if a["type"] in ("draw", "pass")]
        if takes:
            best = min(takes, key=lambda a: (_wilds(_cards(a)), len(a.get("with", [])), -len(a.get("melds", []))))
            if _wilds(_cards(best)) == 0 or v.pile_size >= RICH_PILE or not any(a["type"] == "draw" for a in plain):
                return best
        return plain[0] if plain else actions[0]

    # -- melds ---------------------------------------------------------------------------------
    def late(self, v: SeatView) -> bool:
        return v.stock_size <= LATE_STOCK or any(v.canastas(t) for t in range(v.teams) if t != v.team)

    def meld_score(self, v: SeatView, a: Action) -> float:
        rules = v.rules
        size, min_nat = rules.melding.canasta_size, rules.melding.canasta_min_naturals
        laid = _cards(a)
        if a["type"] == "meld" and len(laid) == 1 and IS_RED_THREE[laid[0]]:
            return 100.0  # an optional red three: it scores and is replaced
        if not v.opened(v.team):
            return 50.0 + len(laid) - 10.0 * _wilds(laid)
        late = self.late(v)
        if a["type"] == "meld":
            score = 0.0
            for g in a["melds"]:
                kinds = [parse_card(c) for c in g]
                w = _wilds(kinds)
                n = len(kinds) - w
                if len(kinds) >= size and n >= min_nat:
                    score += 200.0 + n
                elif w == 0:
                    score += 20.0 + n
                elif n >= 3 or late:
                    score += 5.0 + n
                else:
                    score -= 5.0  # a pair and a wild: keep the pair for a frozen pile
            return score
        meld = v.melds(v.team)[parse_rank(a["rank"])]
        if meld is None:
            return 0.0
        w = _wilds(laid)
        n = len(laid) - w
        total = len(meld.cards) + len(laid)
        if meld.naturals < min_nat or len(meld.cards) < size:  # not yet a canasta
            if total >= size and meld.naturals + n >= min_nat:
                return 100.0 + n
        if w == 0:
            return 20.0 + n
        if total >= WILD_ONTO or late:
            return 10.0 - w
        return -5.0

    # -- discards -------------------------------------------------------------------------------
    def next_opponent(self, v: SeatView) -> int | None:
        for k in range(1, v.players):
            seat = (v.seat + k) % v.players
            if v.team_of(seat) != v.team:
                return seat if k == 1 else None
        return None

    def discard_cost(self, v: SeatView, kind: int) -> float:
        if IS_WILD[kind]:
            return 1000.0
        if IS_RED_THREE[kind]:
            return 900.0
        late = self.late(v)
        if IS_BLACK_THREE[kind]:
            return -50.0 if v.pile_size >= BLOCK_PILE or late else 5.0
        rank = RANK_OF[kind]
        cost = self.risk(v, rank)
        count = v.hand_rank_counts()[rank]
        if count >= 3:
            cost += TRIPLE_KEEP
        elif count == 2:
            cost += PAIR_KEEP
        if v.melds(v.team)[rank] is not None:
            cost += MELDED_KEEP
        return cost - VALUE[kind] * (LATE_SHED if late else EARLY_SHED)

    def risk(self, v: SeatView, rank: int) -> float:
        """What the discard may give the next opponent (the seat after us, if an opponent)."""
        nxt = self.next_opponent(v)
        if nxt is None:
            return 0.0
        team = v.team_of(nxt)
        frozen = v.pile_frozen_for(team)
        if not frozen and v.melds(team)[rank] is not None:
            return SURE_FEED + FEED_CARD * v.pile_size
        unseen = v.unseen_counts()
        live = sum(unseen[k] for k in range(rank * 4, rank * 4 + 4))
        needed = 2 if frozen else 1.5  # a natural pair; or, open, a natural and a wild
        chance = min(1.0, max(live - 1, 0) / (2.0 * needed))
        return chance * (20.0 + FEED_CARD * (v.pile_size + 1))
