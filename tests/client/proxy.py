"""A TCP proxy on loopback in front of a real server, to lose what networks lose: the answer
to a request the server did handle, or every open connection at once."""

from __future__ import annotations

import socket
import threading

CHUNK = 65536


class Proxy:
    """Forwards every connection to ``upstream``; :meth:`drop_next_answer` makes the next
    bytes the server sends vanish with both connections closed (the server did the work, the
    client never hears of it), :meth:`cut` closes every open connection."""

    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.removeprefix("http://").partition(":")
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._drops = 0
        self._open: set[socket.socket] = set()
        self.dropped = 0
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def drop_next_answer(self) -> None:
        with self._lock:
            self._drops += 1

    def cut(self) -> None:
        with self._lock:
            self.cuts += 1
        self._close_all()

    def close(self) -> None:
        _close(self.listener)
        self._close_all()

    def _close_all(self) -> None:
        with self._lock:
            sockets = list(self._open)
        for s in sockets:
            _close(s)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(self.upstream)
        except OSError:
            _close(client)
            return
        with self._lock:
            self._open.update((client, server))
        threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
        self._pump(server, client, True)

    def _pump(self, src: socket.socket, dst: socket.socket, answers: bool) -> None:
        try:
            while True:
                data = src.recv(CHUNK)
                if not data:
                    break
                if answers:
                    with self._lock:
                        drop = self._drops > 0
                        if drop:
                            self._drops -= 1
                            self.dropped += 1
                    if drop:
                        break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                _close(s)
            with self._lock:
                self._open.difference_update((src, dst))


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()
