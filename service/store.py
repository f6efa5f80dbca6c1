"""Redis storage of games: one hash, one stream and one list per game, written only by
the ``commit.lua`` compare-and-set."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson
import redis
from redis.crc import key_slot

from service import logcodec
from service.keys import Keys
from service.redis_io import (
    Client,
    Command,
    Script,
    bytes_list,
    connect,
    is_cluster,
    pair,
    raise_first_error,
    router,
    send,
)

STREAM_ID_RE = re.compile(r"^[0-9]{1,20}-[0-9]{1,20}$")  # ASCII: \d takes any script's digits, Redis does not
STREAM_ID_PART_MAX = 2**64 - 1  # Redis stream ids are two unsigned 64-bit numbers
LAST_STREAM_ID = f"{STREAM_ID_PART_MAX}-{STREAM_ID_PART_MAX}"


def is_stream_id(text: str) -> bool:
    """``<ms>-<seq>`` as Redis reads it: 20 digits can still overflow 64 bits, and Redis
    answers such an id with an error (a reader's 500 unless refused here)."""
    if not STREAM_ID_RE.match(text):
        return False
    ms, _, seq = text.partition("-")
    return int(ms) <= STREAM_ID_PART_MAX and int(seq) <= STREAM_ID_PART_MAX


COMMIT = Script.packaged("commit.lua")  # the compare-and-set of every change
COMPACT = Script.packaged("compact.lua")  # the fold of old log lines into a chunk
RATE_LIMIT = Script.packaged("ratelimit.lua")  # every counter of a request in one call


EVENTS_PER_READ = 500  # events a read returns at most (a reader asks again for more)
SCAN_COUNT = 1000  # keys a SCAN step looks at
DELETE_BATCH = 500  # keys per DEL


__all__ = ["Commit", "Event", "NotDurable", "Record", "Store", "connect", "is_stream_id"]


@dataclass(frozen=True)
class Record:
    """What the state hash holds: the version, the game's metadata (JSON) and the engine
    state (JSON). Both stay bytes until asked for: a process that has seen this version
    already holds them parsed (:class:`service.games.GameCache`). ``turn_at``: the Redis
    server's time (ms) since when the seat to act has been to act (``commit.lua``).
    ``commit_id``: the id of the commit that made this version (its event's id; None for
    a game last changed before commits had ids): a version that a store lost and made
    again has another."""

    version: int
    meta_json: bytes
    state: bytes | None
    turn_at: int | None = None
    commit_id: bytes | None = None

    @cached_property
    def meta(self) -> dict[str, Any]:
        return orjson.loads(self.meta_json)


@dataclass(frozen=True)
class Commit:
    """The outcome of a compare-and-set: ``ok`` (version, event_id), ``stale`` (version) or
    ``replay`` (record)."""

    outcome: str
    version: int = 0
    event_id: str = ""
    record: bytes = b""
    log_plain: int = 0  # plain lines at the log's end (``ok`` only)
    log_chunks: int = 0  # chunks in front of them


@dataclass(frozen=True)
class Event:
    id: str
    fields: dict[str, bytes]


@dataclass(frozen=True)
class Snapshot:
    """A game read at one moment (:meth:`Store.snapshot_after`): its record (None: no such
    game), the id of its last event, and for a reader after a given id, the id and version
    of the oldest event the stream still holds and the events after that id."""

    record: Record | None
    last_id: str
    first: tuple[str, int] | None = None
    after: list[Event] = field(default_factory=list)


RECORD_FIELDS = ("version", "meta", "state", "turn_at", "cid")  # a game's state hash, as read


def record_of(fields: Sequence[Any]) -> Record | None:
    """The :class:`Record` of an ``HMGET`` of :data:`RECORD_FIELDS` (None: no such game)."""
    version, meta, state, turn_at, cid = fields
    if version is None or meta is None:
        return None
    return Record(int(version), meta, state, int(turn_at) if turn_at is not None else None, cid)


class NotDurable(Exception):
    """The server did not confirm that a write reaches its disk: the change may or may not be
    kept. Answered 503: the client retries with the same Idempotency-Key.

    ``reply``: the write's own reply when the server made it but did not confirm it (None:
    not made, or not known); ``commit``: that reply read as a compare-and-set's outcome."""

    def __init__(self, message: str, reply: Any = None) -> None:
        super().__init__(message)
        self.reply = reply
        self.commit: Commit | None = None


FSYNC_CHECK_SECONDS = 5.0  # how long a check that the server fsyncs before replying holds


class Store:
    """All Redis access of the API; holds no game state itself.

    ``durability`` (:mod:`service.durability`): a change is committed only when it will be on the
    server's disk before the commit returns, else :class:`NotDurable`:

    * ``fsync``: the server is checked (every few seconds) to run the append-only file with
      ``appendfsync always``: it fsyncs every write before it replies, so what it answers
      (and whatever anyone reads) is on its disk; an fsync that fails stops the server;
    * ``waitaof``: every commit, and every replayed Idempotency-Key answer, is followed by
      ``WAITAOF 1 0 <durable_timeout_ms>`` in the same round trip, on the same connection;
    * ``off``: nothing is checked.

    ``replicas`` (``CANASTA_DURABILITY_REPLICAS``, for a cluster or a server with replicas
    that may take over): the confirmation also waits for that many replicas of the game's
    node to have the change on their disk (``WAIT <replicas>``, then ``WAITAOF <local>
    <replicas>``: :func:`_confirmation` says why both; ``WAIT`` alone with ``off``), so a primary killed after its answer loses nothing its replica does not have.
    On a cluster every command of a game goes to the node that holds the game's hash slot,
    and the confirmation with it, on the same connection (:class:`service.redis_io.Router`).

    ``queue``: the Redis of the bot queue (RQ, the awaiting set); the games' own by default.
    ``blocking``: makes the client of the blocking reads (``XREAD BLOCK``, :meth:`wait_events`),
    whose socket timeout must outlast the longest of them, at the first such read (served
    under granian, the API never makes one); ``client`` serves them by default. With one of
    their own, ``client``'s timeout can be short, so that a request to a node that went
    silent fails (and is sent to the new primary) sooner.
    """

    def __init__(self, client: Client, prefix: str = "canasta", *, durability: str = "fsync",
                 durable_timeout_ms: int = 1000, replicas: int = 0, queue: Client | None = None,
                 blocking: Callable[[], Client] | None = None) -> None:
        self.redis = client
        self._make_blocking = blocking
        self.queue = pair(client if queue is None else queue, client)
        self.cluster = is_cluster(client)
        self.keys = Keys(prefix)
        self.durability = durability
        self.replicas = int(replicas)
        self.durable_timeout_ms = int(durable_timeout_ms)
        self._confirm = _confirmation(durability, self.replicas, self.durable_timeout_ms)
        self._confirm_local = 1 if durability == "waitaof" else 0  # WAITAOF's own fsync, when asked
        self._fsync_ok_until = 0.0
        self._fsync_refused: tuple[float, str] = (0.0, "")
        self._router = router(client)

    @classmethod
    def for_settings(cls, client: Client, settings: Any, queue: Client | None = None,
                     blocking: Callable[[], Client] | None = None) -> Store:
        """The store an API process or a bot worker uses (``service.config.Settings``)."""
        return cls(client, settings.key_prefix, durability=settings.durability,
                   durable_timeout_ms=settings.durability_timeout_ms, replicas=settings.durability_replicas,
                   queue=queue, blocking=blocking)

    @cached_property
    def blocking(self) -> Client:
        """The client of the blocking reads (see the class)."""
        return self.redis if self._make_blocking is None else self._make_blocking()

    def check_fsync(self) -> None:
        """:class:`NotDurable` unless the server fsyncs every write before it replies (asked
        at most every few seconds; a refusal is remembered for a second)."""
        now = time.monotonic()
        if now < self._fsync_ok_until:
            return
        until, why = self._fsync_refused
        if now < until:
            raise NotDurable(why)
        from service.durability import check_all

        try:
            found = check_all(self.redis)  # a server that is down raises ConnectionError: 503 as such
        except redis.ResponseError as e:
            raise NotDurable(f"cannot ask the server how it persists writes ({e}); with a server that "
                             "refuses INFO or CONFIG, use CANASTA_DURABILITY=waitaof") from None
        if found.fsyncs_before_reply:
            self._fsync_ok_until = now + FSYNC_CHECK_SECONDS
            return
        why = (f"the server does not fsync every write before it replies (append-only file "
               f"{'on' if found.aof else 'off'}, appendfsync {found.appendfsync})")
        self._fsync_refused = (now + 1.0, why)
        raise NotDurable(why)

    # -- the hot path ---------------------------------------------------------------------
    def execute(self, *args: Any) -> Any:
        """One command (:mod:`service.redis_io`: the client's retry and exceptions without its
        per-command layers) on this thread's own connection to the node of its key, made by
        the client's pool with its settings: no pool checkout (a lock and a poll of the
        socket) per command. The reply is the parser's raw reply (bytes, lists, None)."""
        if not self.cluster:  # one command and its reply, as lean as it gets
            return send(self._router.connection(None), args)
        return raise_first_error(self._router.send((args,)))[0]

    def execute_all(self, *commands: Command, scripts: tuple[Script, ...] = (), key: str | None = None) -> list[Any]:
        """Several commands (one hash slot) in one round trip on this thread's connection
        (as :meth:`execute`; ``key``: the node of this key, else of the first command's);
        each reply in order, or the ResponseError it was answered with."""
        return self._router.send(commands, scripts, key=key)

    def _script(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        (reply,) = raise_first_error(self.execute_all(script.command(keys, args), scripts=(script,)))
        return reply

    def _durably(self, command: Command, needed: Any = None, scripts: tuple[Script, ...] = ()) -> Any:
        """``command`` (a write), then the confirmation (``WAITAOF`` or ``WAIT``) in the same
        round trip: its reply once the server (and ``replicas``) have its effect on disk;
        :class:`NotDurable` when that is not confirmed. ``needed(reply)``: whether this reply
        needs the confirmation (default: always)."""
        assert self._confirm is not None
        return self.confirmed(self.execute_all(command, *self._confirm, scripts=scripts), needed)

    def confirmed(self, replies: list[Any], needed: Any = None) -> Any:
        """The write's reply of ``replies`` (a write and then :attr:`confirmation`, sent in one
        round trip), or :class:`NotDurable` when the confirmation does not hold (above)."""
        reply, *_, confirmed = replies
        if isinstance(reply, Exception):
            raise reply
        if needed is not None and not needed(reply):
            return reply
        if isinstance(confirmed, Exception):
            raise NotDurable(f"the server cannot confirm writes on disk: {confirmed}", reply)
        local, replicas = (int(confirmed[0]), int(confirmed[1])) if isinstance(confirmed, list) else (1, int(confirmed))
        if local < self._confirm_local or replicas < self.replicas:
            raise NotDurable(f"the server did not confirm the write on disk within {self.durable_timeout_ms} ms "
                             f"(local {local}, replicas {replicas} of {self.replicas})", reply)
        return reply

    @property
    def confirmation(self) -> tuple[Command, ...]:
        """The commands that follow each write in its round trip to confirm it on disk (none
        with ``fsync`` on one server, or ``off``: :func:`_confirmation`)."""
        return self._confirm or ()

    # -- reads ---------------------------------------------------------------------------
    def load(self, game_id: str) -> Record | None:
        return record_of(self.execute(*self.load_command(game_id)))

    def load_command(self, game_id: str) -> Command:
        """The read of a game's record (:func:`record_of` reads its reply)."""
        return ("HMGET", self.keys.state(game_id), *RECORD_FIELDS)

    def server_time_ms(self, game_id: str) -> int:
        """The clock (TIME) of the Redis server that holds the game, the one its ``turn_at``
        is read from: every API process compares against the same clock, whatever its own says."""
        (seconds, micros), = raise_first_error(self.execute_all(("TIME",), key=self.keys.state(game_id)))
        return int(seconds) * 1000 + int(micros) // 1000

    def snapshot(self, game_id: str) -> tuple[Record | None, str]:
        """The record and the id of the last event, read atomically (MULTI, on the game's node)."""
        found = self.snapshot_after(game_id, None)
        return found.record, found.last_id

    def snapshot_after(self, game_id: str, after: str | None, count: int = EVENTS_PER_READ) -> Snapshot:
        """:meth:`snapshot`, and with ``after`` also the oldest event the stream holds and
        the events after ``after``: a long-poll's every read in one round trip."""
        events_key = self.keys.events(game_id)
        reads: list[tuple[Any, ...]] = [("HMGET", self.keys.state(game_id), "version", "meta", "state", "cid"),
                                        ("XREVRANGE", events_key, "+", "-", "COUNT", 1)]
        if after is not None:
            reads.append(("XRANGE", events_key, "-", "+", "COUNT", 1))
            if after != LAST_STREAM_ID:  # nothing can follow it (and Redis refuses "(" + it)
                reads.append(("XRANGE", events_key, f"({after}", "+", "COUNT", count))
        replies = raise_first_error(self.execute_all(("MULTI",), *reads, ("EXEC",)))[-1]
        (version, meta, state, cid), last = replies[0], replies[1]
        if version is None or meta is None:
            return Snapshot(None, "0-0")
        first = None
        if after is not None and replies[2]:
            oldest = _event(replies[2][0])
            first = oldest.id, int(oldest.fields["v"])
        return Snapshot(Record(int(version), meta, state, commit_id=cid), _s(last[0][0]) if last else "0-0", first,
                        [_event(r) for r in replies[3] or ()] if len(replies) > 3 else [])

    def get_idempotency(self, game_id: str, seat: int, key: str, ttl: int) -> bytes | None:
        """The stored answer of an Idempotency-Key (its expiry restarts: ``ttl`` seconds).
        A replayed answer is durable too: with ``fsync``, what the server answers is on its
        disk; with ``waitaof``, renewing the expiry is a write, and the ``WAITAOF`` behind it
        confirms that it, and so the record written before it, is on disk."""
        command = ("GETEX", self.keys.idem(game_id, seat, key), "EX", int(ttl))
        if self._confirm is None:
            record = self.execute(*command)
            if record is not None and self.durability == "fsync":
                self.check_fsync()  # what such a server answers is on its disk
            return record
        return self._durably(command, needed=lambda record: record is not None)  # no record: nothing to confirm

    def cached_hint(self, game_id: str, version: int, seat: int, bot: str) -> bytes | None:
        return self.execute("GET", self.keys.hint(game_id, version, seat, bot))

    def cache_hint(self, game_id: str, version: int, seat: int, bot: str, answer: bytes, ttl: int) -> None:
        self.execute("SET", self.keys.hint(game_id, version, seat, bot), answer, "EX", int(ttl), "NX")

    def events_after(self, game_id: str, after: str, count: int = EVENTS_PER_READ) -> list[Event]:
        """Events with ids strictly after ``after`` (oldest first)."""
        if after == LAST_STREAM_ID:  # nothing can follow it (and Redis refuses "(" + it)
            return []
        rows = self.redis.xrange(self.keys.events(game_id), min=f"({after}", max="+", count=count)
        return [_event(r) for r in rows or ()]

    def wait_events(self, game_id: str, after: str, timeout_ms: int, count: int = EVENTS_PER_READ) -> list[Event]:
        """Block until events after ``after`` exist (or the timeout passes)."""
        if timeout_ms <= 0:
            return self.events_after(game_id, after, count)
        reply: Any = self.blocking.xread({self.keys.events(game_id): after}, count=count, block=timeout_ms)
        if not reply:
            return []
        if isinstance(reply, dict):  # RESP3
            rows = next(iter(reply.values()))
            if len(rows) == 1 and rows[0] and isinstance(rows[0][0], tuple | list):
                rows = rows[0]
        else:  # RESP2: [[stream, rows]]
            rows = reply[0][1]
        return [_event(r) for r in rows]

    def event_count(self, game_id: str) -> int:
        """Events ever added to the game's stream (trimmed ones included; Redis >= 7)."""
        try:
            info = self.redis.xinfo_stream(self.keys.events(game_id))
        except redis.ResponseError:  # no such stream
            return 0
        return int(info["entries-added"])

    def read_log(self, game_id: str) -> list[bytes]:
        """The game log's lines (chunks expanded: :mod:`service.logcodec`)."""
        return logcodec.expand(bytes_list(self.redis.lrange(self.keys.log(game_id), 0, -1)))

    def ping(self) -> bool:
        return bool(self.redis.ping())

    # -- the one write -------------------------------------------------------------------
    def commit(self, game_id: str, expected_version: int, **change: Any) -> Commit:
        """Compare-and-set: write everything if the version is still ``expected_version``
        (and, when given, made by the commit ``expected_commit_id``: :class:`Record`). The
        change's fields are :meth:`commit_commands`' (meta, state, event, log lines, ttl,
        idem, events_keep, turn_clock, expected_commit_id)."""
        commands = self.commit_commands(game_id, expected_version, **change)
        if self.durability == "fsync":
            self.check_fsync()
        return self.commit_outcome(self.execute_all(*commands, scripts=(COMMIT,)))

    def commit_commands(
        self,
        game_id: str,
        expected_version: int,
        *,
        meta: dict[str, Any] | None,
        state: bytes | None,
        event: dict[str, bytes],
        log_lines: list[bytes],
        ttl: int,
        idem: tuple[int, str, bytes, int] | None = None,
        events_keep: int = 0,
        turn_clock: bool = False,
        expected_commit_id: bytes | None = None,
    ) -> tuple[Command, ...]:
        """The round trip of :meth:`commit`: the compare-and-set script's call, then the
        durability confirmation (:attr:`confirmation`). :meth:`commit_outcome` reads the
        replies; both are shared with the event loop's move route (``web.loop_routes``).

        ``idem`` is (seat, key, record, ttl): the response stored for an Idempotency-Key.
        ``events_keep``: trim the event stream to about that many entries (0: keep all).
        ``turn_clock``: the seat to act starts (or restarts) waiting now (``turn_at``)."""
        k = self.keys
        keys = [k.state(game_id), k.events(game_id), k.log(game_id)]
        record, idem_ttl = b"", 0
        if idem is not None:
            seat, key, record, idem_ttl = idem
            keys.append(k.idem(game_id, seat, key))
        args: list[Any] = [
            str(expected_version),
            orjson.dumps(meta) if meta is not None else b"",
            state if state is not None else b"",
            int(ttl),
            record,
            int(idem_ttl),
            k.wake(game_id),
            int(events_keep),
            b"1" if turn_clock else b"0",
            expected_commit_id or b"",
            len(event),
        ]
        for name, value in event.items():
            args += [name, value]
        args += log_lines
        return (COMMIT.command(keys, args), *self.confirmation)

    def commit_outcome(self, replies: list[Any]) -> Commit:
        """The :class:`Commit` of :meth:`commit_commands`' replies; :class:`NotDurable` when the
        change is not confirmed on disk (``e.commit``: its outcome when it was made), and the
        script's error reply raised as it came."""
        if not self.confirmation:
            return _commit_outcome(raise_first_error(replies[:1])[0])
        try:
            reply = self.confirmed(replies)
        except NotDurable as e:
            if e.reply is not None:
                e.commit = _commit_outcome(e.reply)  # made, unconfirmed: the caller may act on it
            raise
        return _commit_outcome(reply)

    def fsync_known(self) -> bool:
        """Whether the last check that the server fsyncs before it replies still holds
        (``fsync`` mode; :meth:`check_fsync` asks again when it does not)."""
        return time.monotonic() < self._fsync_ok_until

    def compact_log(self, game_id: str, chunks: int) -> bool:
        """Fold the oldest ``logcodec.CHUNK`` plain lines of the log into one chunk;
        ``chunks`` is the count the last commit reported. False when another process did
        it first (or the log changed shape): nothing is written then."""
        key = self.keys.log(game_id)
        lines = self.execute("LRANGE", key, chunks, chunks + logcodec.CHUNK - 1)
        if len(lines) < logcodec.CHUNK or any(logcodec.is_chunk(line) for line in lines):
            return False
        keys = [self.keys.state(game_id), key]
        return bool(self._script(COMPACT, keys, [chunks, logcodec.CHUNK, logcodec.pack(lines)]))

    # -- rate limits ---------------------------------------------------------------------
    def rate_limit(self, counters: list[tuple[str, str, int]], window_s: int) -> int:
        """Count one request on each (kind, ident, limit); the ms to wait if any is over.

        The counters of one identity share a hash slot (:meth:`service.keys.Keys.rate`); on a
        cluster the counters of each slot are counted by one script call on their node (one
        slot for every counter would make one node count every request), on one server all
        of them in one call."""
        wait = 0
        for command in self.rate_limit_commands(counters, window_s):
            (reply,) = raise_first_error(self.execute_all(command, scripts=(RATE_LIMIT,)))
            wait = max(wait, int(reply))
        return wait

    def rate_limit_commands(self, counters: list[tuple[str, str, int]], window_s: int) -> list[Command]:
        """The script calls of :meth:`rate_limit`, one per hash slot on a cluster (each goes to
        its own node; every reply is the ms to wait, 0 within the limits)."""
        groups: dict[int, list[tuple[str, int]]] = {}
        for kind, ident, limit in counters:
            key = self.keys.rate(kind, ident, window_s)
            groups.setdefault(key_slot(key.encode()) if self.cluster else 0, []).append((key, limit))
        return [RATE_LIMIT.command([k for k, _ in group], [window_s * 1000, *(lim for _, lim in group)])
                for group in groups.values()]

    # -- maintenance (tests, benchmarks) ------------------------------------------------
    def delete_all(self) -> int:
        """Delete every key under this prefix (tests use their own prefix)."""
        deleted = 0
        batch: list[bytes] = []
        for key in self.redis.scan_iter(match=self.keys.all_pattern(), count=SCAN_COUNT):
            batch.append(key)
            if len(batch) >= DELETE_BATCH:
                deleted += self.redis.delete(*batch)
                batch = []
        if batch:
            deleted += self.redis.delete(*batch)
        return deleted

    def memory_of_game(self, game_id: str) -> int:
        k = self.keys
        total = 0
        for key in (k.state(game_id), k.events(game_id), k.log(game_id)):
            total += int(self.redis.memory_usage(key, samples=0) or 0)
        return total


def _confirmation(durability: str, replicas: int, timeout_ms: int) -> tuple[Command, ...] | None:
    """The commands that follow each commit (the last one's reply confirms it), or None:
    ``WAITAOF 1 <replicas>`` with ``waitaof``; ``WAITAOF 0 <replicas>`` with ``fsync`` and
    replicas (the server itself fsyncs before it replies); ``WAIT <replicas>`` with ``off``
    and replicas.

    A ``WAITAOF`` for replicas comes after a ``WAIT`` for them, each with half the timeout: a
    replica answers the primary's request for its offsets when it reads the request, which
    comes with the write itself, before it has fsynced the write; its next report is a second
    later. So ``WAITAOF 0 1`` alone took 1 000 ms a commit (measured on the local cluster);
    after ``WAIT`` (the write reached the replica) the ``WAITAOF``'s own request finds it on
    the replica's disk: 6 ms."""
    if durability == "waitaof" and replicas <= 0:
        return (("WAITAOF", 1, 0, timeout_ms),)
    if replicas <= 0:
        return None
    if durability == "off":
        return (("WAIT", replicas, timeout_ms),)
    half = max(1, timeout_ms // 2)
    return ("WAIT", replicas, half), ("WAITAOF", 1 if durability == "waitaof" else 0, replicas, timeout_ms - half)


def _commit_outcome(reply: Any) -> Commit:
    """``commit.lua``'s reply as a :class:`Commit`."""
    outcome = _s(reply[0])
    if outcome == "ok":
        return Commit("ok", int(reply[1]), _s(reply[2]), log_plain=int(reply[3]), log_chunks=int(reply[4]))
    if outcome == "stale":
        return Commit("stale", int(reply[1]))
    return Commit("replay", record=reply[1])


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _event(row: Any) -> Event:
    sid, fields = row
    if isinstance(fields, list):  # a flat list in some protocol versions
        fields = dict(zip(fields[0::2], fields[1::2], strict=True))
    return Event(_s(sid), {_s(k): v for k, v in fields.items()})
