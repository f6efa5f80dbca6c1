"""`canasta bench expert`: the expert's rollouts per CPU second, and proof that nothing changed.

Three measurements, all on fixed seeds so that two versions of the code can be compared:

* ``choices``: decision positions collected from standard self-play (``finnish`` and
  ``finnish-2p``), each searched by the expert with a fixed rollout cap and a fixed rng; the
  chosen action and the CPU time of each are written as JSON lines. Two runs whose choices
  are identical position by position played the same search; rollouts per CPU second is the
  speed.
* ``worlds``: the same positions at the served budget on the CPU clock (15 ms): the sampled
  worlds each decision sees (the figure the speed buys; noisier, since it is timed).
* ``games``: whole games of ``bots.tournament.play_one`` between the two rule bots (standard
  against greedy), one SHA-256 of each game's move log: the rule bots must not change their play.

``python -m bench.expert choices --out before.jsonl`` then, after a change,
``python -m bench.expert choices --out after.jsonl --compare before.jsonl``.
Every figure is CPU time of this thread (``time.thread_time``): the machine may be shared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

from bots import CPU, Budget, policy
from bots.expert import Expert
from bots.simulate import Policy, play_game
from bots.standard import Standard
from bots.view import SeatView
from engine.rules import resolve
from engine.state import State

Action = dict[str, Any]

PRESETS = ("finnish", "finnish-2p")
POSITIONS = 400  # decision positions per preset
SAMPLE_RATE = 0.05  # the share of self-play decisions kept as positions (spread over many hands)
ROLLOUTS = 30  # the rollout cap per decision: ten worlds of three candidates
NO_DEADLINE_MS = 1e9  # with a rollout cap, the clock must never be what stops the search
SERVED_MS = 15.0  # the budget whose worlds per decision ``worlds`` reports
GAMES = 50  # rule-bot games per preset for ``games``
TARGET = 5000  # the games' target score (``canasta bench bots strength``'s default)
SEED = 1


@dataclass(frozen=True)
class Position:
    preset: str
    index: int
    state: State
    seat: int
    actions: list[Action]


def positions(preset: str, count: int = POSITIONS, seed: int = SEED) -> list[Position]:
    """``count`` decisions that are not forced, sampled from standard self-play games of
    ``preset`` (game ``g`` dealt and played from seeds derived from ``seed`` and ``g``)."""
    rules = resolve(preset)
    out: list[Position] = []
    game = 0
    while len(out) < count:
        watch = _sampling(preset, out, count, random.Random(f"{seed}:sample:{preset}:{game}"),
                          policy("standard", random.Random(f"{seed}:play:{preset}:{game}")))
        play_game(rules, random.Random(f"{seed}:deal:{preset}:{game}"), watch)
        game += 1
    return out


def _sampling(preset: str, out: list[Position], count: int, sampler: random.Random, player: Policy) -> Policy:
    """``player``, keeping about one in 1 / :data:`SAMPLE_RATE` of its unforced decisions in ``out``."""

    def watch(state: State, seat: int, actions: list[Action]) -> Action:
        if len(actions) > 1 and len(out) < count and sampler.random() < SAMPLE_RATE:
            out.append(Position(preset, len(out), state, seat, actions))
        return player(state, seat, actions)

    return watch


class CountingExpert(Expert):
    """The registered expert (standard rollouts) counting its rollouts and sampled worlds."""

    def __init__(self) -> None:
        super().__init__(rollout=Standard())
        self.rollouts = 0
        self.worlds = 0

    def rollout(self, world: State, seat: int, action: Action, rng: random.Random,
                models: dict[int, Any] | None = None) -> float | None:
        self.rollouts += 1
        return super().rollout(world, seat, action, rng, models)


@contextmanager
def counting_worlds(expert: CountingExpert) -> Iterator[None]:
    """Count the expert's calls of ``determinize`` (one per sampled world)."""
    import bots.expert as module

    real = module.determinize

    def counted(s: State, seat: int, rng: random.Random) -> State:
        expert.worlds += 1
        return real(s, seat, rng)

    with mock.patch.object(module, "determinize", counted):
        yield


def search(expert: CountingExpert, p: Position, budget: Budget) -> tuple[Action, float, int, int]:
    """The expert's choice at ``p`` with a fixed rng: (action, CPU seconds, rollouts, worlds)."""
    rng = random.Random(f"{SEED}:expert:{p.preset}:{p.index}")
    expert.rollouts = expert.worlds = 0
    with counting_worlds(expert):
        started = time.thread_time()
        action = expert.choose(SeatView(p.state, p.seat), p.actions, rng, budget)
        cpu = time.thread_time() - started
    return action, cpu, expert.rollouts, expert.worlds


def run_choices(args: argparse.Namespace) -> int:
    budget = Budget(ms=NO_DEADLINE_MS, rollouts=args.rollouts, clock=CPU)
    lines: list[dict[str, Any]] = []
    print(f"{'preset':<11} {'positions':>9} {'rollouts':>9} {'CPU s':>7} {'rollouts/CPU s':>15}")
    for preset in args.presets.split(","):
        expert = CountingExpert()
        rollouts, cpu = 0, 0.0
        for p in positions(preset, args.positions):
            action, seconds, n, _ = search(expert, p, budget)
            rollouts += n
            cpu += seconds
            lines.append({"preset": preset, "index": p.index, "action": action, "cpu_ms": round(seconds * 1e3, 3),
                          "rollouts": n})
        print(f"{preset:<11} {args.positions:>9} {rollouts:>9} {cpu:>7.2f} {rollouts / cpu:>15,.0f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(json.dumps(line, sort_keys=True) + "\n" for line in lines)
    return compare(lines, args.compare) if args.compare else 0


def compare(lines: list[dict[str, Any]], path: str) -> int:
    """Position by position, whether the choices are those recorded in ``path``."""
    with open(path) as f:
        before = {(d["preset"], d["index"]): d for d in map(json.loads, f)}
    differ = [d for d in lines if before.get((d["preset"], d["index"]), {}).get("action") != d["action"]]
    missing = sum(1 for d in lines if (d["preset"], d["index"]) not in before)
    print(f"compared with {path}: {len(lines) - len(differ)} of {len(lines)} choices identical"
          f"{f', {missing} positions not recorded there' if missing else ''}")
    for d in differ[:10]:
        print(f"  differs: {d['preset']} #{d['index']}: {d['action']} (was {before.get((d['preset'], d['index']))})")
    return 1 if differ else 0


def run_worlds(args: argparse.Namespace) -> int:
    budget = Budget(ms=args.budget_ms, clock=CPU)
    print(f"{'preset':<11} {'searched':>8} {'worlds p50':>10} {'mean':>6} {'rollouts/CPU s':>15}")
    for preset in args.presets.split(","):
        expert = CountingExpert()
        worlds: list[int] = []
        rollouts, cpu = 0, 0.0
        for p in positions(preset, args.positions):
            _, seconds, n, w = search(expert, p, budget)
            if w:  # a decision with one candidate is not searched
                worlds.append(w)
                rollouts += n
                cpu += seconds
        print(f"{preset:<11} {len(worlds):>8} {statistics.median(worlds):>10.1f} {statistics.mean(worlds):>6.2f} "
              f"{rollouts / cpu:>15,.0f}", flush=True)
    return 0


def game_digests(preset: str, games: int, seed: int = SEED) -> list[str]:
    """SHA-256 of each move log of ``games`` games standard against greedy, as
    ``canasta bench bots strength`` plays them (``bots.tournament.play_one``)."""
    from bots import tournament

    rules = resolve(preset, overrides={"target_score": TARGET})
    match = tournament.Match(rules, "standard", "greedy", seed, Budget())
    digests: list[str] = []
    real = tournament.play_game

    def recorded(*a: Any, **kw: Any) -> Any:
        record = real(*a, **kw)
        digests.append(hashlib.sha256(json.dumps(record.lines, sort_keys=True).encode()).hexdigest())
        return record

    with mock.patch.object(tournament, "play_game", recorded):
        for g in range(games):
            tournament.play_one(match, g)
    return digests


def run_games(args: argparse.Namespace) -> int:
    out: dict[str, list[str]] = {}
    for preset in args.presets.split(","):
        started = time.thread_time()
        out[preset] = game_digests(preset, args.games)
        print(f"{preset:<11} {args.games} games, {time.thread_time() - started:.1f} CPU s", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    if not args.compare:
        return 0
    with open(args.compare) as f:
        before = json.load(f)
    same = sum(1 for p, ds in out.items() for i, d in enumerate(ds) if before.get(p, [])[i:i + 1] == [d])
    total = sum(len(ds) for ds in out.values())
    print(f"compared with {args.compare}: {same} of {total} move logs identical")
    return 0 if same == total else 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta bench expert", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    for name, help_ in (("choices", "the expert's choices and rollouts per CPU second at a rollout cap"),
                        ("worlds", "sampled worlds per decision at the served budget (CPU clock)"),
                        ("games", "move-log digests of rule-bot games (standard against greedy)")):
        s = sub.add_parser(name, help=help_)
        s.add_argument("--presets", default=",".join(PRESETS))
        if name != "worlds":
            s.add_argument("--out", default="", help="write the results here (JSON)")
            s.add_argument("--compare", default="", help="results of an earlier run: exit 1 if any differs")
        if name == "games":
            s.add_argument("--games", type=int, default=GAMES)
        else:
            s.add_argument("--positions", type=int, default=POSITIONS)
        if name == "choices":
            s.add_argument("--rollouts", type=int, default=ROLLOUTS)
        if name == "worlds":
            s.add_argument("--budget-ms", type=float, default=SERVED_MS)
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    run = {"choices": run_choices, "worlds": run_worlds, "games": run_games}[args.what]
    return run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
