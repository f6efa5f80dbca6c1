"""``canasta bench api``: the API under load, on loopback only.

Starts gunicorn (and, without REDIS_URL, an embedded Valkey), then drives many concurrent
games from another process: each game's seats read their views and post moves (a player
that reads only the legal-action summary). In the same run a thread measures /healthz.
Prints accepted moves/s, move latency p50/p99, /healthz requests/s and Redis memory per
active game. Every loop is bounded by time and by count.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

from api.embedded import EmbeddedRedis
from api.serve import gunicorn_command, wait_healthy

HOST = "127.0.0.1"  # loopback only


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta bench api", description=__doc__)
    p.add_argument("--games", type=int, default=16, help="concurrent games (default 16)")
    p.add_argument("--seconds", type=float, default=10.0, help="duration of the measured run (default 10)")
    p.add_argument("--max-moves", type=int, default=200_000, help="stop after this many moves (default 200000)")
    p.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
    p.add_argument("--threads", type=int, default=8, help="gunicorn threads per worker (default 8)")
    p.add_argument("--redis-url", default=None, help="Redis (default: $REDIS_URL, else an embedded Valkey)")
    return p


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- the driver (runs in another process) ---------------------------------------------------
def _candidates(view: dict[str, Any]) -> list[dict[str, Any]]:
    legal, hand = view["legal"], view["hand"]
    if legal["must_answer_go_out"]:
        return [{"type": "answer_go_out", "yes": False}]
    if view["phase"] == "draw":
        out = list(legal["take_pile"])
        out += [{"type": "draw"}] if legal["may_draw"] else []
        out += [{"type": "pass"}] if legal["may_pass"] else []
        return out
    wilds = [c for c in hand if c == "JK" or c[0] == "2"]
    out = []
    for rank in legal["add_ranks"]:
        naturals = [c for c in hand if c[0] == rank]
        if naturals or wilds:
            out.append({"type": "add", "rank": rank, "cards": naturals or wilds[:1]})
    melds = [[c for c in hand if c[0] == r] for r in legal["meld_ranks"]]
    melds = [m if len(m) >= 3 else m + wilds[:1] for m in melds]
    if melds:
        out.append({"type": "meld", "melds": melds})
    out += [{"type": "discard", "card": c} for c in legal["discards"]]
    return out


def _play_game(base: str, deadline: float, budget: list[int], stats: dict[str, Any], lock: threading.Lock) -> None:
    import requests

    http = requests.Session()
    try:
        while time.monotonic() < deadline and budget[0] > 0:
            r = http.post(base + "/games", json={"preset": "classic", "seats": [{"name": f"b{i}"} for i in range(4)]},
                          timeout=30)
            game = r.json()
            gid, tokens = game["id"], {s["seat"]: s["token"] for s in game["seats"]}
            with lock:
                stats["games"].append(gid)
            status, seat = game["status"], game["view"]["to_act"] if game["view"] else None
            while status == "playing" and seat is not None and time.monotonic() < deadline and budget[0] > 0:
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                t0 = time.perf_counter()
                v = http.get(f"{base}/games/{gid}", headers=auth, timeout=30)
                view_ms = (time.perf_counter() - t0) * 1000
                for action in _candidates(v.json()["view"]):
                    t0 = time.perf_counter()
                    m = http.post(f"{base}/games/{gid}/moves", json={"action": action},
                                  headers={**auth, "If-Match": v.headers["ETag"]}, timeout=30)
                    ms = (time.perf_counter() - t0) * 1000
                    with lock:
                        if m.status_code == 200:
                            stats["move_ms"].append(ms)
                            stats["view_ms"].append(view_ms)
                            budget[0] -= 1
                        else:
                            stats["rejected"] += 1
                    if m.status_code == 200:
                        body = m.json()
                        status, seat = body["status"], body["view"]["to_act"]
                        break
                else:
                    with lock:
                        stats["stuck"] += 1
                    break
    except Exception as e:  # noqa: BLE001 - a bench reports errors, it does not crash
        with lock:
            stats["errors"].append(repr(e))
    finally:
        http.close()


def _healthz(base: str, deadline: float, stats: dict[str, Any]) -> None:
    import requests

    http = requests.Session()
    n = 0
    while time.monotonic() < deadline and n < 1_000_000:
        t0 = time.perf_counter()
        http.get(base + "/healthz", timeout=10)
        stats["health_ms"].append((time.perf_counter() - t0) * 1000)
        n += 1
    http.close()


def drive(base: str, games: int, seconds: float, max_moves: int, out: Any) -> None:
    """The load generator: ``games`` threads each playing games, plus a /healthz thread."""
    stats: dict[str, Any] = {"move_ms": [], "view_ms": [], "health_ms": [], "rejected": 0, "stuck": 0,
                             "errors": [], "games": []}
    lock = threading.Lock()
    budget = [max_moves]
    start = time.monotonic()
    deadline = start + seconds
    threads = [threading.Thread(target=_play_game, args=(base, deadline, budget, stats, lock)) for _ in range(games)]
    threads.append(threading.Thread(target=_healthz, args=(base, deadline, stats)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 60)
    stats["elapsed"] = time.monotonic() - start
    out.put(stats)


# -- the run ------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    import redis

    from api.store import Store

    embedded = None
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    url = args.redis_url or os.environ.get("REDIS_URL")
    server = None
    try:
        if not url:
            embedded = EmbeddedRedis()
            url = embedded.start()
        with socket.socket() as s:
            s.bind((HOST, 0))
            port = s.getsockname()[1]
        env = {**os.environ, "REDIS_URL": url, "CANASTA_KEY_PREFIX": prefix, "CANASTA_RATE_LIMIT": "0"}
        server = subprocess.Popen(gunicorn_command(HOST, port, args.workers, args.threads), env=env)
        base = f"http://{HOST}:{port}"
        if not wait_healthy(base, server, timeout=30):
            raise RuntimeError("the API did not start")
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        proc = ctx.Process(target=drive, args=(base, args.games, args.seconds, args.max_moves, queue))
        proc.start()
        stats = queue.get(timeout=args.seconds + 120)
        proc.join(30)
        store = Store(redis.Redis.from_url(url), prefix)
        sizes = [store.memory_of_game(g) for g in stats["games"][-args.games:]]
        stats["memory_per_game"] = statistics.mean(sizes) if sizes else 0
        stats["events_per_game"] = statistics.mean(store.event_count(g) for g in stats["games"][-args.games:]) if sizes else 0
        store.delete_all()
        store.redis.close()
        return stats
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(5)
        if embedded is not None:
            embedded.stop()


def report(stats: dict[str, Any], args: argparse.Namespace) -> str:
    elapsed = stats["elapsed"]
    moves = len(stats["move_ms"])
    rows = [
        ("concurrent games", f"{args.games}"),
        ("gunicorn", f"{args.workers} workers x {args.threads} threads (gthread)"),
        ("run", f"{elapsed:.1f} s"),
        ("accepted moves/s", f"{moves / elapsed:.0f}  ({moves} moves, {stats['rejected']} rejected tries)"),
        ("move latency p50 / p99", f"{_percentile(stats['move_ms'], .5):.1f} / {_percentile(stats['move_ms'], .99):.1f} ms"),
        ("view latency p50 / p99", f"{_percentile(stats['view_ms'], .5):.1f} / {_percentile(stats['view_ms'], .99):.1f} ms"),
        ("/healthz requests/s", f"{len(stats['health_ms']) / elapsed:.0f}  (p50 {_percentile(stats['health_ms'], .5):.1f} ms, "
                                f"p99 {_percentile(stats['health_ms'], .99):.1f} ms, same run)"),
        ("Redis memory per active game", f"{stats['memory_per_game'] / 1024:.1f} KiB "
                                         f"(state + events + log; {stats['events_per_game']:.0f} events/game)"),
        ("games started", f"{len(stats['games'])}"),
    ]
    if stats["errors"] or stats["stuck"]:
        rows.append(("errors", f"{len(stats['errors'])} errors, {stats['stuck']} stuck: {stats['errors'][:3]}"))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stats = run(args)
    print(report(stats, args), flush=True)
    return 1 if stats["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
