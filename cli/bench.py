"""`canasta bench WHAT`: benchmarks (not tests). Each prints a small table."""

from __future__ import annotations

import argparse
import importlib
import sys

BENCHES = {
    "engine": ("bench.engine", "main", "engine actions/s: replaying recorded games, and random self-play"),
    "replay": ("bench.replay", "main", "log validation moves/s, and a corpus with --jobs 2"),
    "api": ("bench.api", "main", "API moves/s and latency against /healthz in the same run"),
    "app": ("bench.app", "main", "the app's own CPU per move, without an HTTP server"),
    "hints": ("bench.hints", "main", "hints/s (new positions, asked again, one token) against /healthz"),
    "bots": ("bench.bots", "main", "bot strength and bot-turn latency"),
    "audit": ("bench.audit", "main", "the fair-play audit: false positives per fair player, detection per cheater, speed"),
    "expert": ("bench.expert", "main", "expert rollouts per CPU second at fixed seeds, and its choices to compare"),
}
# benchmarks named by two words, the first a bench above (``canasta bench bots pool``)
SUB_BENCHES = {
    ("bots", "pool"): ("bench.pool", "main", "each level against each opponent style (tuning and held-out pools)"),
    ("bots", "hands"): ("bench.hands", "main", "where a match is won, hand by hand: going out, first canastas, points by source"),
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in BENCHES:
        print("usage: canasta bench {" + ",".join(BENCHES) + "} [options]")
        for name, (_, _, help_) in BENCHES.items():
            print(f"  {name:<7} {help_}")
        for (name, sub), (_, _, help_) in SUB_BENCHES.items():
            print(f"  {name} {sub:<7} {help_}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    words = (argv[0], argv[1] if len(argv) > 1 else "")
    module, func, _ = SUB_BENCHES.get(words, BENCHES[argv[0]])
    if words in SUB_BENCHES:
        argv = [" ".join(words), *argv[2:]]  # the second word names the bench: its options follow
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        print(f"canasta bench {argv[0]}: not available ({e})", file=sys.stderr)
        return 2
    return int(getattr(mod, func)(argv[1:]) or 0)


if __name__ == "__main__":
    argparse.ArgumentParser()
    sys.exit(main(sys.argv[1:]))
