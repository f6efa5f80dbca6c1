"""`canasta replay export`: a finished game's log, fetched from the service.

Two sources: the API (``GET {url}/games/{id}/log`` through the Python client,
:mod:`client`: what anyone may download once the game is over), or Redis directly
(the game's log list, read by the API's own store, :meth:`service.store.Store.read_log`,
which expands the chunks old lines are folded into; key prefix from
``CANASTA_KEY_PREFIX``). Either way the bytes are checked to be a readable log that ends
with its game_end line before they are written: an export is meant to be an audit record,
so an unfinished game is refused.

The rest of ``canasta replay`` (validate, show) is :mod:`replay.cli`, which knows nothing
of the service; this module adds ``export`` to it (:func:`main`). The API's modules are
imported only by an export: ``canasta replay validate`` does not pay for Flask and Redis.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

import replay.cli
from replay.reader import GAME_END, Unreadable, parse_bytes

API_TIMEOUT_SECONDS = 60.0


class ExportError(Exception):
    """Why a log could not be exported; the message is the one line the CLI prints."""


def fetch_redis(game_id: str, url: str, prefix: str | None = None) -> bytes:
    """The log lines the store keeps for ``game_id``, one per line."""
    import redis

    from service.config import Settings
    from service.store import Store, connect

    store_prefix = prefix or os.environ.get("CANASTA_KEY_PREFIX") or Settings.key_prefix
    try:
        client = connect(url)
    except ValueError as e:
        raise ExportError(f"redis {url}: {e}") from None
    store = Store(client, store_prefix, durability="off")  # reads only
    try:
        lines = store.read_log(game_id)
    except redis.RedisError as e:
        raise ExportError(f"redis {url}: {e}") from None
    except (ValueError, zlib.error) as e:
        raise ExportError(f"a stored log chunk cannot be read: {e}") from None
    finally:
        client.close()
    if not lines:
        raise ExportError(f"no log for game {game_id} under {store.keys.log(game_id)!r}")
    return b"".join(line.rstrip(b"\n") + b"\n" for line in lines)


def fetch_api(game_id: str, base_url: str, timeout: float = API_TIMEOUT_SECONDS) -> bytes:
    """``GET {base_url}/games/{id}/log`` with the project's client (it retries what is safe to)."""
    from client import ApiProblem, Client, Unreachable

    url = f"{base_url.rstrip('/')}/games/{game_id}/log"
    with Client(base_url, timeout=timeout) as api:
        try:
            return api.log_bytes(game_id)
        except Unreachable as e:
            raise ExportError(str(e)) from None
        except ApiProblem as e:
            raise ExportError(f"GET {url}: {e}") from None


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
    from service.keys import GAME_ID_RE

    if not GAME_ID_RE.fullmatch(game_id):
        raise ExportError(f"{game_id!r} is not a game id (12 letters, digits, - and _)")
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


# -- the command -----------------------------------------------------------------------------
def add_command(sub: Any) -> None:
    """``export`` among the subcommands of ``canasta replay`` (``sub``: argparse's subparsers)."""
    e = sub.add_parser("export", help="fetch a finished game's log from the service",
                       description="Write a finished game's log, read from the API or from Redis.")
    e.add_argument("game_id", metavar="GAME_ID")
    src = e.add_mutually_exclusive_group()
    src.add_argument("--redis-url", metavar="URL", help="read the log list from Redis (key prefix: $CANASTA_KEY_PREFIX)")
    src.add_argument("--api", metavar="URL", help="GET URL/games/GAME_ID/log")
    e.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default: standard output)")
    e.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    api_url = args.api
    redis_url = args.redis_url
    if not api_url and not redis_url:
        api_url = os.environ.get("CANASTA_API_URL")
        redis_url = None if api_url else os.environ.get("REDIS_URL")
    try:
        data = export(args.game_id, redis_url=redis_url, api_url=api_url)
    except ExportError as e:
        print(f"canasta replay export: {e}", file=sys.stderr)
        return 1
    if args.output:
        try:
            write_atomically(args.output, data)
        except OSError as e:
            print(f"canasta replay export: {args.output}: {e.strerror or e}", file=sys.stderr)
            return 1
        lines = data.count(b"\n")
        print(f"{args.output}: {lines} lines", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``canasta replay``: :mod:`replay.cli`'s commands and ``export``."""
    return replay.cli.main(argv, more_commands=(add_command,))
