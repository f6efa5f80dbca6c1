"""Validating many files: expanding paths, and running in worker processes.

Workers get file paths (or, for standard input, its bytes) and send back
:class:`replay.validate.Result` objects, which are small plain data: no engine state ever
crosses a process boundary.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from replay.validate import UNREADABLE, Result, Violation, validate_bytes, validate_path


@dataclass(frozen=True, slots=True)
class Task:
    """One file to check: a path, or standard input's bytes read by the parent."""

    name: str
    data: bytes | None = None
    error: str | None = None  # a path that gave no file (an empty directory)


def expand(paths: Iterable[str]) -> list[Task]:
    """Files as given, directories as their ``*.jsonl`` files (recursively, sorted), ``-`` as stdin."""
    tasks: list[Task] = []
    for p in paths:
        if p == "-":
            tasks.append(Task("-", sys.stdin.buffer.read()))
        elif os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob("*.jsonl") if f.is_file())
            if found:
                tasks += [Task(f) for f in found]
            else:
                tasks.append(Task(p, error="no .jsonl files under this directory"))
        else:
            tasks.append(Task(p))
    return tasks


def display_name(path: str) -> str:
    """A path as printable text: a file name that is not UTF-8 shows its bytes escaped."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def check(task: Task, all_errors: bool = False) -> Result:
    """Validate one task; never raises (errors become an unreadable result)."""
    name = display_name(task.name)
    if task.error is not None:
        return Result(name, UNREADABLE, violations=[Violation("io_error", task.error)])
    if task.data is not None:
        return validate_bytes(task.data, name, all_errors)
    return validate_path(task.name, all_errors, name=name)


def _check_with(args: tuple[Task, bool]) -> Result:
    try:
        return check(*args)
    except BaseException as e:  # noqa: BLE001 - a worker must always answer
        return Result(display_name(args[0].name), UNREADABLE, violations=[Violation("internal_error", f"{type(e).__name__}: {e}")])


def _quiet_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C


def run(tasks: list[Task], jobs: int = 1, all_errors: bool = False) -> Iterator[Result]:
    """Results in the order of ``tasks``; ``jobs`` > 1 uses that many worker processes."""
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield check(task, all_errors)
        return
    jobs = min(jobs, len(tasks))
    chunk = max(1, min(32, len(tasks) // (jobs * 8)))
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ctx.Pool(jobs, initializer=_quiet_worker) as pool:
        yield from pool.imap(_check_with, ((t, all_errors) for t in tasks), chunksize=chunk)
