"""``canasta bench api``: the API under load, on loopback only.

Starts the API under granian (as ``canasta serve``; without REDIS_URL, an embedded Valkey), then drives it from one other
process: an asyncio loop over raw HTTP/1.1 keep-alive connections (one per seat, like four
players), request bytes built once per game. Each game is a 4-seat human game that the
client plays with all four tokens, choosing every move from the seat view's legal summary
(``view.legal``: its concrete ``take_pile``, ``melds``, ``go_out`` and ``discards``), never
running the engine itself; a finished game is replaced by a new one.

Phases, all in the same run and with the same client machinery: /healthz (before), warm-up,
moves (measured), /healthz (after), event fan-out (a few games whose every seat long-polls its
events while the game is played at a human pace: the time from sending a move to each other
seat receiving it), then Redis memory of the games still in progress.
Prints accepted moves/s, move latency p50/p99, /healthz requests/s and the ratio of the two,
CPU time per accepted move of the server, Redis and the client, and Redis memory per active
game. Every loop is bounded by time and by count; only 127.0.0.1 is ever contacted.

``--cluster``: each round runs twice, on one embedded Valkey and on a local Redis Cluster
(3 primaries, 3 replicas, :mod:`servers.localcluster`, with the bot queue on a Valkey of its
own), and prints the cluster's accepted moves/s as a share of the single server's in the
same round. Redis CPU on a cluster is every node's, replicas included.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import uuid
from typing import Any, cast

import orjson

from bench.moves import CREATE_BODY, choose
from servers.embedded import EmbeddedRedis
from service import procstat
from service.config import add_queue_url_option
from web.serve import api_command, api_env, wait_healthy

HOST = "127.0.0.1"  # loopback only
REQUEST_TIMEOUT = 30.0
MAX_MOVES_PER_GAME = 5000  # a game that runs longer is abandoned (never seen in practice)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta bench api", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=200, help="concurrent games (default 200)")
    p.add_argument("--seconds", type=float, default=20.0, help="measured moves phase (default 20)")
    p.add_argument("--warmup", type=float, default=5.0, help="moves before measuring (default 5)")
    p.add_argument("--health-seconds", type=float, default=5.0,
                   help="each /healthz phase, before and after the moves (default 5)")
    p.add_argument("--rate", type=float, default=0.0,
                   help="offered moves/s over all games, paced per game (default 0: as fast as the "
                        "server answers, i.e. saturation; latency then is mostly queueing)")
    p.add_argument("--max-moves", type=int, default=1_000_000, help="stop after this many moves")
    p.add_argument("--workers", type=int, default=2, help="API processes, granian workers (default 2)")
    p.add_argument("--threads", type=int, default=4,
                   help="Flask threads per API process (default 4, as canasta serve)")
    p.add_argument("--rate-limit", action="store_true",
                   help="keep the rate limiter on (its per-address limit raised so that it counts "
                        "but never refuses the benchmark's single address)")
    p.add_argument("--fanout-games", type=int, default=2,
                   help="games of the event fan-out phase, after the moves phase: every seat long-polls "
                        "its events while the game is played (default 2; 0 skips the phase)")
    p.add_argument("--fanout-seconds", type=float, default=5.0, help="the fan-out phase (default 5)")
    p.add_argument("--think-ms", type=float, default=100.0,
                   help="fan-out phase: pause before each move (default 100)")
    p.add_argument("--redis-url", default=None,
                   help="Redis, one server or a redis+cluster:// URL (default: $REDIS_URL, else an embedded Valkey)")
    add_queue_url_option(p)
    p.add_argument("--seed", type=int, default=1, help="the client's choices (default 1)")
    p.add_argument("--durability", type=_modes, default=["fsync"],
                   help="CANASTA_DURABILITY of the server, or several separated by commas to compare them "
                        "in one run, alternately (--rounds); 'compare' is off,fsync,waitaof. fsync (default, "
                        "as deployed) and waitaof: the embedded Valkey keeps an append-only file fsynced "
                        "before every reply; off: a Valkey with no persistence")
    p.add_argument("--rounds", type=int, default=1, help="rounds of the --durability modes (default 1)")
    p.add_argument("--listeners", type=_counts, default=[0],
                   help="open listeners during the moves phase: each seat of N/4 extra games holds an SSE stream "
                        "or a long-poll (alternately), in a process of their own; several counts separated by "
                        "commas are run alternately (--rounds), e.g. 0,5000 (default 0)")
    p.add_argument("--listener-moves", type=float, default=20.0,
                   help="moves/s played in the listeners' games, over all of them, to measure the time from a "
                        "move to each listener (default 20; not counted in the measured moves)")
    p.add_argument("--observability", type=_observability, default=["on"],
                   help="the server's request metrics and access log (CANASTA_METRICS, CANASTA_ACCESS_LOG): on "
                        "(default, as deployed: the access lines go to a file, the metrics to a fresh "
                        "PROMETHEUS_MULTIPROC_DIR, as canasta serve), off, or compare (on and off alternately, "
                        "--rounds times, and their cost)")
    p.add_argument("--cluster", action="store_true",
                   help="run each round on one Valkey and on a local 3-primary Redis Cluster (3 replicas), "
                        "and compare them (--redis-url is not used)")
    return p


def _modes(text: str) -> list[str]:
    modes = ["off", "fsync", "waitaof"] if text == "compare" else [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in ("off", "fsync", "waitaof")]
    if bad or not modes:
        raise argparse.ArgumentTypeError(f"modes are off, fsync, waitaof (or compare), not {text!r}")
    return modes


def _observability(text: str) -> list[str]:
    modes = ["on", "off"] if text == "compare" else [m.strip() for m in text.split(",") if m.strip()]
    if not modes or any(m not in ("on", "off") for m in modes):
        raise argparse.ArgumentTypeError(f"observability is on, off or compare, not {text!r}")
    return modes


def _counts(text: str) -> list[int]:
    try:
        counts = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"listener counts are whole numbers, not {text!r}") from None
    if not counts or any(c < 0 for c in counts):
        raise argparse.ArgumentTypeError(f"listener counts are whole numbers >= 0, not {text!r}")
    return counts


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- a minimal HTTP/1.1 keep-alive client ---------------------------------------------------
class HttpError(Exception):
    pass


class NotSent(HttpError):
    """The connection was closed before the request was written: safe to send again."""


class _Conn(asyncio.Protocol):
    """One keep-alive connection; one request at a time. Responses must carry Content-Length
    (every response of this API does)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # asyncio types this hook for every kind of transport; a stream connection's is a Transport
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(HttpError("connection closed"))

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.waiter is None or self.waiter.done():
            return
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buf[:end])
        i = head.lower().find(b"\r\ncontent-length:")
        if i < 0:
            self.waiter.set_exception(HttpError("no Content-Length"))
            return
        j = head.find(b"\r\n", i + 2)
        length = int(head[i + 17:j if j > 0 else None])
        if len(self.buf) < end + 4 + length:
            return
        body = bytes(self.buf[end + 4:end + 4 + length])
        del self.buf[:end + 4 + length]
        self.waiter.set_result((int(head[9:12]), body))


class Client:
    """Connections to one server; :meth:`request` sends prepared request bytes."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    async def connect(self) -> _Conn:
        loop = asyncio.get_running_loop()
        _, proto = await loop.create_connection(_Conn, self.host, self.port)
        sock = proto.transport.get_extra_info("socket") if proto.transport else None
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return proto

    async def request(self, conn: _Conn, raw: bytes) -> tuple[int, bytes]:
        if conn.closed or conn.transport is None or conn.transport.is_closing():
            raise NotSent("connection closed")
        conn.waiter = asyncio.get_running_loop().create_future()
        conn.transport.write(raw)
        try:
            return await asyncio.wait_for(conn.waiter, REQUEST_TIMEOUT)
        finally:
            conn.waiter = None


def _get(path: str, token: str | None = None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n{auth}\r\n".encode()


def _post(path: str, body: bytes, token: str | None = None, version: int | None = None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    match = f'If-Match: "{version}"\r\n' if version is not None else ""
    head = (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\n{auth}{match}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


class Stats:
    def __init__(self) -> None:
        self.measuring = False
        self.stopping = False
        self.moves = 0  # accepted, in the measured window
        self.move_ms: list[float] = []
        self.view_ms: list[float] = []
        self.views = 0
        self.creates = 0
        self.all_moves = 0  # every accepted move (the --max-moves budget)
        self.rejected = 0
        self.stuck = 0
        self.finished = 0
        self.reconnects = 0  # keep-alive connections the server closed (idle > its keep-alive)
        self.errors: list[str] = []
        self.active: dict[int, str] = {}  # player index -> its game in progress


async def _player(idx: int, client: Client, stats: Stats, max_moves: int, rng: random.Random,
                  interval: float = 0.0) -> None:
    """Plays games one after another until told to stop; with ``interval``, one move per
    ``interval`` seconds at most (a late move is sent at once and the schedule moves on from
    it: no catching up in bursts, so the offered rate never exceeds the one asked for)."""
    slot = time.monotonic() + rng.random() * interval
    # connections are opened on first use (a server may give each new connection resources)
    conns: list[_Conn | None] = [None] * 4

    async def request(seat: int, raw: bytes, *, resend: bool) -> tuple[int, bytes]:
        """Send on the seat's connection, reconnecting when the server closed it; a request
        that may have reached the server is sent again only if ``resend``."""
        for attempt in range(3):
            c = conns[seat]
            if c is None or c.closed:
                c = conns[seat] = await client.connect()
            try:
                return await client.request(c, raw)
            except HttpError as e:
                if c.transport is not None:
                    c.transport.close()
                conns[seat] = None
                stats.reconnects += 1
                if attempt == 2 or not (resend or isinstance(e, NotSent)):
                    raise
        raise AssertionError("unreachable")

    try:
        while not stats.stopping:
            status, raw = await request(0, _post("/games", CREATE_BODY), resend=True)
            if status != 201:
                raise HttpError(f"create: {status} {raw[:200]!r}")
            stats.creates += 1
            game = orjson.loads(raw)
            gid = game["id"]
            tokens = {s["seat"]: s["token"] for s in game["seats"]}
            views = {seat: _get(f"/games/{gid}", tokens[seat]) for seat in tokens}
            move_path = f"/games/{gid}/moves"
            stats.active[idx] = gid
            view: dict[str, Any] | None = None
            version = game["version"]
            seat = game["view"]["to_act"]
            for _ in range(MAX_MOVES_PER_GAME):
                if stats.stopping or stats.all_moves >= max_moves:
                    return
                if view is None or view.get("seat") != seat:
                    t0 = time.perf_counter()
                    status, raw = await request(seat, views[seat], resend=True)
                    if status != 200:
                        raise HttpError(f"view: {status} {raw[:200]!r}")
                    if stats.measuring:
                        stats.view_ms.append((time.perf_counter() - t0) * 1000)
                        stats.views += 1
                    body = orjson.loads(raw)
                    view, version = body["view"], body["version"]
                move = choose(view, rng)
                if move is None:
                    stats.stuck += 1
                    break
                if interval:
                    slot = max(slot + interval, time.monotonic())
                    delay = slot - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                t0 = time.perf_counter()
                try:
                    status, raw = await request(seat, _post(move_path, move, tokens[seat], version), resend=False)
                except HttpError:
                    view = None  # the move may or may not have been applied: reload
                    continue
                ms = (time.perf_counter() - t0) * 1000
                if status != 200:
                    stats.rejected += 1
                    view = None  # reload and choose again
                    continue
                stats.all_moves += 1
                if stats.measuring:
                    stats.moves += 1
                    stats.move_ms.append(ms)
                body = orjson.loads(raw)
                version, view = body["version"], body["view"]
                if body["status"] != "playing" or view["to_act"] is None:
                    stats.finished += 1
                    break
                seat = view["to_act"]
            stats.active.pop(idx, None)
    except Exception as e:  # noqa: BLE001 - a bench reports errors, it does not crash
        if not stats.stopping:
            stats.errors.append(repr(e))
    finally:
        for c in conns:
            if c is not None and c.transport is not None:
                c.transport.close()


async def _health_phase(client: Client, concurrency: int, seconds: float, server_cpu: Any = None) -> dict[str, Any]:
    """``concurrency`` connections each looping GET /healthz for ``seconds``."""
    raw = _get("/healthz")
    cpu0, srv0 = time.process_time(), server_cpu() if server_cpu else None
    deadline = time.monotonic() + seconds
    lat: list[float] = []
    errors: list[str] = []

    async def loop() -> None:
        conn = await client.connect()
        try:
            for _ in range(10_000_000):
                if time.monotonic() >= deadline:
                    return
                t0 = time.perf_counter()
                status, _ = await client.request(conn, raw)
                if status != 200:
                    raise HttpError(f"healthz {status}")
                lat.append((time.perf_counter() - t0) * 1000)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        finally:
            if conn.transport is not None:
                conn.transport.close()

    start = time.monotonic()
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    elapsed = time.monotonic() - start
    n = max(1, len(lat))
    srv = {k: (v - srv0[k]) / n for k, v in server_cpu().items()} if srv0 is not None else {}
    return {"rate": len(lat) / elapsed, "p50": _percentile(lat, .5), "p99": _percentile(lat, .99),
            "errors": errors, "cpu_client": (time.process_time() - cpu0) / n, "cpu_server": srv}


POLL_WAIT = 2  # seconds a fan-out reader's long-poll waits: the phase ends within it


async def _fanout_phase(client: Client, games: int, seconds: float, think_s: float, seed: int) -> dict[str, Any]:
    """Event fan-out: in each of ``games`` games every seat long-polls its events
    (``?after=<id>&wait=2``) while one driver plays the game from the seats' views, pausing
    ``think_s`` before each move. For every accepted move, the time from sending it to each
    *other* seat's poll returning its event: how soon players learn what happened."""
    fanout_ms: list[float] = []
    move_ms: list[float] = []
    busy = [0]  # waiting polls refused by the server's stream limits (429)
    errors: list[str] = []
    stop = time.monotonic() + seconds
    sent: dict[tuple[str, int], tuple[float, int]] = {}  # (game, version) -> (send time, mover)

    async def reader(gid: str, seat: int, token: str) -> None:
        conn = await client.connect()
        after = "0"
        try:
            while time.monotonic() < stop:
                raw = _get(f"/games/{gid}/events?after={after}&wait={POLL_WAIT}", token)
                status, body = await client.request(conn, raw)
                now = time.perf_counter()
                if status == 429:
                    busy[0] += 1
                    await asyncio.sleep(0.2)
                    continue
                if status != 200:
                    raise HttpError(f"events: {status} {body[:200]!r}")
                page = orjson.loads(body)
                for event in page["events"]:
                    origin = sent.get((gid, event["version"]))
                    if origin is not None and origin[1] != seat:
                        fanout_ms.append((now - origin[0]) * 1000)
                after = page["last_id"]
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        finally:
            if conn.transport is not None:
                conn.transport.close()

    async def driver(gid: str, tokens: dict[int, str], version: int, seat: int, rng: random.Random) -> None:
        conns: dict[int, _Conn] = {}  # opened on first use (an idle new one holds a gthread thread)

        async def conn_of(seat: int) -> _Conn:
            if seat not in conns:
                conns[seat] = await client.connect()
            return conns[seat]

        view: dict[str, Any] | None = None
        try:
            while time.monotonic() < stop:
                if view is None or view.get("seat") != seat:
                    status, body = await client.request(await conn_of(seat), _get(f"/games/{gid}", tokens[seat]))
                    if status != 200:
                        raise HttpError(f"view: {status} {body[:200]!r}")
                    page = orjson.loads(body)
                    view, version = page["view"], page["version"]
                move = choose(view, rng)
                if move is None or view["to_act"] is None:
                    return
                await asyncio.sleep(think_s)
                t0 = time.perf_counter()
                sent[(gid, version + 1)] = (t0, seat)
                status, body = await client.request(await conn_of(seat),
                                                    _post(f"/games/{gid}/moves", move, tokens[seat], version))
                if status != 200:
                    view = None
                    continue
                move_ms.append((time.perf_counter() - t0) * 1000)
                page = orjson.loads(body)
                version, view = page["version"], page["view"]
                if page["status"] != "playing" or view["to_act"] is None:
                    return
                seat = view["to_act"]
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        finally:
            for c in conns.values():
                if c.transport is not None:
                    c.transport.close()

    tasks = []
    setup = await client.connect()
    try:
        for g in range(games):
            status, body = await client.request(setup, _post("/games", CREATE_BODY))
            if status != 201:
                raise HttpError(f"create: {status} {body[:200]!r}")
            game = orjson.loads(body)
            tokens = {s["seat"]: s["token"] for s in game["seats"]}
            tasks += [asyncio.create_task(reader(game["id"], s, t)) for s, t in tokens.items()]
            tasks.append(asyncio.create_task(driver(game["id"], tokens, game["version"], game["view"]["to_act"],
                                                    random.Random(seed * 7919 + g))))
    except Exception as e:  # noqa: BLE001
        errors.append(repr(e))
    finally:
        if setup.transport is not None:
            setup.transport.close()
    if tasks:
        await asyncio.wait(tasks, timeout=seconds + POLL_WAIT + REQUEST_TIMEOUT)
    return {"games": games, "fanout_ms": fanout_ms, "move_ms": move_ms, "busy": busy[0], "errors": errors}


async def _drive(port: int, args: dict[str, Any], server_cpu: Any) -> dict[str, Any]:
    client = Client(HOST, port)
    out: dict[str, Any] = {}
    await _health_phase(client, min(args["games"], 32), min(1.0, args["health_seconds"]))  # connections, caches
    out["health_before"] = await _health_phase(client, args["games"], args["health_seconds"], server_cpu)

    stats = Stats()
    rngs = [random.Random(args["seed"] * 100_003 + i) for i in range(args["games"])]
    interval = args["games"] / args["rate"] if args["rate"] > 0 else 0.0
    players = [asyncio.create_task(_player(i, client, stats, args["max_moves"], rngs[i], interval))
               for i in range(args["games"])]
    await asyncio.sleep(args["warmup"])
    stats.measuring = True
    cpu0, wall0, srv0 = time.process_time(), time.monotonic(), server_cpu()
    deadline = wall0 + args["seconds"]
    while time.monotonic() < deadline and stats.all_moves < args["max_moves"] and len(stats.errors) < 50:
        await asyncio.sleep(0.05)
    stats.measuring = False
    elapsed = time.monotonic() - wall0
    cpu_client, srv1 = time.process_time() - cpu0, server_cpu()
    out["active_games"] = list(stats.active.values())
    stats.stopping = True
    await asyncio.wait(players, timeout=REQUEST_TIMEOUT + 5)

    out["health_after"] = await _health_phase(client, args["games"], args["health_seconds"], server_cpu)
    if args["fanout_games"] > 0:
        out["fanout"] = await _fanout_phase(client, args["fanout_games"], args["fanout_seconds"],
                                            args["think_ms"] / 1000, args["seed"])
    out.update(elapsed=elapsed, moves=stats.moves, move_ms=stats.move_ms, view_ms=stats.view_ms,
               views=stats.views, creates=stats.creates, rejected=stats.rejected, stuck=stats.stuck,
               finished=stats.finished, reconnects=stats.reconnects, errors=stats.errors, cpu_client=cpu_client,
               cpu_server={k: srv1[k] - srv0[k] for k in srv0})
    return out


def _servers(client: Any) -> list[Any]:
    """Each server of a client: itself, or every node of a cluster (replicas included)."""
    from service.redis_io import is_cluster

    return [client.get_redis_connection(n) for n in client.get_nodes()] if is_cluster(client) else [client]


def redis_cpu_seconds(client: Any) -> float:
    """CPU time the Redis server (every node of a cluster) has used."""
    total = 0.0
    for server in _servers(client):
        info = server.info("cpu")
        total += float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
    return total


def drive(port: int, args: dict[str, Any], server_pids: list[int], redis_url: str, out: Any) -> None:
    """The load generator's process."""
    from service.redis_io import connect

    r = None
    try:
        r = connect(redis_url)

        def server_cpu() -> dict[str, float]:
            return {"server": sum(procstat.cpu_seconds(p) for p in server_pids), "redis": redis_cpu_seconds(r)}

        out.put(asyncio.run(_drive(port, args, server_cpu)))
    except Exception as e:  # noqa: BLE001
        out.put({"fatal": repr(e)})
    finally:
        if r is not None:
            r.close()








# -- the run ------------------------------------------------------------------------------
def run(args: argparse.Namespace, durability: str = "fsync", listeners: int = 0, cluster: bool = False,
        observability: str = "on") -> dict[str, Any]:
    """One measured run: on ``--redis-url`` (else ``$REDIS_URL``, else an embedded Valkey),
    or with ``cluster`` on a local cluster started for the run (and a queue Valkey); with
    ``listeners`` open during the moves phase; the server's request metrics and access log
    ``observability`` on or off (on: its stderr, the access lines, goes to a file)."""
    from servers.localcluster import LocalCluster
    from service import metrics
    from service.config import queue_url_for
    from service.redis_io import connect
    from service.store import Store

    embedded = None
    local: LocalCluster | None = None
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    url = None if cluster else args.redis_url or os.environ.get("REDIS_URL")
    queue_env: dict[str, str] = {"CANASTA_QUEUE_URL": queue_url_for(url, args.queue_url)} if url else {}
    server = None
    run_dir = metrics.fresh_dir()
    server_log = open(os.path.join(run_dir, "server.log"), "wb")  # noqa: SIM115 - closed in finally
    try:
        if cluster:
            local = LocalCluster(durable=durability != "off").start()
            url = local.url
        if not url or cluster:
            embedded = EmbeddedRedis(durable=durability != "off")  # a temporary data directory
            queue_or_games = embedded.start()
            if cluster:
                queue_env["CANASTA_QUEUE_URL"] = queue_or_games
            else:
                url = queue_or_games
        assert url is not None
        with socket.socket() as s:
            s.bind((HOST, 0))
            port = s.getsockname()[1]
        env = {**os.environ, **queue_env, "REDIS_URL": url, "CANASTA_KEY_PREFIX": prefix,
               "CANASTA_RATE_LIMIT": "1" if args.rate_limit else "0",
               "CANASTA_DURABILITY": durability}
        env["CANASTA_MAX_STREAMS_PER_ADDRESS"] = "0"  # every listener of the bench has one address
        if args.rate_limit:  # every request of the bench comes from one address
            env["CANASTA_RATE_LIMIT_PER_ADDRESS"] = "1000000000"
        on = "1" if observability == "on" else "0"
        env.update({"CANASTA_ACCESS_LOG": on, "CANASTA_METRICS": on, metrics.ENV_DIR: run_dir,
                    "CANASTA_LOG_FORMAT": "json"})
        server = subprocess.Popen(api_command(HOST, port, args.workers), env=api_env(env, args.threads),
                                  stderr=server_log)
        if not wait_healthy(f"http://{HOST}:{port}", server, timeout=30):
            raise RuntimeError("the API did not start")
        workers = procstat.children(server.pid)
        ctx = multiprocessing.get_context("spawn")
        queue = ctx.Queue()
        listening = _start_listeners(ctx, port, listeners, args) if listeners else None
        params = {k: getattr(args, k) for k in ("games", "seconds", "warmup", "health_seconds", "max_moves",
                                                "seed", "rate", "fanout_games", "fanout_seconds", "think_ms")}
        load_before = procstat.loadavg()
        proc = ctx.Process(target=drive, args=(port, params, [server.pid, *workers], url, queue))
        proc.start()
        stats = queue.get(timeout=args.seconds + args.warmup + 2 * args.health_seconds + args.fanout_seconds + 180)
        proc.join(30)
        if "fatal" in stats:
            raise RuntimeError(f"the load generator failed: {stats['fatal']}")
        if listening is not None:
            stats["listening"] = _stop_listeners(*listening)
        stats["listeners_n"] = listeners
        stats["loadavg"] = (load_before, procstat.loadavg())
        store = Store(connect(url), prefix)
        games = stats["active_games"]
        sizes = [store.memory_of_game(g) for g in games]
        stats["memory_per_game"] = statistics.mean(sizes) if sizes else 0
        stats["events_per_game"] = statistics.mean(store.event_count(g) for g in games) if games else 0
        one = _servers(store.redis)[0]
        stats["redis_version"] = one.info("server").get("redis_version", "?")
        stats["redis_url"] = ("local cluster: 3 primaries + 3 replicas (Valkey), bot queue on an embedded Valkey"
                              if local is not None else "embedded Valkey" if embedded is not None else url)
        persistence = one.info("persistence")
        found = one.config_get("appendfsync")
        fsync = found.get("appendfsync") or found.get(b"appendfsync") or "?"
        fsync = fsync.decode() if isinstance(fsync, bytes) else fsync
        stats["durability"] = (f"CANASTA_DURABILITY={durability}; the server's append-only file "
                               f"{'on, appendfsync ' + fsync if persistence['aof_enabled'] else 'off'}")
        stats["mode"] = durability + (" cluster" if cluster else "")
        stats["observability"] = observability
        server_log.flush()
        stats["log_bytes"] = os.path.getsize(server_log.name)
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
        if local is not None:
            local.stop()
        server_log.close()
        metrics.remove_dir(run_dir)


LISTENERS_START_SECONDS = 180  # the listeners' games created and every listener open within this


def _start_listeners(ctx: Any, port: int, count: int, args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The listeners' process, once all its listeners are open (bench/listeners.py)."""
    from bench.listeners import listen

    started, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=listen, args=(port, count, args.listener_moves, args.seed, started, stop, out))
    proc.start()
    if not started.wait(LISTENERS_START_SECONDS):
        stop.set()
        raise RuntimeError("the listeners did not open in time")
    return proc, stop, out


def _stop_listeners(proc: Any, stop: Any, out: Any) -> dict[str, Any]:
    stop.set()
    found: dict[str, Any] = out.get(timeout=60)
    proc.join(30)
    if "fatal" in found:
        raise RuntimeError(f"the listeners failed: {found['fatal']}")
    return found


def report(stats: dict[str, Any], args: argparse.Namespace) -> str:
    elapsed = stats["elapsed"]
    moves = stats["moves"]
    rate = moves / elapsed if elapsed else 0.0
    hb, ha = stats["health_before"], stats["health_after"]
    health = (hb["rate"] + ha["rate"]) / 2

    def per_move(seconds: float) -> str:
        return f"{seconds * 1000 / moves:.2f}" if moves else "n/a"

    def health_cpu(kind: str) -> float:
        return (hb["cpu_server"].get(kind, 0.0) + ha["cpu_server"].get(kind, 0.0)) * 500

    cpu = stats["cpu_server"]
    move_cpu = (cpu["server"] + cpu["redis"] + stats["cpu_client"]) / moves if moves else 0.0
    health_all = (health_cpu("server") + health_cpu("redis") + (hb["cpu_client"] + ha["cpu_client"]) * 500) / 1000
    rows = [
        ("concurrent games", f"{args.games} (4 human seats each, one keep-alive connection per seat)"),
        ("server", f"granian, {args.workers} workers x {args.threads} Flask threads (ASGI), rate limiter "
                     f"{'ON' if args.rate_limit else 'off'}"),
        ("redis", f"{stats['redis_url']} ({stats['redis_version']})"),
        ("observability", f"request metrics and access log {stats.get('observability', 'on').upper()} "
                          f"({stats.get('log_bytes', 0) / 1e3:.0f} kB of server log in the run)"),
        ("durability", stats["durability"]),
        ("run", f"{elapsed:.1f} s measured after {args.warmup:.0f} s warm-up; load average "
                f"{stats['loadavg'][0]} -> {stats['loadavg'][1]}"),
        ("accepted moves/s", f"{rate:.0f}  ({moves} moves, {stats['rejected']} rejected tries; offered: "
                             f"{f'{args.rate:.0f}/s paced' if args.rate else 'as fast as answered'})"),
        ("move latency p50 / p99", f"{_percentile(stats['move_ms'], .5):.1f} / {_percentile(stats['move_ms'], .99):.1f} ms"),
        ("view reads/s, p50 / p99", f"{stats['views'] / elapsed:.0f}, {_percentile(stats['view_ms'], .5):.1f} / "
                                    f"{_percentile(stats['view_ms'], .99):.1f} ms"),
        ("/healthz requests/s", f"{health:.0f}  (before {hb['rate']:.0f}, p99 {hb['p99']:.1f} ms; after "
                                f"{ha['rate']:.0f}, p99 {ha['p99']:.1f} ms; {args.games} connections, same run)"),
        ("moves/s : /healthz req/s", f"{rate / health:.3f}" if health else "n/a"),
        # CPU-bound in both phases, the rates' ratio is the CPU costs' ratio: this one does
        # not move when other processes take CPU from one phase and not the other
        ("same ratio, by CPU time", f"{health_all / move_cpu:.3f}  (all-in CPU per /healthz : per accepted move, "
                                    "server + redis + client)" if move_cpu else "n/a"),
        ("CPU ms per accepted move", f"server {per_move(cpu['server'])}, redis {per_move(cpu['redis'])}, "
                                     f"client {per_move(stats['cpu_client'])}"),
        ("CPU ms per /healthz", f"server {health_cpu('server'):.3f}, redis {health_cpu('redis'):.3f}, "
                                f"client {(hb['cpu_client'] + ha['cpu_client']) * 500:.3f}"),
        ("Redis memory per active game", f"{stats['memory_per_game'] / 1024:.1f} KiB "
                                         f"(state + events + log, {len(stats['active_games'])} games in progress, "
                                         f"{stats['events_per_game']:.0f} events/game)"),
        ("games", f"{stats['creates']} started, {stats['finished']} finished; "
                  f"{stats['reconnects']} connections reopened after the server's keep-alive closed them"),
    ]
    fan = stats.get("fanout")
    if fan is not None:
        lat = fan["fanout_ms"]
        rows.append(("event fan-out p50 / p99", (
            f"{_percentile(lat, .5):.1f} / {_percentile(lat, .99):.1f} ms from sending a move to each other "
            f"seat's long-poll returning it ({len(lat)} deliveries, {fan['games']} games x 4 readers, "
            f"{args.think_ms:.0f} ms think time; moves p50 {_percentile(fan['move_ms'], .5):.1f} ms; "
            f"{fan['busy']} polls refused by the stream limits)") if lat else "n/a (no deliveries)"))
    lis = stats.get("listening")
    if lis is not None:
        commit, sent = lis["commit_ms"], lis["send_ms"]
        rows.append(("open listeners", f"{lis['opened']['sse']} SSE streams + {lis['opened']['poll']} long-polls of "
                                       f"{lis['listeners']} ({lis['refused']} refused, {lis['error_count']} errors) "
                                       f"on {(lis['listeners'] + 3) // 4} extra games, {lis['moves']} moves played "
                                       f"there ({args.listener_moves:.0f}/s offered)"))
        rows.append(("move -> listener p50 / p99", (
            f"{_percentile(commit, .5):.1f} / {_percentile(commit, .99):.1f} ms from the commit (event id's "
            f"server time), {_percentile(sent, .5):.1f} / {_percentile(sent, .99):.1f} ms from sending the move; "
            f"{len(commit)} deliveries") if commit else "n/a (no deliveries)"))
    fan_errors = fan["errors"] if fan is not None else []
    fan_errors = fan_errors + (lis["errors"] if lis is not None else [])
    if stats["errors"] or stats["stuck"] or hb["errors"] or ha["errors"] or fan_errors:
        errs = stats["errors"] + hb["errors"] + ha["errors"] + fan_errors
        rows.append(("errors", f"{len(errs)} errors, {stats['stuck']} stuck: {errs[:3]}"))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def _errors(stats: dict[str, Any]) -> list[str]:
    errors = stats["errors"] + stats["health_before"]["errors"] + stats["health_after"]["errors"]
    return errors + stats.get("fanout", {}).get("errors", []) + stats.get("listening", {}).get("errors", [])


def compare(runs: list[dict[str, Any]]) -> str:
    """Moves/s and latency per durability mode, run by run, and each mode's moves : /healthz
    ratio against durability off's (the ratio cancels load that moves both phases of a run)."""
    lines = ["durability  obs  listeners  accepted moves/s  p50 ms  p99 ms  /healthz req/s  moves : /healthz  "
             "move -> listener p99 ms (from commit)"]
    ratios: dict[str, list[float]] = {}
    rates: dict[int, list[float]] = {}
    by_obs: dict[str, list[tuple[float, float]]] = {}
    for stats in runs:
        rate = stats["moves"] / stats["elapsed"] if stats["elapsed"] else 0.0
        health = (stats["health_before"]["rate"] + stats["health_after"]["rate"]) / 2
        ratio = rate / health if health else 0.0
        ratios.setdefault(stats["mode"], []).append(ratio)
        rates.setdefault(stats["listeners_n"], []).append(rate)
        obs = stats.get("observability", "on")
        by_obs.setdefault(obs, []).append((rate, ratio))
        lis = stats.get("listening")
        fan = f"{_percentile(lis['commit_ms'], .99):.1f}" if lis and lis["commit_ms"] else "-"
        lines.append(f"{stats['mode']:<10}  {obs:<3}  {stats['listeners_n']:>9}  {rate:>16.0f}  "
                     f"{_percentile(stats['move_ms'], .5):>6.1f}  {_percentile(stats['move_ms'], .99):>6.1f}  "
                     f"{health:>14.0f}  {ratio:>16.3f}  {fan:>8}")
    if "on" in by_obs and "off" in by_obs:
        on_rate, on_ratio = (statistics.mean(v) for v in zip(*by_obs["on"], strict=True))
        off_rate, off_ratio = (statistics.mean(v) for v in zip(*by_obs["off"], strict=True))
        if off_rate and off_ratio:
            lines.append(f"observability on: {on_rate:.0f} moves/s against {off_rate:.0f} off ({on_rate / off_rate - 1:+.1%}); "
                         f"moves : /healthz {on_ratio:.3f} on, {off_ratio:.3f} off ({on_ratio / off_ratio - 1:+.1%})")
    if 0 in rates and len(rates) > 1:
        base_rate = statistics.mean(rates[0])
        for n, values in rates.items():
            if n and base_rate:
                lines.append(f"{n} listeners: {statistics.mean(values) / base_rate:.0%} of the moves/s without them")
    if "off" in ratios and len(ratios) > 1:
        base = statistics.mean(ratios["off"])
        for mode, values in ratios.items():
            if mode != "off" and base:
                lines.append(f"{mode}: {statistics.mean(values) / base:.0%} of durability off's moves : /healthz ratio")
    return "\n".join(lines)


def compare_cluster(runs: list[dict[str, Any]]) -> str:
    """Each round's cluster moves/s as a share of the single server's in the same round."""
    lines = ["round  single moves/s  cluster moves/s  cluster : single  memory/game single, cluster (KiB)"]
    singles = [s for s in runs if not s["mode"].endswith("cluster")]
    clusters = [s for s in runs if s["mode"].endswith("cluster")]
    shares = []
    for i, (one, many) in enumerate(zip(singles, clusters, strict=False), 1):
        a, b = (s["moves"] / s["elapsed"] if s["elapsed"] else 0.0 for s in (one, many))
        shares.append(b / a if a else 0.0)
        lines.append(f"{i:>5}  {a:>14.0f}  {b:>15.0f}  {shares[-1]:>15.0%}  "
                     f"{one['memory_per_game'] / 1024:.1f}, {many['memory_per_game'] / 1024:.1f}")
    if shares:
        lines.append(f"cluster : single, mean of {len(shares)} round(s): {statistics.mean(shares):.0%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    url = args.redis_url or os.environ.get("REDIS_URL")
    if url and not args.cluster:
        from service.config import queue_url_for

        try:
            queue_url_for(url, args.queue_url)  # a cluster without a queue Redis: refused before anything starts
        except ValueError as e:
            print(f"canasta bench api: {e}", file=sys.stderr)
            return 2
    if any(args.listeners):
        procstat.raise_open_files_limit()  # the server inherits it
    if args.cluster:
        pairs: list[dict[str, Any]] = []
        for _ in range(max(1, args.rounds)):
            for mode in args.durability:
                for on_cluster in (False, True):  # same round, one after the other
                    stats = run(args, mode, args.listeners[0], cluster=on_cluster)
                    print(f"-- {stats['mode']}\n{report(stats, args)}\n", flush=True)
                    pairs.append(stats)
        print(compare_cluster(pairs), flush=True)
        return 1 if any(_errors(stats) for stats in pairs) else 0
    if len(args.durability) == 1 and len(args.listeners) == 1 and len(args.observability) == 1 and args.rounds <= 1:
        stats = run(args, args.durability[0], args.listeners[0], observability=args.observability[0])
        print(report(stats, args), flush=True)
        return 1 if _errors(stats) else 0
    runs: list[dict[str, Any]] = []
    for _ in range(max(1, args.rounds)):
        for mode in args.durability:
            for listeners in args.listeners:
                for obs in args.observability:
                    stats = run(args, mode, listeners, observability=obs)
                    print(f"-- CANASTA_DURABILITY={mode}, {listeners} listeners, observability {obs}\n"
                          f"{report(stats, args)}\n", flush=True)
                    runs.append(stats)
    print(compare(runs), flush=True)
    return 1 if any(_errors(stats) for stats in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
