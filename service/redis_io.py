"""Redis commands on the hot paths, without redis-py's per-command layers, and Lua scripts.

The API's store (:class:`service.store.Store`) and the bot worker's lease and queue
(:mod:`worker.lease`, :mod:`service.botqueue`) send their commands here: packed in RESP once
(:func:`pack`), several in one round trip, every reply read in full so that the connection
stays in step for the next command. redis-py's ``execute_command`` checks arguments, runs
observability hooks and response callbacks and checks a connection out of the pool for
every command, which costs more CPU than the command itself; the connection's own retry
policy and exceptions are kept.

A :class:`Script` is run by ``EVALSHA``; when the server has lost it (a restart, ``SCRIPT
FLUSH``) the NOSCRIPT reply makes :func:`with_scripts` load it and send the commands again.

Every Redis client of the project is made here (:func:`connect`): ``REDIS_URL`` names one
server (``redis://``, ``rediss://``, ``unix://``) or a Redis Cluster (``redis+cluster://host:port``,
``rediss+cluster://`` for TLS; any node: the others are discovered). On a cluster, commands
sent here go to the node that holds their first key's hash slot (:class:`Router`): every
key of one call must share that slot (a game's keys share its ``{game id}`` hash tag), and a
redirection (``MOVED`` after a failover), a lost node or ``CLUSTERDOWN`` makes the router
re-read the cluster's slot table and send the call again for a few seconds.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeGuard, cast
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.cluster import RedisCluster
from redis.exceptions import AskError, ClusterDownError, MovedError, TryAgainError

Command = tuple[Any, ...]
Client = redis.Redis | RedisCluster

# the schemes of a cluster's URL, and the scheme redis-py reads for the node named in it
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
HEALTH_CHECK_SECONDS = 30  # a connection idle this long is pinged before its next command
CONNECT_TIMEOUT_SECONDS = 5
REPLY_MARGIN_SECONDS = 10  # a socket waits this much longer than the longest blocking read
# a cluster call that meets a failover (a lost node, MOVED, CLUSTERDOWN) is sent again after
# these pauses (s): together longer than a replica's promotion (cluster-node-timeout + ~1 s)
CLUSTER_RETRY_PAUSES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
_REDIRECTS = (MovedError, AskError, ClusterDownError, TryAgainError)


@dataclass(frozen=True)
class RedisUrl:
    """A parsed ``REDIS_URL``: the URL redis-py reads, and whether it names a cluster."""

    url: str
    cluster: bool


def parse_url(url: str) -> RedisUrl:
    """``redis+cluster://host:port`` (or ``rediss+cluster://``): a cluster, reached through
    that node; any other URL: one server. A cluster has no database numbers: a path other
    than ``/0`` is refused (ValueError)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in CLUSTER_SCHEMES:
        return RedisUrl(url.strip(), False)
    if parts.path.strip("/") not in ("", "0"):
        raise ValueError(f"a Redis Cluster has only database 0: {scheme}://...{parts.path} names another")
    if not parts.hostname:
        raise ValueError(f"{scheme}:// needs a node's host:port")
    return RedisUrl(urlunsplit((CLUSTER_SCHEMES[scheme], parts.netloc, "", parts.query, "")), True)


def is_cluster_url(url: str) -> bool:
    return parse_url(url).cluster


def connect(url: str, max_block_seconds: float = 30.0) -> Client:
    """The one way a process makes a client of ``url`` (:func:`parse_url`): a ``redis.Redis``
    or a ``RedisCluster``, bytes replies (RQ shares them). Its socket timeout outlasts by
    :data:`REPLY_MARGIN_SECONDS` the longest wait the caller's commands ask the server for
    (``XREAD BLOCK``, ``WAITAOF``): no longer, since a node that went silent holds a request
    up that long before it is sent elsewhere."""
    target = parse_url(url)
    options: dict[str, Any] = {"decode_responses": False, "health_check_interval": HEALTH_CHECK_SECONDS,
                               "socket_connect_timeout": CONNECT_TIMEOUT_SECONDS,
                               "socket_timeout": max_block_seconds + REPLY_MARGIN_SECONDS}
    if target.cluster:
        return RedisCluster.from_url(target.url, **options)
    return redis.Redis.from_url(target.url, **options)


def is_cluster(client: Any) -> TypeGuard[RedisCluster]:
    return isinstance(client, RedisCluster)


def bytes_list(reply: Sequence[bytes | str]) -> list[bytes]:
    """A list reply (LRANGE) of our clients. redis-py types such replies for both of its modes,
    str with decode_responses and bytes without; ours never decode (:func:`service.store.connect`),
    so the items are bytes. The one place that tells the type checker so."""
    return cast(list[bytes], reply)


def pack(args: Command) -> bytes:
    """One command in RESP (str as UTF-8, int as decimal, bytes as they are)."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if type(a) is not bytes:  # bytes-like values go as they are
            if isinstance(a, str):
                a = a.encode()
            elif isinstance(a, int):
                a = b"%d" % a
        out.append(b"$%d\r\n%b\r\n" % (len(a), a))
    return b"".join(out)


class Script:
    """A Lua script run by ``EVALSHA`` (:meth:`command`), loaded again when the server has lost it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    @classmethod
    def packaged(cls, name: str) -> Script:
        """A script shipped beside this module (``commit.lua``, ...)."""
        return cls(importlib.resources.files("service").joinpath(name).read_text("utf-8"))

    def command(self, keys: list[str], args: list[Any]) -> Command:
        return ("EVALSHA", self.sha, len(keys), *keys, *args)


def send(conn: Any, command: Command) -> Any:
    """One command on ``conn``, with its retry policy; its raw reply (an error reply raises)."""
    packed = [pack(command)]

    def send_read() -> Any:
        conn.send_packed_command(packed)
        return conn.read_response()

    return conn.retry.call_with_retry(send_read, lambda _error: conn.disconnect())


def send_all(conn: Any, commands: tuple[Command, ...] | list[Command]) -> list[Any]:
    """``commands`` in one round trip on ``conn``, with its retry policy (a failed try
    disconnects, the next one reconnects); each raw reply in order, or the ResponseError
    the server answered it with (every reply is read, so the connection stays in step)."""
    packed = [b"".join(pack(c) for c in commands)]

    def send_read() -> list[Any]:
        conn.send_packed_command(packed)
        replies: list[Any] = []
        for _ in commands:
            try:
                replies.append(conn.read_response())
            except redis.ResponseError as e:  # the whole reply was read: the next one follows
                replies.append(e)
        return replies

    result: list[Any] = conn.retry.call_with_retry(send_read, lambda _error: conn.disconnect())
    return result


def load_script(conn: Any, source: str) -> Any:
    """Load a script's ``source`` on the server of ``conn`` (its SHA1 is the reply)."""
    return send(conn, ("SCRIPT", "LOAD", source))


def with_scripts(load: Callable[[str], Any], scripts: tuple[Script, ...], send: Callable[[], list[Any]]) -> list[Any]:
    """``send()``'s replies; when a script among them was unknown to the server (NOSCRIPT),
    ``scripts`` are loaded (``load(source)``, on the server that answered) and everything is
    sent once more (so the commands sent with scripts must be idempotent, or scripts themselves)."""
    replies = send()
    if scripts and any(isinstance(r, redis.exceptions.NoScriptError) for r in replies):
        for script in scripts:
            load(script.source)
        replies = send()
    return replies


def raise_first_error(replies: list[Any]) -> list[Any]:
    """The replies, unless one is an error reply: then that error is raised."""
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def first_key(command: Command) -> Any:
    """The key a command is routed by: the first of a script's ``KEYS``, else its first
    argument (None for a command without one, such as ``TIME``)."""
    if command[0] in ("EVALSHA", "EVAL"):
        return command[3] if int(command[2]) > 0 else None
    return command[1] if len(command) > 1 else None


class Router:
    """This process's connections to one client's server(s), one per thread (and per node of
    a cluster), made by the client's pools with their settings: no pool checkout (a lock and
    a poll of the socket) per call. :meth:`send` sends commands in one round trip on the
    connection of their key's node; on a cluster it follows a failover (see the module)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.cluster = is_cluster(client)
        self._local = threading.local()

    def connection(self, key: Any) -> Any:
        """This thread's connection to the node of ``key`` (None: any node of a cluster)."""
        client = self.client
        if not isinstance(client, RedisCluster):  # the hot path of one server: no key to look at
            conn = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = client.connection_pool.make_connection()
            if conn.should_reconnect():
                conn.disconnect()
            return conn
        conns: dict[str, Any] | None = getattr(self._local, "conns", None)
        if conns is None:
            conns = self._local.conns = {}
        node = (client.nodes_manager.get_node_from_slot(client.keyslot(key)) if key is not None
                else client.get_primaries()[0])
        name, pool = node.name, client.get_redis_connection(node).connection_pool
        conn = conns.get(name)
        if conn is None:
            conn = conns[name] = pool.make_connection()
        if conn.should_reconnect():
            conn.disconnect()
        return conn

    def send(self, commands: tuple[Command, ...] | list[Command], scripts: tuple[Script, ...] = (),
             key: Any = None) -> list[Any]:
        """``commands`` (all in one hash slot on a cluster: ``key``'s, default the first key
        of the commands) in one round trip; each raw reply, or the ResponseError it was
        answered with (NOSCRIPT: ``scripts`` are loaded on that server and the commands sent again)."""
        if not self.cluster:
            conn = self.connection(None)
            if not scripts:
                return send_all(conn, commands)
            return with_scripts(partial(load_script, conn), scripts, partial(send_all, conn, commands))
        if key is None:
            key = next((k for k in map(first_key, commands) if k is not None), None)
        for pause in (*CLUSTER_RETRY_PAUSES, None):
            try:
                conn = self.connection(key)
                replies = with_scripts(partial(load_script, conn), scripts, partial(send_all, conn, commands))
            except (redis.ConnectionError, redis.TimeoutError, redis.exceptions.SlotNotCoveredError):
                if pause is None:
                    raise
            else:
                if pause is None or not any(isinstance(r, _REDIRECTS) for r in replies):
                    return replies
            self._refresh(pause)
        raise AssertionError("unreachable")  # pragma: no cover

    def _refresh(self, pause: float) -> None:
        """Forget this thread's connections and re-read the cluster's slot table after ``pause``."""
        for conn in getattr(self._local, "conns", {}).values():
            conn.disconnect()
        self._local.conns = {}
        time.sleep(pause)
        try:
            if isinstance(self.client, RedisCluster):  # only a cluster's connections are refreshed
                self.client.nodes_manager.initialize()
        except (redis.RedisError, OSError):
            pass  # no node answers yet: the next try asks again


_routers: weakref.WeakKeyDictionary[Any, Router] = weakref.WeakKeyDictionary()
_routers_lock = threading.Lock()


def router(client: Client) -> Router:
    """The :class:`Router` of ``client`` (one per client object)."""
    found = _routers.get(client)
    if found is None:
        with _routers_lock:
            found = _routers.get(client)
            if found is None:
                found = _routers[client] = Router(client)
    return found


_games_of: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def pair(queue: Any, games: Any) -> Any:
    """Say that the games of the bot queue on ``queue`` live on ``games`` (a cluster, or
    another server: :mod:`service.botqueue`); returns ``queue``."""
    if games is not queue:
        _games_of[queue] = games
    return queue


def games_of(queue: Any) -> Any:
    """The games' client paired with the queue's client ``queue`` (itself when unpaired)."""
    return _games_of.get(queue, queue)


def execute(client: Client, *commands: Command, scripts: tuple[Script, ...] = ()) -> list[Any]:
    """``commands`` (one hash slot on a cluster) in one round trip (pipelined, no MULTI) on
    this thread's connection (:class:`Router`); the raw replies, in order. An error reply
    raises (after every reply was read); a NOSCRIPT reply loads ``scripts`` and sends
    everything again."""
    return raise_first_error(router(client).send(commands, scripts))
