"""``canasta bench app``: the app's own CPU per accepted move, with no HTTP server at all.

The Flask app is driven through its WSGI callable in this process, one thread, as the API
benchmark's client plays (``bench.moves``): create a four-seat game, read the seat to
act's view when the seat changes, choose a move from its legal summary, POST it with
``If-Match``; a finished game is replaced. Thread CPU time per accepted move, its view reads
included, against a Redis CPU-second figure of the same run. What ``canasta bench api``'s
server CPU per move would be with a free HTTP layer: the floor of its moves : /healthz ratio.
Only the given Redis or a private embedded Valkey (durable, as served) is contacted.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tempfile
import time
import uuid
from typing import Any

import orjson

from bench.moves import CREATE_BODY, choose
from service.config import add_queue_url_option, queue_url_for

Environ = dict[str, Any]


def _call(app: Any, method: str, path: str, token: str | None = None, body: bytes = b"",
          headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    environ: Environ = {
        "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
        "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
    }
    if body:
        environ["CONTENT_TYPE"], environ["CONTENT_LENGTH"] = "application/json", str(len(body))
    if token:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    status: list[str] = []
    out = b"".join(app(environ, lambda s, h, e=None: status.append(s)))
    return int(status[0][:3]), out


def play(app: Any, moves: int, seed: int) -> dict[str, float]:
    """``moves`` accepted moves; CPU seconds of this thread spent in the app, and the counts."""
    rng = random.Random(seed)
    done = views = 0
    cpu = 0.0
    while done < moves:
        status, body = _call(app, "POST", "/games", body=CREATE_BODY)
        if status != 201:
            raise RuntimeError(f"create: {status} {body[:200]!r}")
        game = orjson.loads(body)
        gid, tokens = game["id"], {s["seat"]: s["token"] for s in game["seats"]}
        to_act, page = game["view"]["to_act"], None
        while done < moves:
            started = time.thread_time()
            if page is None or page["view"]["seat"] != to_act:
                status, body = _call(app, "GET", f"/games/{gid}", tokens[to_act])
                page, views = orjson.loads(body), views + 1
            move = choose(page["view"], rng)
            if move is None or page["status"] != "playing":
                break
            status, body = _call(app, "POST", f"/games/{gid}/moves", tokens[to_act], move,
                                 {"If-Match": f'"{page["version"]}"'})
            cpu += time.thread_time() - started
            if status != 200:
                raise RuntimeError(f"move refused: {status} {body[:200]!r}")
            done += 1
            page = orjson.loads(body)
            if page["status"] != "playing" or page["view"]["to_act"] is None:
                break
            to_act = page["view"]["to_act"]
    return {"cpu": cpu, "moves": done, "views": views}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="canasta bench app", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--moves", type=int, default=6000, help="accepted moves to time (default 6000)")
    p.add_argument("--redis-url", default=None, help="Redis (default: $REDIS_URL, else an embedded Valkey)")
    p.add_argument("--seed", type=int, default=1)
    add_queue_url_option(p)
    args = p.parse_args(argv)
    from servers.embedded import EmbeddedRedis
    from service import procstat
    from web import create_app

    url = args.redis_url or os.environ.get("REDIS_URL")
    try:
        queue = queue_url_for(url, args.queue_url) if url else ""  # a cluster needs its queue Redis named
    except ValueError as e:
        print(f"canasta bench app: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="canasta-bench-app-") as folder:
        embedded = None if url else EmbeddedRedis(data_dir=folder).__enter__()
        try:
            prefix = f"bench-app-{uuid.uuid4().hex[:8]}"
            app = create_app({"redis_url": url or embedded.url, "key_prefix": prefix,  # type: ignore[union-attr]
                              "queue_url": queue, "rate_limit_enabled": False})
            load = procstat.loadavg()
            play(app, min(300, args.moves), args.seed)  # warm-up: caches, imports
            found = play(app, args.moves, args.seed + 1)
            store = app.extensions["canasta"].store
            for key in store.redis.scan_iter(match=f"{prefix}:*", count=1000):
                store.redis.delete(key)
        finally:
            if embedded is not None:
                embedded.stop()
    print(f"app alone (WSGI callable, one thread, no HTTP server), load average {load} -> {procstat.loadavg()}")
    print(f"accepted moves          {found['moves']:.0f} ({found['views'] / found['moves']:.2f} view reads per move)")
    print(f"CPU ms per accepted move {found['cpu'] / found['moves'] * 1000:.3f} (this thread: the app, its Redis "
          "client and syscalls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
