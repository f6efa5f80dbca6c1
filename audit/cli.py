"""`canasta audit LOG...`: a test of fair play per seat, or per player over many games.

Exit status: 0 nothing flagged, 1 a suspect was flagged, 2 a log could not be judged (that
wins). A log that cannot be judged gets one line saying why, never a traceback; the others
are judged all the same.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator

import orjson

from audit.decisions import Game, Refused, read_game
from audit.fairplay import MIN_DECISIONS, THRESHOLD, Verdict, audit
from audit.judge import WORLDS, Judge
from replay.batch import display_name, expand

SHOWN_LINES = 3  # decisions printed under a verdict (--json gives all that are kept)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("canasta audit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep the final flush quiet
        return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="canasta audit",
        description="Test each seat's play for fair play: does it favour the actual hidden cards more than "
                    "its own information explains? (docs/audit.md)",
        epilog=f"A suspect is flagged when its p-value is below --threshold (default {THRESHOLD}); one with "
               f"fewer than {MIN_DECISIONS} informative decisions is too short to judge and never flagged. "
               "Exit status: 0 nothing flagged, 1 a suspect flagged, 2 a log could not be judged.")
    p.add_argument("paths", nargs="+", metavar="LOG", help="a .jsonl game log, a directory (its *.jsonl, recursively) or - for stdin")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--seat", type=int, metavar="S", help="judge only this seat of each game")
    who.add_argument("--player", metavar="NAME", help="judge the seats named NAME (the header's seat names), "
                                                      "all games together")
    p.add_argument("--json", action="store_true", help="one JSON object per suspect (and per refused log)")
    p.add_argument("--threshold", type=float, default=THRESHOLD, metavar="P", help="flag below this p-value")
    p.add_argument("--worlds", type=int, default=WORLDS, metavar="K", help="deals with the other hands dealt again, per decision")
    return p


def _run(args: argparse.Namespace) -> int:
    if not 0 < args.threshold < 1:
        print(f"canasta audit: --threshold is a p-value between 0 and 1, not {args.threshold}", file=sys.stderr)
        return 2
    if args.worlds < 1:
        print(f"canasta audit: --worlds is at least 1, not {args.worlds}", file=sys.stderr)
        return 2
    judge = Judge(worlds=args.worlds)
    refused = flagged = 0
    pooled: list[tuple[str, list]] = []
    for game in _games(args.paths):
        if isinstance(game, Refused):
            refused += 1
            _refusal(str(game), args.json)
            continue
        if args.player is not None:
            seats = [i for i, n in enumerate(game.seat_names) if n == args.player]
            pooled += [(game.name, game.of_seat(s)) for s in seats]
            continue
        if args.seat is not None and not 0 <= args.seat < game.players:
            refused += 1
            _refusal(f"{game.name}: seats are 0 to {game.players - 1}, not {args.seat}", args.json)
            continue
        for seat in ([args.seat] if args.seat is not None else range(game.players)):
            suspect = f"{game.name} seat {seat} ({game.seat_names[seat]})"
            verdict = _judged(suspect, [(game.name, game.of_seat(seat))], judge, args.threshold)
            flagged += verdict.flagged
            _print(verdict, args.json)
    if args.player is not None:
        if not pooled and not refused:
            _refusal(f"canasta audit: no seat is named {args.player!r} in these logs", args.json)
            return 2
        if pooled:
            verdict = _judged(f"player {args.player} ({len(pooled)} games)", pooled, judge, args.threshold)
            flagged += verdict.flagged
            _print(verdict, args.json)
    sys.stdout.flush()
    if refused:
        return 2
    return 1 if flagged else 0


def _games(paths: list[str]) -> Iterator[Game | Refused]:
    for task in expand(paths):
        name = display_name(task.name)
        if task.error is not None:
            yield Refused(f"{name}: {task.error}")
            continue
        try:
            yield read_game(task.name, name, task.data)
        except Refused as e:
            yield e
        except Exception as e:  # a bug of ours: one line, never a traceback
            yield Refused(f"{name}: cannot be judged: internal error: {type(e).__name__}: {e}")


def _judged(suspect: str, games: list[tuple[str, list]], judge: Judge, threshold: float) -> Verdict:
    return audit(suspect, games, judge, threshold)


def _refusal(line: str, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(orjson.dumps({"refused": line}).decode() + "\n")
    else:
        print(line, file=sys.stderr)


def _print(v: Verdict, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(orjson.dumps(v.to_dict()).decode() + "\n")
        return
    head = f"{v.suspect}: {v.decisions} decisions, {v.judged} informative"
    if not v.judgeable:
        print(f"{head}: too short to judge (fewer than {MIN_DECISIONS} informative decisions), not flagged")
        return
    print(f"{head} in {v.hands} hands, z {v.z:+.2f} (hands) {v.z_stock:+.2f} (stock), p {v.p:.3g}: {v.status} "
          f"(flagged below p {v.threshold:g})")
    for game, j in v.weighty[:SHOWN_LINES]:
        action = orjson.dumps(j.action).decode()
        print(f"  {game} move {j.move} (hand {j.hand}): {action}: rank {j.u:.2f}, advantage "
              f"{j.true_advantage:+.0f} in the true deal, {j.mean_advantage:+.0f} in sampled ones")
