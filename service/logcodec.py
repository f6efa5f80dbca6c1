"""Compact storage of a game's log in Redis: runs of old lines deflated into one entry.

The log list holds plain lines (JSON text: they start with ``{``) and, in front of them,
*chunks*: ``MARK`` followed by the raw deflate of ``CHUNK`` lines joined by newlines. Once a
game has ``CHUNK`` plain lines, the API folds the oldest of them into a chunk
(``compact.lua``, checked against the hash's ``logc`` count so that two processes never fold
the same lines twice). A chunk of 64 moves takes ~550 bytes where the plain lines took ~4.4
KB, so a long game's log stays small while it is played. :func:`expand` gives back the exact
lines that were written.

``DICT`` must never change: stored chunks are inflated with it (a new dictionary needs a new
``MARK``).
"""

from __future__ import annotations

import zlib

MARK = b"\x00L1"
CHUNK = 64
DICT = (
    b'{"hand_end":1,"reason":"went_out","by":0,"scores":[{"team":0,"melds":0,"canasta_bonus":0,'
    b'"red_threes":0,"going_out":0,"penalties":0,"in_hand":0,"hand_total":0,"total":0}]}\n'
    b'{"move":98,"hand":1,"seat":1,"action":{"type":"answer_go_out","yes":true}}\n'
    b'{"move":99,"hand":1,"seat":2,"action":{"type":"ask_go_out"}}\n'
    b'{"move":17,"hand":1,"seat":3,"action":{"type":"pass"}}\n'
    b'{"move":48,"hand":1,"seat":2,"action":{"type":"take_pile","with":["QS","QD"]}}\n'
    b'{"move":49,"hand":1,"seat":2,"action":{"type":"add","rank":"7","cards":["7C"]}}\n'
    b'{"move":41,"hand":1,"seat":3,"action":{"type":"meld","melds":[["4H","4C","2H"]]}}\n'
    b'{"move":42,"hand":1,"seat":3,"action":{"type":"discard","card":"7C"}}\n'
    b'{"move":43,"hand":1,"seat":0,"action":{"type":"draw"}}\n'
)
_WBITS = -15


def pack(lines: list[bytes]) -> bytes:
    """One chunk entry holding ``lines`` (each without its newline)."""
    c = zlib.compressobj(9, zlib.DEFLATED, _WBITS, 8, zlib.Z_DEFAULT_STRATEGY, DICT)
    return MARK + c.compress(b"\n".join(lines)) + c.flush()


def is_chunk(entry: bytes) -> bool:
    return entry[:1] == MARK[:1]


def unpack(entry: bytes) -> list[bytes]:
    if not entry.startswith(MARK):
        raise ValueError("not a log chunk of this version")
    d = zlib.decompressobj(_WBITS, DICT)
    return (d.decompress(entry[len(MARK):]) + d.flush()).split(b"\n")


def expand(entries: list[bytes]) -> list[bytes]:
    """The log's lines, in order, from the list's entries (chunks and plain lines)."""
    lines: list[bytes] = []
    for entry in entries:
        if is_chunk(entry):
            lines.extend(unpack(entry))
        else:
            lines.append(entry)
    return lines
