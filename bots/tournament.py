"""``canasta tournament``: bot A against bot B, in-process, with a confidence interval.

Seating: A is team 0 in even games and team 1 in odd games; in partnerships A plays every
seat of its team. Games 2k and 2k+1 are dealt the same decks (the deal rng is seeded by
the pair), so each deal is played once from each side: a "duplicate" format that removes
most of the luck of the cards from the comparison. With more than two teams (three players
alone), B plays every team that is not A's.

A's win rate counts a draw as half a win; the 95% interval is Wilson's.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

from bots import BASELINES, NAMES, Budget, policy
from bots.simulate import play_game
from bots.stats import wilson
from engine.rules import RuleOptions, RulesError, resolve


@dataclass(frozen=True)
class GameResult:
    game: int
    a_team: int
    totals: tuple[int, ...]
    winner: int | None
    moves: int
    seconds: float
    a_ms: tuple[float, ...] = ()  # A's thinking time per decision that was not forced (ms, wall clock)
    b_ms: tuple[float, ...] = ()
    a_cpu_ms: tuple[float, ...] = ()  # the same decisions in CPU time (ms): a busy machine's share removed
    b_cpu_ms: tuple[float, ...] = ()
    hands: int = 0  # hands played (points per hand: the totals over this)

    @property
    def outcome(self) -> str:
        if self.winner is None:
            return "draw"
        return "a" if self.winner == self.a_team else "b"

    @property
    def score_diff(self) -> int:
        """A's total minus the best other team's total."""
        return self.totals[self.a_team] - max(t for i, t in enumerate(self.totals) if i != self.a_team)


@dataclass(frozen=True)
class Match:
    rules: RuleOptions
    a: str
    b: str
    seed: int
    budget: Budget  # A's (and B's, unless ``b_budget``)
    b_budget: Budget | None = None  # B's own: the same bot at two budgets, say

    def budget_of(self, side: str) -> Budget:
        return self.b_budget if side == "b" and self.b_budget is not None else self.budget


def seat_rng(seed: int, game: int, seat: int, name: str) -> random.Random:
    """The random stream of ``name`` playing ``seat`` in game ``game`` of a match."""
    return random.Random(f"{seed}:{game}:{seat}:{name}")


def deal_rng(seed: int, game: int) -> random.Random:
    """The decks of game ``game``: the same for the pair of games that swap the sides."""
    return random.Random(f"{seed}:deal:{game // 2}")


def play_one(match: Match, game: int) -> GameResult:
    """Game ``game`` of a match; deterministic for a rollout-capped budget."""
    rules = match.rules
    a_team = game % 2
    pols = {}
    thought: dict[str, list[float]] = {"a": [], "b": [], "a_cpu": [], "b_cpu": []}
    for seat in range(rules.players):
        side = "a" if rules.team_of(seat) == a_team else "b"
        name = match.a if side == "a" else match.b
        pols[seat] = _timed(policy(name, seat_rng(match.seed, game, seat, name), match.budget_of(side)),
                            thought[side], thought[f"{side}_cpu"])
    started = time.perf_counter()
    record = play_game(rules, deal_rng(match.seed, game), pols)
    final = record.final
    assert final is not None and final.game_result is not None
    return GameResult(game, a_team, tuple(final.totals), final.game_result["winner"], len(record.moves),
                      time.perf_counter() - started, tuple(thought["a"]), tuple(thought["b"]),
                      tuple(thought["a_cpu"]), tuple(thought["b_cpu"]), len(record.hands))


def _timed(play: Any, wall: list[float], cpu: list[float]) -> Any:
    """``play`` recording the milliseconds (wall clock and CPU) of each decision that was not
    forced."""
    clock, cpu_clock = time.perf_counter, time.thread_time

    def timed(state: Any, seat: int, actions: list[Any]) -> Any:
        if len(actions) == 1:
            return actions[0]
        started, cpu_started = clock(), cpu_clock()
        action = play(state, seat, actions)
        wall.append((clock() - started) * 1000.0)
        cpu.append((cpu_clock() - cpu_started) * 1000.0)
        return action

    return timed


def _play_star(args: tuple[Match, int]) -> GameResult:
    return play_one(*args)


def run(match: Match, games: int, jobs: int = 1, progress: Any = None) -> list[GameResult]:
    """Play ``games`` games, in ``jobs`` processes; results in game order."""
    import bots

    for name in (match.a, match.b):
        bots.get(name)  # import every bot before forking: the processes share one version of the code
    tasks = [(match, g) for g in range(games)]
    results: list[GameResult] = []
    if jobs <= 1:
        for t in tasks:
            results.append(_play_star(t))
            if progress:
                progress(results)
    else:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(jobs) as pool:
            for r in pool.imap_unordered(_play_star, tasks):
                results.append(r)
                if progress:
                    progress(results)
    return sorted(results, key=lambda r: r.game)


def summary(match: Match, results: list[GameResult]) -> dict[str, Any]:
    """The ``--json`` object: exactly the documented keys."""
    n = len(results)
    a_wins = sum(1 for r in results if r.outcome == "a")
    b_wins = sum(1 for r in results if r.outcome == "b")
    draws = n - a_wins - b_wins
    points = a_wins + 0.5 * draws
    lo, hi = wilson(points, n)
    return {
        "a": match.a,
        "b": match.b,
        "games": n,
        "a_wins": a_wins,
        "b_wins": b_wins,
        "draws": draws,
        "a_win_rate": round(points / n, 4) if n else 0.0,
        "ci95": [round(lo, 4), round(hi, 4)],
        "mean_score_diff": round(sum(r.score_diff for r in results) / n, 1) if n else 0.0,
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta tournament", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rules", required=True, help="preset name (e.g. finnish, finnish-2p)")
    p.add_argument("--bots", required=True, help="A,B: two of " + ", ".join(NAMES + BASELINES))
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    p.add_argument("--players", type=int, default=None, help="player count (default: the preset's)")
    p.add_argument("--target", type=int, default=None, help="override target_score (shorter games)")
    p.add_argument("--budget-ms", type=float, default=None, help="expert thinking time per decision")
    p.add_argument("--rollouts", type=int, default=None, help="expert rollout cap per decision")
    p.add_argument("--json", action="store_true", help="print only the JSON summary")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    names = [b.strip() for b in args.bots.split(",")]
    if len(names) != 2 or any(n not in NAMES + BASELINES for n in names):
        print(f"canasta tournament: --bots takes two of {', '.join(NAMES + BASELINES)}, e.g. greedy,random",
              file=sys.stderr)
        return 2
    if args.games < 1:
        print("canasta tournament: --games must be at least 1", file=sys.stderr)
        return 2
    try:
        overrides = {"target_score": args.target} if args.target else None
        rules = resolve(args.rules, args.players, overrides)
    except RulesError as e:
        print(f"canasta tournament: {e}", file=sys.stderr)
        return 2
    from bots import DEFAULT_BUDGET_MS

    budget = Budget(ms=args.budget_ms if args.budget_ms is not None else DEFAULT_BUDGET_MS, rollouts=args.rollouts)
    match = Match(rules, names[0], names[1], args.seed, budget)
    started = time.perf_counter()
    results = run(match, args.games, max(1, args.jobs))
    s = summary(match, results)
    if args.json:
        print(json.dumps(s))
        return 0
    elapsed = time.perf_counter() - started
    lo, hi = s["ci95"]
    print(f"{s['a']} vs {s['b']}: {rules.preset}, {rules.players} players, target {rules.scoring.target_score}, seed {args.seed}")
    print(f"games {s['games']}  {s['a']} wins {s['a_wins']}  {s['b']} wins {s['b_wins']}  draws {s['draws']}")
    print(f"{s['a']} win rate {s['a_win_rate']:.1%}  (95% CI {lo:.1%} - {hi:.1%}, Wilson; a draw counts half)")
    print(f"mean score difference ({s['a']} - {s['b']}): {s['mean_score_diff']:+.1f}")
    print(f"{elapsed:.1f} s, {sum(r.moves for r in results) / len(results):.0f} moves per game")
    return 0


if __name__ == "__main__":
    sys.exit(main())
