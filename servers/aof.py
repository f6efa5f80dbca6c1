"""Mend the tail of a Valkey append-only file that a crash cut in the middle of a transaction.

A write that changes several keys (our commit script: the event, the state, the log) is
appended to the file as one ``MULTI`` ... ``EXEC`` block, and a process killed in the middle
of that ``write()`` leaves the block cut short. Valkey 8.1 then truncates the file after the
last *whole command* it read, which can lie inside the block: the file is left with a
``MULTI`` and part of the block's commands, never applied, and the next writes are appended
behind them. At the restart after that, the dangling ``MULTI`` takes in the next block, and
the cut transaction's first commands are applied: a commit that never answered adds its
event to the game's stream (seen: one event more than versions after repeated ``kill -9``).
Valkey fixed this upstream (valkey-io/valkey#4342, after 8.1); the embedded server is 8.1.

So before a server starts on a data directory, :func:`mend_unfinished_tail` cuts the last
file of the append-only set back to the end of its last whole command outside a transaction:
exactly what a crash could not have finished, which was never answered (the server replies
only after the write). Anything else odd about the file is left to Valkey (a format error in
the middle stops it with its own message): this module only finishes what the crash began.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("canasta.embedded")

AOF_DIR = "appendonlydir"  # Valkey's default appenddirname
AOF_NAME = "appendonly.aof"  # and appendfilename; the manifest is <name>.manifest
INCR = "i"  # a manifest line's type of an incremental file (the ones written to)


@dataclass(frozen=True)
class Tail:
    """How the file ends: ``whole`` bytes end in a whole command outside any transaction;
    ``unfinished`` says the rest is a command or a transaction the writer never finished
    (False when the rest is something else, which is not ours to mend)."""

    size: int
    whole: int
    unfinished: bool


def last_incremental_file(data_dir: Path) -> Path | None:
    """The append-only file a server on ``data_dir`` writes to (the manifest's last
    incremental file); None when there is none (no manifest: appendonly was never on)."""
    manifest = data_dir / AOF_DIR / f"{AOF_NAME}.manifest"
    try:
        lines = manifest.read_text().splitlines()
    except FileNotFoundError:
        return None
    last = None
    for line in lines:
        words = line.split()
        fields = dict(zip(words[0::2], words[1::2], strict=False))
        if fields.get("type") == INCR and "file" in fields:
            last = fields["file"]
    return data_dir / AOF_DIR / last if last else None


class _Short(Exception):
    """The data ends inside a command: the crash's doing."""


class _NotACommand(Exception):
    """Something other than a command: not ours to mend."""


def read_tail(data: bytes) -> Tail:
    """Walk the file's commands (RESP arrays of bulk strings, ``#`` annotation lines) and
    find where its last whole command outside a transaction ends."""
    pos = whole = 0
    in_multi = False
    size = len(data)
    while pos < size:
        try:
            if data[pos:pos + 1] == b"#":  # an annotation line (aof-timestamp-enabled)
                name, pos = b"", _line_end(data, pos)
            else:
                name, pos = _command(data, pos)
        except _Short:
            return Tail(size, whole, unfinished=True)
        except _NotACommand:
            return Tail(size, whole, unfinished=False)
        if name == b"multi":
            if in_multi:  # a MULTI inside one: a file mended badly before; not ours either
                return Tail(size, whole, unfinished=False)
            in_multi = True
        elif name == b"exec":
            in_multi = False
        if not in_multi:
            whole = pos
    return Tail(size, whole, unfinished=whole < size)


def _command(data: bytes, pos: int) -> tuple[bytes, int]:
    """The command at ``pos``: its name in lower case, and where it ends."""
    if data[pos:pos + 1] != b"*":
        raise _NotACommand
    count, pos = _number(data, pos + 1)
    name = b""
    for i in range(count):
        if pos >= len(data):
            raise _Short
        if data[pos:pos + 1] != b"$":
            raise _NotACommand
        length, pos = _number(data, pos + 1)
        end = pos + length
        if end + 2 > len(data):
            raise _Short
        if data[end:end + 2] != b"\r\n":
            raise _NotACommand
        if i == 0:
            name = data[pos:end].lower()
        pos = end + 2
    return name, pos


def _line_end(data: bytes, pos: int) -> int:
    end = data.find(b"\n", pos)
    if end < 0:
        raise _Short
    return end + 1


def _number(data: bytes, pos: int) -> tuple[int, int]:
    """The decimal number ending in CRLF at ``pos``, and where its line ends."""
    end = data.find(b"\r\n", pos)
    if end < 0:
        raise _Short
    digits = data[pos:end]
    if not digits.isdigit():
        raise _NotACommand
    return int(digits), end + 2


def mend_unfinished_tail(data_dir: Path) -> int:
    """Cut what a crash left unfinished at the end of ``data_dir``'s append-only file (see the
    module); the number of bytes cut (0: nothing to mend)."""
    path = last_incremental_file(data_dir)
    if path is None or not path.exists():
        return 0
    tail = read_tail(path.read_bytes())
    if not tail.unfinished or tail.whole == tail.size:
        return 0
    with path.open("r+b") as f:
        f.truncate(tail.whole)
        f.flush()
        os.fsync(f.fileno())
    cut = tail.size - tail.whole
    log.warning("the append-only file %s ended in a write a crash cut short: %d bytes cut, back to its "
                "last whole command (never answered: the server replies after the write)", path, cut)
    return cut
