"""``canasta keys``: the API keys an operator issues to backends that create many games from one
address (a tournament site), with quotas of their own (:mod:`service.apikeys`).

    canasta keys create "spring cup" --games-per-hour 2000 --bot-games 50 --bot-runs 2
    canasta keys list
    canasta keys revoke 3f9a0c12de

The key is printed once, by ``create``; the store keeps only its SHA-256. A client sends it
as ``X-Api-Key`` with ``POST /games``. The server is ``--redis-url`` (default ``$REDIS_URL``),
else the embedded Valkey that ``canasta serve`` runs on ``--data-dir`` (its default: the
same as ``canasta serve``'s).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from servers.embedded import default_data_dir, running_on
from service.apikeys import ApiKeys
from service.config import Settings

DEFAULT_GAMES_PER_HOUR = 1000
DEFAULT_BOT_GAMES = 20
DEFAULT_BOT_RUNS = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta keys", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--redis-url", default=None, help="the games' Redis (default: $REDIS_URL, else --data-dir's Valkey)")
    p.add_argument("--data-dir", default=None, help=f"canasta serve's data directory (default {default_data_dir()})")
    p.add_argument("--prefix", default=None, help="the key prefix (default: $CANASTA_KEY_PREFIX or canasta)")
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("create", help="issue a key (printed once)")
    c.add_argument("name", help="what the key is for, e.g. the site it was issued to")
    c.add_argument("--games-per-hour", type=int, default=DEFAULT_GAMES_PER_HOUR,
                   help=f"games it may create per quota window (CANASTA_CREATE_WINDOW, an hour; default "
                        f"{DEFAULT_GAMES_PER_HOUR}; 0: no limit)")
    c.add_argument("--bot-games", type=int, default=DEFAULT_BOT_GAMES,
                   help=f"unfinished games of bots only it may have at once (default {DEFAULT_BOT_GAMES}; 0: no limit)")
    c.add_argument("--bot-runs", type=int, default=DEFAULT_BOT_RUNS,
                   help=f"bot runs of its games queued or playing at once, per lane (default {DEFAULT_BOT_RUNS}; "
                        "0: no share, as many as the workers take)")
    sub.add_parser("list", help="every key's id, name, quotas (never the key itself)")
    r = sub.add_parser("revoke", help="delete a key: it is refused from the next request on")
    r.add_argument("id", help="the key's id (canasta keys list)")
    return p


def redis_url_of(args: argparse.Namespace) -> str:
    """The server the keys live on: ``--redis-url``, ``$REDIS_URL``, else the embedded Valkey
    running on the data directory (its port read from the configuration it was started with)."""
    url = args.redis_url or os.environ.get("REDIS_URL")
    if url:
        return str(url)
    data = Path(args.data_dir).expanduser().resolve() if args.data_dir else default_data_dir()
    if not running_on(data):
        raise SystemExit(f"canasta keys: no Valkey runs on {data} (start canasta serve, or give --redis-url)")
    try:
        m = re.search(r"^port\s+(\d+)", (data / "valkey.conf").read_text(), re.MULTILINE)
    except OSError:
        m = None
    if m is None:
        raise SystemExit(f"canasta keys: cannot tell the port of the Valkey on {data}; give --redis-url")
    return f"redis://127.0.0.1:{m.group(1)}/0"


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    from service.redis_io import connect

    prefix = args.prefix or os.environ.get("CANASTA_KEY_PREFIX") or Settings.key_prefix
    client = connect(redis_url_of(args))
    keys = ApiKeys(client, prefix)
    try:
        if args.what == "create":
            from service.gamelog import now_rfc3339

            try:
                secret, key = keys.issue(args.name, games_per_window=args.games_per_hour, bot_games=args.bot_games,
                                         bot_runs=args.bot_runs, created=now_rfc3339())
            except ValueError as e:
                print(f"canasta keys: {e}", file=sys.stderr)
                return 2
            print(f"id {key.id}  {key.name!r}: {_quotas(key.games_per_window, key.bot_games, key.bot_runs)}")
            print(f"key (shown once; send it as X-Api-Key): {secret}")
            return 0
        if args.what == "list":
            listed = keys.all()
            if not listed:
                print("no keys")
            for k in listed:
                print(f"{k.id}  {k.created}  {k.name!r}: {_quotas(k.games_per_window, k.bot_games, k.bot_runs)}")
            return 0
        if keys.revoke(args.id):
            print(f"revoked {args.id}")
            return 0
        print(f"canasta keys: no key {args.id!r}", file=sys.stderr)
        return 1
    finally:
        client.close()


def _quotas(games: int, bot_games: int, runs: int) -> str:
    def n(value: int) -> str:
        return str(value) if value > 0 else "no limit"

    return f"games per hour {n(games)}, games of bots only {n(bot_games)}, bot runs {n(runs)}"


if __name__ == "__main__":
    sys.exit(main())
