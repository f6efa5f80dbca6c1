"""The log format of every process of the service: one JSON object a line (or plain text for a
person at a terminal), on stderr, with the request id of the request being answered.

``CANASTA_LOG_FORMAT``: ``json`` (the default: ``canasta serve``'s API processes, its bot
workers, ``canasta worker``) or ``text`` (``canasta play``'s local service, whose terminal a
person reads). :func:`setup` installs the handler once per process, and only where nothing
configured logging before (a host's own configuration, pytest's capture, stays as it is).

A line: ``time`` (UTC, ISO 8601, ms), ``level``, ``logger``, ``msg``, ``request_id`` while a
request is answered (:data:`REQUEST_ID`), ``exc`` with a traceback, and the fields a caller
hands over as ``extra={"fields": {...}}`` (the access log's: :mod:`web.observe`).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from contextvars import ContextVar
from typing import Any

import orjson

FORMATS = ("json", "text")
DEFAULT_FORMAT = "json"
ENV_FORMAT = "CANASTA_LOG_FORMAT"
# the request being answered by this thread or task (web.observe sets it): every line logged
# meanwhile names it, so that a warning can be matched to its request's access line
REQUEST_ID: ContextVar[str | None] = ContextVar("canasta_request_id", default=None)


def log_format(value: str | None = None) -> str:
    """``value``, else ``$CANASTA_LOG_FORMAT``, else json (ValueError for another word)."""
    chosen = (value if value is not None else os.environ.get(ENV_FORMAT) or DEFAULT_FORMAT).strip().lower()
    if chosen not in FORMATS:
        raise ValueError(f"{ENV_FORMAT} is one of {', '.join(FORMATS)}, not {chosen!r}")
    return chosen


_second = [-1, ""]  # the last second formatted, and its text (a second's lines share it)


def _utc(created: float) -> str:
    seconds = int(created)
    if seconds != _second[0]:
        _second[:] = [seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))]
    return f"{_second[1]}.{int((created - seconds) * 1000):03d}Z"


class JsonFormatter(logging.Formatter):
    """One JSON object per record (orjson: no float or unicode surprises, control characters
    escaped, so a value a client sent can never start a line of its own)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {"time": _utc(record.created), "level": record.levelname.lower(),
                                "logger": record.name, "msg": record.getMessage()}
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id is not None:
            line["request_id"] = request_id
        fields = getattr(record, "fields", None)
        if fields:
            line.update(fields)
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        return orjson.dumps(line, default=str).decode()


class TextFormatter(logging.Formatter):
    """``time level logger msg key=value ...``: the same facts for a person."""

    def format(self, record: logging.LogRecord) -> str:
        parts = [_utc(record.created), record.levelname, record.name, record.getMessage()]
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id is not None:
            parts.append(f"request_id={request_id}")
        fields = getattr(record, "fields", None)
        if fields:
            parts += [f"{k}={v}" for k, v in fields.items() if v is not None]
        text = " ".join(parts)
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def formatter(fmt: str | None = None) -> logging.Formatter:
    return JsonFormatter() if log_format(fmt) == "json" else TextFormatter()


def setup(level: int | str = logging.WARNING, fmt: str | None = None, *, force: bool = False) -> bool:
    """Log to stderr in the chosen format (:func:`log_format`) at ``level``, unless logging is
    configured already (``force``: replace that); whether it was installed here."""
    root = logging.getLogger()
    if root.handlers and not force:
        return False
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    root.addHandler(handler)
    root.setLevel(level)
    # what a record costs to make: these three are looked up for every record, and no line shows them
    logging.logProcesses = logging.logThreads = logging.logMultiprocessing = False
    return True


def granian_config(fmt: str | None = None) -> dict[str, Any]:
    """granian's own logging (``--log-config``: its start, a worker's unexpected exit, a
    crash loop) in the same format, on stderr."""
    name = "service.logs.JsonFormatter" if log_format(fmt) == "json" else "service.logs.TextFormatter"
    handler = {"formatter": "plain", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"}
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"plain": {"()": name}},
        "handlers": {"console": handler, "access": handler},
        "loggers": {"_granian": {"handlers": ["console"], "level": "INFO", "propagate": False},
                    "granian.access": {"handlers": ["access"], "level": "INFO", "propagate": False}},
    }
