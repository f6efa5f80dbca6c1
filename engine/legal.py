"""Legal actions: a full enumerator for bots and a compact summary for clients.

The enumerator bounds meld combinations (each rank is melded with all its naturals, plus
the wilds the rules need or allow), but every action it yields is legal and there is always
at least one for the seat to act, so a game never stalls.
"""

from __future__ import annotations

from typing import Any

from engine.cards import (
    CODES,
    IS_RED_THREE,
    IS_WILD,
    JOKER,
    MELD_RANKS,
    RANK_OF,
    RED_THREES,
    SUITED_CARDS,
    THREE,
    TWO,
    parse_card,
    rank_code,
)
from engine.melds import wild_room
from engine.moves import accepts, ask_refusal, find_take, going_out_plan, may_go_out, take_forced
from engine.pile import naturals_of, opening_melds, pile_refusal, pile_takes, wild_kinds
from engine.rules import RuleOptions
from engine.state import GRANTED, REFUSED, Meld, State

Action = dict[str, Any]


def _rank_sizes(hand: tuple[int, ...]) -> list[int]:
    """How many cards of each rank the hand holds (index: rank), counted once per call."""
    return [hand[b] + hand[b + 1] + hand[b + 2] + hand[b + 3] for b in range(0, SUITED_CARDS, 4)]


def legal_actions(s: State, seat: int) -> list[Action]:
    """Every action listed is accepted by :func:`engine.apply` for ``seat``."""
    return _legal(s, seat)[0]


def legal_actions_and_plan(s: State, seat: int) -> tuple[list[Action], list[Action] | None]:
    """:func:`legal_actions`, and what :func:`~engine.moves.going_out_plan` answers for ``seat``
    here: listing the play phase's actions searches for that plan anyway, so a caller that
    needs both (a bot's rollout) does not search twice."""
    return _legal(s, seat)


def _legal(s: State, seat: int) -> tuple[list[Action], list[Action] | None]:
    """The legal actions, and the moves that go out from here (None: there are none). The
    plan is searched only where :func:`canasta_bound` lets the side have its canastas; where
    it does not, no plan can go out."""
    if seat != s.to_act or s.phase not in ("draw", "play", "answer"):
        return [], None
    if s.phase == "answer":
        return [{"type": "answer_go_out", "yes": True}, {"type": "answer_go_out", "yes": False}], None
    if s.phase == "draw":
        return _draw_phase(s, seat), None
    check, sure, plan = _play_phase(s, seat)
    sure.extend(action for action in check if accepts(s, seat, action))
    return sure, plan


def _draw_phase(s: State, seat: int) -> list[Action]:
    """The draw phase's actions, in a fixed order. Only pile takes need :func:`apply` to
    judge them: a draw from a non-empty stock, a pass (the stock is empty, the pile not
    forced) and an early ask are legal by the very conditions that list them. When none of
    the usual takes is legal, the exhaustive search decides whether any take is, so that
    ``may_take_pile`` is exact."""
    out: list[Action] = []
    if s.stock_size:
        out.append({"type": "draw"})
    if pile_refusal(s, seat) is None:
        takes = [action for action in pile_takes(s, seat) if accepts(s, seat, action)]
        if not takes:
            found = find_take(s, seat)
            takes = [found] if found else []
        out.extend(takes)
    if not s.stock_size and not take_forced(s, seat):
        out.append({"type": "pass"})
    if ask_refusal(s, seat) is None:
        out.append({"type": "ask_go_out"})
    return out


def _play_phase(s: State, seat: int) -> tuple[list[Action], list[Action], list[Action] | None]:
    """(candidates to check with apply, actions legal by construction, a going-out plan)."""
    rules = s.rules
    team = rules.team_of(seat)
    hand = s.hands[seat]
    side = s.melds[team]
    check: list[Action] = []
    sure: list[Action] = []
    plan = None
    size = sum(hand)
    going_out = may_go_out(s, seat)

    sizes = _rank_sizes(hand)
    bound = s.permission == GRANTED or s.minimum_waived  # R17/R19: the turn must end by going out
    if bound or _canasta_bound(rules, side, sizes, hand[JOKER]) >= rules.going_out.canastas_to_go_out:
        plan = going_out_plan(s, seat)
        if plan:
            sure.append(plan[0])
            if bound:
                return check, sure, plan
            # asking is listed only when the answer could be used (never for a penalty)
            if ask_refusal(s, seat) is None:
                sure.append({"type": "ask_go_out"})

    # discards: one per kind; the last card only when going out is allowed
    if size > 1 or going_out:
        for k, n in enumerate(hand):
            if n and not (IS_RED_THREE[k] and not rules.melding.red_threes_optional):
                sure.append({"type": "discard", "card": CODES[k]})

    def put(action: Action, cards: int) -> None:
        # leaving one card or none depends on canastas made by this very move: let apply judge
        (sure if size - cards >= 2 else check).append(action)

    # adds to the side's melds
    wilds = wild_kinds(hand)
    for rank in MELD_RANKS:
        meld = side[rank]
        if meld is None:
            continue
        code = rank_code(rank)
        if sizes[rank]:
            nat = naturals_of(hand, rank)
            put({"type": "add", "rank": code, "cards": [CODES[k] for k in nat]}, len(nat))
            if len(nat) > 1:
                put({"type": "add", "rank": code, "cards": [CODES[nat[0]]]}, 1)
        if wild_room(rules, meld.naturals, meld.wilds):
            for w in wilds:
                put({"type": "add", "rank": code, "cards": [CODES[w]]}, 1)
    # new melds
    if s.opened(team):
        for rank in MELD_RANKS:
            if side[rank] is not None or sizes[rank] < 2:
                continue
            nat = naturals_of(hand, rank)
            if len(nat) >= 3:
                put({"type": "meld", "melds": [[CODES[k] for k in nat]]}, len(nat))
            if wilds and wild_room(rules, len(nat), 0):
                for w in wilds:
                    put({"type": "meld", "melds": [[CODES[k] for k in nat + [w]]]}, len(nat) + 1)
    else:
        extra = opening_melds(s, seat, hand, s.minimums[team], set())
        if extra:
            check.append({"type": "meld", "melds": extra})
    # R14 optional red threes: lay them
    if rules.melding.red_threes_optional:
        for k in RED_THREES:
            if hand[k]:
                check.append({"type": "meld", "melds": [[CODES[k]]]})
    return check, sure, plan


def legal_summary(s: State, seat: int) -> dict[str, Any]:
    """What a client shows: what the seat may do now, in a few fields."""
    actions, plan = _legal(s, seat)
    by_type: dict[str, list[Action]] = {}
    for a in actions:
        by_type.setdefault(a["type"], []).append(a)
    melds = by_type.get("meld", [])
    team = s.rules.team_of(seat)
    return {
        "to_act": seat == s.to_act,
        "may_draw": "draw" in by_type,
        "may_take_pile": "take_pile" in by_type,
        "take_pile": by_type.get("take_pile", []),
        "may_pass": "pass" in by_type,
        "meld_ranks": _meld_ranks(melds),
        "add_ranks": sorted({a["rank"] for a in by_type.get("add", ())}),
        "may_ask_go_out": "ask_go_out" in by_type,
        "must_answer_go_out": "answer_go_out" in by_type,
        "may_go_out": bool(s.phase == "play" and seat == s.to_act and may_go_out(s, seat)),
        "must_go_out": bool(
            s.phase == "play" and seat == s.to_act and (s.permission == GRANTED or s.minimum_waived) and "discard" not in by_type
        ),
        "discards": [a["card"] for a in by_type.get("discard", ())],
        # concrete moves a client can send as they are
        "melds": melds,
        "go_out": plan if s.permission != REFUSED else None,
        "opening_minimum": None if s.phase in ("deal", "over") or s.opened(team) else s.minimums[team],
        "actions": len(actions),
    }


def canasta_bound(s: State, seat: int) -> int:
    """At most how many canastas the side could have after this turn (cheap, never too low)."""
    hand = s.hands[seat]
    return _canasta_bound(s.rules, s.melds[s.rules.team_of(seat)], _rank_sizes(hand), hand[JOKER])


def _canasta_bound(rules: RuleOptions, side: tuple[Meld | None, ...], sizes: list[int], jokers: int) -> int:
    """:func:`canasta_bound` from the side's melds, the hand's :func:`_rank_sizes` and its
    jokers (the play phase's listing counts the sizes once for both)."""
    wilds = jokers + sizes[TWO]  # every 2 is wild
    canasta_size, min_naturals = rules.melding.canasta_size, rules.melding.canasta_min_naturals
    bound = 0
    for rank in MELD_RANKS:
        meld = side[rank]
        nat = sizes[rank] + (meld.naturals if meld else 0)
        size = nat + (meld.wilds if meld else 0)
        if nat >= min_naturals and size + wilds >= canasta_size:
            bound += 1
    return bound


def _meld_ranks(melds: list[Action]) -> list[str]:
    """The ranks the meld actions make, sorted by code (black threes and the like left out)."""
    ranks = set()
    for action in melds:
        for group in action["melds"]:
            k = _first_natural(group)
            if k >= 0:
                ranks.add(rank_code(RANK_OF[k]))
    return sorted(ranks)


def _first_natural(cards: list[str]) -> int:
    for c in cards:
        k = parse_card(c)
        if not IS_WILD[k] and RANK_OF[k] != THREE:
            return k
    return -1
