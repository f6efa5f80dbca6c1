"""`canasta replay validate|show`: the game log tool from the command line (``export``,
which fetches a log from the service, is added by the layer above: ``cli.replay_export``).

Exit codes (validate): 0 every file valid (an unfinished game is valid), 1 a file is
invalid, 2 a file cannot be read (that wins over invalid). A bad file never stops the run:
each file gets exactly one line (``--all-errors``: one per violation), then a summary.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson

from replay.validate import INVALID, OK, UNREADABLE

PROGRESS_MIN_FILES = 20
AddCommand = Callable[[Any], None]  # adds a subcommand to argparse's subparsers, with its ``func``


def main(argv: list[str] | None = None, *, more_commands: Sequence[AddCommand] = ()) -> int:
    """``more_commands``: functions that add subcommands (each sets ``func``)."""
    args = _parser(more_commands).parse_args(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # a stray character must not cost a traceback
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("canasta replay: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `... | head`: the reader left; not an error of ours
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep the interpreter's final flush quiet
        return 0


def _parser(more_commands: Sequence[AddCommand] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="canasta replay", description="Validate, show and export game logs (canasta-log/1).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    v = sub.add_parser("validate", help="rebuild each game with the engine and check every line",
                       description="Rebuild each game with the engine and check every line (docs/gamelog.md, Validation).",
                       epilog="Exit status: 0 every file valid (unfinished games included), 1 a file is invalid, "
                              "2 a file cannot be read. Reason codes: docs/gamelog.md, "
                              "docs/reason-codes.md.")
    v.add_argument("paths", nargs="+", metavar="PATH", help="a .jsonl file, a directory (its *.jsonl, recursively) or - for stdin")
    v.add_argument("--json", action="store_true", help="one JSON object per file")
    v.add_argument("--all-errors", action="store_true", help="go on after the first violation where possible")
    v.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="check files in N processes (0: one per core)")
    v.add_argument("--quiet", "-q", action="store_true", help="print only files that are not valid, and the summary")
    v.set_defaults(func=_validate)

    s = sub.add_parser("show", help="the position after a move, as a table",
                       description="Print the position after move N (default: the end of the log).")
    s.add_argument("file", metavar="FILE", help="a .jsonl log, or - for stdin")
    s.add_argument("--move", type=int, metavar="N", help="after this move (0: right after the first deal)")
    s.add_argument("--seat", type=int, metavar="S", help="only this seat's hand and what it sees")
    s.set_defaults(func=_show)

    for add in more_commands:
        add(sub)
    return parser


# -- validate ----------------------------------------------------------------------------------


def _validate(args: argparse.Namespace) -> int:
    from replay import batch

    tasks = batch.expand(args.paths)
    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    counts = {OK: 0, INVALID: 0, UNREADABLE: 0}
    show_progress = sys.stderr.isatty() and len(tasks) > PROGRESS_MIN_FILES
    with _progress(len(tasks), show_progress) as advance:
        for result in batch.run(tasks, jobs, args.all_errors):
            counts[result.status] += 1
            # sys.stdout looked up each time: the progress bar swaps it for a proxy
            if args.json:
                sys.stdout.write(orjson.dumps(result.to_dict()).decode() + "\n")
            elif not (args.quiet and result.valid):
                sys.stdout.write("\n".join(result.describe()) + "\n")
            advance()
    total = sum(counts.values())
    # the same form for any count (scripts read it): "N files: V valid, I invalid, U unreadable"
    summary = f"{total} files: {counts[OK]} valid, {counts[INVALID]} invalid, {counts[UNREADABLE]} unreadable"
    print(summary, file=sys.stderr if args.json else sys.stdout)
    sys.stdout.flush()
    if counts[UNREADABLE]:
        return 2
    return 1 if counts[INVALID] else 0


@contextlib.contextmanager
def _progress(total: int, enabled: bool) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr (rich), started at the first result so that worker
    processes are forked before its refresh thread exists."""
    if not enabled:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("validating"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True, redirect_stdout=sys.stdout.isatty(),
                   redirect_stderr=False)
    task = bar.add_task("files", total=total)
    started = False

    def advance() -> None:
        nonlocal started
        if not started:
            bar.start()
            started = True
        bar.advance(task)

    try:
        yield advance
    finally:
        if started:
            bar.stop()


# -- show ------------------------------------------------------------------------------------


def _show(args: argparse.Namespace) -> int:
    from replay.reader import Unreadable, read_path
    from replay.show import render
    from replay.validate import HeaderError, replay_log

    name = args.file
    try:
        log = read_path(name)
        rep = replay_log(log, until_move=args.move)
    except Unreadable as e:
        where = f"{name}:{e.line}" if e.line else name
        print(f"{where}: {e.code}: {e.message}", file=sys.stderr)
        return 2
    except HeaderError as e:
        print(f"{name}:{log.header_no}: header: {e.code}: {e.message}", file=sys.stderr)
        return 1
    status = 0
    if rep.violations:
        print(rep.violations[0].describe(name), file=sys.stderr)
        print(f"{name}: showing the position before that line", file=sys.stderr)
        status = 1
    elif args.move is not None and args.move > rep.last_move:
        print(f"{name}: the log has moves 1 to {rep.last_move}, not move {args.move}", file=sys.stderr)
        return 2
    if rep.state is None:
        print(f"{name}: no hand has been dealt yet")
        return status
    rules = rep.state.rules
    if args.seat is not None and not 0 <= args.seat < rules.players:
        print(f"{name}: seats are 0 to {rules.players - 1}, not {args.seat}", file=sys.stderr)
        return 2
    print(render(rep.state, log.header, rep.state.moves, args.seat))
    return status
