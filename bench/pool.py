"""``canasta bench bots pool``: each of our levels against each opponent style, four players.

Every pairing is a :mod:`bots.tournament` match (seats and sides swapped on the same decks;
each level meets the same decks of a style at one seed): the level's win rate with Wilson's
95% interval, its points a hand over the style's (the game's total difference over the hands
played) and its thinking time a decision (wall clock p50 / p99, and the CPU p99). The styles
are :mod:`bots.styles`, in two pools kept apart: ``tuning`` (what the expert may be tuned
against) and ``held-out`` (only ever measured here).

Before the rows, each style's agreement with our standard: the share of the style's own
decisions (not forced) in which it chooses what the standard bot would in its place. A style
built on the standard bot inherits every change made to it, so near 100% a match against it
measures the standard bot against itself and no change to the standard bot can move it far
from 50% (the tuning pool's ``standard-asker`` chooses as the standard bot in 99% of its
decisions; until 2026-12-07 it was the held-out ``asker``).

After them, the expert minus the standard bot against each style, paired: both levels meet
a style on the same decks with the style in the same seats, game for game, so the difference
of their results is taken per game and its 95% interval (Student's t) over the pairs of games
dealt the same decks; the luck of the cards, which two separate Wilson intervals each carry,
cancels in it. Win rate and points a game.

Goals (issue 37, four players, held-out pool, each preset): the expert wins more than the
standard bot against every style (the paired difference's interval above 0; "not shown" where
it holds 0) and at least 60% on average; the standard bot at least 60% against each style;
the expert's p99 a decision within its budget + 5 ms.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

import bots
from bots import CPU, WALL, Budget, is_bot, tournament
from bots.simulate import play_game
from bots.stats import paired_difference, percentile, wilson
from bots.styles import DESCRIPTIONS, HELD_OUT, TUNING
from engine.rules import RulesError, resolve

LEVELS = ("random", "greedy", "standard", "expert@15")
PRESETS = ("finnish", "classic")
POOLS = {"tuning": TUNING, "held-out": HELD_OUT}
GOAL_RATE = 0.60  # the standard bot against each held-out style, the expert on average
P99_ROOM_MS = 5.0  # the expert's p99 a decision may exceed its budget by this much
EXPERT, STANDARD = "expert", "standard"
AGREEMENT_GAMES = 10  # games a style and preset in which its choices are compared with standard's


@dataclass(frozen=True)
class Row:
    preset: str
    level: str
    style: str
    pool: str
    games: int
    rate: float
    lo: float
    hi: float
    per_hand: float  # the level's points a hand over the style's
    ms: list[float]  # the level's wall-clock ms a decision that was not forced
    cpu_ms: list[float]
    outcomes: tuple[float, ...] = ()  # per game, in game order: 1 the level won, 0.5 a draw, 0 lost
    score_diffs: tuple[int, ...] = ()  # per game: the level's total minus the style's


def level_spec(spec: str) -> tuple[str, float | None]:
    """``expert@15`` -> ("expert", 15.0); a bare name has no budget."""
    name, _, ms = spec.partition("@")
    return name, float(ms) if ms else None


def play(preset: str, level: str, style: str, pool: str, args: argparse.Namespace) -> Row:
    rules = resolve(preset, overrides={"target_score": args.target})
    name, ms = level_spec(level)
    budget = Budget(ms=ms if ms is not None else args.budget_ms, clock=args.clock)
    match = tournament.Match(rules, name, style, args.seed, budget)
    games = args.expert_games if args.expert_games and ms is not None else args.games
    results = tournament.run(match, games, args.jobs)
    s = tournament.summary(match, results)
    lo, hi = wilson(s["a_wins"] + 0.5 * s["draws"], s["games"])
    hands = sum(max(r.hands, 1) for r in results)
    per_hand = sum(r.score_diff for r in results) / hands
    return Row(preset, level, style, pool, s["games"], s["a_win_rate"], lo, hi, per_hand,
               [x for r in results for x in r.a_ms], [x for r in results for x in r.a_cpu_ms],
               tuple({"a": 1.0, "draw": 0.5, "b": 0.0}[r.outcome] for r in results),
               tuple(r.score_diff for r in results))


@dataclass(frozen=True)
class Paired:
    """One level minus another against one style, game by game on the same decks and seats."""

    preset: str
    pool: str
    style: str
    games: int  # the games both played (the first of each match's games)
    decks: int  # the independent units: a pair of games dealt the same decks
    rate: tuple[float, float, float]  # mean difference of the win rate, its 95% interval
    points: tuple[float, float, float]  # the same for points a game

    @property
    def verdict(self) -> str:
        """Whether the interval shows the first level ahead, behind, or neither."""
        _, lo, hi = self.rate
        return "ahead" if lo > 0 else "behind" if hi < 0 else "not shown"


def paired(first: Row, second: Row) -> Paired:
    """``first`` minus ``second``: two levels' matches against one style at one seed are dealt the
    same decks with the style in the same seats, game for game (:func:`bots.tournament.deal_rng`;
    the style's own random stream is :func:`~bots.tournament.seat_rng` of the same game and seat
    in both), so the difference is taken per game and its interval over the pairs of games that
    share a deal (:func:`bots.stats.paired_difference`)."""
    assert (first.preset, first.style) == (second.preset, second.style)
    rate = paired_difference(list(first.outcomes), list(second.outcomes))
    points = paired_difference([float(x) for x in first.score_diffs], [float(x) for x in second.score_diffs])
    return Paired(first.preset, first.pool, first.style, min(first.games, second.games), rate[3], rate[:3], points[:3])


def print_paired(p: Paired) -> None:
    rate, lo, hi = p.rate
    pts, plo, phi = p.points
    print(f"  {p.preset:<8} {p.pool:<8} {p.style:<15} {p.games:>5} {p.decks:>5} {rate:>+7.1%} "
          f"{f'{lo:+.1%} to {hi:+.1%}':>17} {pts:>+7.0f} {f'{plo:+.0f} to {phi:+.0f}':>15}  {p.verdict}", flush=True)


def agreement(preset: str, style: str, games: int, seed: int, target: int) -> tuple[float, int]:
    """The share of ``style``'s decisions that were not forced in which it chose what our
    standard would in its place, over ``games`` games of the style against the standard bot
    (the same seating and deals as the matches); and how many decisions that was."""
    rules = resolve(preset, overrides={"target_score": target})
    reference = bots.get(STANDARD)
    same = total = 0

    def compared(play: Any) -> Any:
        def choose(state: Any, seat: int, actions: list[Any]) -> Any:
            nonlocal same, total
            action = play(state, seat, actions)
            if len(actions) > 1:
                total += 1
                same += reference.choose(bots.SeatView(state, seat), actions, random.Random(seat)) == action
            return action
        return choose

    for game in range(games):
        style_team = 1 - game % 2
        pols = {seat: bots.policy(style if rules.team_of(seat) == style_team else STANDARD,
                                  random.Random(f"{seed}:{game}:{seat}"))
                for seat in range(rules.players)}
        pols = {seat: compared(p) if rules.team_of(seat) == style_team else p for seat, p in pols.items()}
        play_game(rules, random.Random(f"{seed}:deal:{game // 2}"), pols)
    return (same / total if total else 0.0), total


def _ms(values: list[float]) -> str:
    return f"{percentile(values, 0.5):.2f}/{percentile(values, 0.99):.2f}" if values else "-"


def print_row(r: Row) -> None:
    print(f"{r.preset:<8} {r.pool:<8} {r.level:<10} {r.style:<15} {r.games:>5} {r.rate:>6.1%} "
          f"{f'{r.lo:.1%}-{r.hi:.1%}':>13} {r.per_hand:>+7.0f} {_ms(r.ms):>12} "
          f"{percentile(r.cpu_ms, 0.99) if r.cpu_ms else 0.0:>7.2f}", flush=True)


def goals(rows: list[Row], expert: str, budget_ms: float) -> bool:
    """Print each goal of issue 37 on the held-out pool, per preset; True if all are met."""
    ok = True
    for preset in sorted({r.preset for r in rows}):
        held = {(r.level, r.style): r for r in rows if r.preset == preset and r.pool == "held-out"}
        styles = sorted({s for _, s in held})
        std = [held[STANDARD, s] for s in styles if (STANDARD, s) in held]
        exp = [held[expert, s] for s in styles if (expert, s) in held]
        checks: list[tuple[str, bool]] = []
        if std:
            worst = min(std, key=lambda r: r.rate)
            checks.append((f"standard >= {GOAL_RATE:.0%} against each held-out style (lowest {worst.rate:.1%}, "
                           f"{worst.style})", worst.rate >= GOAL_RATE))
        if exp:
            mean = sum(r.rate for r in exp) / len(exp)
            checks.append((f"{expert} >= {GOAL_RATE:.0%} on average over the held-out styles ({mean:.1%})",
                           mean >= GOAL_RATE))
            p99 = percentile([x for r in exp for x in r.ms], 0.99)
            checks.append((f"{expert} p99 a decision <= {budget_ms + P99_ROOM_MS:.0f} ms ({p99:.2f} ms wall clock)",
                           p99 <= budget_ms + P99_ROOM_MS))
        if std and exp:
            pairs = [paired(e, held[STANDARD, e.style]) for e in exp if (STANDARD, e.style) in held]
            shown = [p.style for p in pairs if p.verdict == "ahead"]
            unsure = [p.style for p in pairs if p.verdict == "not shown"]
            behind = [p.style for p in pairs if p.verdict == "behind"]
            notes = [f"shown against {len(shown)} of {len(pairs)}"]
            notes += [f"not shown: {', '.join(unsure)}"] if unsure else []
            notes += [f"standard ahead: {', '.join(behind)}"] if behind else []
            checks.append((f"{expert} wins more than standard against every held-out style (paired on the same "
                           f"decks, 95%; {'; '.join(notes)})", len(shown) == len(pairs)))
        for text, met in checks:
            ok = ok and met
            print(f"{preset}: {text}: {'met' if met else 'MISSED'}")
    return ok


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta bench bots pool", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--presets", default=",".join(PRESETS))
    p.add_argument("--levels", default=",".join(LEVELS), help="our bots, a searching one with @ms for its budget")
    p.add_argument("--pools", default=",".join(POOLS), help="tuning, held-out, or both (default)")
    p.add_argument("--styles", default="", help="only these styles of the pools (default: all)")
    p.add_argument("--games", type=int, default=100, help="games per pairing (default 100)")
    p.add_argument("--expert-games", type=int, default=0, help="games where the level searches (default: --games)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--agreement-games", type=int, default=AGREEMENT_GAMES,
                   help=f"games a style in which its choices are compared with standard's (default {AGREEMENT_GAMES}, 0: none)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--target", type=int, default=5000, help="target score (default 5000, the rules')")
    p.add_argument("--budget-ms", type=float, default=15.0, help="a searching level's budget where it names none")
    p.add_argument("--clock", choices=(WALL, CPU), default=CPU,
                   help="budgets on the CPU clock (default: strength on a shared machine) or the wall clock")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    presets = [x for x in args.presets.split(",") if x]
    levels = [x for x in args.levels.split(",") if x]
    pools = [x for x in args.pools.split(",") if x]
    only = {x for x in args.styles.split(",") if x}
    errors = [f"unknown pool {p!r} (pools: {', '.join(POOLS)})" for p in pools if p not in POOLS]
    errors += [f"unknown level {lv!r}" for lv in levels if not is_bot(level_spec(lv)[0])]
    errors += [f"unknown style {s!r} (styles: {', '.join(DESCRIPTIONS)})" for s in only if s not in DESCRIPTIONS]
    if args.games < 1:
        errors.append("--games must be at least 1")
    try:
        for preset in presets:
            resolve(preset)
    except RulesError as e:
        errors.append(str(e))
    if errors:
        print("canasta bench bots pool: " + "; ".join(errors), file=sys.stderr)
        return 2
    started = time.perf_counter()
    print(f"levels against opponent styles: {args.games} games a pairing, seed {args.seed}, target {args.target}, "
          f"budgets on the {args.clock} clock, {args.jobs} processes")
    for pool in pools:
        for style in POOLS[pool]:
            if not only or style in only:
                print(f"  {pool:<8} {style:<15} {DESCRIPTIONS[style]}")
    if args.agreement_games > 0:
        print(f"agreement with our standard (its choice in the style's place), {args.agreement_games} games:")
        for preset in presets:
            for pool in pools:
                for style in POOLS[pool]:
                    if not only or style in only:
                        share, decisions = agreement(preset, style, args.agreement_games, args.seed, args.target)
                        print(f"  {preset:<8} {pool:<8} {style:<15} {share:6.1%} of {decisions} decisions", flush=True)
    print(f"{'rules':<8} {'pool':<8} {'level':<10} {'style':<15} {'games':>5} {'rate':>6} {'95% CI':>13} "
          f"{'pts/hand':>7} {'p50/p99 ms':>12} {'CPU p99':>7}")
    rows: list[Row] = []
    for preset in presets:
        for pool in pools:
            for level in levels:
                for style in POOLS[pool]:
                    if not only or style in only:
                        rows.append(play(preset, level, style, pool, args))
                        print_row(rows[-1])
    print("mean rate over each pool's styles:")
    for preset in presets:
        for pool in pools:
            for level in levels:
                rates = [r.rate for r in rows if (r.preset, r.pool, r.level) == (preset, pool, level)]
                if rates:
                    print(f"  {preset:<8} {pool:<8} {level:<10} {sum(rates) / len(rates):.1%} over {len(rates)} styles")
    expert = next((lv for lv in levels if level_spec(lv)[0] == EXPERT), EXPERT)
    by = {(r.preset, r.level, r.style): r for r in rows}
    pairs = [paired(r, by[r.preset, STANDARD, r.style]) for r in rows
             if r.level == expert and (r.preset, STANDARD, r.style) in by]
    if pairs:
        print(f"paired on the same decks and seats, {expert} minus standard (95%, over the pairs of games "
              "dealt the same decks):")
        print(f"  {'rules':<8} {'pool':<8} {'style':<15} {'games':>5} {'decks':>5} {'rate':>7} {'95% CI':>17} "
              f"{'pts/game':>7} {'95% CI':>15}  {expert} ahead?")
        for p in pairs:
            print_paired(p)
    ok = goals(rows, expert, level_spec(expert)[1] or args.budget_ms)
    print(f"{time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
