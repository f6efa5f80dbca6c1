"""`canasta bench engine`: actions per second on one core.

Two figures per preset: applying recorded action lists (what replay validation and the API
do per move) and random self-play including legal-action generation (what bots do). Rates
are per CPU-second of this process (``time.process_time``), pinned to one core, so other
load on the machine does not count against them. A baseline measured in the same run, the
rate of a bare ``State._replace``, lets figures from different machines be compared.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

from bots.random_bot import random_policy
from bots.simulate import play_game
from engine.deal import deal, new_game
from engine.moves import apply
from engine.rules import resolve

PRESETS = ["classic", "finnish", "finnish-2p", "finnish-3p", "bicycle", "wiki", "norwegian"]


def _baseline(seconds: float = 0.3) -> float:
    state = new_game(resolve("classic"))
    n, end = 0, time.process_time() + seconds
    while time.process_time() < end:
        for _ in range(1000):
            state = state._replace(moves=n)
        n += 1000
    return n / seconds


def bench_preset(preset: str, games: int, seed: int) -> tuple[float, float, int]:
    rules = resolve(preset, overrides={"target_score": 2000})
    started = time.process_time()
    records = [play_game(rules, random.Random(seed + g), random_policy(random.Random(seed + g))) for g in range(games)]
    selfplay_time = time.process_time() - started
    actions = sum(len(r.moves) for r in records)
    started = time.process_time()
    for record in records:
        state = new_game(rules)
        for line in record.lines:
            if "deal" in line:
                state = deal(state, line["deck"], line["salt"], line["commitment"])
            elif "move" in line:
                state = apply(state, line["seat"], line["action"])
    replay_time = time.process_time() - started
    return actions / replay_time, actions / selfplay_time, actions


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="canasta bench engine", description=__doc__)
    parser.add_argument("--games", type=int, default=6, help="games per preset")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--presets", default=",".join(PRESETS))
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    base = _baseline()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, one core pinned, rates per CPU-second")
    print(f"baseline: State._replace {base:,.0f}/s")
    print(f"{'preset':<12} {'actions':>8} {'replay apply/s':>15} {'self-play/s':>12} {'replay/baseline':>16}")
    replay_seconds = play_seconds = 0.0
    n = 0
    for preset in args.presets.split(","):
        replay_rate, play_rate, actions = bench_preset(preset, args.games, args.seed)
        replay_seconds += actions / replay_rate
        play_seconds += actions / play_rate
        n += actions
        print(f"{preset:<12} {actions:>8} {replay_rate:>15,.0f} {play_rate:>12,.0f} {replay_rate / base:>16.3f}")
    print(f"{'all':<12} {n:>8} {n / replay_seconds:>15,.0f} {n / play_seconds:>12,.0f} "
          f"{n / replay_seconds / base:>16.3f}")
    print("goals: replay >= 50,000/s, self-play >= 10,000/s")
    return 0
