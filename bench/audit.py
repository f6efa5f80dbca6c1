"""`canasta bench audit`: the fair-play audit's error rates and speed.

A *set* is 20 four-player ``finnish`` games (new seeds each set) in which one suspect seat
(rotating over the sets) is played by the player under test and the other three by the
standard bot. The audit judges the suspect's decisions over the whole set, as
``canasta audit --player`` would, and flags it at :data:`audit.fairplay.THRESHOLD`. Per fair
player the share of sets flagged is the false-positive rate; per cheater
(:mod:`bench.cheaters`) it is the detection rate; both with Wilson 95% intervals. The games
go through the real path: written as log lines, read back, replayed.

Each finished set is one JSON line in ``--out`` (appended), so a bounded run keeps what it
measured, and ``--from`` summarises any number of such files together.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import orjson

from audit.decisions import game_of
from audit.fairplay import THRESHOLD, audit
from audit.judge import STOCK_WORLDS, WORLDS, Judge
from bench.cheaters import WORLDS as CHEATER_WORLDS
from bench.cheaters import Cheater, Deliberate
from bots import CPU, Budget, policy
from bots.simulate import Policy, play_game
from bots.stats import mean_margin, wilson
from engine.rules import resolve
from replay.reader import parse_bytes

PRESET = "finnish"
GAMES_PER_SET = 20
SEATS = 4
OTHERS = "standard"
# name -> (kind, how to make the suspect's policy from an rng)
PLAYERS: dict[str, tuple[str, Callable[[random.Random], Policy]]] = {
    "random": ("fair", lambda r: policy("random", r)),
    "greedy": ("fair", lambda r: policy("greedy", r)),
    "standard": ("fair", lambda r: policy("standard", r)),
    "expert-5ms": ("fair", lambda r: policy("expert", r, Budget(ms=5, clock=CPU))),
    "expert-25ms": ("fair", lambda r: policy("expert", r, Budget(ms=25, clock=CPU))),
    "peek-stock": ("cheat", lambda r: Cheater("stock").policy(r)),
    "peek-partner": ("cheat", lambda r: Cheater("partner").policy(r)),
    "peek-opponent": ("cheat", lambda r: Cheater("opponent").policy(r)),
    "peek-all-0.25": ("cheat", lambda r: Cheater("all", fraction=0.25).policy(r)),
    "deliberate-partner": ("cheat", lambda r: Deliberate("partner").policy(r)),
    "deliberate-opponent": ("cheat", lambda r: Deliberate("opponent").policy(r)),
}
ALL_SEEING = "peek-all"  # sees every hand always: the blatant cheater of the tests
PLAYERS[ALL_SEEING] = ("cheat", lambda r: Cheater("all").policy(r))
DEFAULT = tuple(p for p in PLAYERS if p != ALL_SEEING)


def play_set(player: str, index: int, seed: int, games: int = GAMES_PER_SET) -> dict[str, Any]:
    """Play and audit one set; plain data back (it crosses a process boundary)."""
    kind, make = PLAYERS[player]
    rules = resolve(PRESET)
    suspect = index % SEATS
    rng = random.Random(f"bench-audit:{seed}:{player}:{index}")
    logs: list[tuple[str, list[Any]]] = []
    play_cpu = 0.0
    decisions_all = 0
    for g in range(games):
        others = policy(OTHERS, random.Random(rng.getrandbits(64)))
        seats: dict[int, Policy] = {p: others for p in range(SEATS)}
        seats[suspect] = make(random.Random(rng.getrandbits(64)))
        started = time.process_time()
        record = play_game(rules, random.Random(rng.getrandbits(64)), seats)
        play_cpu += time.process_time() - started
        data = b"".join(orjson.dumps(line) + b"\n" for line in record.log_lines(game_id=f"s{index}g{g}"))
        game = game_of(parse_bytes(data), f"{player}/{index}/{g}")
        decisions_all += len(game.decisions)
        logs.append((game.name, game.of_seat(suspect)))
    started = time.process_time()
    verdict = audit(f"{player} set {index}", logs, Judge())
    judge_cpu = time.process_time() - started
    return {"player": player, "kind": kind, "set": index, "seed": seed, "seat": suspect, "games": games,
            "decisions": verdict.decisions, "judged": verdict.judged, "z": verdict.z,
            "z_stock": verdict.z_stock, "p": verdict.p, "hands": verdict.hands,
            "z_independent": verdict.z_independent, "z_stock_independent": verdict.z_stock_independent,
            "flagged": verdict.flagged, "judgeable": verdict.judgeable, "judge_cpu": judge_cpu,
            "play_cpu": play_cpu, "decisions_all_seats": decisions_all}


def summarise(rows: list[dict[str, Any]], threshold: float = THRESHOLD) -> str:
    out = ["mean z, sd z: the hands' test; z stock: the stock's test (mean); flagged: p, twice the smaller test's, "
           f"below {threshold:g}",
           f"{'player':<15} {'kind':<5} {'sets':>4} {'flagged':>7} {'share (95% CI)':>22} "
           f"{'mean z':>7} {'sd z':>5} {'z stock':>7} {'p<0.05':>6} {'judged/set':>10}"]
    normal = NormalDist()
    for player in dict.fromkeys(r["player"] for r in rows):
        mine = [r for r in rows if r["player"] == player]
        n = len(mine)
        k = sum(1 for r in mine if r["judgeable"] and r["p"] < threshold)
        lo, hi = wilson(k, n)
        zs = [r["z"] for r in mine]
        mean = sum(zs) / n
        sd = math.sqrt(sum((z - mean) ** 2 for z in zs) / (n - 1)) if n > 1 else 0.0
        below = sum(1 for r in mine if r["p"] < 0.05)
        judged = sum(r["judged"] for r in mine) / n
        stock = sum(r.get("z_stock", 0.0) for r in mine) / n
        out.append(f"{player:<15} {mine[0]['kind']:<5} {n:>4} {k:>7} {k / n:>7.1%} ({lo:.1%}-{hi:.1%})"
                   f" {mean:>+7.2f} {sd:>5.2f} {stock:>+7.2f} {below:>6} {judged:>10.0f}")
    decisions = sum(r["decisions"] for r in rows)
    cpu = sum(r["judge_cpu"] for r in rows)
    per_game = sum(r["decisions_all_seats"] for r in rows) / max(1, sum(r["games"] for r in rows))
    if cpu:
        rate = decisions / cpu
        departures = sum(r["judged"] for r in rows)
        out.append(f"speed: {decisions} decisions examined ({departures} departures from the reference valued in "
                   f"{WORLDS + STOCK_WORLDS + 1} deals) in {cpu:.0f} s of CPU: {rate:.1f} decisions/s per core "
                   f"({departures / cpu:.1f} departures/s); "
                   f"{per_game:.0f} decisions a game (all four seats): 1 000 games take "
                   f"{1000 * per_game / rate / 3600:.1f} core-hours (every seat)")
    out.append(f"flagged: p < {threshold:g}; a fair player's p is uniform when the test is calibrated "
               f"(p<0.05 in ~5% of sets, mean z ~0, sd z ~1; normal tail of z at the threshold "
               f"{normal.inv_cdf(1 - threshold):.2f})")
    return "\n".join(out)


def gain(player: str, pairs: int, seed: int) -> str:
    """What the player's play is worth: each deck is played twice, the player in one seat
    (rotating) and then the standard bot in that seat, every other seat the standard bot with
    the same seeds; the paired difference of its side's result (games won, a draw half; the
    side's lead in points a hand), with 95% intervals. A cheater whose leak does not change its
    play gains nothing, and no audit can see a leak that changes nothing."""
    rules = resolve(PRESET)
    _, make = PLAYERS[player]
    won: list[float] = []
    lead: list[float] = []
    for game in range(pairs):
        seat = game % SEATS
        team = rules.team_of(seat)
        results = []
        for suspect in (make, None):
            seats: dict[int, Policy] = {p: policy(OTHERS, random.Random(f"bench-gain:{seed}:{game}:{p}"))
                                        for p in range(SEATS)}
            if suspect is not None:
                seats[seat] = suspect(random.Random(f"bench-gain:{seed}:{game}:{seat}:{player}"))
            record = play_game(rules, random.Random(f"bench-gain:{seed}:deal:{game}"), seats)
            final = record.final
            assert final is not None and final.game_result is not None
            winner = final.game_result["winner"]
            results.append((1.0 if winner == team else 0.5 if winner is None else 0.0,
                            (final.totals[team] - final.totals[1 - team]) / max(1, len(record.hands))))
        won.append(results[0][0] - results[1][0])
        lead.append(results[0][1] - results[1][1])
    won_mean, won_half = mean_margin(won)
    lead_mean, lead_half = mean_margin(lead)
    return (f"{player:<20} {pairs} decks: games won {100 * won_mean:+.1f} points in 100 (+-{100 * won_half:.1f}), "
            f"lead a hand {lead_mean:+.1f} points (+-{lead_half:.1f}) over the standard bot in its seat")


def leak_use(leak: str, games: int, seed: int, worlds: int) -> str:
    """How much the search cheater's leak moves its choices: at each of its decisions (its
    own games, one seat rotating, the rest the standard bot), its choice with the leak against
    the same search without it on the same random stream, and that against another stream. A
    leak that changes the choice no more often than the search's own dice hardly steers it."""
    cheater, fair = Cheater(leak, worlds=worlds), Cheater(leak, fraction=0.0, worlds=worlds)
    rules = resolve(PRESET)
    streams = random.Random(f"bench-leak-use:{seed}:{leak}")
    decisions = by_leak = by_dice = 0

    def watched(state: Any, seat: int, actions: list[dict[str, Any]]) -> dict[str, Any]:
        nonlocal decisions, by_leak, by_dice
        stream = streams.getrandbits(32)
        choice = cheater.choose(state, seat, actions, random.Random(stream))
        if len(actions) > 1:
            fair_choice = fair.choose(state, seat, actions, random.Random(stream))
            decisions += 1
            by_leak += choice != fair_choice
            by_dice += fair_choice != fair.choose(state, seat, actions, random.Random(stream + 1))
        return choice

    for game in range(games):
        seats: dict[int, Policy] = {p: policy(OTHERS, random.Random(f"bench-leak-use:{seed}:{game}:{p}"))
                                    for p in range(SEATS)}
        seats[game % SEATS] = watched
        play_game(rules, random.Random(f"bench-leak-use:{seed}:deal:{game}"), seats)
    n = max(1, decisions)
    return (f"peek-{leak:<9} {worlds} worlds, {decisions} decisions with a choice: the leak changes the choice at "
            f"{by_leak / n:.1%}, another random stream at {by_dice / n:.1%}")


def _task(args: tuple[str, int, int, int]) -> dict[str, Any]:
    return play_set(*args)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="canasta bench audit", description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", default=",".join(DEFAULT), help=f"comma-separated, of: {', '.join(PLAYERS)}")
    ap.add_argument("--sets", type=int, default=200, help="sets per player (the goal: 200)")
    ap.add_argument("--first-set", type=int, default=0, help="index of the first set (new seeds: go on from a run)")
    ap.add_argument("--games", type=int, default=GAMES_PER_SET, help="games per set")
    ap.add_argument("--seed", type=int, default=1, help="the run's seed (every set's seeds derive from it)")
    ap.add_argument("--jobs", type=int, default=1, help="processes")
    ap.add_argument("--minutes", type=float, default=None, help="stop starting sets after this long")
    ap.add_argument("--out", default=None, help="append each set's result to this JSON Lines file")
    ap.add_argument("--from", dest="sources", action="append", default=[], help="summarise these files only")
    ap.add_argument("--gain", type=int, default=0, metavar="DECKS",
                    help="instead of sets: what each player's play gains over the standard bot on this many decks")
    ap.add_argument("--leak-use", type=int, default=0, metavar="GAMES",
                    help="instead of sets: how often each search cheater's leak changes its choice, in this many games")
    ap.add_argument("--worlds", type=int, default=CHEATER_WORLDS, help="the search cheaters' worlds (with --leak-use)")
    args = ap.parse_args(argv)
    if args.sources:
        read: list[dict[str, Any]] = []
        for path in args.sources:
            with open(path, "rb") as f:
                read += [orjson.loads(line) for line in f if line.strip()]
        print(summarise(read))
        return 0
    players = [p.strip() for p in args.players.split(",") if p.strip()]
    unknown = [p for p in players if p not in PLAYERS]
    if unknown:
        print(f"canasta bench audit: unknown player {unknown[0]!r}; players: {', '.join(PLAYERS)}", file=sys.stderr)
        return 2
    if args.leak_use:
        for leak in ("stock", "partner", "opponent"):
            if f"peek-{leak}" in players:
                print(leak_use(leak, args.leak_use, args.seed, args.worlds), flush=True)
        return 0
    if args.gain:
        for player in players:
            print(gain(player, args.gain, args.seed), flush=True)
        return 0
    # interleaved: a bounded run measures every player about equally
    tasks = [(p, i, args.seed, args.games) for i in range(args.first_set, args.first_set + args.sets) for p in players]
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    rows: list[dict[str, Any]] = []
    out = open(args.out, "ab") if args.out else None  # noqa: SIM115 - closed below
    pool = multiprocessing.get_context("fork").Pool(args.jobs) if args.jobs > 1 else None
    try:
        results = pool.imap(_task, tasks) if pool else map(_task, tasks)
        for row in results:
            rows.append(row)
            if out:
                out.write(orjson.dumps(row) + b"\n")
                out.flush()
            print(f"{row['player']:<15} set {row['set']:>3} seat {row['seat']} judged {row['judged']:>4} "
                  f"z {row['z']:+.2f} (hands) {row.get('z_stock', 0.0):+.2f} (stock) p {row['p']:.3g}"
                  f"{'  FLAGGED' if row['flagged'] else ''}", flush=True)
            if deadline and time.monotonic() > deadline:
                break
    finally:
        if pool:
            pool.terminate()
        if out:
            out.close()
    if rows:
        print(summarise(rows))
    return 0
