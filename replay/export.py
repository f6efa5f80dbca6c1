"""`canasta replay export`: fetch a finished game's log from the service.

Two sources: the API (``GET {url}/games/{id}/log``, what anyone may download once the game
is over) or Redis directly (the list ``{prefix}:{<id>}:log`` that ``api/store.py`` appends
to in the same transaction as each move, old lines folded into chunks by
``api/logcodec.py``; prefix from ``CANASTA_KEY_PREFIX``). Either way the
bytes are checked to be a readable log that ends with its game_end line before they are
written: an export is meant to be an audit record, so an unfinished game is refused.
"""

from __future__ import annotations

import os
import re
import tempfile
import urllib.parse
import zlib
from pathlib import Path

from replay.reader import GAME_END, Unreadable, parse_bytes

GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ExportError(Exception):
    """Why a log could not be exported; the message is the one line the CLI prints."""


def log_key(game_id: str, prefix: str | None = None) -> str:
    """The Redis list of a game's log lines, as the API's store names it."""
    prefix = prefix or os.environ.get("CANASTA_KEY_PREFIX") or "canasta"
    try:
        from api.keys import Keys
    except ImportError:  # the replay tool installed without the API
        return f"{prefix}:{{{game_id}}}:log"
    return Keys(prefix).log(game_id)


def fetch_redis(game_id: str, url: str, prefix: str | None = None) -> bytes:
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=30)
        try:
            items = client.lrange(log_key(game_id, prefix), 0, -1)
        finally:
            client.close()
    except (redis.RedisError, ValueError) as e:
        raise ExportError(f"redis {url}: {e}") from None
    if not items:
        raise ExportError(f"no log for game {game_id} under {log_key(game_id, prefix)!r}")
    return b"".join(line.rstrip(b"\n") + b"\n" for line in _expand(items))


def _expand(items: list[bytes]) -> list[bytes]:
    """The stored entries as log lines: the API folds old lines into deflated chunks."""
    try:
        from api.logcodec import expand
    except ImportError:  # the replay tool installed without the API: plain lines only
        return items
    try:
        return expand(items)
    except (ValueError, zlib.error) as e:
        raise ExportError(f"a stored log chunk cannot be read: {e}") from None


def fetch_api(game_id: str, base_url: str, timeout: float = 60.0) -> bytes:
    import requests

    url = f"{base_url.rstrip('/')}/games/{urllib.parse.quote(game_id, safe='')}/log"
    try:
        r = requests.get(url, timeout=timeout)
    except requests.RequestException as e:
        raise ExportError(f"GET {url}: {e}") from None
    if r.status_code != 200:
        detail = r.text[:200].strip()
        try:
            body = r.json()
            detail = f"{body.get('code')}: {body.get('detail')}"
        except ValueError:
            pass
        raise ExportError(f"GET {url}: {r.status_code} {detail}")
    return r.content


def check_finished(data: bytes, game_id: str) -> None:
    """The bytes are a readable log that ends with the game_end line."""
    try:
        log = parse_bytes(data)
    except Unreadable as e:
        where = f" line {e.line}" if e.line else ""
        raise ExportError(f"the stored log of game {game_id} is not readable ({where.strip() or 'file'}: "
                          f"{e.code}: {e.message})") from None
    if not log.lines or log.lines[-1].kind != GAME_END:
        moves = [line.data["move"] for line in log.lines if line.kind == "move"]
        raise ExportError(f"game {game_id} is not finished (its log stops at move {moves[-1] if moves else 0}); "
                          "a log is exported when the game is over")


def export(game_id: str, *, redis_url: str | None = None, api_url: str | None = None) -> bytes:
    if not GAME_ID.fullmatch(game_id):
        raise ExportError(f"{game_id!r} is not a game id (letters, digits, - and _)")
    if api_url:
        data = fetch_api(game_id, api_url)
    elif redis_url:
        data = fetch_redis(game_id, redis_url)
    else:
        raise ExportError("give --api URL or --redis-url URL (or set CANASTA_API_URL or REDIS_URL)")
    check_finished(data, game_id)
    return data


def write_atomically(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder, so a reader never sees half a log."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
