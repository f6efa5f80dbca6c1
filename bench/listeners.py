"""``canasta bench api --listeners N``: N open listeners while the measured games are played.

A process of its own (so that its work does not slow the load generator's loop, nor the
other way round) creates N/4 extra four-seat games and opens one listener per seat: an SSE
stream for every other seat, a long-poll (``?after=<id>&wait=25``, asked again at once)
for the rest. It plays those games slowly (``rate`` moves/s over all of them, from the
seats' legal summaries) and, for each event a listener receives, records how long after
the move it came:

* from the commit: the event id's milliseconds are the Redis server's clock at the
  ``XADD`` (same machine, same wall clock as ours): the fan-out's own latency;
* from sending the move: the above plus the move's own time in a loaded server's queue.

Every loop is bounded by time and count; only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import orjson

from bench.moves import CREATE_BODY, choose

HOST = "127.0.0.1"  # loopback only
POLL_WAIT = 25  # seconds a listener's long-poll waits
OPEN_BATCH = 200  # listeners opened at once
CONNECT_TIMEOUT = 30.0
CLIENT_GC_THRESHOLDS = (100_000, 50, 1000)


def _head(method: str, path: str, token: str | None, extra: str = "", body: bytes = b"") -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    length = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if method == "POST" else ""
    return f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\n{auth}{extra}{length}\r\n".encode() + body


async def _response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One Content-Length response (every non-streaming answer of the API has one)."""
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("closed")
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return int(status_line[9:12]), await reader.readexactly(length)


class Listeners:
    """The listeners' process state."""

    def __init__(self, port: int, count: int, rate: float, seed: int) -> None:
        self.port, self.count, self.rate, self.seed = port, count, rate, seed
        self.games: list[dict[str, Any]] = []
        self.sent: dict[tuple[str, int], float] = {}  # (game, version) -> perf_counter at send
        self.commit_ms: list[float] = []
        self.send_ms: list[float] = []
        self.opened = {"sse": 0, "poll": 0}
        self.refused = 0
        self.errors: list[str] = []
        self.moves = 0
        self.stopping = False
        self.writers: list[asyncio.StreamWriter] = []

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.port), CONNECT_TIMEOUT)
        self.writers.append(writer)
        return reader, writer

    def _arrived(self, game_id: str, event: dict[str, Any]) -> None:
        """An event of a move this process sent (others, such as the game's creation, are
        not timed)."""
        now_wall, now = time.time(), time.perf_counter()
        sent = self.sent.get((game_id, event["version"]))
        if sent is not None:
            self.commit_ms.append(now_wall * 1000 - int(event["id"].split("-", 1)[0]))
            self.send_ms.append((now - sent) * 1000)

    async def sse(self, game_id: str, token: str) -> None:
        reader, writer = await self.connect()
        writer.write(_head("GET", f"/games/{game_id}/events", token, "Accept: text/event-stream\r\n"))
        status = await reader.readline()
        if status[9:12] != b"200":
            self.refused += 1
            return
        self.opened["sse"] += 1
        while not self.stopping:
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                data = orjson.loads(line[6:])
                if "version" in data and "type" in data:  # an event, not the snapshot
                    self._arrived(game_id, data)

    async def poll(self, game_id: str, token: str) -> None:
        reader, writer = await self.connect()
        after = ""  # the first poll: a snapshot and the id to poll after
        first = True
        while not self.stopping:
            query = f"?after={after}&wait={POLL_WAIT}" if after else ""
            writer.write(_head("GET", f"/games/{game_id}/events{query}", token))
            status, body = await _response(reader)
            if status != 200:
                self.refused += 1
                return
            if first:
                self.opened["poll"] += 1
                first = False
            page = orjson.loads(body)
            if "snapshot" not in page:
                for event in page["events"]:
                    self._arrived(game_id, event)
            after = page["last_id"]

    async def driver(self, games: list[dict[str, Any]], interval: float, rng: random.Random) -> None:
        """Plays ``games`` round-robin, one move every ``interval`` seconds."""
        reader, writer = await self.connect()
        slot = time.monotonic() + rng.random() * interval
        turn = 0
        while not self.stopping and games:
            game = games[turn % len(games)]
            turn += 1
            slot = max(slot + interval, time.monotonic())
            await asyncio.sleep(max(0.0, slot - time.monotonic()))
            seat = game["to_act"]
            writer.write(_head("GET", f"/games/{game['id']}", game["tokens"][seat]))
            status, body = await _response(reader)
            if status != 200:
                raise ConnectionError(f"view: {status} {body[:200]!r}")
            page = orjson.loads(body)
            move = choose(page["view"], rng)
            if move is None or page["status"] != "playing":
                games.remove(game)
                continue
            self.sent[(game["id"], page["version"] + 1)] = time.perf_counter()
            writer.write(_head("POST", f"/games/{game['id']}/moves", game["tokens"][seat],
                               f'If-Match: "{page["version"]}"\r\n', move))
            status, body = await _response(reader)
            if status == 200:
                self.moves += 1
                answer = orjson.loads(body)
                if answer["status"] != "playing" or answer["view"]["to_act"] is None:
                    games.remove(game)
                else:
                    game["to_act"] = answer["view"]["to_act"]

    async def run(self, started: Any, stop: Any) -> dict[str, Any]:
        reader, writer = await self.connect()
        for _ in range((self.count + 3) // 4):
            writer.write(_head("POST", "/games", None, body=CREATE_BODY))
            status, body = await _response(reader)
            if status != 201:
                raise ConnectionError(f"create: {status} {body[:200]!r}")
            game = orjson.loads(body)
            self.games.append({"id": game["id"], "to_act": game["view"]["to_act"],
                               "tokens": {s["seat"]: s["token"] for s in game["seats"]}})
        tasks: list[asyncio.Task[None]] = []
        n = 0
        for g, game in enumerate(self.games):
            for seat, token in game["tokens"].items():
                if n >= self.count:
                    break
                kind = self.sse if (g + seat) % 2 == 0 else self.poll
                tasks.append(asyncio.create_task(self._guard(kind(game["id"], token))))
                n += 1
                if n % OPEN_BATCH == 0:
                    await asyncio.sleep(0.05)
        deadline = time.monotonic() + 60
        while sum(self.opened.values()) + self.refused + len(self.errors) < n and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        import gc

        gc.collect()
        gc.freeze()  # the listeners' objects stay out of every collection: no pause in what we time
        started.set()
        lanes = 8
        if self.rate > 0:
            rng = random.Random(self.seed)
            interval = lanes / self.rate
            for lane in range(lanes):
                mine = [game for i, game in enumerate(self.games) if i % lanes == lane]
                tasks.append(asyncio.create_task(self._guard(self.driver(mine, interval, rng))))
        while not stop.is_set():
            await asyncio.sleep(0.05)
        self.stopping = True
        for w in self.writers:
            w.close()
        await asyncio.wait(tasks, timeout=5)
        return {"listeners": n, "opened": self.opened, "refused": self.refused, "errors": self.errors[:5],
                "error_count": len(self.errors), "commit_ms": self.commit_ms, "send_ms": self.send_ms,
                "moves": self.moves}

    async def _guard(self, coro: Any) -> None:
        try:
            await coro
        except Exception as e:  # noqa: BLE001 - a bench reports errors, it does not crash
            if not self.stopping:
                self.errors.append(repr(e))


def listen(port: int, count: int, rate: float, seed: int, started: Any, stop: Any, out: Any) -> None:
    """The listeners' process (multiprocessing target)."""
    import gc

    from service.procstat import raise_open_files_limit

    raise_open_files_limit()
    gc.set_threshold(*CLIENT_GC_THRESHOLDS)  # a collection over 5 000 connections' objects is a pause we would time
    try:
        out.put(asyncio.run(Listeners(port, count, rate, seed).run(started, stop)))
    except Exception as e:  # noqa: BLE001
        started.set()
        out.put({"fatal": repr(e)})
