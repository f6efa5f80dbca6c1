"""`canasta bench WHAT`: benchmarks (not tests). Each prints a small table."""

from __future__ import annotations

import argparse
import importlib
import sys

BENCHES = {
    "engine": ("bots.bench_engine", "main", "engine actions/s: replaying recorded games, and random self-play"),
    "replay": ("cli.bench_replay", "main", "log validation moves/s, and a corpus with --jobs 2"),
    "api": ("api.bench", "main", "API moves/s and latency against /healthz in the same run"),
    "app": ("api.bench_app", "main", "the app's own CPU per move, without an HTTP server"),
    "hints": ("api.bench_hints", "main", "hints/s (new positions, asked again, one token) against /healthz"),
    "bots": ("worker.bench", "main", "bot strength and bot-turn latency"),
    "audit": ("bench.audit", "main", "the fair-play audit: false positives per fair player, detection per cheater, speed"),
    "expert": ("bots.bench_expert", "main", "expert rollouts per CPU second at fixed seeds, and its choices to compare"),
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in BENCHES:
        print("usage: canasta bench {" + ",".join(BENCHES) + "} [options]")
        for name, (_, _, help_) in BENCHES.items():
            print(f"  {name:<7} {help_}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module, func, _ = BENCHES[argv[0]]
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        print(f"canasta bench {argv[0]}: not available ({e})", file=sys.stderr)
        return 2
    return int(getattr(mod, func)(argv[1:]) or 0)


if __name__ == "__main__":
    argparse.ArgumentParser()
    sys.exit(main(sys.argv[1:]))
