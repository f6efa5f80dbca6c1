"""Redis commands on the hot paths, without redis-py's per-command layers, and Lua scripts.

The API's store (:class:`api.store.Store`) and the bot worker's lease and queue
(:mod:`worker.lease`, :mod:`api.botqueue`) send their commands here: packed in RESP once
(:func:`pack`), several in one round trip, every reply read in full so that the connection
stays in step for the next command. redis-py's ``execute_command`` checks arguments, runs
observability hooks and response callbacks and checks a connection out of the pool for
every command, which costs more CPU than the command itself; the connection's own retry
policy and exceptions are kept.

A :class:`Script` is run by ``EVALSHA``; when the server has lost it (a restart, ``SCRIPT
FLUSH``) the NOSCRIPT reply makes :func:`with_scripts` load it and send the commands again.
"""

from __future__ import annotations

import hashlib
import importlib.resources
from collections.abc import Callable, Sequence
from typing import Any, cast

import redis

Command = tuple[Any, ...]


def bytes_list(reply: Sequence[bytes | str]) -> list[bytes]:
    """A list reply (LRANGE) of our clients. redis-py types such replies for both of its modes,
    str with decode_responses and bytes without; ours never decode (:func:`api.store.connect`),
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
        return cls(importlib.resources.files("api").joinpath(name).read_text("utf-8"))

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


def with_scripts(client: redis.Redis, scripts: tuple[Script, ...], send: Callable[[], list[Any]]) -> list[Any]:
    """``send()``'s replies; when a script among them was unknown to the server (NOSCRIPT),
    ``scripts`` are loaded and everything is sent once more (so the commands sent with
    scripts must be idempotent, or scripts themselves)."""
    replies = send()
    if scripts and any(isinstance(r, redis.exceptions.NoScriptError) for r in replies):
        for script in scripts:
            client.script_load(script.source)
        replies = send()
    return replies


def raise_first_error(replies: list[Any]) -> list[Any]:
    """The replies, unless one is an error reply: then that error is raised."""
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def execute(client: redis.Redis, *commands: Command, scripts: tuple[Script, ...] = ()) -> list[Any]:
    """``commands`` in one round trip (pipelined, no MULTI) on a connection of the client's
    pool; the raw replies, in order. An error reply raises (after every reply was read); a
    NOSCRIPT reply loads ``scripts`` and sends everything again."""
    pool = client.connection_pool
    conn = pool.get_connection()
    try:
        return raise_first_error(with_scripts(client, scripts, lambda: send_all(conn, commands)))
    finally:
        try:
            if conn.should_reconnect():
                conn.disconnect()
                conn.connect()
        finally:
            pool.release(conn)
