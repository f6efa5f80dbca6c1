"""`canasta bench replay`: how fast logs are validated (a benchmark, not a test).

Two numbers: moves validated per second on one core (the goal is 50 000/s), split into
parsing, the engine alone and the validator's own bookkeeping; and the wall time of
``canasta replay validate --jobs J`` over a corpus of N files (10 000 by default).

Simulating 10 000 random games would take far longer than validating them, so the corpus
is ``--unique`` distinct games written N times over (the validator has no cache: each copy
is read and replayed in full). ``--corpus DIR`` keeps it for the next run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import multiprocessing
import os
import pstats
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import engine
from bots.random_bot import random_policy
from bots.simulate import play_game
from replay.log import encode_log
from replay.reader import DEAL, MOVE, parse_bytes
from replay.validate import rules_from_header, validate_bytes

# presets at their own targets (norwegian with 5 or 6 players alone plays far longer at random)
T = TypeVar("T")

CONFIGS = [("classic", None), ("finnish", None), ("finnish-2p", None), ("finnish-3p", None), ("bicycle", None),
           ("wiki", 4), ("wiki", 6), ("norwegian", 2), ("norwegian", 4)]


def simulate_one(n: int) -> bytes:
    """Game ``n`` of the benchmark corpus, as log bytes (deterministic)."""
    preset, players = CONFIGS[n % len(CONFIGS)]
    rules = engine.resolve(preset, players)
    rng = random.Random(f"bench-replay:{n}")
    return encode_log(play_game(rules, rng, random_policy(rng)).log_lines(game_id=f"bench-{n}"))


def simulate(count: int, jobs: int) -> list[bytes]:
    if jobs <= 1:
        return [simulate_one(n) for n in range(count)]
    with multiprocessing.get_context().Pool(jobs) as pool:
        return pool.map(simulate_one, range(count), chunksize=4)


def _engine_only(logs: list[bytes]) -> int:
    """The engine's share: deal and apply every line, nothing checked around it."""
    moves = 0
    for data in logs:
        log = parse_bytes(data)
        rules = rules_from_header(log.header)
        st: engine.State | None = None
        for line in log.lines:
            d = line.data
            if line.kind == MOVE:
                assert st is not None  # a readable log deals before its first move
                st = engine.apply(st, d["seat"], d["action"])
                moves += 1
            elif line.kind == DEAL:
                st = engine.deal(st or engine.new_game(rules, d["dealer"]), d["deck"], d["salt"], d["commitment"])
    return moves


def _best(fn: Callable[[], T], repeat: int) -> tuple[float, float, T]:
    """The best of ``repeat`` runs: (wall seconds, CPU seconds, the value). CPU time is what
    one core spent; on a shared machine it is the steadier of the two."""
    wall = cpu = float("inf")
    value: T | None = None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        value = fn()
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    assert value is not None, "repeat at least once"
    return wall, cpu, value


def one_core(logs: list[bytes], repeat: int, profile: bool) -> list[tuple[str, int, float, float]]:
    """(what, moves, wall, cpu) rows: parsing, the engine alone (with parsing), the whole validator."""
    w_parse, c_parse, _ = _best(lambda: [parse_bytes(d) for d in logs], repeat)
    w_engine, c_engine, moves = _best(lambda: _engine_only(logs), repeat)
    w_full, c_full, results = _best(lambda: [validate_bytes(d, "bench") for d in logs], repeat)
    bad = [r.describe() for r in results if not r.valid]
    assert not bad, bad[:3]
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        for d in logs:
            validate_bytes(d, "bench")
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
    n = int(moves)
    return [("parse (orjson, types)", n, w_parse, c_parse), ("parse + engine alone", n, w_engine, c_engine),
            ("validate, one core", n, w_full, c_full)]


def write_corpus(folder: Path, files: int, unique: list[bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ".complete"
    if marker.exists() and marker.read_text() == f"{files} {len(unique)}":
        return
    for n in range(files):
        path = folder / f"g{n // 1000:03d}" / f"game-{n:05d}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(unique[n % len(unique)])
    marker.write_text(f"{files} {len(unique)}")


def corpus_run(folder: Path, jobs: int) -> tuple[float, float, int, str]:
    """Wall and CPU time (all processes) of the CLI over the folder: process start, the
    directory walk and the output included."""
    cmd = [sys.executable, "-m", "cli.main", "replay", "validate", "--quiet", "--jobs", str(jobs), str(folder)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, cwd=Path(__file__).resolve().parents[1], timeout=7200)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    out = proc.stdout.decode().strip().splitlines()
    return elapsed, cpu, proc.returncode, out[-1] if out else proc.stderr.decode().strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="canasta bench replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000, help="files in the corpus run (default 10000; 0 skips it)")
    parser.add_argument("--unique", type=int, default=200, help="distinct simulated games in the corpus (default 200)")
    parser.add_argument("--sample", type=int, default=40, help="games for the one-core measurement (default 40)")
    parser.add_argument("--jobs", type=int, default=2, help="processes for the corpus run (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="one-core runs; the best counts (default 3)")
    parser.add_argument("--corpus", type=Path, help="keep the corpus in this folder and reuse it")
    parser.add_argument("--profile", action="store_true", help="print the validator's cProfile top 15")
    args = parser.parse_args(argv)

    cores = os.cpu_count() or 1
    t = time.perf_counter()
    unique = simulate(max(args.unique if args.games else 0, args.sample), min(cores, 4))
    print(f"simulated {len(unique)} games in {time.perf_counter() - t:.1f} s "
          f"(presets: {', '.join(p if n is None else f'{p}-{n}' for p, n in CONFIGS)})")
    rows = one_core(unique[: args.sample], args.repeat, args.profile)

    corpus_row = None
    if args.games:
        folder = args.corpus or Path(tempfile.mkdtemp(prefix="canasta-bench-replay-"))
        try:
            write_corpus(folder, args.games, unique[: args.unique])
            counts = [sum(1 for line in parse_bytes(d).lines if line.kind == MOVE) for d in unique[: args.unique]]
            total_moves = sum(counts[n % len(counts)] for n in range(args.games))
            wall, cpu, code, summary = corpus_run(folder, args.jobs)
            corpus_row = (f"corpus {args.games} files, --jobs {args.jobs}", total_moves, wall, cpu, code, summary)
        finally:
            if args.corpus is None:
                shutil.rmtree(folder, ignore_errors=True)

    print()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{cores} cores, load average {load} (other work on the machine slows the wall times)")
    print(f"{'':<34}{'moves':>11}{'wall s':>9}{'moves/s':>10}{'CPU s':>9}{'moves/CPU s':>13}")
    for what, moves, wall, cpu in rows:
        print(f"{what:<34}{moves:>11,}{wall:>9.2f}{moves / wall:>10,.0f}{cpu:>9.2f}{moves / cpu:>13,.0f}")
    engine_cpu, full_cpu, moves = rows[1][3], rows[2][3], rows[2][1]
    rate = moves / full_cpu
    print(f"validator's own share: {100 * (full_cpu - engine_cpu) / full_cpu:.0f}% of the one-core CPU time; "
          f"{rate:,.0f} moves/s per core (goal 50,000: {'met' if rate >= 50_000 else 'not met'})")
    if corpus_row:
        what, moves, wall, cpu, code, summary = corpus_row
        print(f"{what:<34}{moves:>11,}{wall:>9.2f}{moves / wall:>10,.0f}{cpu:>9.2f}{moves / cpu:>13,.0f}"
              f"   {args.games / wall:,.0f} files/s")
        print(f"  canasta replay validate said: {summary} (exit {code})")
        if code != 0:
            return 1
    return 0

