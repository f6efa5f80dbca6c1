"""The event hub of one API process: every open event stream and waiting long-poll of the
process is a :class:`Listener` on one asyncio loop, and ONE Redis reader fans events out
to them (no thread, no Redis connection per listener).

The wake-up is sharded pub/sub: ``commit.lua`` sends ``SPUBLISH <prefix>:{game}:wake
<version> <event id> <event>`` with every change (the stream entry it wrote, field ``w``),
and the hub holds one ``SSUBSCRIBE`` per game that has a listener here. A listener at the
version before gets the event from the message, rendered for its seat (once per seat, not
per listener). Any other listener of the game (one further behind, a new one), and a
wake-up without the event (an older process), make the hub read the game's stream
(``XRANGE`` after the oldest cursor among the game's listeners, with the next batch) and
hand each listener the entries after its own cursor. The stream stays the truth: a message
only saves the read, and a lost one (a dropped connection) is made good by the next one's
version, which no longer follows the listener's, or by reading every game again once the
reader is back.

Both commands address the game's hash tag, so on a Redis Cluster the subscription goes to
the node that holds the game (:func:`connect` is the one place that builds the hub's client).
There the hub reads each node in a task of its own, and follows a failover: the old primary
ends its subscriptions (or its connection fails, or, frozen, it answers no ``PING``), and the
hub subscribes every game again where the slot table now puts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
import redis.asyncio as aredis
from redis.asyncio.cluster import RedisCluster

import service
from service import eventcodec, metrics
from service.keys import Keys
from service.redis_io import CONNECT_TIMEOUT_SECONDS, HEALTH_CHECK_SECONDS, parse_url
from service.store import EVENTS_PER_READ

log = logging.getLogger("canasta.hub")

LINGER_SECONDS = 10.0  # a game's subscription outlives its last listener this long (re-polls)
SWEEP_SECONDS = 2.0  # idle subscriptions are dropped this often
READ_TIMEOUT_SECONDS = 1.0  # the reader looks up from the subscription this often
NODES_CHECK_SECONDS = 0.5  # a cluster's nodes are looked over this often for one without a reader
QUIET_SECONDS = 5.0  # a cluster node heard from no longer than this is sent a PING
ANSWER_SECONDS = 2.0  # ... and one that answers nothing within this more is taken for gone
SUBSCRIBE_SECONDS_EACH = 0.002  # subscribing every game again may take this much more a game
NOT_CONNECTED_SECONDS = 0.05  # a node's pub/sub not connected yet is looked at again after this
RETRY_SECONDS = 0.5  # after the Redis connection failed, wait this long and read every game again
SOCKET_TIMEOUT_SECONDS = 10.0
# no hub command blocks: an unsubscribe or a close that takes longer is given up (a dead
# server; a stop never waits on it)
COMMAND_SECONDS = 2.0


def connect(url: str) -> Any:
    """The hub's Redis client (asyncio), of the URL the store reads (``service.redis_io.parse_url``):
    one server, or a cluster (its pub/sub subscribes each game's channel on the game's node)."""
    target = parse_url(url)
    options: dict[str, Any] = {"decode_responses": False, "socket_connect_timeout": CONNECT_TIMEOUT_SECONDS,
                               "socket_timeout": SOCKET_TIMEOUT_SECONDS}
    if target.cluster:
        return RedisCluster.from_url(target.url, **options)
    return aredis.Redis.from_url(target.url, health_check_interval=HEALTH_CHECK_SECONDS, **options)


async def _close_quietly(client: Any) -> None:
    """Close a client or pub/sub; a failure or a dead server's silence is given up on."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.aclose(), COMMAND_SECONDS)


def id_key(event_id: str) -> tuple[int, int]:
    """A stream id's order (``<ms>-<seq>``)."""
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq or 0)


@dataclass(eq=False)
class Listener:
    """One open stream or waiting poll: the events after ``cursor`` for ``seat``'s view.

    ``version``: the game's version at ``cursor`` (None: not known yet). Every change adds one
    event, so the next event is the next version; one that is not means the stream's trim
    (``events_keep``) passed the cursor while the listener was behind (the hub lagged, or the
    game ran on between the route's read and the hand-off): the listener is then closed
    instead of handed a gap, and its client, resuming from its cursor, gets a snapshot
    (``web/routes/events.py``)."""

    game_id: str
    seat: int | None
    cursor: str
    version: int | None = None
    pending: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (event id, body)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False  # the hub stops, or the listener fell behind the trim: answer what is there and end

    def end(self) -> None:
        """Answer what is pending, and nothing more (the client resumes from its cursor)."""
        self.closed = True
        self.wake.set()

    def take(self) -> list[tuple[str, dict[str, Any]]]:
        found, self.pending = self.pending, []
        self.wake.clear()
        return found


@dataclass(eq=False)
class _Feed:
    """A game with listeners in this process (or lately had)."""

    channel: bytes
    listeners: set[Listener] = field(default_factory=set)
    idle_since: float = 0.0


class EventHub:
    """Per process, on the server's event loop. :meth:`listen` / :meth:`leave` from the
    loop; the Redis reader runs from the first listener to :meth:`close`."""

    def __init__(self, client: Any, keys: Keys) -> None:
        self.redis = client
        self.keys = keys
        self.feeds: dict[str, _Feed] = {}
        self.by_channel: dict[bytes, str] = {}
        self.pubsub: Any = None
        self.tasks: set[asyncio.Task[Any]] = set()
        self.dirty: set[str] = set()  # games to read in the next batch
        self.kick = asyncio.Event()
        self.nodes_changed = asyncio.Event()  # a subscription made: a node may want a reader
        self.following = False  # a cluster's games are being subscribed again (_subscribe_again)
        self.subscriptions = asyncio.Lock()
        self.closed = False
        self.reads = 0  # pipelined batches of XRANGE (tests, benchmarks)

    # -- listeners -------------------------------------------------------------------------
    async def listen(self, listener: Listener) -> None:
        """Start delivering to ``listener``: its game is read now, and again once the
        server confirms a new subscription, so that no event committed before the
        subscription took effect is missed."""
        if self.closed:
            listener.end()
            return
        feed = self.feeds.get(listener.game_id)
        if feed is None:
            async with self.subscriptions:  # never during the sweeper's unsubscribe
                feed = self.feeds.get(listener.game_id)
                if feed is None:
                    channel = self.keys.wake(listener.game_id).encode()
                    feed = self.feeds[listener.game_id] = _Feed(channel)
                    self.by_channel[channel] = listener.game_id
                    # read now, not once subscribed: the subscription may wait on the reader
                    feed.listeners.add(listener)
                    self._read(listener.game_id)
                    try:
                        await self._subscribe(channel)
                    except BaseException:
                        self._forget(listener.game_id, feed)
                        raise
                    return
        feed.listeners.add(listener)
        self._read(listener.game_id)

    def _forget(self, game_id: str, feed: _Feed) -> None:
        """A game whose subscription failed: its listeners (this one, any that came while it
        was on its way) end with what they have, and the game's next listener subscribes
        again (its client resumes from its cursor)."""
        del self.feeds[game_id]
        del self.by_channel[feed.channel]
        for listener in feed.listeners:
            listener.end()

    def leave(self, listener: Listener) -> None:
        feed = self.feeds.get(listener.game_id)
        if feed is not None:
            feed.listeners.discard(listener)
            if not feed.listeners:
                feed.idle_since = time.monotonic()

    def listeners(self) -> int:
        return sum(len(f.listeners) for f in self.feeds.values())

    async def close(self) -> None:
        """End every listener (each answers what it has) and the reader."""
        self.closed = True
        for feed in self.feeds.values():
            for listener in feed.listeners:
                listener.end()
        for task in list(self.tasks):
            task.cancel()
        if self.pubsub is not None:
            await _close_quietly(self.pubsub)
        await _close_quietly(self.redis)

    def stop_now(self) -> None:
        """:meth:`close` from a signal handler on the loop."""
        self._spawn(self.close())

    # -- the reader --------------------------------------------------------------------------
    async def _subscribe(self, channel: bytes) -> None:
        if self.pubsub is None:
            if isinstance(self.redis, RedisCluster):
                await self.redis.initialize()  # the slot table, before the first subscription
            pubsub = self.redis.pubsub()
            try:
                await pubsub.ssubscribe(channel)
            except BaseException:
                # no reader yet, and none on a pub/sub without a subscription (a cluster's
                # would spin): the next listener starts them again
                await _close_quietly(pubsub)
                raise
            if self.closed:  # closed while the subscription was on its way
                await _close_quietly(pubsub)
                return
            self.pubsub = pubsub
            self._spawn(self._reader())
            self._spawn(self._catch_up())
            if not isinstance(self.redis, RedisCluster):
                # redis-py's cluster pub/sub did not wake a channel subscribed again after an
                # unsubscribe (tests/web/test_api_hub.py on a cluster): there a game's
                # subscription stays for the process's life
                self._spawn(self._sweeper())
            return
        await self.pubsub.ssubscribe(channel)
        self.nodes_changed.set()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _reader(self) -> None:
        """Wake-ups from the subscription: each one reads its game again. On a cluster, one
        reader per node (:meth:`_node_readers`)."""
        if not isinstance(self.redis, RedisCluster):
            await self._read_messages(lambda: self.pubsub.get_message(timeout=READ_TIMEOUT_SECONDS))
        else:
            await self._node_readers()

    async def _node_readers(self) -> None:
        """A reader for each node the cluster's pub/sub subscribed on, started as nodes come
        (a game on a new node, a channel moved by a failover) and ended as they go.

        Why not redis-py's own ``get_sharded_message(timeout=...)``: it waits on the nodes in
        turn (a wake-up on one waited for the others' slices), and it holds a node's I/O
        lock while it waits there, so every new game's ``SSUBSCRIBE`` waited for the read to
        end (200 games opened at once: 11 s with 0.1 s reads). A reader that blocks on its
        own node until a message comes takes no lock (redis-py leaves an unbounded read to
        its caller), as the single server's pub/sub has always been read.

        A node that stops answering without closing the connection (a process stopped, a
        partition that drops packets) would hold its reader for ever, and its games' wake-ups
        with it once a replica has taken its slots: a node quiet for :data:`QUIET_SECONDS` is
        sent a ``PING`` on its subscription, and while one that has not answered it within
        :data:`ANSWER_SECONDS` holds games of ours by the slot table, the games are subscribed
        where the slot table puts them (:meth:`_follow_slots`, which reads the table again)."""
        readers: dict[str, _NodeReader] = {}
        try:
            while not self.closed:
                mapping = self.pubsub.node_pubsub_mapping
                for name, reader in list(readers.items()):
                    if name not in mapping:  # the node's pub/sub was dropped (its channels moved)
                        reader.task.cancel()
                        del readers[name]
                for name in list(mapping):
                    if name not in readers or readers[name].task.done():
                        node = self.redis.get_node(node_name=name)
                        if node is not None:
                            reader = readers[name] = _NodeReader(name)
                            reader.task = asyncio.get_running_loop().create_task(self._read_node(node, reader))
                for name, reader in list(readers.items()):
                    if name in mapping and await self._silent(reader, mapping[name]):
                        self._follow_slots()
                self.nodes_changed.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(NODES_CHECK_SECONDS):
                        await self.nodes_changed.wait()
        finally:
            for reader in readers.values():
                reader.task.cancel()

    async def _silent(self, reader: _NodeReader, pubsub: Any) -> bool:
        """Whether the node answered no ``PING`` sent after a quiet spell (sent here) and
        holds games of ours by the slot table: then they must be followed (again every
        :data:`ANSWER_SECONDS` until the table puts them elsewhere). A silent node that holds
        none is the old primary's pub/sub waiting for its ``SUNSUBSCRIBE`` replies: its reader
        waits on, harmless, and hears them if the node comes back."""
        now = time.monotonic()
        if reader.pinged is None:
            if now - reader.heard >= QUIET_SECONDS:
                reader.pinged = now
                # only sent: the answer comes to the node's reader, as any message does (a
                # write to a dead connection fails there too)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(pubsub.ping(), COMMAND_SECONDS)
            return False
        if now - reader.pinged < ANSWER_SECONDS or not self._holds_games(reader.name):
            return False
        if not reader.silent:
            reader.silent = True
            log.warning("event hub: node %s answered no PING in %g s; subscribing its games where the slot "
                        "table puts them", reader.name, ANSWER_SECONDS)
        reader.pinged = now
        return True

    def _holds_games(self, name: str) -> bool:
        """Whether the slot table, as the hub's client last read it, puts a game of ours on
        node ``name`` (a slot the table leaves uncovered counts: the table is read again)."""
        for channel in list(self.by_channel):
            try:
                if self.redis.get_node_from_key(channel).name == name:
                    return True
            except Exception:  # noqa: BLE001 - SlotNotCoveredError: a promotion under way
                return True
        return False

    async def _read_node(self, node: Any, reader: _NodeReader) -> None:
        async def read() -> dict[str, Any] | None:  # waits for a message, however long
            message: dict[str, Any] | None = await self.pubsub.get_sharded_message(timeout=None, target_node=node)
            if message is None:
                await asyncio.sleep(NOT_CONNECTED_SECONDS)  # not connected yet: nothing was read
            else:
                if reader.silent:
                    log.info("event hub: node %s answers again", reader.name)
                reader.heard, reader.pinged, reader.silent = time.monotonic(), None, False
            return message

        await self._read_messages(read)

    async def _read_messages(self, read: Callable[[], Awaitable[dict[str, Any] | None]]) -> None:
        """Hand out the wake-ups ``read`` returns (None: nothing came)."""
        outage = _Outage("reading the subscription")
        while not self.closed:
            try:
                message = await read()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - the connection failed: reconnect, then read all again
                if self.closed:
                    return
                outage.failed(e)
                await asyncio.sleep(RETRY_SECONDS)
                self._follow_slots()  # a cluster node that fails may have been replaced
                self._read_all()
                continue
            outage.over()
            if message is not None and message.get("type") == "sunsubscribe" and message["channel"] in self.by_channel:
                self._follow_slots()  # not ours: the node gave up the game's slot (a failover)
                continue
            # a wake-up, or the server's confirmation of a new subscription: read the game
            if message is None or message.get("type") not in ("smessage", "ssubscribe"):
                continue
            woken = self.by_channel.get(message["channel"])
            feed = self.feeds.get(woken) if woken is not None else None
            if woken is not None and feed is not None and feed.listeners:
                if message["type"] != "smessage" or not self._hand_out(message["data"], feed):
                    self._read(woken)

    def _follow_slots(self) -> None:
        """On a cluster, subscribe every game again where the slot table now puts it."""
        if isinstance(self.redis, RedisCluster) and not self.following:
            self.following = True
            self._spawn(self._subscribe_again())

    async def _subscribe_again(self) -> None:
        """A node that gives up a slot (its replica took over) ends the subscriptions of its
        channels with a ``sunsubscribe``, and redis-py's cluster pub/sub subscribes them again
        only after a command of its own met the new slot table: the hub's games on that node
        heard nothing more. Here the slot table is read again and every game subscribed where
        it now lives (redis-py moves a channel whose node changed, and sends the others again:
        harmless), until that works; then every game is read, for what was missed meanwhile."""
        outage = _Outage("subscribing every game where the slot table puts it")
        try:
            while not self.closed:
                try:
                    await asyncio.wait_for(self.redis.nodes_manager.initialize(), COMMAND_SECONDS)
                    async with self.subscriptions:
                        if self.by_channel:  # ~0.3 ms a channel (2 000 games: 0.6 s)
                            await asyncio.wait_for(self.pubsub.ssubscribe(*self.by_channel),
                                                   COMMAND_SECONDS + len(self.by_channel) * SUBSCRIBE_SECONDS_EACH)
                    outage.over()
                    break
                except Exception as e:  # noqa: BLE001 - a promotion still under way: try again
                    outage.failed(e)
                    await asyncio.sleep(RETRY_SECONDS)
        finally:
            self.following = False
        self.nodes_changed.set()
        self._read_all()

    def _hand_out(self, data: bytes, feed: _Feed) -> bool:
        """Deliver the event a wake-up carries to the listeners at the version before it;
        False when some listener must read the stream (or the message carries no event)."""
        parts = data.split(b" ", 2)
        if len(parts) != 3 or not parts[0].isdigit():
            return False
        version, event_id = int(parts[0]), parts[1].decode()
        ready = [listener for listener in feed.listeners if listener.version == version - 1 and not listener.closed]
        if ready:
            deliver([(event_id, {"v": parts[0], eventcodec.WFIELD: parts[2]})], ready)
        # a listener at this version or past it (it read the stream first) needs nothing more
        return all(listener.closed or (listener.version is not None and listener.version >= version - 1)
                   for listener in feed.listeners)

    async def _sweeper(self) -> None:
        """Drop the subscriptions of games nobody has listened to for a while."""
        while not self.closed:
            await asyncio.sleep(SWEEP_SECONDS)
            async with self.subscriptions:
                now = time.monotonic()
                idle = {g: f for g, f in self.feeds.items() if not f.listeners and now - f.idle_since > LINGER_SECONDS}
                if not idle:
                    continue
                # forgotten before the unsubscribe's round trip: a listener that comes meanwhile
                # finds no feed and waits for the lock to subscribe again (a feed still known
                # here would take it, and then be dropped under it, never to wake it)
                for g, f in idle.items():
                    del self.feeds[g]
                    del self.by_channel[f.channel]
                try:
                    await asyncio.wait_for(self.pubsub.sunsubscribe(*(f.channel for f in idle.values())),
                                           COMMAND_SECONDS)
                except Exception as e:  # noqa: BLE001 - kept: tried again at the next sweep
                    log.warning("event hub: unsubscribe failed (%s)", e)
                    for g, f in idle.items():
                        self.feeds[g] = f
                        self.by_channel[f.channel] = g

    def _read_all(self) -> None:
        """Read every game again: wake-ups may have been lost."""
        for game_id in list(self.feeds):
            self._read(game_id)

    def _read(self, game_id: str) -> None:
        """Read the game's stream again, with the next batch."""
        self.dirty.add(game_id)
        self.kick.set()

    async def _catch_up(self) -> None:
        """The one reader of streams: every game woken since the last batch, read in one
        pipelined round trip (``XRANGE`` after the oldest cursor of each game's listeners),
        handed out; a game with more than a page left goes into the next batch."""
        outage = _Outage("reading the woken games")
        while not self.closed:
            await self.kick.wait()
            self.kick.clear()
            batch = [(g, f) for g in self.dirty if (f := self.feeds.get(g)) is not None and f.listeners]
            self.dirty = set()
            if not batch:
                continue
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for game_id, feed in batch:
                        cursor = min((listener.cursor for listener in feed.listeners), key=id_key)
                        pipe.xrange(self.keys.events(game_id), min=f"({cursor}", max="+", count=EVENTS_PER_READ)
                    replies = await pipe.execute(raise_on_error=False)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - the connection failed: try the batch again
                outage.failed(e)
                self.dirty.update(g for g, _ in batch)
                await asyncio.sleep(RETRY_SECONDS)
                self.kick.set()
                continue
            self.reads += 1
            outage.over()
            for (game_id, feed), rows in zip(batch, replies, strict=True):
                if isinstance(rows, Exception) or not rows:
                    continue
                deliver([(_text(sid), {_text(k): v for k, v in fields.items()}) for sid, fields in rows],
                         feed.listeners)
                if len(rows) >= EVENTS_PER_READ:
                    self._read(game_id)


@dataclass(eq=False)
class _NodeReader:
    """A cluster node's reader task, and when the node was last heard from (any message,
    a ``PING``'s answer too) and pinged (None: no ``PING`` waits for its answer); ``silent``:
    it answered none, and its games were followed (logged once until it is heard again)."""

    name: str
    task: asyncio.Task[None] = field(init=False)
    heard: float = field(default_factory=time.monotonic)
    pinged: float | None = None
    silent: bool = False


@dataclass
class _Outage:
    """One of the hub's loops that retries every :data:`RETRY_SECONDS` until Redis answers
    (a replica's promotion takes seconds): its first failure is a warning, the tries that
    follow are at debug level, and its end an info line."""

    what: str
    failures: int = 0

    def failed(self, error: Exception) -> None:
        metrics.count_redis_error("hub")
        self.failures += 1
        if self.failures == 1:
            log.warning("event hub: %s failed (%s); trying again every %g s", self.what, error, RETRY_SECONDS)
        else:
            log.debug("event hub: %s failed again (%d tries; %s)", self.what, self.failures, error)

    def over(self) -> None:
        if self.failures:
            log.info("event hub: %s again after %d failed tries", self.what, self.failures)
            self.failures = 0


def deliver(events: list[tuple[str, dict[str, Any]]], listeners: Iterable[Listener]) -> None:
    """Hand each listener the events after its cursor, rendered for its seat (each event
    once per seat: a game's four players and its spectators share the work), and wake it.
    A listener whose next event is not its next version fell behind the trim: it is closed
    (:class:`Listener`), and gets nothing more."""
    rendered: dict[tuple[str, int | None], dict[str, Any]] = {}
    for listener in list(listeners):
        if listener.closed:
            continue
        after = id_key(listener.cursor)
        for event_id, fields in events:
            if id_key(event_id) <= after:
                continue
            version = int(fields["v"])
            if listener.version is not None and version != listener.version + 1:
                listener.closed = True
                break
            body = rendered.get((event_id, listener.seat))
            if body is None:
                body = rendered[(event_id, listener.seat)] = service.render_event(event_id, fields, listener.seat)
            listener.pending.append((event_id, body))
            listener.cursor, listener.version = event_id, version
        if listener.pending or listener.closed:
            listener.wake.set()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def sse_message(event_id: str, kind: str, data: object) -> bytes:
    """One Server-Sent Event (the wire format of every stream)."""
    return b"id: " + event_id.encode() + b"\nevent: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


@dataclass(eq=False)
class Handoff:
    """What the HTTP layer (``web/routes/events.py``, in a worker thread) leaves for the event
    loop (``web/asgi.py``) once a request is checked and must wait: the listener, how long,
    and the stream-limit slot to give back however it ends."""

    kind: str  # "sse" or "poll"
    listener: Listener
    seconds: float  # sse: the stream's longest life; poll: the wait
    ping: float  # sse: a comment this often when nothing happens (dead clients are noticed)
    release: Callable[[], None]
