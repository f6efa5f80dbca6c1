"""Applying a move: ``apply(state, seat, action) -> State`` or :class:`IllegalMove`.

Actions are the log format's action objects (``shared/spec/gamelog.md``). Each handler
checks one move against the rules and builds the next state; nothing is mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.cards import (
    CODES,
    IS_BLACK_THREE,
    IS_RED_THREE,
    IS_WILD,
    RANK_OF,
    THREE,
    VALUE,
    CardError,
    code,
    parse_card,
    parse_rank,
    rank_code,
)
from engine.errors import IllegalMove
from engine.melds import check_black_three_meld, check_meld, meld_rank
from engine.state import Meld, State
from engine.turns import begin_turn, draw_cards, end_hand, replace_at

Action = dict[str, Any]

_FIELDS: dict[str, tuple[set[str], set[str]]] = {  # type -> (required, optional)
    "draw": (set(), set()),
    "take_pile": (set(), {"with", "onto", "melds"}),
    "meld": ({"melds"}, set()),
    "add": ({"rank", "cards"}, set()),
    "discard": ({"card"}, set()),
    "ask_go_out": (set(), set()),
    "answer_go_out": ({"yes"}, set()),
    "pass": (set(), set()),
}


def apply(state: State, seat: int, action: Action) -> State:
    """The state after ``seat`` makes ``action``; raises :class:`IllegalMove` if it may not."""
    kind = _check_shape(action)
    if state.phase == "over":
        raise IllegalMove("game_over", "the game is over")
    if state.phase == "deal":
        raise IllegalMove("hand_not_started", "no hand is being played; the next hand has not been dealt")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.rules.players:
        raise IllegalMove("invalid_seat", f"seats are numbered 0 to {state.rules.players - 1}")
    if kind == "answer_go_out":
        if state.phase != "answer":
            raise IllegalMove("no_question", "nobody has asked to go out")
        if seat != state.to_act:
            raise IllegalMove("not_your_turn", f"seat {state.to_act} answers the question")
    elif state.phase == "answer":
        raise IllegalMove("awaiting_answer", f"seat {state.to_act} must first answer whether seat {state.turn} may go out")
    elif seat != state.to_act:
        raise IllegalMove("not_your_turn", f"it is seat {state.to_act}'s turn")
    new = _HANDLERS[kind](state, seat, action)
    return new._replace(moves=state.moves + 1)


def _check_shape(action: Any) -> str:
    if not isinstance(action, dict):
        raise IllegalMove("invalid_action", "an action is a JSON object with a type")
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise IllegalMove("unknown_action", f"unknown action type {kind!r}; types: {', '.join(_FIELDS)}")
    required, optional = _FIELDS[kind]
    keys = set(action) - {"type"}
    missing = required - keys
    if missing:
        raise IllegalMove("invalid_action", f"{kind} needs {', '.join(sorted(missing))}")
    extra = keys - required - optional
    if extra:
        raise IllegalMove("invalid_action", f"{kind} does not take {', '.join(sorted(extra))}")
    return kind


def _cards(value: Any, what: str) -> list[int]:
    if not isinstance(value, list) or not value:
        raise IllegalMove("invalid_action", f"{what} must be a non-empty list of card codes")
    try:
        return [parse_card(c) for c in value]
    except CardError as e:
        raise IllegalMove("invalid_card", str(e)) from None


def _rank(value: Any) -> int:
    try:
        return parse_rank(value)
    except CardError as e:
        raise IllegalMove("invalid_rank", str(e)) from None


def _remove(hand: list[int], cards: list[int]) -> None:
    for k in cards:
        if hand[k] <= 0:
            raise IllegalMove("cards_not_in_hand", f"you do not hold (enough copies of) {CODES[k]}")
        hand[k] -= 1


# -- going out -----------------------------------------------------------------------------


def may_go_out(s: State, seat: int) -> bool:
    """R16/R17: the side has its canastas and the partner did not say no."""
    return s.permission != 0 and s.canastas(s.rules.team_of(seat)) >= s.rules.canastas_to_go_out


def _go_out_refusal(s: State, seat: int) -> IllegalMove:
    if s.permission == 0:
        return IllegalMove("go_out_refused", "your partner said no: you may not go out this turn")
    need = s.rules.canastas_to_go_out
    return IllegalMove(
        "not_enough_canastas",
        f"your side needs {need} canasta{'s' if need > 1 else ''} to go out; keep at least one card",
    )


def is_concealed(s: State, seat: int) -> bool:
    """R19: going out now would be concealed (nobody melded earlier, a canasta this turn)."""
    rules = s.rules
    if not s.turn_canasta:
        return False
    if rules.concealed_scope == "side":
        team = rules.team_of(seat)
        return not any(s.melded[p] for p in range(rules.players) if rules.team_of(p) == team)
    return not s.melded[seat]


def _check_black_threes(s: State, seat: int, black_meld: bool) -> None:
    if black_meld and s.hand_size(seat) > 1:
        raise IllegalMove("black_threes_not_allowed", "black threes are melded only when going out")


def _settle(before: State, s: State, seat: int, black_meld: bool = False) -> State:
    """After a meld, an add or a pile take: go out on an empty hand, or keep a card to discard."""
    left = s.hand_size(seat)
    if left <= 1 and not may_go_out(s, seat):
        if left == 0:
            raise _go_out_refusal(s, seat)
        raise IllegalMove(
            "must_keep_card",
            "this would leave you one card you could not discard: your side cannot go out yet",
        )
    _check_black_threes(s, seat, black_meld)
    if left == 0:
        return end_hand(s, "went_out", seat, is_concealed(s, seat))
    if before.permission == 1:
        # R17: after a "yes" the player must go out; no move may throw that chance away
        from engine.going_out import going_out_plan

        if going_out_plan(s, seat) is None and going_out_plan(before, seat) is not None:
            raise IllegalMove("must_go_out", "your partner said yes: this move would leave you unable to go out")
    return s


def _check_opening(before: State, after: State, seat: int, value: int) -> None:
    """R8/R9/R19: the side's first melds must reach its minimum, unless a concealed going out waives it."""
    team = before.rules.team_of(seat)
    if before.opened(team) or value >= before.minimums[team]:
        return
    rules = before.rules
    waived = rules.concealed_minimum == "waived" or (
        rules.concealed_minimum == "waived_after_stock_draw" and before.drawn == "stock"
    )
    if waived and after.hand_size(seat) <= 1 and may_go_out(after, seat) and is_concealed(after, seat):
        return
    raise IllegalMove(
        "opening_minimum_not_met",
        f"your side's first melds must count at least {before.minimums[team]} points; these count {value}",
    )


def _new_meld(rules, rank: int, cards: list[int], extra_hidden: bool = True) -> Meld:
    meld = Meld.of(rank, cards)
    if extra_hidden and meld.is_canasta(rules):
        meld = meld._replace(hidden=True)
    return meld


# -- handlers ------------------------------------------------------------------------------


def _draw(s: State, seat: int, a: Action) -> State:
    if s.phase != "draw":
        raise IllegalMove("already_drew", "you have already drawn this turn")
    if s.stock_size == 0:
        raise IllegalMove("stock_empty", "the stock is empty: take the discard pile or pass")
    new, ends = draw_cards(s, seat, s.rules.draw_count, phase="play", drawn="stock")
    if ends:
        return end_hand(new, "red_three_last", seat)
    return new


def pile_refusal(s: State, seat: int) -> IllegalMove | None:
    """Why ``seat`` may not take the pile at all right now (R13, R11 locks), or None."""
    if not s.pile:
        return IllegalMove("pile_empty", "the discard pile is empty")
    top = s.pile[-1]
    if IS_WILD[top] or RANK_OF[top] == THREE:
        return IllegalMove("pile_top_untakeable", f"the pile cannot be taken while {CODES[top]} is on top")
    if s.pile_lock >= 0:
        return IllegalMove("pile_locked", f"a discarded red three locks the pile until seat {s.pile_lock}'s turn")
    if len(s.pile) == 1 and s.hand_size(seat) == 1:
        return IllegalMove("pile_single_card", "with one card in hand you may not take a pile of one card")
    return None


def pile_frozen_for(s: State, team: int) -> bool:
    return s.pile_frozen_by >= 0 or not s.opened(team)


def _take_pile(s: State, seat: int, a: Action) -> State:
    if s.phase != "draw":
        raise IllegalMove("already_drew", "you have already drawn this turn")
    refusal = pile_refusal(s, seat)
    if refusal:
        raise refusal
    rules = s.rules
    team = rules.team_of(seat)
    top = s.pile[-1]
    rank = RANK_OF[top]
    frozen = pile_frozen_for(s, team)
    side = s.melds[team]
    hand = list(s.hands[seat])
    if ("with" in a) == ("onto" in a):
        raise IllegalMove("invalid_action", "take_pile needs either with (hand cards) or onto (a rank)")
    if "onto" in a:
        if _rank(a["onto"]) != rank:
            raise IllegalMove("wrong_rank", f"the top card is {CODES[top]}: it goes onto your {rank_code(rank)} meld")
        if side[rank] is None:
            raise IllegalMove("no_meld_to_add", f"your side has no {rank_code(rank)} meld to put the top card on")
        if frozen:
            raise _frozen_error(s, team)
        used: list[int] = []
    else:
        used = _cards(a["with"], "with")
        for k in used:
            if not (IS_WILD[k] or RANK_OF[k] == rank) or IS_RED_THREE[k]:
                raise IllegalMove("card_does_not_fit", f"{CODES[k]} cannot be melded with the top card {CODES[top]}")
        if frozen and sum(1 for k in used if RANK_OF[k] == rank) < 2:
            raise _frozen_error(s, team)
    _remove(hand, used)
    value = VALUE[top] + sum(VALUE[k] for k in used)
    melds = list(side)
    old = melds[rank]
    base = list(old.cards) if old else []
    combined = base + [top] + used
    nat = sum(1 for k in combined if not IS_WILD[k])
    check_meld(rules, rank, nat, len(combined) - nat, new=old is None)
    melds[rank] = Meld.of(rank, combined, old.hidden if old else False)
    canasta_now = melds[rank].is_canasta(rules) and not (old and old.is_canasta(rules))
    if old is None and canasta_now:
        melds[rank] = melds[rank]._replace(hidden=True)  # laid whole with only the top card
    extra, black = _parse_melds(s, a.get("melds", []), melds, hand, {rank})
    for m in extra:
        value += m.value
        canasta_now = canasta_now or m.is_canasta(rules)
        melds[m.rank] = m
    # the rest of the pile goes to the hand; red threes in it are laid, not replaced (R4)
    red = list(s.red_threes[team])
    for k in s.pile[:-1]:
        if IS_RED_THREE[k]:
            red.append(k)
        else:
            hand[k] += 1
    new = s._replace(
        hands=replace_at(s.hands, seat, tuple(hand)),
        melds=replace_at(s.melds, team, tuple(melds)),
        red_threes=replace_at(s.red_threes, team, tuple(red)),
        pile=(),
        pile_frozen_by=-1,
        phase="play",
        drawn="pile",
        turn_melded=True,
        turn_canasta=s.turn_canasta or canasta_now,
    )
    _check_black_threes(new, seat, black)
    _check_opening(s, new, seat, value)
    return _settle(s, new, seat, black)


def _frozen_error(s: State, team: int) -> IllegalMove:
    if not s.opened(team):
        return IllegalMove(
            "pile_frozen",
            "the pile is frozen for your side until it opens: show a natural pair of the top card's rank",
        )
    return IllegalMove(
        "pile_frozen",
        f"the pile is frozen by {CODES[s.pile_frozen_by]}: show a natural pair of the top card's rank",
    )


def _parse_melds(
    s: State, value: Any, side: list[Meld | None], hand: list[int], taken: set[int]
) -> tuple[list[Meld], bool]:
    """New melds from hand cards (removed from ``hand``). Returns them and whether black threes are among them."""
    if not isinstance(value, list):
        raise IllegalMove("invalid_action", "melds must be a list of card lists")
    rules = s.rules
    out: list[Meld] = []
    black = False
    for group in value:
        cards = _cards(group, "each meld")
        if any(IS_RED_THREE[k] for k in cards):
            raise IllegalMove("cannot_meld_red_three", "red threes are bonus cards and are never melded")
        _remove(hand, cards)
        rank = meld_rank(cards)
        if rank == THREE:
            if not all(IS_BLACK_THREE[k] or IS_WILD[k] for k in cards):
                raise IllegalMove("black_threes_not_allowed", "black threes are melded only with each other")
            check_black_three_meld(cards)
            black = True
        else:
            nat = sum(1 for k in cards if not IS_WILD[k])
            check_meld(rules, rank, nat, len(cards) - nat, new=True)
        if side[rank] is not None:
            raise IllegalMove("meld_rank_exists", f"your side already has a {rank_code(rank)} meld: add to it")
        if rank in taken:
            raise IllegalMove("duplicate_meld_rank", f"two melds of {rank_code(rank)} in one move; one meld per rank")
        taken.add(rank)
        out.append(_new_meld(rules, rank, cards))
    return out, black


def _meld(s: State, seat: int, a: Action) -> State:
    if s.phase != "play":
        raise IllegalMove("must_draw_first", "draw or take the pile before melding")
    rules = s.rules
    team = rules.team_of(seat)
    groups = a["melds"]
    if not isinstance(groups, list) or not groups:
        raise IllegalMove("invalid_action", "melds must be a non-empty list of card lists")
    hand = list(s.hands[seat])
    # R14 (optional red threes): a single red three is laid as a bonus card and replaced.
    red_lays = []
    rest = []
    for group in groups:
        if isinstance(group, list) and len(group) == 1 and group[0] in ("3H", "3D") and rules.red_threes_optional:
            red_lays.append(parse_card(group[0]))
        else:
            rest.append(group)
    melds = list(s.melds[team])
    new_melds, black = _parse_melds(s, rest, melds, hand, set())
    _remove(hand, red_lays)
    value = 0
    canasta_now = False
    for m in new_melds:
        melds[m.rank] = m
        value += m.value
        canasta_now = canasta_now or m.is_canasta(rules)
    pos = s.stock_pos
    for _ in red_lays:  # replacements; a red three drawn now stays in hand (optional laying)
        if pos < len(s.deck):
            hand[s.deck[pos]] += 1
            pos += 1
    new = s._replace(
        hands=replace_at(s.hands, seat, tuple(hand)),
        melds=replace_at(s.melds, team, tuple(melds)),
        red_threes=replace_at(s.red_threes, team, s.red_threes[team] + tuple(red_lays))
        if red_lays
        else s.red_threes,
        stock_pos=pos,
        turn_melded=s.turn_melded or bool(new_melds),
        turn_canasta=s.turn_canasta or canasta_now,
    )
    _check_black_threes(new, seat, black)
    if new_melds:
        _check_opening(s, new, seat, value)
    return _settle(s, new, seat, black)


def _add(s: State, seat: int, a: Action) -> State:
    if s.phase != "play":
        raise IllegalMove("must_draw_first", "draw or take the pile before adding to melds")
    rules = s.rules
    team = rules.team_of(seat)
    rank = _rank(a["rank"])
    cards = _cards(a["cards"], "cards")
    old = s.melds[team][rank]
    if old is None:
        raise IllegalMove("no_meld_to_add", f"your side has no {rank_code(rank)} meld")
    if rank == THREE:
        raise IllegalMove("black_threes_not_allowed", "nothing can be added to black threes")
    for k in cards:
        if IS_RED_THREE[k] or not (IS_WILD[k] or RANK_OF[k] == rank):
            raise IllegalMove("card_does_not_fit", f"{code(k)} does not belong in the {rank_code(rank)} meld")
    hand = list(s.hands[seat])
    _remove(hand, cards)
    combined = old.cards + tuple(cards)
    nat = sum(1 for k in combined if not IS_WILD[k])
    check_meld(rules, rank, nat, len(combined) - nat, new=False)
    meld = Meld.of(rank, combined, old.hidden)
    canasta_now = meld.is_canasta(rules) and not old.is_canasta(rules)
    new = s._replace(
        hands=replace_at(s.hands, seat, tuple(hand)),
        melds=replace_at(s.melds, team, replace_at(s.melds[team], rank, meld)),
        turn_melded=True,
        turn_canasta=s.turn_canasta or canasta_now,
    )
    return _settle(s, new, seat)


def _discard(s: State, seat: int, a: Action) -> State:
    if s.phase != "play":
        raise IllegalMove("must_draw_first", "draw or take the pile before discarding")
    rules = s.rules
    try:
        card = parse_card(a["card"])
    except CardError as e:
        raise IllegalMove("invalid_card", str(e)) from None
    if IS_RED_THREE[card] and not rules.red_threes_optional:
        raise IllegalMove("cannot_discard_red_three", "red threes are laid, never discarded")
    hand = list(s.hands[seat])
    _remove(hand, [card])
    left = sum(hand)
    if left == 0 and not may_go_out(s, seat):
        raise _go_out_refusal(s, seat)
    if left and s.permission == 1:
        from engine.going_out import going_out_plan  # a cycle: the plan is checked with apply

        if going_out_plan(s, seat) is not None:
            raise IllegalMove("must_go_out", "your partner said yes: you must go out this turn")
    frozen_by = s.pile_frozen_by
    if frozen_by < 0 and (
        (IS_WILD[card] and rules.discard_wild_freezes)
        or (IS_BLACK_THREE[card] and rules.discard_black_three_freezes)
    ):
        frozen_by = card
    lock = seat if IS_RED_THREE[card] and rules.red_three_discard_locks_round else s.pile_lock
    changes = {
        "hands": replace_at(s.hands, seat, tuple(hand)),
        "pile": s.pile + (card,),
        "pile_frozen_by": frozen_by,
        "pile_lock": lock,
        "melded": replace_at(s.melded, seat, True) if s.turn_melded else s.melded,
    }
    if left == 0:
        return end_hand(s._replace(**changes), "went_out", seat, is_concealed(s, seat))
    return begin_turn(s, (seat + 1) % rules.players, **changes)


def _ask_go_out(s: State, seat: int, a: Action) -> State:
    rules = s.rules
    partners = rules.partners(seat)
    if not partners:
        raise IllegalMove("no_partner", "only players with a partner ask to go out")
    if s.asked:
        raise IllegalMove("already_asked", "you have already asked this turn")
    if s.phase == "draw":
        if rules.ask_go_out != "before_or_after_draw":
            raise IllegalMove("ask_too_early", "ask to go out after drawing from the stock")
    elif s.drawn != "stock" or s.turn_melded:
        raise IllegalMove("ask_too_late", "ask to go out right after drawing from the stock, before melding")
    penalties = s.penalties
    if s.phase == "play":
        from engine.going_out import going_out_plan

        if going_out_plan(s, seat) is None:
            if not rules.ask_unable_penalty:
                raise IllegalMove("cannot_go_out", "you cannot go out this turn, so you may not ask")
            team = rules.team_of(seat)
            penalties = replace_at(penalties, team, penalties[team] + rules.ask_unable_penalty)
    return s._replace(phase="answer", to_act=partners[0], asked=True, penalties=penalties)


def _answer_go_out(s: State, seat: int, a: Action) -> State:
    yes = a["yes"]
    if not isinstance(yes, bool):
        raise IllegalMove("invalid_action", "yes must be true or false")
    return s._replace(
        permission=1 if yes else 0,
        phase="draw" if s.drawn == "" else "play",
        to_act=s.turn,
    )


def take_forced(s: State, seat: int) -> bool:
    """R21 (play_on_forced): an unfrozen pile whose top fits a side meld must be taken."""
    if s.rules.stock_out != "play_on_forced" or pile_refusal(s, seat) is not None:
        return False
    team = s.rules.team_of(seat)
    if pile_frozen_for(s, team) or s.melds[team][RANK_OF[s.pile[-1]]] is None:
        return False
    try:
        _take_pile(s, seat, {"type": "take_pile", "onto": rank_code(RANK_OF[s.pile[-1]])})
    except IllegalMove:
        return False
    return True


def _pass(s: State, seat: int, a: Action) -> State:
    if s.phase != "draw":
        raise IllegalMove("already_drew", "you have already drawn this turn")
    if s.stock_size:
        raise IllegalMove("stock_not_empty", "pass is only for when the stock is empty: draw")
    if take_forced(s, seat):
        raise IllegalMove("must_take_pile", "the top card fits your side's meld: you must take the pile")
    return end_hand(s, "stock_exhausted", seat)


_HANDLERS: dict[str, Callable[[State, int, Action], State]] = {
    "draw": _draw,
    "take_pile": _take_pile,
    "meld": _meld,
    "add": _add,
    "discard": _discard,
    "ask_go_out": _ask_go_out,
    "answer_go_out": _answer_go_out,
    "pass": _pass,
}
