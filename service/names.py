"""Seat names: normalised and checked in one place, for every way a name comes in.

A name is shown to every player of the game, beside seat numbers, cards and scores. So it
must show what it is: no character that reorders the text around it (a right-to-left
override turns "ann (seat 1)" into something else), breaks a line, or is invisible (a
name of zero-width spaces looks like an open seat; "an\\u200bn" like "ann"). The API's
``POST /games`` and joins (:mod:`service.games`), ``canasta play --name`` and the Python
client's callers use :func:`normalise_name`; clients learn the refusal's ``reason``.
"""

from __future__ import annotations

import unicodedata

MAX_NAME_CHARS = 40  # characters of the normalised, trimmed name
# characters sent, before normalising and trimming: past this a name is too long whatever
# it holds (checked first, so that a huge one costs nothing)
MAX_SENT_CHARS = 1024

# The reasons a name is refused (the ``reason`` member of a 422 ``invalid_name``): stable.
TOO_LONG = "too_long"
CONTROL = "control"  # a C0/C1 control character (a tab, an escape, ...)
LINE_BREAK = "line_break"  # a line or paragraph break (\n, \r, U+0085, U+2028, U+2029, ...)
BIDI_CONTROL = "bidi_control"  # a mark, embedding, override or isolate of the bidi algorithm
INVISIBLE = "invisible"  # no visible character, or an invisible format character in it
UNPRINTABLE = "unprintable"  # a surrogate, a private-use or an unassigned code point
STACKED_MARKS = "stacked_marks"  # more combining marks on one character than any script needs
REASONS = (TOO_LONG, CONTROL, LINE_BREAK, BIDI_CONTROL, INVISIBLE, UNPRINTABLE, STACKED_MARKS)

# Unicode's Bidi_Control characters (UAX #9): ALM, LRM, RLM, LRE..RLO, LRI..PDI.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Every character ``str.splitlines`` breaks a line at.
LINE_BREAKS = frozenset("\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029")
# Format characters that are part of writing: zero-width non-joiner and joiner (Persian,
# the Indic scripts, emoji sequences), and the tag characters of flag emoji.
WRITING_FORMATS = frozenset("\u200c\u200d") | frozenset(map(chr, range(0xE0020, 0xE0080)))
# Letters and symbols that show nothing (Hangul fillers, the blank braille pattern).
BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
MAX_MARKS = 4  # combining marks in a row: a handful covers every script's stacks
_VISIBLE = ("L", "N", "P", "S")  # the general categories that show a glyph


class NameRefused(ValueError):
    """Why a name is refused: ``reason`` (one of :data:`REASONS`), a sentence, and the
    character at fault as ``U+XXXX`` when there is one. It never quotes the name."""

    def __init__(self, reason: str, detail: str, character: str | None = None) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.character = character


def _code_point(ch: str) -> str:
    label = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({label})" if label else "")


def _refuse(reason: str, ch: str, why: str) -> NameRefused:
    return NameRefused(reason, f"The name holds {_code_point(ch)}, {why}.", f"U+{ord(ch):04X}")


def normalise_name(raw: str) -> str:
    """``raw`` as a seat's name: NFC, leading and trailing whitespace trimmed, at most
    :data:`MAX_NAME_CHARS` characters; or :class:`NameRefused`."""
    if len(raw) > MAX_SENT_CHARS:
        raise NameRefused(TOO_LONG, f"A name is at most {MAX_NAME_CHARS} characters; {len(raw)} were sent.")
    name = unicodedata.normalize("NFC", raw)
    marks = 0
    for ch in name:
        category = unicodedata.category(ch)
        if ch in LINE_BREAKS or category in ("Zl", "Zp"):
            raise _refuse(LINE_BREAK, ch, "a line break")
        if category == "Cc":
            raise _refuse(CONTROL, ch, "a control character")
        if ch in BIDI_CONTROLS:
            raise _refuse(BIDI_CONTROL, ch, "a bidi control that reorders the text around the name")
        if category in ("Cs", "Co", "Cn"):
            raise _refuse(UNPRINTABLE, ch, "a code point that is no printable character")
        if category == "Cf" and ch not in WRITING_FORMATS:
            raise _refuse(INVISIBLE, ch, "an invisible formatting character")
        marks = marks + 1 if category.startswith("M") else 0
        if marks > MAX_MARKS:
            raise _refuse(STACKED_MARKS, ch, f"the mark after {MAX_MARKS} combining marks in a row")
    name = name.strip()
    if not any(unicodedata.category(ch).startswith(_VISIBLE) and ch not in BLANKS for ch in name):
        raise NameRefused(INVISIBLE, "A name needs at least one visible character (a letter, a digit, a "
                                     "punctuation mark or a symbol).")
    if len(name) > MAX_NAME_CHARS:
        raise NameRefused(TOO_LONG, f"A name is at most {MAX_NAME_CHARS} characters; this one has {len(name)}.")
    return name
