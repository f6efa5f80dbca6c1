"""What the engine does by itself: starting turns, red threes, stock draws, ending hands and
the game, and the limits on a game's length (docs/rules.md, "Limits"): both are here, where a
hand and the game end."""

from __future__ import annotations

from typing import Any, TypeVar

from engine.cards import IS_RED_THREE, RED_THREES
from engine.scoring import score_hand
from engine.state import HAND_LIMIT, IN_HAND, MOVE_LIMIT, NO_SEAT, NOT_ASKED, TARGET, State

T = TypeVar("T")


def replace_at(values: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return values[:index] + (value,) + values[index + 1:]


def begin_turn(s: State, seat: int, **changes: Any) -> State:
    """Start ``seat``'s turn: clear the turn flags, lift a lock it set, lay dealt red threes (R2).

    ``changes`` are applied in the same copy (the move that ended the previous turn). Whether
    the turn can be played at all on an empty stock (R21) is the moves' judgement.
    """
    rules = s.rules
    lock = changes.pop("pile_lock", s.pile_lock)
    s = s._replace(
        phase="draw",
        turn=seat,
        to_act=seat,
        drawn="",
        permission=NOT_ASKED,
        asked=False,
        turn_melded=False,
        turn_canasta=False,
        minimum_waived=False,
        **changes,
        pile_lock=NO_SEAT if lock == seat else lock,
    )
    if not s.first_turn_done[seat]:
        s = lay_red_threes(s, seat) if not rules.melding.red_threes_optional else s
        s = s._replace(first_turn_done=replace_at(s.first_turn_done, seat, True))
    return s


def lay_red_threes(s: State, seat: int) -> State:
    """Lay every red three in ``seat``'s hand and replace it from the stock, again and again."""
    hand = list(s.hands[seat])
    if not (hand[RED_THREES[0]] or hand[RED_THREES[1]]):
        return s
    deck, pos = s.deck, s.stock_pos
    laid: list[int] = []
    while True:
        n = hand[RED_THREES[0]] + hand[RED_THREES[1]]
        if not n:
            break
        for k in RED_THREES:
            laid.extend([k] * hand[k])
            hand[k] = 0
        for _ in range(n):
            if pos < len(deck):
                hand[deck[pos]] += 1
                pos += 1
    team = s.rules.team_of(seat)
    return s._replace(
        hands=replace_at(s.hands, seat, tuple(hand)),
        stock_pos=pos,
        red_threes=replace_at(s.red_threes, team, s.red_threes[team] + tuple(laid)),
    )


def draw_cards(s: State, seat: int, count: int, **changes: Any) -> tuple[State, bool]:
    """Draw ``count`` cards (R3: red threes laid and replaced; R23: a lone last card will do).

    Returns the new state (with ``changes`` applied in the same copy) and whether the hand
    ends because the last card was a red three.
    """
    rules = s.rules
    hand = list(s.hands[seat])
    deck, pos = s.deck, s.stock_pos
    laid: list[int] = []
    need, ends = count, False
    while need and pos < len(deck):
        card = deck[pos]
        pos += 1
        if IS_RED_THREE[card] and not rules.melding.red_threes_optional:
            laid.append(card)
            if pos >= len(deck) and rules.dealing.last_red_three_ends:
                ends = True
                break
            continue
        hand[card] += 1
        need -= 1
    if laid:
        team = rules.team_of(seat)
        changes["red_threes"] = replace_at(s.red_threes, team, s.red_threes[team] + tuple(laid))
    return s._replace(hands=replace_at(s.hands, seat, tuple(hand)), stock_pos=pos, **changes), ends


def end_hand(s: State, reason: str, by: int, concealed: bool = False) -> State:
    """Score the hand, add it to the totals and see whether the game is over."""
    scores = score_hand(s, reason, by, concealed)
    totals = tuple(row["total"] for row in scores)
    result = {"hand_end": s.hand_no, "reason": reason, "by": by, "scores": scores}
    s = s._replace(totals=totals, hand_result=result, to_act=NO_SEAT, phase="deal")
    why = _game_over(s, reason)
    if why is not None:
        best = max(totals)
        leaders = [t for t, total in enumerate(totals) if total == best]
        winner = leaders[0] if len(leaders) == 1 else None
        s = s._replace(phase="over", game_result={"game_end": True, "totals": list(totals), "winner": winner,
                                                  "reason": why})
    return s


def _game_over(s: State, hand_reason: str) -> str | None:
    """Why the game ends with the hand just scored, or None: a hand cut at the move limit ends
    it (its last moves were not played, so no later hand could be fair either); else a side at
    the target; else the last hand that ``max_hands`` allows. Whichever it is, the side with
    the higher total wins."""
    if hand_reason == MOVE_LIMIT:
        return MOVE_LIMIT
    if max(s.totals) >= s.rules.scoring.target_score:
        return TARGET
    last = s.rules.limits.max_hands
    if last is not None and s.hand_no >= last:
        return HAND_LIMIT
    return None


def cut_at_move_limit(s: State) -> State:
    """After a move: a hand that has had ``max_moves_per_hand`` moves and goes on ends here,
    by the seat to act, and is scored as a hand that ends without a going out (what is melded
    counts, cards in hand count against). Only an accepted move is counted, and only here:
    the limit ends a hand, it never makes a move illegal, so the rules' look-ahead (can this
    player still go out?) does not see it."""
    limit = s.rules.limits.max_moves_per_hand
    if limit is None or s.hand_moves < limit or s.phase not in IN_HAND:
        return s
    return end_hand(s, MOVE_LIMIT, s.to_act)
