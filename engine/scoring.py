"""Scoring a hand (R18-R22) with the per-side breakdown of the log format."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.cards import RED_THREES, hand_value

RED_THREES_IN_PACK = 4  # of two decks: "all four" (R20); three decks' six pay half again

if TYPE_CHECKING:
    from engine.state import State


def red_three_score(s: State, team: int) -> int:
    """R20: a bonus once the side has melded, the same (or a fixed amount) against it if not."""
    scoring = s.rules.scoring
    n = len(s.red_threes[team])
    if not n:
        return 0
    if scoring.red_three_all_bonus is not None and n >= RED_THREES_IN_PACK:
        amount = scoring.red_three_all_bonus * n // RED_THREES_IN_PACK
    else:
        amount = scoring.red_three_bonus * n
    if s.opened(team):
        return amount
    if scoring.red_three_unopened is None:
        return -amount
    return scoring.red_three_unopened * n


def score_hand(s: State, reason: str, by: int, concealed: bool) -> list[dict[str, Any]]:
    rules = s.rules
    scoring = rules.scoring
    rows = []
    for team in range(rules.teams):
        melds = [m for m in s.melds[team] if m is not None]
        meld_points = sum(m.value for m in melds)
        bonus = 0
        for m in melds:
            if m.is_canasta(rules):
                bonus += scoring.natural_canasta_bonus if m.is_natural() else scoring.mixed_canasta_bonus
                if m.hidden:
                    bonus += scoring.hidden_canasta_bonus
        going_out = 0
        if reason == "went_out" and rules.team_of(by) == team:
            going_out = scoring.concealed_going_out_bonus if concealed else scoring.going_out_bonus
        seats = [p for p in range(rules.players) if rules.team_of(p) == team]
        in_hand = -sum(hand_value(s.hands[p]) for p in seats)
        # R22: the penalty is for keeping a red three by mistake; a seat whose first turn never
        # came (R2 "first_turn": someone went out before it) could not lay its dealt ones yet
        kept_red_threes = sum(s.hands[p][k] for p in seats if s.first_turn_done[p] for k in RED_THREES)
        penalties = -(s.penalties[team] + kept_red_threes * scoring.red_three_in_hand_penalty)
        red = red_three_score(s, team)
        hand_total = meld_points + bonus + red + going_out + penalties + in_hand
        rows.append(
            {
                "team": team,
                "melds": meld_points,
                "canasta_bonus": bonus,
                "red_threes": red,
                "going_out": going_out,
                "penalties": penalties,
                "in_hand": in_hand,
                "hand_total": hand_total,
                "total": s.totals[team] + hand_total,
            }
        )
    return rows
