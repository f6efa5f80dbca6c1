"""The discard pile: whether it may be taken at all, what goes to the taker, and takes to try.

Taking the pile is the move with the most shapes: the top card is melded with some hand cards
(or put onto the side's meld), further melds may join it, and the rules judge the whole (R9-R13,
R16, R19). This module only proposes; ``engine.moves`` judges. It has two lists of takes:
:func:`pile_takes`, the few natural ways to take that the enumerator offers a player, and
:func:`take_candidates`, long enough that whenever some take is legal, one of them is (R21 ends
the hand when a player on an empty stock cannot take the pile).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import Any, NamedTuple

from engine.cards import (
    BLACK_THREES,
    CODES,
    IS_RED_THREE,
    IS_WILD,
    JOKER,
    KINDS,
    MELD_RANKS,
    RANK_OF,
    RED_THREES,
    THREE,
    TWOS,
    VALUE,
    rank_code,
)
from engine.errors import IllegalMove
from engine.going_out import may_empty
from engine.melds import MIN_MELD, black_three_melds, wild_room
from engine.rules import RuleOptions
from engine.state import NO_SEAT, NOT_FROZEN, REFUSED, Meld, State

Action = dict[str, Any]
Side = tuple[Meld | None, ...]
SAFE_TO_KEEP = 2  # cards a take can leave in hand without having to go out this turn (R16)


def pile_refusal(s: State, seat: int) -> IllegalMove | None:
    """Why ``seat`` may not take the pile at all right now (R13, R11 locks), or None."""
    if not s.pile:
        return IllegalMove("pile_empty", "the discard pile is empty")
    top = s.pile[-1]
    if IS_WILD[top] or RANK_OF[top] == THREE:
        return IllegalMove("pile_top_untakeable", f"the pile cannot be taken while {CODES[top]} is on top")
    if s.pile_lock != NO_SEAT:
        return IllegalMove("pile_locked", f"a discarded red three locks the pile until seat {s.pile_lock}'s turn")
    if len(s.pile) == 1 and s.hand_size(seat) == 1:
        return IllegalMove("pile_single_card", "with one card in hand you may not take a pile of one card")
    return None


def pile_frozen_for(s: State, team: int) -> bool:
    return s.pile_frozen_by != NOT_FROZEN or not s.opened(team)


class _Offer(NamedTuple):
    """The pile as one seat may take it: what both lists of takes start from."""

    team: int
    hand: tuple[int, ...]
    side: Side
    top: int
    rank: int  # the top card's
    frozen: bool  # for the seat's side (R11)


def _offer(s: State, seat: int) -> _Offer | None:
    """What ``seat`` would take the pile with, or None if it may not take it now."""
    if pile_refusal(s, seat) is not None:
        return None
    team = s.rules.team_of(seat)
    top = s.pile[-1]
    return _Offer(team, s.hands[seat], s.melds[team], top, RANK_OF[top], pile_frozen_for(s, team))


def pile_to_hand(s: State) -> tuple[list[int], list[int]]:
    """What a take gives besides the top card: the cards for the taker's hand (the rest of the
    pile and the wilds beside it, R13) and the red threes laid for the side (R4 "laid")."""
    to_hand: list[int] = []
    laid: list[int] = []
    keep_red = s.rules.pile.pile_red_threes == "to_hand"
    for k in s.pile[:-1]:
        (laid if IS_RED_THREE[k] and not keep_red else to_hand).append(k)
    to_hand.extend(s.pile_beside)
    return to_hand, laid


# -- the enumerator's takes --------------------------------------------------------------------


def pile_takes(s: State, seat: int) -> list[Action]:
    """A few natural ways to take: onto the side's meld, with a natural pair, with every natural
    of the rank, with a natural and a wild. An unopened side adds what its minimum needs: other
    melds from hand, or (R9 "pile_meld_alone") wilds in the pile meld itself."""
    offer = _offer(s, seat)
    if offer is None:
        return []
    rules = s.rules
    team, hand, side, top, rank, frozen = offer
    nat = naturals_of(hand, rank)
    wilds = wild_kinds(hand)
    out: list[Action] = []
    withs: list[list[int]] = []
    if side[rank] is not None and not frozen:
        out.append({"type": "take_pile", "onto": rank_code(rank)})
    if len(nat) >= 2:
        withs.append(nat[:2])
        if len(nat) > 2:
            withs.append(nat)
    if not frozen and len(nat) >= 1 and wilds:
        withs.append(nat[:1] + wilds[:1])
    opened = s.opened(team)
    for w in withs:
        action: Action = {"type": "take_pile", "with": [CODES[k] for k in w]}
        short = 0 if opened else s.minimums[team] - VALUE[top] - sum(VALUE[k] for k in w)
        if short > 0:
            rest = list(hand)
            for k in w:
                rest[k] -= 1
            if rules.pile.opening_from_pile == "pile_meld_alone":
                more = _wilds_worth(rules, side[rank], w, rest, short)
                if more is None:
                    continue
                action["with"] += [CODES[k] for k in more]
            else:
                extra = opening_melds(s, seat, tuple(rest), short, {rank})
                if extra is None:
                    continue
                action["melds"] = extra
        out.append(action)
    return out


def _wilds_worth(rules: RuleOptions, old: Meld | None, used: list[int], hand: list[int], short: int) -> list[int] | None:
    """More wilds from ``hand`` (jokers first), worth ``short``, that the meld of the top card
    with ``used`` can hold."""
    wilds = _wilds(used) + (old.wilds if old else 0)
    room = wild_room(rules, 1 + len(used) - _wilds(used) + (old.naturals if old else 0), wilds)
    out: list[int] = []
    for k in wild_list(tuple(hand)):
        if short <= 0 or len(out) >= room:
            break
        out.append(k)
        short -= VALUE[k]
    return out if short <= 0 else None


def opening_melds(s: State, seat: int, hand: tuple[int, ...], need: int, exclude: set[int]) -> list[list[str]] | None:
    """Melds from ``hand`` worth at least ``need`` (the fewest cards found), or None."""
    rules = s.rules
    side = s.melds[rules.team_of(seat)]
    groups = []
    for rank in MELD_RANKS:
        if rank in exclude or side[rank] is not None:
            continue
        nat = naturals_of(hand, rank)
        if len(nat) >= 2:
            groups.append(nat)
    wilds = wild_list(hand)
    best: list[list[int]] | None = None
    for size in range(1, min(len(groups), 4) + 1):
        for combo in combinations(groups, size):
            melds = [list(g) for g in combo]
            pool = list(wilds)
            ok = True
            for m in melds:  # two naturals need a wild to make three cards
                if len(m) < MIN_MELD:
                    if not pool:
                        ok = False
                        break
                    m.append(pool.pop(0))
            if not ok:
                continue
            value = sum(VALUE[k] for m in melds for k in m)
            for m in melds:  # add wilds (jokers first) until the minimum is met
                while value < need and pool:
                    naturals = sum(1 for k in m if not IS_WILD[k])
                    if wild_room(rules, naturals, len(m) - naturals) <= 0:
                        break
                    k = pool.pop(0)
                    m.append(k)
                    value += VALUE[k]
            if value >= need and (best is None or sum(map(len, melds)) < sum(map(len, best))):
                best = melds
        if best is not None:
            break
    if best is None:
        return None
    return [[CODES[k] for k in m] for m in best]


# -- every take worth trying ----------------------------------------------------------------------


def take_candidates(s: State, seat: int) -> Iterator[Action]:
    """Takes such that if any take of the pile is legal now, one of these is.

    Legality depends on the cards only through their kind counts, so it is enough to try, for
    every way the hand can meld the top card (naturals, jokers, 2s), the take with no other
    meld; where an unopened side counts other melds toward its minimum, the most valuable other
    melds that still keep two cards (or one, or none, as the cards coming with the pile
    allow); and where the take could empty the hand, other melds that lay all of it but at
    most one card. A take that meets neither the minimum nor a possible waiver is not tried.
    """
    offer = _offer(s, seat)
    if offer is None:
        return
    rules = s.rules
    team, hand, side, top, rank, frozen = offer
    old = side[rank]
    if old is not None and not frozen:
        yield {"type": "take_pile", "onto": rank_code(rank)}
    nat = naturals_of(hand, rank)
    if frozen and len(nat) < 2:  # R12: a frozen pile needs a natural pair
        return
    opened = s.opened(team)
    need = 0 if opened else s.minimums[team]
    count_other_melds = rules.pile.opening_from_pile == "all_melds"
    waiver = not opened and rules.going_out.concealed_minimum == "waived" and _could_go_out_after(s, seat)
    if not (opened or waiver) and _best_value(s, seat, count_other_melds) < need:
        return
    coming = len(pile_to_hand(s)[0])
    wilds = wild_list(hand)
    for used in _pile_meld_shapes(rules, old, frozen, nat, wilds):
        value = VALUE[top] + sum(VALUE[k] for k in used)
        rest = list(hand)
        for k in used:
            rest[k] -= 1
        with_ = [CODES[k] for k in used]
        if value >= need or waiver:
            yield {"type": "take_pile", "with": with_}
        if value < need and count_other_melds:
            for extra in _richest_keeping(rules, side, rest, rank, max(0, SAFE_TO_KEEP - coming)):
                if value + sum(VALUE[k] for m in extra for k in m) >= need:
                    yield {"type": "take_pile", "with": with_, "melds": _codes(extra)}
        if coming <= 1:
            for extra in _laying_all(rules, side, rest, rank, 1 - coming):
                counted = value + (sum(VALUE[k] for m in extra for k in m) if count_other_melds else 0)
                if counted >= need or waiver:
                    yield {"type": "take_pile", "with": with_, "melds": _codes(extra)}


def _could_go_out_after(s: State, seat: int) -> bool:
    """Whether, counted by rank, a take could still lead to going out this turn (R19 waiver)."""
    if s.permission == REFUSED:
        return False
    team = s.rules.team_of(seat)
    rank = RANK_OF[s.pile[-1]]
    after = list(s.hands[seat])
    for k in pile_to_hand(s)[0]:
        after[k] += 1
    side = list(s.melds[team])
    side[rank] = side[rank] or Meld.of(rank, [s.pile[-1]])
    return may_empty(s.rules, after, tuple(side))


def _best_value(s: State, seat: int, count_other_melds: bool) -> int:
    """At most what a take can count toward the minimum (cheap, never too low)."""
    hand = s.hands[seat]
    top = s.pile[-1]
    rank = RANK_OF[top]
    value = VALUE[top] + sum(VALUE[k] * hand[k] for k in range(rank * 4, rank * 4 + 4))
    value += sum(VALUE[k] * hand[k] for k in (JOKER, *TWOS))
    if count_other_melds:
        value += sum(VALUE[k] * hand[k] for k in BLACK_THREES)
        for r in MELD_RANKS:
            if r != rank:
                cards = range(r * 4, r * 4 + 4)
                if sum(hand[k] for k in cards) >= 2:
                    value += sum(VALUE[k] * hand[k] for k in cards)
    return value


def _pile_meld_shapes(rules: RuleOptions, old: Meld | None, frozen: bool, nat: list[int], wilds: list[int]) -> Iterator[list[int]]:
    """Every count of naturals, jokers and 2s from hand that can meld the top card (onto the
    side's meld of its rank, if it has one), fewer naturals first."""
    base_n = (old.naturals if old else 0) + 1
    base_w = old.wilds if old else 0
    jokers = [k for k in wilds if k == JOKER]
    twos = [k for k in wilds if k != JOKER]
    for a in range(2 if frozen else 0, len(nat) + 1):
        naturals = base_n + a
        room = wild_room(rules, naturals, base_w)
        for j in range(min(len(jokers), room) + 1):
            for t in range(min(len(twos), room - j) + 1):
                if a + j + t == 0:
                    continue
                if old is None and (naturals + j + t < MIN_MELD or naturals < rules.melding.min_naturals):
                    continue
                yield nat[:a] + jokers[:j] + twos[:t]


def _richest_keeping(rules: RuleOptions, side: Side, hand: list[int], rank: int, keep: int) -> Iterator[list[list[int]]]:
    """The most valuable new melds from ``hand`` that leave at least ``keep`` of its cards: for
    each choice of ``keep`` cards held back, the richest melds of the rest."""
    richest = _richest(rules, side, hand, rank)
    if sum(hand) - sum(len(m) for m in richest) >= keep:
        yield richest
        return
    kinds = [k for k in range(KINDS) if hand[k]]
    seen = set()
    for held in _multisets(hand, kinds, keep):
        rest = list(hand)
        for k in held:
            rest[k] -= 1
        melds = _richest(rules, side, rest, rank)
        key = tuple(tuple(m) for m in melds)
        if melds and key not in seen:
            seen.add(key)
            yield melds


def _multisets(hand: list[int], kinds: list[int], size: int) -> Iterator[tuple[int, ...]]:
    if size == 1:
        yield from ((k,) for k in kinds)
    elif size == 2:
        for i, a in enumerate(kinds):
            for b in kinds[i:]:
                if a != b or hand[a] >= 2:
                    yield (a, b)
    elif size == 0:
        yield ()


def _richest(rules: RuleOptions, side: Side, hand: list[int], rank: int) -> list[list[int]]:
    """The new melds of the most value from ``hand`` (the pile meld's ``rank`` and the side's
    ranks left out; no black threes: they meld only when going out)."""
    groups = []
    for r in MELD_RANKS:
        if r == rank or side[r] is not None:
            continue
        nat = naturals_of(tuple(hand), r)
        if len(nat) >= rules.melding.min_naturals and MIN_MELD - len(nat) <= wild_room(rules, len(nat), 0):
            groups.append(nat)
    pool = wild_list(tuple(hand))  # the most valuable first
    ready = [g for g in groups if len(g) >= MIN_MELD]
    needy = sorted((g for g in groups if len(g) < MIN_MELD), key=lambda g: -sum(VALUE[k] for k in g))
    melds = ready + needy[: len(pool)]
    mandatory = sum(MIN_MELD - len(m) for m in melds if len(m) < MIN_MELD)
    rooms = [wild_room(rules, len(m), max(0, MIN_MELD - len(m))) for m in melds]
    placed = pool[: mandatory + min(len(pool) - mandatory, sum(rooms))]
    out = [list(m) for m in melds]
    for m in out:  # the wilds that make three cards
        while len(m) < MIN_MELD:
            m.append(placed.pop())
    for m, room in zip(out, rooms, strict=True):  # the rest wherever there is room
        while room and placed:
            m.append(placed.pop())
            room -= 1
    return out


def _laying_all(rules: RuleOptions, side: Side, hand: list[int], rank: int, keep: int) -> Iterator[list[list[int]]]:
    """New melds that lay all of ``hand`` but at most ``keep`` cards (with as many canastas as
    the wilds can complete): the other melds of a take that goes out."""
    kinds = [k for k in range(KINDS) if hand[k]]
    for size in range(0, min(keep, 1) + 1):
        for held in _multisets(hand, kinds, size):
            rest = list(hand)
            for k in held:
                rest[k] -= 1
            melds = _lay_all(rules, side, rest, rank)
            if melds:
                yield melds


def _lay_all(rules: RuleOptions, side: Side, hand: list[int], rank: int) -> list[list[int]] | None:
    """New melds that hold every card of ``hand``, completing as many canastas as the wilds
    allow, or None if some card cannot be melded."""
    if any(hand[k] for k in RED_THREES):
        return None
    blacks = [k for k in BLACK_THREES for _ in range(hand[k])]
    if blacks and len(blacks) not in black_three_melds(rules):
        return None
    melds: list[list[int]] = []
    for r in MELD_RANKS:
        nat = naturals_of(tuple(hand), r)
        if not nat:
            continue
        if r == rank or side[r] is not None or len(nat) < rules.melding.min_naturals:
            return None
        melds.append(nat)
    pool = wild_list(tuple(hand))
    for m in melds:
        while len(m) < MIN_MELD:
            if not pool or wild_room(rules, len(m) - _wilds(m), _wilds(m)) <= 0:
                return None
            m.append(pool.pop())
    short = sorted(
        (m for m in melds if len(m) < rules.melding.canasta_size and len(m) - _wilds(m) >= rules.melding.canasta_min_naturals),
        key=len,
        reverse=True,
    )
    for m in short:
        missing = rules.melding.canasta_size - len(m)
        if missing <= min(len(pool), wild_room(rules, len(m) - _wilds(m), _wilds(m))):
            m.extend(pool.pop() for _ in range(missing))
    for m in melds:
        while pool and wild_room(rules, len(m) - _wilds(m), _wilds(m)) > 0:
            m.append(pool.pop())
    if pool:
        return None
    if blacks:
        melds.append(blacks)
    return melds


def _wilds(cards: list[int]) -> int:
    return sum(1 for k in cards if IS_WILD[k])


def _codes(melds: list[list[int]]) -> list[list[str]]:
    return [[CODES[k] for k in m] for m in melds]


# -- hand helpers ------------------------------------------------------------------------------------


def naturals_of(hand: tuple[int, ...], rank: int) -> list[int]:
    b = rank * 4
    if not (hand[b] or hand[b + 1] or hand[b + 2] or hand[b + 3]):
        return []
    return [k for k in range(b, b + 4) for _ in range(hand[k])]


def wild_kinds(hand: tuple[int, ...]) -> list[int]:
    """One of each kind of wild in hand, jokers first (distinct 2s are interchangeable)."""
    out = [JOKER] if hand[JOKER] else []
    two = next((k for k in TWOS if hand[k]), None)
    return out + ([two] if two is not None else [])


def wild_list(hand: tuple[int, ...]) -> list[int]:
    """Every wild in hand, the most valuable (jokers) first."""
    return [JOKER] * hand[JOKER] + [k for k in TWOS for _ in range(hand[k])]
