"""``canasta bench bots hands``: where a match between two bots is won, hand by hand.

Why: a win rate says who wins, not why. Issue 37 asked why the standard bot wins only about
half its games against the ``asker`` and ``concealed`` styles; the answer was in the hands'
points by source and in who is caught with cards, not in the rate. The games are a
:mod:`bots.tournament` match's (the same decks, seats and seeds: A is side 0 in even games, side
1 in odd ones), watched move by move (``play_game``'s ``on_move``) so that each hand's first canasta is seen.

Per hand, A's side against B's: who went out (or how the hand ended); who made the hand's first
canasta and who then went out; the points by source (melds, canasta bonuses, red threes, the
going-out bonus, penalties, cards left in hand); the natural and mixed canastas on the table at
the end; the points left in hand when the other side went out; the hand's length in moves.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import bots
from bots import is_bot
from bots.simulate import play_game
from bots.stats import wilson
from bots.tournament import deal_rng, seat_rng
from engine.rules import RuleOptions, RulesError, resolve
from engine.state import State

SOURCES = ("melds", "canasta_bonus", "red_threes", "going_out", "penalties", "in_hand", "hand_total")
SIDES = ("A", "B")


@dataclass
class Tally:
    """The match's hands, counted from A's side."""

    games: int = 0
    a_points: float = 0.0  # games won by A, a draw counting half
    hands: int = 0
    moves: int = 0
    ended: Counter[str] = field(default_factory=Counter)  # "A" / "B" went out, or the hand's reason
    first: Counter[tuple[str, str]] = field(default_factory=Counter)  # (first canasta by, ended by)
    points: dict[str, Counter[str]] = field(default_factory=lambda: {s: Counter() for s in SIDES})
    canastas: dict[str, Counter[str]] = field(default_factory=lambda: {s: Counter() for s in SIDES})
    caught: dict[str, list[int]] = field(default_factory=lambda: {s: [] for s in SIDES})  # in hand, the other side out


def side_of(rules: RuleOptions, a_team: int, team: int) -> str:
    return "A" if team == a_team else "B"


def first_canasta(rules: RuleOptions, s: State) -> int | None:
    """The team with a canasta on the table (the lowest, if both), or None."""
    for team in range(rules.teams):
        if any(m is not None and m.is_canasta(rules) for m in s.melds[team]):
            return team
    return None


def play(rules: RuleOptions, a: str, b: str, seed: int, game: int, tally: Tally) -> None:
    """Game ``game`` of the match, as :func:`bots.tournament.play_one` seats and deals it,
    watched move by move: each hand's first canasta, and the hand counted at its end."""
    a_team = game % 2
    names = {seat: a if rules.team_of(seat) == a_team else b for seat in range(rules.players)}
    pols = {seat: bots.policy(name, seat_rng(seed, game, seat, name)) for seat, name in names.items()}
    first: int | None = None

    def watch(state: State) -> None:
        nonlocal first
        tally.moves += 1
        if first is None:
            first = first_canasta(rules, state)
        if state.phase in ("deal", "over") and state.hand_result is not None:
            count_hand(rules, a_team, state, first, tally)
            first = None

    result = play_game(rules, deal_rng(seed, game), pols, on_move=watch).final
    assert result is not None and result.game_result is not None
    tally.games += 1
    winner = result.game_result["winner"]
    tally.a_points += 1.0 if winner == a_team else 0.5 if winner is None else 0.0


def count_hand(rules: RuleOptions, a_team: int, s: State, first: int | None, tally: Tally) -> None:
    result = s.hand_result
    assert result is not None
    went_out = result["reason"] == "went_out"
    ended = side_of(rules, a_team, rules.team_of(result["by"])) if went_out else result["reason"]
    tally.hands += 1
    tally.ended[ended] += 1
    tally.first[side_of(rules, a_team, first) if first is not None else "none", ended] += 1
    for row in result["scores"]:
        side = side_of(rules, a_team, row["team"])
        for key in SOURCES:
            tally.points[side][key] += row[key]
        for m in s.melds[row["team"]]:
            if m is not None and m.is_canasta(rules):
                tally.canastas[side]["natural" if m.is_natural() else "mixed"] += 1
        if went_out and side != ended:
            tally.caught[side].append(-row["in_hand"])


def report(a: str, b: str, t: Tally) -> None:
    lo, hi = wilson(t.a_points, t.games)
    h = max(t.hands, 1)
    print(f"A = {a}, B = {b}: {t.games} games, A won {t.a_points / t.games:.1%} ({lo:.1%}-{hi:.1%}); "
          f"{t.hands} hands, {t.moves / h:.0f} moves a hand")
    print("hand ended by: " + ", ".join(f"{k} {n / h:.1%}" for k, n in t.ended.most_common()))
    print("first canasta by / hand ended by: " + ", ".join(
        f"{f}/{e} {n / h:.1%}" for (f, e), n in sorted(t.first.items(), key=lambda x: -x[1])))
    print(f"{'a hand':<38} {'A':>8} {'B':>8}")
    for key in SOURCES:
        print(f"  {key:<36} {t.points['A'][key] / h:>8.1f} {t.points['B'][key] / h:>8.1f}")
    for kind in ("natural", "mixed"):
        print(f"  {kind + ' canastas':<36} {t.canastas['A'][kind] / h:>8.2f} {t.canastas['B'][kind] / h:>8.2f}")
    caught = {s: statistics.mean(t.caught[s]) if t.caught[s] else 0.0 for s in SIDES}
    print(f"  {'points in hand when the other side went out':<36} {caught['A']:>8.1f} {caught['B']:>8.1f}")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta bench bots hands", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", required=True, help="A,B: two bots or styles (e.g. standard,asker)")
    p.add_argument("--preset", default="finnish")
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--target", type=int, default=5000, help="target score (default 5000, the rules')")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    names = [x.strip() for x in args.bots.split(",")]
    errors = [] if len(names) == 2 else ["--bots takes two names, e.g. standard,asker"]
    errors += [f"unknown bot {n!r}" for n in names if not is_bot(n)]
    if args.games < 1:
        errors.append("--games must be at least 1")
    try:
        rules = resolve(args.preset, overrides={"target_score": args.target})
    except RulesError as e:
        errors.append(str(e))
    if errors:
        print("canasta bench bots hands: " + "; ".join(errors), file=sys.stderr)
        return 2
    started = time.perf_counter()
    tally = Tally()
    for game in range(args.games):
        play(rules, names[0], names[1], args.seed, game, tally)
    print(f"{args.preset}, {rules.players} players, seed {args.seed}, target {args.target}")
    report(names[0], names[1], tally)
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
