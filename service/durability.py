"""Does the configured Redis server keep what it is given? What a durable game store needs.

A move is answered 200 only once the server has it on disk; otherwise 503 ``not_durable``
(the client retries with the same Idempotency-Key). ``CANASTA_DURABILITY`` says how the API
knows (:class:`service.store.Store`):

* ``fsync`` (default): the server runs the append-only file with ``appendfsync always``: it
  writes and fsyncs every event loop's writes before it sends any reply (and stops if an
  fsync fails), so a commit it answered is on its disk. The API checks that configuration
  (INFO persistence, CONFIG GET) every few seconds per process; moves are refused while it
  does not hold. Cost: one fsync per event loop iteration of the server, shared by every
  write of that iteration.
* ``waitaof``: every commit is followed, in the same round trip, by ``WAITAOF 1 0 <timeout>``:
  the server itself confirms the write is on its disk. For servers that refuse CONFIG
  (managed services) or fsync ``everysec`` (each move then waits for the next fsync, up to
  about a second). Needs Redis 7.2 or newer, or Valkey 8. It costs more than ``fsync`` on a
  busy server (the confirmation comes an event loop later): see BENCHMARKS.md.
* ``off``: no check (a crash of the server loses what it had not written).

An external ``REDIS_URL`` server therefore needs ``appendonly yes`` and ``appendfsync always``
(and WAITAOF for ``waitaof``). ``canasta serve`` starts its embedded Valkey that way, with its
data in a data directory. :func:`check` reads what a server does; ``canasta serve`` prints,
and the API logs once per process at start, what is missing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("canasta.api")

NEEDS = "appendonly yes and appendfsync always"


@dataclass(frozen=True)
class Persistence:
    """What a server does with writes."""

    aof: bool  # the append-only file is on
    appendfsync: str | None  # None: the server does not say (CONFIG refused)
    waitaof: bool  # the server knows WAITAOF
    snapshots: bool  # RDB snapshots are configured (``save``)
    write_ok: bool = True  # the last write to the append-only file succeeded

    @property
    def fsyncs_before_reply(self) -> bool:
        return self.aof and self.appendfsync == "always" and self.write_ok

    def problems(self, durability: str) -> list[str]:
        """Sentences on what is missing, for a store run with ``durability`` (fsync, waitaof, off)."""
        out = []
        refused = f"with CANASTA_DURABILITY={durability} every move is refused (503 not_durable)"
        if not self.aof:
            lost = "everything since its last snapshot" if self.snapshots else "every game"
            out.append(f"the Redis server has no append-only file (appendonly no): a crash or restart loses {lost}"
                       + (f"; {refused}" if durability != "off" else ""))
        elif self.appendfsync is None and durability == "fsync":
            out.append(f"the Redis server does not say how it fsyncs (CONFIG refused): {refused}; use "
                       "CANASTA_DURABILITY=waitaof")
        elif self.appendfsync not in ("always", None):
            if durability == "fsync":
                out.append(f"the Redis server fsyncs its append-only file '{self.appendfsync}', not before every "
                           f"reply: {refused}; set appendfsync always")
            elif durability == "waitaof":
                out.append(f"the Redis server fsyncs its append-only file '{self.appendfsync}': each move waits for "
                           "the next fsync (up to about a second); set appendfsync always")
        if not self.waitaof and durability == "waitaof":
            out.append(f"the Redis server has no WAITAOF (Redis 7.2 or newer, Valkey 8): {refused}")
        if durability == "off":
            out.append("CANASTA_DURABILITY=off: moves are answered without knowing that they are on disk")
        return out


def check(client: Any) -> Persistence:
    """Ask the server (INFO persistence, CONFIG GET, COMMAND INFO)."""
    info = client.info("persistence")
    try:
        config = client.config_get("appendfsync")
        fsync = config.get("appendfsync") or config.get(b"appendfsync")
        save = client.config_get("save")
        snapshots = bool((save.get("save") or save.get(b"save") or "").strip())
    except Exception:  # noqa: BLE001 - managed servers may refuse CONFIG
        fsync, snapshots = None, True
    if isinstance(fsync, bytes):
        fsync = fsync.decode()
    if isinstance(snapshots, bytes):
        snapshots = bool(snapshots.strip())
    known = _raw(client, "COMMAND", "INFO", "WAITAOF")  # [None] when the server does not know it
    status = info.get("aof_last_write_status", "ok")
    return Persistence(aof=int(info.get("aof_enabled", 0)) == 1, appendfsync=fsync,
                       waitaof=bool(known and known[0]), snapshots=snapshots,
                       write_ok=(status.decode() if isinstance(status, bytes) else str(status)) == "ok")


def check_all(client: Any) -> Persistence:
    """:func:`check`, of every primary of a cluster (what the weakest one does), or of one server."""
    from service.redis_io import is_cluster

    if not is_cluster(client):
        return check(client)
    found = [check(client.get_redis_connection(node)) for node in client.get_primaries()]
    fsyncs = {f.appendfsync for f in found}
    fsync = None if None in fsyncs else ("always" if fsyncs == {"always"} else next(iter(fsyncs - {"always"})))
    return Persistence(aof=all(f.aof for f in found), appendfsync=fsync, waitaof=all(f.waitaof for f in found),
                       snapshots=any(f.snapshots for f in found), write_ok=all(f.write_ok for f in found))


def _raw(client: Any, *args: Any) -> Any:
    """A command's reply as the server sends it (redis-py's parser of COMMAND INFO fails on
    an unknown command's nil)."""
    pool = client.connection_pool
    conn = pool.get_connection()
    try:
        conn.send_command(*args)
        return conn.read_response()
    finally:
        pool.release(conn)


_warned = False


def warn_once(client: Any, settings: Any) -> None:
    """Log, once per process, what the configured server lacks for the settings' durability."""
    global _warned
    if _warned:
        return
    _warned = True
    try:
        found = check_all(client)
    except Exception as e:  # noqa: BLE001 - the server may not be up yet: the API still starts
        log.warning("could not check the Redis server's persistence (%s); a durable game store needs %s", e, NEEDS)
        return
    for problem in found.problems(settings.durability):
        log.warning("%s (a durable game store needs %s)", problem, NEEDS)
