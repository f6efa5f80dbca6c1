"""Quoting what a message is about: a bad value or name, cut short.

Messages of the engine and the log reader name the value they refuse, and callers pass
them on (the API answers them to whoever sent the value). A value may be anything a file
or a request held (a megabyte of text), so a message quotes at most :data:`QUOTE_CHARS`
characters of it and says how long it was.
"""

from __future__ import annotations

from collections.abc import Iterable

QUOTE_CHARS = 100  # characters of a value a message quotes
NAMES_SHOWN = 5  # names a message lists (unknown options, fields)
MORE = "…"  # marks a cut


def quote(value: object, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)``, at most ``limit`` characters of it, then how long it was."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}{MORE} ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}{MORE} ({len(text)} characters)"


def clip(value: object, limit: int = QUOTE_CHARS) -> str:
    """``str(value)``, at most ``limit`` characters of it, then how long it was."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}{MORE} ({len(text)} characters)"


def names_text(names: Iterable[str], shown: int = NAMES_SHOWN) -> str:
    """Names as ``a, b, c``: the first ``shown``, each cut at :data:`QUOTE_CHARS` / 2, and how
    many more there are."""
    listed = sorted(names)
    text = ", ".join(name if len(name) <= QUOTE_CHARS // 2 else quote(name, QUOTE_CHARS // 2)
                     for name in listed[:shown])
    return text + (f" and {len(listed) - shown} more" if len(listed) > shown else "")
