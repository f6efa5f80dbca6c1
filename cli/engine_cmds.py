"""`canasta rules` and `canasta simulate`: the engine from the command line."""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from pathlib import Path

import engine
from bots import NAMES, policy
from bots.random_bot import random_policy
from bots.simulate import MAX_MOVES, GameTooLong, Policy, play_game
from engine.rules import RulesError

__all__ = ["random_policy", "rules_main", "simulate_main"]  # random_policy: the tests' corpora import it here


def rules_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="canasta rules", description="List the presets, or print one preset's resolved options as JSON.")
    parser.add_argument("name", nargs="?", help="a preset name")
    parser.add_argument("--players", type=int, help="player count (default: the preset's)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="OPTION=VALUE", help="a house rule on top of the preset (repeatable)")
    args = parser.parse_args(argv)
    if args.name is None:
        for p in engine.preset_summary():
            counts = ",".join(str(n) for n in p["players"])
            print(f"{p['name']:<12} seed {p['seed']}  players {counts:<11} {p['description']}")
        return 0
    overrides = {}
    for item in args.overrides:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"canasta rules: --set needs OPTION=VALUE, not {item!r}", file=sys.stderr)
            return 2
        overrides[key.strip()] = value.strip()
    try:
        options = engine.resolve(args.name, args.players, overrides)
    except RulesError as e:
        print(f"canasta rules: {e}", file=sys.stderr)
        return 2
    print(json.dumps(options.to_dict(), indent=2))
    return 0


def simulate_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="canasta simulate",
                                     description="Play whole games, every seat the same bot (random legal actions by default).")
    parser.add_argument("--rules", default="classic", help="preset name")
    parser.add_argument("--bot", default="random", choices=NAMES, help="the bot at every seat (default random)")
    parser.add_argument("--players", type=int)
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="OPTION=VALUE")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write one game log per game into this folder")
    parser.add_argument("--max-moves", type=int, default=MAX_MOVES,
                        help="a game still going after this many moves counts as unfinished")
    args = parser.parse_args(argv)
    overrides = dict(item.partition("=")[::2] for item in args.overrides)
    try:
        rules = engine.resolve(args.rules, args.players, overrides)
    except RulesError as e:
        print(f"canasta simulate: {e}", file=sys.stderr)
        return 2
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)

    hands = actions = unfinished = 0
    game_lengths: list[int] = []  # hands of each game
    hand_lengths: list[int] = []  # moves of each hand
    reasons: collections.Counter[str] = collections.Counter()
    ends: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for g in range(args.games):
        rng = random.Random(f"{args.seed}:{g}")
        try:
            record = play_game(rules, rng, _policies(args.bot, rules.players, rng, f"{args.seed}:{g}"),
                               max_moves=args.max_moves)
        except GameTooLong as e:  # cut by --max-moves before the game's own end
            print(f"game {g}: unfinished: {e}", file=sys.stderr)
            unfinished += 1
            continue
        except Exception as e:  # any engine error fails the run
            print(f"game {g}: engine error: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        hands += len(record.hands)
        actions += len(record.moves)
        reasons.update(h["reason"] for h in record.hands)
        assert record.final is not None and record.final.game_result is not None
        ends[record.final.game_result["reason"]] += 1
        game_lengths.append(len(record.hands))
        hand_lengths += record.moves_per_hand()
        if args.out:
            from replay.log import write_log

            write_log(args.out / f"game-{args.seed}-{g:05d}.jsonl", record.log_lines(game_id=f"sim-{args.seed}-{g}"))
    elapsed = time.perf_counter() - started
    print(f"games {args.games}  hands {hands}  actions {actions}  "
          f"mean hand length {actions / max(hands, 1):.1f} actions  ({elapsed:.1f} s)")
    print("hands ended: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    print("games ended: " + ", ".join(f"{k} {v}" for k, v in sorted(ends.items())))
    if game_lengths:
        print(f"hands a game: {_spread(game_lengths)}; moves a hand: {_spread(hand_lengths)}")
        print(f"longest game {max(game_lengths)} hands, longest hand {max(hand_lengths)} moves "
              f"(limits: {rules.limits.max_hands} hands, {rules.limits.max_moves_per_hand} moves a hand)")
    if unfinished:
        print(f"unfinished games {unfinished} (still going after --max-moves {args.max_moves} moves)")
    return 0


def _policies(bot: str, players: int, rng: random.Random, game: str) -> Policy | dict[int, Policy]:
    """Every seat the same bot: random play draws from the game's own ``rng`` (as it always
    did, so a seed replays the same games); another bot gets an rng of its own per seat."""
    if bot == "random":
        return random_policy(rng)
    return {seat: policy(bot, random.Random(f"{game}:{seat}")) for seat in range(players)}


def _spread(values: list[int]) -> str:
    """Mean, 99th percentile (nearest rank) and maximum: what the limits' defaults are set by."""
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"mean {sum(ordered) / len(ordered):.1f}, p99 {p99}, max {ordered[-1]}"
