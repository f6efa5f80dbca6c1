"""Applying a move: ``apply(state, seat, action) -> State`` or :class:`IllegalMove`.

Actions are the log format's action objects. Each handler checks one move against the rules
and builds the next state; nothing is mutated. The rules that look ahead (R16: can the last
card still go out? R17/R19: a player bound to go out; R21: can the next player take the pile?)
answer by trying moves with these same handlers, so they never claim more than the rules allow.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from itertools import combinations_with_replacement
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
from engine.going_out import candidate_plans
from engine.melds import check_black_three_meld, check_meld, meld_rank
from engine.pile import pile_frozen_for, pile_refusal, pile_to_hand, take_candidates
from engine.state import GRANTED, NOT_ASKED, NOT_FROZEN, REFUSED, Meld, State
from engine.text import names_text, quote
from engine.turns import begin_turn, cut_at_move_limit, draw_cards, end_hand, replace_at

Action = dict[str, Any]
Handler = Callable[[State, int, Action], State]  # a move's judge: the next state, or IllegalMove

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
    """The state after ``seat`` makes ``action``; raises :class:`IllegalMove` if it may not.
    A hand that reaches its move limit ends after the move (``engine.turns``)."""
    return cut_at_move_limit(_judge(state, seat, action))


def _judge(state: State, seat: int, action: Action) -> State:
    """:func:`apply` without the move limit: the rules alone, for their own look-ahead."""
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
    return new._replace(moves=state.moves + 1, hand_moves=state.hand_moves + 1)


def accepts(s: State, seat: int, action: Action, handler: Handler = _judge) -> bool:
    """Whether ``handler`` accepts ``action`` for ``seat``: legality answered by trying the
    move itself. ``handler`` judges any move, or is one move's own handler where the phase
    and the seat are known to be right (a pile take tried on the player's own turn)."""
    try:
        handler(s, seat, action)
    except IllegalMove:
        return False
    return True


def _check_shape(action: Any) -> str:
    if not isinstance(action, dict):
        raise IllegalMove("invalid_action", "an action is a JSON object with a type")
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise IllegalMove("unknown_action", f"unknown action type {quote(kind)}; types: {', '.join(_FIELDS)}")
    required, optional = _FIELDS[kind]
    keys = set(action) - {"type"}
    missing = required - keys
    if missing:
        raise IllegalMove("invalid_action", f"{kind} needs {', '.join(sorted(missing))}")
    extra = keys - required - optional
    if extra:
        raise IllegalMove("invalid_action", f"{kind} does not take {names_text(map(str, extra))}")
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


# -- what the table knows came with the pile (R18) ------------------------------------------------


def _forget(known: tuple[tuple[int, ...], ...], seat: int, shown: list[int]) -> tuple[tuple[int, ...], ...]:
    """``known_from_pile`` after ``seat`` shows ``shown`` (melds, adds or discards them). Each
    copy shown may have been a known one; dropping more would tell whether it was."""
    mine = known[seat]
    if not mine:
        return known
    left = list(mine)
    for k in shown:
        if k in left:
            left.remove(k)
    return known if len(left) == len(mine) else replace_at(known, seat, tuple(left))


def _learn(known: tuple[tuple[int, ...], ...], seat: int, taken: list[int]) -> tuple[tuple[int, ...], ...]:
    """``known_from_pile`` after the pile's ``taken`` cards went into ``seat``'s hand."""
    if not taken:
        return known
    return replace_at(known, seat, tuple(sorted(known[seat] + tuple(taken))))


def _unknown(s: State, seat: int) -> list[int]:
    """Per kind: the copies in ``seat``'s hand that the table did not see come with the pile."""
    unknown = list(s.hands[seat])
    for k in s.known_from_pile[seat]:
        unknown[k] -= 1
    return unknown


def _claim_hidden(unknown: list[int], cards: tuple[int, ...] | list[int]) -> bool:
    """R18: a canasta laid whole is hidden only if the hand's own cards (those not known to
    have come with the pile) make it; if so, they are used up for the action's other melds."""
    need: dict[int, int] = {}
    for k in cards:
        need[k] = need.get(k, 0) + 1
    if any(unknown[k] < n for k, n in need.items()):
        return False
    for k, n in need.items():
        unknown[k] -= n
    return True


# -- going out -----------------------------------------------------------------------------


def may_go_out(s: State, seat: int) -> bool:
    """R16/R17: the side has its canastas and the partner did not say no."""
    return s.permission != REFUSED and s.canastas(s.rules.team_of(seat)) >= s.rules.going_out.canastas_to_go_out


def _go_out_refusal(s: State, seat: int) -> IllegalMove:
    if s.permission == REFUSED:
        return IllegalMove("go_out_refused", "your partner said no: you may not go out this turn")
    need = s.rules.going_out.canastas_to_go_out
    return IllegalMove(
        "not_enough_canastas",
        f"your side needs {need} canasta{'s' if need > 1 else ''} to go out; keep at least one card",
    )


def is_concealed(s: State, seat: int) -> bool:
    """R19: going out now would be concealed (nobody melded earlier, a canasta this turn)."""
    rules = s.rules
    if not s.turn_canasta:
        return False
    if rules.going_out.concealed_scope == "side":
        team = rules.team_of(seat)
        return not any(s.melded[p] for p in range(rules.players) if rules.team_of(p) == team)
    return not s.melded[seat]


def going_out_plan(s: State, seat: int) -> list[Action] | None:
    """Moves that go out from here (phase "play"), proven by applying them; None if none is found."""
    for plan in candidate_plans(s, seat):
        if _proves(s, seat, plan):
            return plan
    return None


def _proves(s: State, seat: int, plan: list[Action]) -> bool:
    # What binds the player (a "yes", a waived minimum) asks only that the plan go out; the
    # plan is applied without it, so that proving it does not ask for another plan at every move.
    state = s._replace(permission=NOT_ASKED if s.permission == GRANTED else s.permission, minimum_waived=False)
    try:
        for action in plan:
            state = _judge(state, seat, action)
    except IllegalMove:
        return False
    result = state.hand_result
    return state.phase in ("deal", "over") and result is not None and result["by"] == seat and result["reason"] == "went_out"


def _can_still_go_out(s: State, seat: int) -> bool:
    """Whether ``seat`` can go out this turn from here (with an empty hand: whether it may)."""
    if s.hand_size(seat) == 0:
        return may_go_out(s, seat)
    return going_out_plan(s, seat) is not None


def _bound_to_go_out(s: State) -> bool:
    """R17/R19: the partner said yes, or the opening minimum was waived for a concealed going out."""
    return s.permission == GRANTED or s.minimum_waived


def _must_go_out(s: State, detail: str) -> IllegalMove:
    why = "your partner said yes" if s.permission == GRANTED else "your side opened below its minimum to go out concealed"
    return IllegalMove("must_go_out", f"{why}: {detail}")


def _check_black_threes(s: State, seat: int, black_meld: bool) -> None:
    if black_meld and s.hand_size(seat) > 1:
        raise IllegalMove("black_threes_not_allowed", "black threes are melded only when going out")


def _settle(before: State, s: State, seat: int, black_meld: bool = False) -> State:
    """After a meld, an add or a pile take: go out on an empty hand, or keep a card that can
    still be got rid of (R16), and keep a binding chance to go out (R17, R19)."""
    left = s.hand_size(seat)
    if left == 0:
        if not may_go_out(s, seat):
            raise _go_out_refusal(s, seat)
        return end_hand(s, "went_out", seat, is_concealed(s, seat))
    if left == 1 and not may_go_out(s, seat) and not _last_card_completes(s, seat):
        # the last card could only leave by going out, and it cannot go out this turn
        raise IllegalMove(
            "must_keep_card",
            "this would leave you one card that cannot go out this turn: keep two cards, one to discard",
        )
    _check_black_threes(s, seat, black_meld)
    if _bound_to_go_out(before) and going_out_plan(s, seat) is None:
        if before.minimum_waived or going_out_plan(before, seat) is not None:
            raise _must_go_out(before, "this move would leave you unable to go out")
    return s


def _last_card_completes(s: State, seat: int) -> bool:
    """R16: whether the one card left, added to a meld, completes the last canasta the side
    needs to go out (one card completes one canasta at most)."""
    missing = s.rules.going_out.canastas_to_go_out - s.canastas(s.rules.team_of(seat))
    return s.permission != REFUSED and missing <= 1 and going_out_plan(s, seat) is not None


def _minimum_waivable(s: State) -> bool:
    """R19: whether a concealed going out this turn would waive the opening minimum."""
    waiver = s.rules.going_out.concealed_minimum
    return waiver == "waived" or (waiver == "waived_after_stock_draw" and s.drawn == "stock")


def _check_opening(before: State, after: State, seat: int, value: int) -> State:
    """R8/R9/R19: the side's first melds count at least its minimum, or it goes out concealed.

    Where the going out waives the minimum, a first meld below it is allowed while going out
    stays possible; the turn is then bound to end by going out (``minimum_waived``). An
    unopened side's going out is always concealed: nobody of the side has melded yet, and its
    canastas are all made this turn.
    """
    team = before.rules.team_of(seat)
    if before.opened(team) or value >= before.minimums[team]:
        return after
    if _minimum_waivable(before) and _can_still_go_out(after, seat):
        return after._replace(minimum_waived=True) if after.hand_size(seat) else after
    raise IllegalMove(
        "opening_minimum_not_met",
        f"your side's first melds must count at least {before.minimums[team]} points; these count {value}",
    )


# -- handlers ------------------------------------------------------------------------------


def _draw(s: State, seat: int, a: Action) -> State:
    if s.phase != "draw":
        raise IllegalMove("already_drew", "you have already drawn this turn")
    if s.stock_size == 0:
        raise IllegalMove("stock_empty", "the stock is empty: take the discard pile or pass")
    new, ends = draw_cards(s, seat, s.rules.dealing.draw_count, phase="play", drawn="stock")
    if ends:
        return end_hand(new, "red_three_last", seat)
    return new


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
    combined = (old.cards if old else ()) + (top, *used)
    nat = sum(1 for k in combined if not IS_WILD[k])
    check_meld(rules, rank, nat, len(combined) - nat, new=old is None)
    meld = Meld.of(rank, combined, old.hidden if old else False)
    canasta_now = meld.is_canasta(rules) and not (old and old.is_canasta(rules))
    unknown = None
    if old is None and canasta_now:
        # R18: laid whole with the top card; its other cards must be the hand's own
        unknown = _unknown(s, seat)
        meld = meld._replace(hidden=_claim_hidden(unknown, used))
    melds[rank] = meld
    extra, black = _parse_melds(s, seat, a.get("melds", []), melds, hand, {rank}, unknown)
    for m in extra:
        if rules.pile.opening_from_pile == "all_melds":  # R9
            value += m.value
        canasta_now = canasta_now or m.is_canasta(rules)
        melds[m.rank] = m
    # the rest of the pile (and the wilds beside it) goes to the hand; red threes as R4 says
    to_hand, laid = pile_to_hand(s)
    for k in to_hand:
        hand[k] += 1
    known = _forget(s.known_from_pile, seat, used + [k for m in extra for k in m.cards])
    new = s._replace(
        hands=replace_at(s.hands, seat, tuple(hand)),
        melds=replace_at(s.melds, team, tuple(melds)),
        red_threes=replace_at(s.red_threes, team, s.red_threes[team] + tuple(laid)) if laid else s.red_threes,
        pile=(),
        pile_beside=(),
        pile_frozen_by=NOT_FROZEN,
        known_from_pile=_learn(known, seat, to_hand),
        phase="play",
        drawn="pile",
        turn_melded=True,
        turn_canasta=s.turn_canasta or canasta_now,
    )
    _check_black_threes(new, seat, black)
    new = _check_opening(s, new, seat, value)
    return _settle(s, new, seat, black)


def _frozen_error(s: State, team: int) -> IllegalMove:
    if not s.opened(team):
        return IllegalMove(
            "pile_frozen",
            "the pile is frozen for your side until it opens: show a natural pair of the top card's rank",
        )
    where = " beside the pile" if s.pile_frozen_by in s.pile_beside else ""
    return IllegalMove(
        "pile_frozen",
        f"the pile is frozen by {CODES[s.pile_frozen_by]}{where}: show a natural pair of the top card's rank",
    )


def _parse_melds(
    s: State,
    seat: int,
    value: Any,
    side: list[Meld | None],
    hand: list[int],
    taken: set[int],
    unknown: list[int] | None = None,
) -> tuple[list[Meld], bool]:
    """New melds from hand cards (removed from ``hand``). Returns them and whether black threes
    are among them. ``unknown``: the hand's own cards not yet used by a hidden canasta (R18)."""
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
            check_black_three_meld(rules, cards)
            black = True
        else:
            nat = sum(1 for k in cards if not IS_WILD[k])
            check_meld(rules, rank, nat, len(cards) - nat, new=True)
        if side[rank] is not None:
            raise IllegalMove("meld_rank_exists", f"your side already has a {rank_code(rank)} meld: add to it")
        if rank in taken:
            raise IllegalMove("duplicate_meld_rank", f"two melds of {rank_code(rank)} in one move; one meld per rank")
        taken.add(rank)
        meld = Meld.of(rank, cards)
        if meld.is_canasta(rules):  # R18: laid whole in one action
            if unknown is None:
                unknown = _unknown(s, seat)
            meld = meld._replace(hidden=_claim_hidden(unknown, cards))
        out.append(meld)
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
        if isinstance(group, list) and len(group) == 1 and group[0] in ("3H", "3D") and rules.melding.red_threes_optional:
            red_lays.append(parse_card(group[0]))
        else:
            rest.append(group)
    melds = list(s.melds[team])
    new_melds, black = _parse_melds(s, seat, rest, melds, hand, set())
    _remove(hand, red_lays)
    value = 0
    canasta_now = False
    for m in new_melds:
        melds[m.rank] = m
        value += m.value
        canasta_now = canasta_now or m.is_canasta(rules)
    # replacements; a red three drawn now stays in hand (optional laying)
    pos = min(s.stock_pos + len(red_lays), len(s.deck))
    drawn = s.deck[s.stock_pos:pos]
    shown = red_lays + [k for m in new_melds for k in m.cards]
    laid = s._replace(
        melds=replace_at(s.melds, team, tuple(melds)),
        red_threes=replace_at(s.red_threes, team, s.red_threes[team] + tuple(red_lays))
        if red_lays
        else s.red_threes,
        stock_pos=pos,
        known_from_pile=_forget(s.known_from_pile, seat, shown),
        turn_melded=s.turn_melded or bool(new_melds),
        turn_canasta=s.turn_canasta or canasta_now,
    )

    def judged(replacements: tuple[int, ...]) -> State:
        held = list(hand)
        for k in replacements:
            held[k] += 1
        new = laid._replace(hands=replace_at(s.hands, seat, tuple(held)))
        _check_black_threes(new, seat, black)
        if new_melds:
            new = _check_opening(s, new, seat, value)
        return _settle(s, new, seat, black)

    if drawn and _replacements_matter(s, seat, sum(hand) + len(drawn), bool(new_melds) and value < s.minimums[team]):
        # The mover has not seen the replacements: the move is legal only if it would be with
        # any cards it cannot see, or its verdict (a dry run, a refusal) would name them.
        for replacements in _unseen_draws(s, seat, len(drawn)):
            judged(replacements)
    return judged(drawn)


def _replacements_matter(s: State, seat: int, left: int, below_minimum: bool) -> bool:
    """Whether the cards replacing laid red threes can change a meld's verdict: only the looks
    ahead at going out do (the last card, R16; a turn bound to go out, R17/R19; a first meld
    below the minimum, R19). ``left``: the hand's size after the move."""
    team = s.rules.team_of(seat)
    return left <= 1 or _bound_to_go_out(s) or (below_minimum and not s.opened(team))


def _unseen_draws(s: State, seat: int, n: int) -> Iterator[tuple[int, ...]]:
    """Every ``n`` cards (as kinds, sorted) that ``seat`` cannot tell are not the stock's next:
    the deck's cards but those in its hand, on the table, in the pile and those the table saw
    another seat take with the pile."""
    unseen = Counter(s.deck)
    unseen.subtract(k for k, c in enumerate(s.hands[seat]) for _ in range(c))
    for side in s.melds:
        for m in side:
            if m is not None:
                unseen.subtract(m.cards)
    for r in s.red_threes:
        unseen.subtract(r)
    unseen.subtract(s.pile + s.pile_beside)
    for other, known in enumerate(s.known_from_pile):
        if other != seat:
            unseen.subtract(known)
    kinds = sorted(k for k, c in unseen.items() if c > 0)
    for draw in combinations_with_replacement(kinds, n):
        if all(draw.count(k) <= unseen[k] for k in set(draw)):
            yield draw


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
        known_from_pile=_forget(s.known_from_pile, seat, cards),
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
    if IS_RED_THREE[card] and not rules.melding.red_threes_optional:
        raise IllegalMove("cannot_discard_red_three", "red threes are laid, never discarded")
    hand = list(s.hands[seat])
    _remove(hand, [card])
    left = sum(hand)
    if left == 0 and not may_go_out(s, seat):
        raise _go_out_refusal(s, seat)
    if left and s.minimum_waived:
        raise _must_go_out(s, "you must go out this turn")
    if left and s.permission == GRANTED and going_out_plan(s, seat) is not None:
        raise _must_go_out(s, "you must go out this turn")
    frozen_by = s.pile_frozen_by
    if frozen_by == NOT_FROZEN and (
        (IS_WILD[card] and rules.pile.discard_wild_freezes)
        or (IS_BLACK_THREE[card] and rules.pile.discard_black_three_freezes)
    ):
        frozen_by = card
    beside = IS_WILD[card] and rules.pile.discarded_wilds == "beside_pile"  # R13: the top card stays
    lock = seat if IS_RED_THREE[card] and rules.pile.red_three_discard_locks_round else s.pile_lock
    changes: dict[str, Any] = {
        "hands": replace_at(s.hands, seat, tuple(hand)),
        "pile": s.pile if beside else s.pile + (card,),
        "pile_beside": s.pile_beside + (card,) if beside else s.pile_beside,
        "pile_frozen_by": frozen_by,
        "pile_lock": lock,
        "known_from_pile": _forget(s.known_from_pile, seat, [card]),
        "melded": replace_at(s.melded, seat, True) if s.turn_melded else s.melded,
    }
    if left == 0:
        return end_hand(s._replace(**changes), "went_out", seat, is_concealed(s, seat))
    return _stock_out(begin_turn(s, (seat + 1) % rules.players, **changes))


def ask_refusal(s: State, seat: int) -> IllegalMove | None:
    """R17: why ``seat`` may not ask "may I go out?" now, or None."""
    rules = s.rules
    if rules.team_size < 2:
        return IllegalMove("no_partner", "only players with a partner ask to go out")
    if s.asked:
        return IllegalMove("already_asked", "you have already asked this turn")
    when = rules.going_out.ask_go_out
    if s.phase == "draw":
        if when != "before_melds_or_pile_take":
            return IllegalMove("ask_too_early", "ask to go out after drawing from the stock")
        return None
    if s.drawn != "stock":
        return IllegalMove("ask_too_late", "permission is asked only in a turn that began with a draw from the stock")
    if s.turn_melded and when != "after_stock_draw_before_discard":
        return IllegalMove("ask_too_late", "ask to go out before melding")
    if s.minimum_waived:
        return IllegalMove("ask_too_late", "your side opened below its minimum to go out concealed: you must go out")
    if s.hand_size(seat) < 2:
        # a "no" could not be obeyed: the last card leaves the hand only by going out
        return IllegalMove("ask_too_late", "with one card left you are going out: ask before melding down to it")
    return None


def _ask_go_out(s: State, seat: int, a: Action) -> State:
    refusal = ask_refusal(s, seat)
    if refusal:
        raise refusal
    rules = s.rules
    penalties = s.penalties
    if s.phase == "play" and going_out_plan(s, seat) is None:
        if not rules.going_out.ask_unable_penalty:
            raise IllegalMove("cannot_go_out", "you cannot go out this turn, so you may not ask")
        team = rules.team_of(seat)
        penalties = replace_at(penalties, team, penalties[team] + rules.going_out.ask_unable_penalty)
    return s._replace(phase="answer", to_act=rules.partners(seat)[0], asked=True, penalties=penalties)


def _answer_go_out(s: State, seat: int, a: Action) -> State:
    yes = a["yes"]
    if not isinstance(yes, bool):
        raise IllegalMove("invalid_action", "yes must be true or false")
    return _stock_out(
        s._replace(permission=GRANTED if yes else REFUSED, phase="draw" if s.drawn == "" else "play", to_act=s.turn)
    )


# -- the stock runs out (R21) ---------------------------------------------------------------


def _stock_out(s: State) -> State:
    """R21: on an empty stock a turn goes on only by taking the pile. The hand ends at once, by
    the player to move, where the rules end it with the stock, or where that player cannot
    take the pile (no move of theirs: ``pass`` only declines a pile that could be taken)."""
    if s.phase != "draw" or s.stock_size:
        return s
    if s.rules.dealing.stock_out == "end" or find_take(s, s.turn) is None:
        return end_hand(s, "stock_exhausted", s.turn)
    return s


def find_take(s: State, seat: int) -> Action | None:
    """A take of the pile that ``apply`` accepts for ``seat`` now, or None if there is none."""
    for action in take_candidates(s, seat):
        if accepts(s, seat, action, _take_pile):
            return action
    return None




def take_forced(s: State, seat: int) -> bool:
    """R21 (play_on_forced): an unfrozen pile whose top fits a side meld must be taken."""
    if s.rules.dealing.stock_out != "play_on_forced" or pile_refusal(s, seat) is not None:
        return False
    team = s.rules.team_of(seat)
    rank = RANK_OF[s.pile[-1]]
    if pile_frozen_for(s, team) or s.melds[team][rank] is None:
        return False
    return accepts(s, seat, {"type": "take_pile", "onto": rank_code(rank)}, _take_pile)


def _pass(s: State, seat: int, a: Action) -> State:
    if s.phase != "draw":
        raise IllegalMove("already_drew", "you have already drawn this turn")
    if s.stock_size:
        raise IllegalMove("stock_not_empty", "pass is only for when the stock is empty: draw")
    if take_forced(s, seat):
        raise IllegalMove("must_take_pile", "the top card fits your side's meld: you must take the pile")
    return end_hand(s, "stock_exhausted", seat)


_HANDLERS: dict[str, Handler] = {
    "draw": _draw,
    "take_pile": _take_pile,
    "meld": _meld,
    "add": _add,
    "discard": _discard,
    "ask_go_out": _ask_go_out,
    "answer_go_out": _answer_go_out,
    "pass": _pass,
}
