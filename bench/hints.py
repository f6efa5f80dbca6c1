"""``canasta bench hints``: hints under load, against /healthz in the same run, loopback only.

Starts the API under granian (and, without REDIS_URL, an embedded Valkey) and creates ``--games`` four-seat
human games in which the first seat has drawn (a play phase: many options, so the expert
really searches). Then, with the same asyncio HTTP/1.1 client as ``canasta bench api``:

1. /healthz (the baseline of the run);
2. new positions: ``--connections`` clients ask ``GET /games/{id}/hint?bot=BOT`` for the seat
   to act, each request a position never asked before (the cost of a hint that must be
   thought);
3. the same positions again (what a client that asks twice, or many players looking at the
   same position, cost);
4. one token asking as fast as it can (what the per-token hint limit lets through).

Phases 2 and 3 run with the rate limiter off (the server's hint cost, not its limits); phase 4
on a second server with the limiter on, as deployed (its per-address limit raised: every
request comes from one address). Prints hints/s, latency p50/p99 and the answers' statuses.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import orjson

import bots
from bench.api import HOST, Client, _get, _health_phase, _percentile, _post
from servers.embedded import EmbeddedRedis
from service import procstat
from service.config import add_queue_url_option
from web.serve import api_command, api_env, wait_healthy

CREATE_BODY = orjson.dumps({"preset": "classic", "seats": [{"name": f"hint{i}"} for i in range(4)]})
DRAW = orjson.dumps({"action": {"type": "draw"}})


# the numeric options: (flag, type, default, what it is)
OPTIONS: list[tuple[str, type, float, str]] = [
    ("--games", int, 600, "positions to ask about"),
    ("--connections", int, 16, "concurrent clients"),
    ("--seconds", float, 10.0, "each hint phase"),
    ("--health-seconds", float, 5.0, "the /healthz phase"),
    ("--workers", int, 2, "API processes (granian workers)"),
    ("--threads", int, 4, "Flask threads per API process, as canasta serve"),
]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta bench hints", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag, kind, default, what in OPTIONS:
        p.add_argument(flag, type=kind, default=kind(default), help=f"{what} (default {default:g})")
    p.add_argument("--bot", default="expert", choices=bots.NAMES, help="default expert")
    p.add_argument("--redis-url", default=None,
                   help="Redis, one server or a redis+cluster:// URL (default: $REDIS_URL, else an embedded Valkey)")
    add_queue_url_option(p)
    return p


@contextlib.asynccontextmanager
async def _connection(client: Client) -> AsyncIterator[Any]:
    """One keep-alive connection of ``canasta bench api``'s raw-socket driver, closed after."""
    conn = await client.connect()
    try:
        yield conn
    finally:
        if conn.transport is not None:
            conn.transport.close()


async def _setup(client: Client, games: int) -> list[tuple[str, str]]:
    """``games`` games where the seat to act has drawn: (game id, that seat's token)."""
    out: list[tuple[str, str]] = []
    async with _connection(client) as conn:
        for _ in range(games):
            status, raw = await client.request(conn, _post("/games", CREATE_BODY))
            if status != 201:
                raise RuntimeError(f"create: {status} {raw[:200]!r}")
            game = orjson.loads(raw)
            seat = game["view"]["to_act"]
            token = next(s["token"] for s in game["seats"] if s["seat"] == seat)
            status, raw = await client.request(conn, _post(f"/games/{game['id']}/moves", DRAW, token, game["version"]))
            if status != 200:
                raise RuntimeError(f"draw: {status} {raw[:200]!r}")
            out.append((game["id"], token))
    return out


async def _hint_phase(client: Client, positions: list[tuple[str, str]], bot: str, connections: int,
                      seconds: float, once: bool) -> dict[str, Any]:
    """``connections`` clients asking hints for ``positions`` for ``seconds``; with ``once``,
    each position at most once (the phase ends early when they run out)."""
    deadline = time.monotonic() + seconds
    lat: list[float] = []
    statuses: Counter[int] = Counter()
    errors: list[str] = []
    cursor = [0]

    async def loop() -> None:
        async with _connection(client) as conn:
            while time.monotonic() < deadline:
                i = cursor[0]
                cursor[0] += 1
                if once and i >= len(positions):
                    return
                gid, token = positions[i % len(positions)]
                t0 = time.perf_counter()
                status, _ = await client.request(conn, _get(f"/games/{gid}/hint?bot={bot}", token))
                statuses[status] += 1
                if status == 200:
                    lat.append((time.perf_counter() - t0) * 1000)

    async def guarded() -> None:
        try:
            await loop()
        except Exception as e:  # noqa: BLE001 - a bench reports errors, it does not crash
            errors.append(repr(e))

    started = time.monotonic()
    await asyncio.gather(*(guarded() for _ in range(connections)))
    took = time.monotonic() - started
    return {"rate": len(lat) / took if took else 0.0, "p50": _percentile(lat, .5), "p99": _percentile(lat, .99),
            "statuses": dict(statuses), "elapsed": took, "errors": errors}


def _start_server(url: str, queue: str, prefix: str, args: argparse.Namespace,
                  limiter: bool) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    env = {**os.environ, "REDIS_URL": url, "CANASTA_QUEUE_URL": queue, "CANASTA_KEY_PREFIX": prefix,
           "CANASTA_RATE_LIMIT": "1" if limiter else "0", "CANASTA_RATE_LIMIT_PER_ADDRESS": "1000000000",
           "CANASTA_CREATE_PER_ADDRESS": "0"}
    env.setdefault("CANASTA_ACCESS_LOG", "0")  # its stderr is the terminal's: no line per request there
    server = subprocess.Popen(api_command(HOST, port, args.workers), env=api_env(env, args.threads))
    if not wait_healthy(f"http://{HOST}:{port}", server, timeout=30):
        server.terminate()
        raise RuntimeError("the API did not start")
    return server, port


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL if the server is still there 15 s later."""
    server.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.wait(15)
    if server.poll() is None:
        server.kill()
        server.wait(5)


def urls(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The games' Redis (None: an embedded Valkey) and the bot queue's (None: the games' one);
    ValueError for a cluster without a queue Redis (:func:`service.config.queue_url_for`)."""
    from service.config import queue_url_for

    url = args.redis_url or os.environ.get("REDIS_URL")
    return url, queue_url_for(url, args.queue_url) if url else None


def run(args: argparse.Namespace) -> dict[str, Any]:
    from service.redis_io import connect, is_cluster
    from service.store import Store

    embedded = None
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    url, queue = urls(args)
    out: dict[str, Any] = {"loadavg": [procstat.loadavg()]}
    try:
        if not url:
            embedded = EmbeddedRedis()
            url = embedded.start()
        queue = queue or url
        server, port = _start_server(url, queue, prefix, args, limiter=False)
        try:
            client = Client(HOST, port)

            async def measure() -> None:
                await _health_phase(client, args.connections, min(1.0, args.health_seconds))  # warm-up
                out["health"] = await _health_phase(client, args.connections, args.health_seconds)
                positions = await _setup(client, args.games)
                out["fresh"] = await _hint_phase(client, positions, args.bot, args.connections, args.seconds, once=True)
                asked = positions[:max(1, int(out["fresh"]["rate"] * out["fresh"]["elapsed"]))]
                out["again"] = await _hint_phase(client, asked, args.bot, args.connections, args.seconds, once=False)

            asyncio.run(measure())
        finally:
            _stop(server)
        server, port = _start_server(url, queue, prefix, args, limiter=True)
        try:
            client = Client(HOST, port)

            async def hammer() -> None:
                positions = await _setup(client, 1)
                out["one_token"] = await _hint_phase(client, positions, args.bot, 1, args.seconds, once=False)

            asyncio.run(hammer())
        finally:
            _stop(server)
        out["loadavg"].append(procstat.loadavg())
        with contextlib.closing(connect(url)) as client_of_redis:
            one = client_of_redis.get_redis_connection(client_of_redis.get_primaries()[0]) if is_cluster(
                client_of_redis) else client_of_redis
            out["redis_version"] = one.info("server").get("redis_version", "?")
            Store(client_of_redis, prefix).delete_all()  # the bench's games
        return out
    finally:
        if embedded is not None:
            embedded.stop()


def report(out: dict[str, Any], args: argparse.Namespace) -> str:
    def phase(p: dict[str, Any]) -> str:
        codes = ", ".join(f"{k}: {v}" for k, v in sorted(p["statuses"].items()))
        return f"{p['rate']:.1f}/s  (p50 {p['p50']:.1f} ms, p99 {p['p99']:.1f} ms; answers {codes})"

    h = out["health"]
    rows = [
        ("server", f"granian {args.workers} workers x {args.threads} Flask threads; redis {out['redis_version']}; "
                   f"{args.connections} connections"),
        ("load average", f"{out['loadavg'][0]} -> {out['loadavg'][-1]}"),
        ("/healthz (baseline)", f"{h['rate']:.0f}/s  (p50 {h['p50']:.1f} ms, p99 {h['p99']:.1f} ms)"),
        (f"{args.bot} hints, new positions", phase(out["fresh"])),
        (f"{args.bot} hints, asked again", phase(out["again"])),
        ("one token, limiter on", phase(out["one_token"])),
    ]
    errors = out["fresh"]["errors"] + out["again"]["errors"] + out["one_token"]["errors"] + h["errors"]
    if errors:
        rows.append(("errors", f"{len(errors)}: {errors[:3]}"))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        urls(args)  # a cluster without a queue Redis: refused before anything starts
    except ValueError as e:
        print(f"canasta bench hints: {e}", file=sys.stderr)
        return 2
    out = run(args)
    print(report(out, args), flush=True)
    errors = out["fresh"]["errors"] + out["again"]["errors"] + out["one_token"]["errors"] + out["health"]["errors"]
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
