"""Can the player go out this turn? Plans of moves that would empty the hand.

R16, R17 and R19 ask whether a player can still go out this turn. This module searches for
plans from the hand and the side's melds alone; ``engine.moves.going_out_plan`` proves each by
applying it, so "able" never claims more than the rules allow. The search imports nothing
that applies moves, so the proof can live with the moves without a cycle.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engine.cards import (
    BLACK_THREES,
    CODES,
    IS_RED_THREE,
    JOKER,
    MELD_RANKS,
    RED_THREES,
    THREE,
    TWOS,
    rank_code,
)
from engine.melds import MIN_MELD, black_three_melds, wild_room
from engine.rules import RuleOptions
from engine.state import Meld, State

Action = dict[str, Any]


def candidate_plans(s: State, seat: int) -> Iterator[list[Action]]:
    """Plans that may go out from here (phase "play"), most likely first; none if hopeless."""
    if s.phase != "play" or s.to_act != seat:
        return
    choices = _discard_choices(s.rules, s.hands[seat], s.melds[s.rules.team_of(seat)])
    if choices is None:
        return
    for discard in choices:
        if discard is not None and IS_RED_THREE[discard] and not s.rules.melding.red_threes_optional:
            continue
        plan = _plan_without(s, seat, discard)
        if plan is not None:
            yield plan


def may_empty(rules: RuleOptions, hand: tuple[int, ...] | list[int], side: tuple[Meld | None, ...]) -> bool:
    """A quick necessary condition: counted by rank, this hand could go onto these melds (and
    new ones) with at most one card left over for the discard."""
    return _discard_choices(rules, hand, side) is not None


def _discard_choices(
    rules: RuleOptions, hand: tuple[int, ...] | list[int], side: tuple[Meld | None, ...]
) -> list[int | None] | None:
    """The discards worth trying, or None when some card can be neither melded nor discarded.

    A natural of a rank the side has not melded needs a second one; black threes go three
    or four at a time (or never: R15); at most one card can be left over for the discard.
    """
    orphans: list[int] = []
    for rank in MELD_RANKS:
        if side[rank] is None:
            n = hand[rank * 4] + hand[rank * 4 + 1] + hand[rank * 4 + 2] + hand[rank * 4 + 3]
            if n == 1:
                orphans.extend(k for k in range(rank * 4, rank * 4 + 4) if hand[k])
    blacks = sum(hand[k] for k in BLACK_THREES)
    sizes = black_three_melds(rules)
    if blacks and blacks not in sizes:  # one black three left over: the discard
        if blacks - 1 and blacks - 1 not in sizes:
            return None
        orphans.append(next(k for k in BLACK_THREES if hand[k]))
    orphans.extend(k for k in RED_THREES for _ in range(hand[k]))
    if len(orphans) > 1:
        return None
    if orphans:
        return [orphans[0]]
    return [None] + [k for k, n in enumerate(hand) if n]


def _plan_without(s: State, seat: int, discard: int | None) -> list[Action] | None:
    rules = s.rules
    canasta_size, canasta_naturals = rules.melding.canasta_size, rules.melding.canasta_min_naturals
    rest = list(s.hands[seat])
    if discard is not None:
        rest[discard] -= 1
    if any(rest[k] for k in RED_THREES):
        return None
    blacks = [k for k in BLACK_THREES for _ in range(rest[k])]
    if blacks and len(blacks) not in black_three_melds(rules):
        return None
    wilds = [JOKER] * rest[JOKER] + [k for k in TWOS for _ in range(rest[k])]
    side = s.melds[rules.team_of(seat)]
    # targets: rank -> [naturals from hand, natural count after, wilds after, existing?]
    targets: dict[int, list[Any]] = {}
    for rank in MELD_RANKS:
        meld = side[rank]
        b = rank * 4
        if meld is None and not (rest[b] or rest[b + 1] or rest[b + 2] or rest[b + 3]):
            continue
        nat = [k for k in range(b, b + 4) for _ in range(rest[k])]
        if meld is None and len(nat) < rules.melding.min_naturals:
            return None
        if nat:
            base_n = meld.naturals if meld else 0
            base_w = meld.wilds if meld else 0
            targets[rank] = [nat, base_n + len(nat), base_w, meld is not None, []]
    # mandatory wilds: a new meld of two naturals needs a third card
    pool = list(wilds)
    for t in targets.values():
        while t[1] + t[2] + len(t[4]) < MIN_MELD:
            if not pool:
                return None
            t[4].append(pool.pop())
    # complete canastas where wilds can
    need = rules.going_out.canastas_to_go_out - sum(
        1 for m in side if m is not None and m.rank not in targets and m.is_canasta(rules)
    )
    # the side's melds that no hand natural goes to may be completed with wilds alone
    for rank, meld in enumerate(side):
        if (
            meld is not None and rank not in targets and rank != THREE
            and not meld.is_canasta(rules) and meld.naturals >= canasta_naturals
        ):
            targets[rank] = [[], meld.naturals, meld.wilds, True, []]
    open_t = sorted(
        (t for t in targets.values() if t[1] >= canasta_naturals),
        key=lambda t: canasta_size - (t[1] + t[2] + len(t[4])),
    )
    for t in open_t:
        short = canasta_size - (t[1] + t[2] + len(t[4]))
        if short > 0 and short <= min(len(pool), wild_room(rules, t[1], t[2] + len(t[4]))):
            for _ in range(short):
                t[4].append(pool.pop())
    # the remaining wilds go wherever there is room
    for t in targets.values():
        while pool and wild_room(rules, t[1], t[2] + len(t[4])) > 0:
            t[4].append(pool.pop())
    if pool:
        for rank, meld in enumerate(side):
            if meld is not None and rank not in targets and rank != THREE:
                room = wild_room(rules, meld.naturals, meld.wilds)
                if room:
                    targets[rank] = [[], meld.naturals, meld.wilds, True, []]
                    while pool and room:
                        targets[rank][4].append(pool.pop())
                        room -= 1
    if pool:
        return None
    canastas = sum(
        1 for t in targets.values() if t[1] + t[2] + len(t[4]) >= canasta_size and t[1] >= canasta_naturals
    )
    if canastas < need:
        return None
    # adds first (canasta-completing ones first), then the new melds, then the discard
    adds = [
        {"type": "add", "rank": rank_code(r), "cards": [CODES[k] for k in t[0] + t[4]]}
        for r, t in sorted(targets.items(), key=lambda rt: -(rt[1][1] + rt[1][2] + len(rt[1][4])))
        if t[3] and (t[0] or t[4])
    ]
    new = [[CODES[k] for k in t[0] + t[4]] for t in targets.values() if not t[3]]
    if blacks:
        new.append([CODES[k] for k in blacks])
    plan: list[Action] = adds
    if new:
        plan.append({"type": "meld", "melds": new})
    if discard is not None:
        plan.append({"type": "discard", "card": CODES[discard]})
    return plan or None
