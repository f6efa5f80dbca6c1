"""Redis on the event loop, for the requests the loop answers itself (:mod:`web.loop_routes`).

One connection per server (per node of a cluster) carries the commands of every request of
the process: a request writes its commands in one go and waits for as many replies, which
the server sends back in order. Requests in flight share the connection's round trips, and
the server's event loop reads many of them at once (with ``appendfsync always`` it fsyncs
once for all the writes it read together). hiredis parses the replies; commands are packed
as on the threads (:func:`service.redis_io.pack`). A pool of connections would take one per
request in flight and lose all of that; redis-py's asyncio client does not share one
connection between concurrent requests.

The connection is made to the server the project's sync client of the same URL talks to
(:func:`service.redis_io.connect`), with its user, password and database; on a cluster the node
of a key's hash slot is read from that sync client's slot table, which its own retries keep
current after a failover. A TLS server (``rediss://``) is not served here: :meth:`AioRedis.of`
returns None and every request takes the threads' path.

Every failure is :class:`Unanswered`, and it says no more than that the commands may or may
not have run: the connection was lost, or a reply was late (the connection is then closed, as
its later replies would answer the wrong requests), or no connection could be made (the next
try waits :data:`RECONNECT_PAUSE_SECONDS`). The caller hands the request to the threads' path,
which reads the game afresh; an error reply (``NOSCRIPT``, ``MOVED`` ...) comes back as a
``redis.ResponseError`` among the replies, as :func:`service.redis_io.send_all` gives it.
"""

from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass, field
from typing import Any

import hiredis
import redis
from redis.cluster import RedisCluster

from service.redis_io import Client, Command, pack

RECONNECT_PAUSE_SECONDS = 0.5  # after a failed connect, requests take the threads' path this long
CONNECT_SECONDS = 2.0
CLIENT_NAME = "canasta-loop"  # in CLIENT LIST: the loop's connection of an API process


class Unanswered(Exception):
    """The commands may or may not have run: no reply came (see the module)."""


@dataclass(frozen=True)
class Address:
    """Where a connection goes and how it logs in: a TCP host and port, or a Unix socket."""

    host: str
    port: int
    path: str | None = None
    username: str | None = None
    password: str | None = None
    db: int = 0

    @property
    def name(self) -> str:
        return self.path or f"{self.host}:{self.port}"


def address_of(pool: Any, host: str | None = None, port: int | None = None) -> Address | None:
    """The :class:`Address` of a sync client's connection pool (a cluster node's: its
    ``host`` and ``port``), or None when this module cannot make such a connection (TLS, a
    credential provider)."""
    if issubclass(pool.connection_class, redis.SSLConnection):
        return None
    kw = pool.connection_kwargs
    if kw.get("credential_provider") is not None:
        return None
    if issubclass(pool.connection_class, redis.UnixDomainSocketConnection):
        return Address("", 0, kw["path"], kw.get("username"), kw.get("password"), int(kw.get("db") or 0))
    return Address(str(host or kw.get("host", "localhost")), int(port or kw.get("port", 6379)), None,
                   kw.get("username"), kw.get("password"), int(kw.get("db") or 0))


@dataclass(eq=False)
class _Waiter:
    future: asyncio.Future[list[Any]]
    count: int
    deadline: float  # the loop's time by which every reply must be in
    replies: list[Any] = field(default_factory=list)


class Connection(asyncio.Protocol):
    """One connection: commands written as they come, replies handed out in order. Replies
    later than ``timeout`` close it: replies come in order, so one timer for the oldest
    request in flight watches them all."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.reader = hiredis.Reader(replyError=redis.ResponseError)
        self.waiting: collections.deque[_Waiter] = collections.deque()
        self.lost = False
        self._watch: asyncio.TimerHandle | None = None
        self._out: list[bytes] = []  # commands of this turn of the loop, written at its end
        self._flush: asyncio.Handle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (by duck typing: uvloop's is not a subclass of asyncio's)
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        try:
            while (reply := self.reader.gets()) is not False:
                waiter = self.waiting[0]
                waiter.replies.append(reply)
                if len(waiter.replies) == waiter.count:
                    self.waiting.popleft()
                    if not waiter.future.done():  # a request that gave up still takes its replies
                        waiter.future.set_result(waiter.replies)
        except (hiredis.ProtocolError, IndexError):  # garbage, or a reply nobody asked for
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(Unanswered(f"the connection to Redis was lost: {exc}"))

    def _fail(self, error: Unanswered) -> None:
        self.lost = True
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        while self.waiting:
            future = self.waiting.popleft().future
            if not future.done():
                future.set_exception(error)

    def send(self, commands: tuple[Command, ...] | list[Command]) -> asyncio.Future[list[Any]]:
        """Write ``commands``; the future of their replies (:class:`Unanswered` when they are
        not all in within ``timeout``, or the connection is lost)."""
        if self.lost or self.transport is None or self.transport.is_closing():
            raise Unanswered("the connection to Redis is closed")
        loop = asyncio.get_running_loop()
        waiter = _Waiter(loop.create_future(), len(commands), loop.time() + self.timeout)
        self.waiting.append(waiter)
        self._out.extend(pack(c) for c in commands)
        if self._flush is None:
            self._flush = loop.call_soon(self._write)
        if self._watch is None:
            self._watch = loop.call_at(waiter.deadline, self._check)
        return waiter.future

    def _write(self) -> None:
        """Every command of the turn in one write: one system call, and the server reads
        them together."""
        self._flush = None
        out, self._out = self._out, []
        if out and self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(out))

    def _check(self) -> None:
        """The oldest request in flight is late: close (its later replies would answer the
        wrong requests); else look again at its deadline."""
        self._watch = None
        if not self.waiting:
            return
        loop = asyncio.get_running_loop()
        oldest = self.waiting[0]
        if loop.time() >= oldest.deadline:
            if self.transport is not None:
                self.transport.close()
            self._fail(Unanswered(f"Redis did not answer within {self.timeout} s"))
            return
        self._watch = loop.call_at(oldest.deadline, self._check)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self._fail(Unanswered("the connection to Redis was closed"))


class AioRedis:
    """The loop's client of the games' Redis: one :class:`Connection` per server, made at the
    first request that needs it."""

    def __init__(self, client: Client, address: Address | None, timeout: float) -> None:
        self.client = client
        self.cluster: RedisCluster | None = client if isinstance(client, RedisCluster) else None
        self.address = address  # one server's; a cluster's nodes are looked up per key
        self.timeout = timeout
        self._connections: dict[str, Connection] = {}
        self._addresses: dict[str, Address] = {}  # a cluster's nodes, by name
        self._connecting: dict[str, asyncio.Future[Connection]] = {}
        self._failed_until: dict[str, float] = {}

    @classmethod
    def of(cls, client: Client, timeout: float) -> AioRedis | None:
        """The loop's client of the sync ``client``'s server(s), or None where this module
        cannot connect as the sync client does (TLS; see the module)."""
        if isinstance(client, RedisCluster):
            node = client.get_default_node()
            pool = client.get_redis_connection(node).connection_pool
            return cls(client, None, timeout) if address_of(pool) is not None else None
        address = address_of(client.connection_pool)
        return cls(client, address, timeout) if address is not None else None

    async def send(self, commands: tuple[Command, ...] | list[Command], key: str) -> list[Any]:
        """``commands`` (all of ``key``'s hash slot) in one round trip to its server; each
        reply in order (an error reply as a ``redis.ResponseError``), or :class:`Unanswered`."""
        connection = await self._connection(self._address(key))
        return await connection.send(commands)

    def _address(self, key: str) -> Address:
        if self.cluster is None:
            assert self.address is not None
            return self.address
        try:
            node = self.cluster.nodes_manager.get_node_from_slot(self.cluster.keyslot(key))
            address = self._addresses.get(node.name)
            if address is None:  # a node's address and login do not change: read once
                address = address_of(self.cluster.get_redis_connection(node).connection_pool, node.host, node.port)
        except (redis.RedisError, AttributeError) as e:  # no node holds the slot now, or not yet a client of it
            raise Unanswered(f"no node of the cluster holds {key!r} now: {e}") from None
        if address is None:  # pragma: no cover - every node is reached as the first one
            raise Unanswered("this node cannot be reached from the event loop")
        self._addresses[node.name] = address
        return address

    async def _connection(self, address: Address) -> Connection:
        name = address.name
        found = self._connections.get(name)
        if found is not None and not found.lost:
            return found
        if time.monotonic() < self._failed_until.get(name, 0.0):
            raise Unanswered(f"Redis at {name} did not accept a connection just now")
        pending = self._connecting.get(name)
        if pending is None:
            pending = self._connecting[name] = asyncio.ensure_future(self._connect(address))
        try:
            return await asyncio.shield(pending)
        finally:
            if pending.done():
                self._connecting.pop(name, None)

    async def _connect(self, address: Address) -> Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                def made() -> Connection:
                    return Connection(self.timeout)

                if address.path is not None:
                    _, connection = await loop.create_unix_connection(made, address.path)
                else:
                    _, connection = await loop.create_connection(made, address.host, address.port)
                hello: list[Command] = []
                if address.password is not None:
                    hello.append(("AUTH", address.username, address.password) if address.username
                                 else ("AUTH", address.password))
                if address.db:
                    hello.append(("SELECT", address.db))
                hello.append(("CLIENT", "SETNAME", CLIENT_NAME))
                for reply in await connection.send(hello):
                    if isinstance(reply, Exception):
                        connection.close()
                        raise Unanswered(f"Redis at {address.name} refused the login: {reply}")
        except (OSError, TimeoutError) as e:
            self._failed_until[address.name] = time.monotonic() + RECONNECT_PAUSE_SECONDS
            raise Unanswered(f"no connection to Redis at {address.name}: {e}") from None
        except Unanswered:
            self._failed_until[address.name] = time.monotonic() + RECONNECT_PAUSE_SECONDS
            raise
        self._connections[address.name] = connection
        return connection

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()
