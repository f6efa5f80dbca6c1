"""Scoring a hand (R18-R22) with the per-side breakdown of the log format."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from engine.cards import RED_THREES, hand_value
from engine.state import Meld

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


class SideMelds(NamedTuple):
    """What one side's melds are worth (R18): their cards' points, the canasta bonuses, and
    its canastas by kind."""

    points: int
    bonus: int
    natural: int
    mixed: int


def side_melds(s: State, team: int) -> SideMelds:
    """:class:`SideMelds` of ``team`` now: the one place that counts melds and canastas, for
    the hand's score and the views' running points alike."""
    melding, scoring = s.rules.melding, s.rules.scoring
    return _side_melds(s.melds[team], melding.canasta_size, melding.canasta_min_naturals,
                       scoring.natural_canasta_bonus, scoring.mixed_canasta_bonus, scoring.hidden_canasta_bonus)


@lru_cache(maxsize=1024)
def _side_melds(side: tuple[Meld | None, ...], canasta_size: int, min_naturals: int,
                natural_bonus: int, mixed_bonus: int, hidden_bonus: int) -> SideMelds:
    """A side's melds change only when it melds: most views of a game find them here."""
    points = bonus = natural = mixed = 0
    for m in side:
        if m is None:
            continue
        points += m.value
        if m.reaches(canasta_size, min_naturals):
            if m.is_natural():
                natural += 1
                bonus += natural_bonus
            else:
                mixed += 1
                bonus += mixed_bonus
            if m.hidden:
                bonus += hidden_bonus
    return SideMelds(points, bonus, natural, mixed)


def running_points(s: State) -> list[dict[str, Any]]:
    """Per side, what a player counts during a hand (public: all of it lies on the table).

    ``on_table`` is what the side would score for this hand if it ended now, before the cards
    left in hands (private) and the going-out bonus (unknown until someone goes out): melds,
    canasta bonuses, red threes (R20: negative while the side has not melded) and penalties.
    ``opening_needed``: the side's opening minimum while it has not melded (R8), else None;
    ``canastas_to_go_out``: canastas it still needs before anyone of it may go out (R16)."""
    rules = s.rules
    need = rules.going_out.canastas_to_go_out
    rows = []
    for team in range(rules.teams):
        melds = side_melds(s, team)
        red = red_three_score(s, team)
        penalties = -s.penalties[team]
        opened = s.opened(team) or s.phase in ("deal", "over")
        rows.append({
            "melds": melds.points,
            "canasta_bonus": melds.bonus,
            "canastas": {"natural": melds.natural, "mixed": melds.mixed},
            "red_threes": red,
            "penalties": penalties,
            "on_table": melds.points + melds.bonus + red + penalties,
            "opening_needed": None if opened else s.minimums[team],
            "canastas_to_go_out": max(0, need - melds.natural - melds.mixed),
        })
    return rows


def score_hand(s: State, reason: str, by: int, concealed: bool) -> list[dict[str, Any]]:
    rules = s.rules
    scoring = rules.scoring
    rows = []
    for team in range(rules.teams):
        melds = side_melds(s, team)
        meld_points, bonus = melds.points, melds.bonus
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
