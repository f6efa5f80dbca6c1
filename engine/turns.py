"""What the engine does by itself: starting turns, red threes, stock draws, ending hands."""

from __future__ import annotations

from typing import Any, TypeVar

from engine.cards import IS_RED_THREE, RED_THREES
from engine.scoring import score_hand
from engine.state import NO_SEAT, NOT_ASKED, State

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
    rules = s.rules
    scores = score_hand(s, reason, by, concealed)
    totals = tuple(row["total"] for row in scores)
    result = {"hand_end": s.hand_no, "reason": reason, "by": by, "scores": scores}
    s = s._replace(totals=totals, hand_result=result, to_act=NO_SEAT, phase="deal")
    if max(totals) >= rules.scoring.target_score:
        best = max(totals)
        leaders = [t for t, total in enumerate(totals) if total == best]
        winner = leaders[0] if len(leaders) == 1 else None
        s = s._replace(phase="over", game_result={"game_end": True, "totals": list(totals), "winner": winner})
    return s
