"""The project's ASGI app (``web.asgi.App``: its loop routes, the Flask bridge) driven in this
process: a real app on a real Redis, its event loop in a thread of its own, requests given as
a client would send them (ASGI scopes as granian builds them). No HTTP server in between:
what the tests compare is the app's own answer, byte for byte."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

from web import Settings, create_app
from web.asgi import App

TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Reply:
    status: int
    headers: list[tuple[str, str]]  # lower-case names, in order
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name.lower()), None)


class AsgiDriver:
    """One :class:`web.asgi.App` on an event loop of its own thread."""

    def __init__(self, settings: Settings, threads: int = 2) -> None:
        self.settings = settings
        self.app = App(create_app(settings), settings, threads)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def request(self, method: str, path: str, headers: list[tuple[str, str]] | None = None, body: bytes = b"",
                query: str = "", client: tuple[str, int] = ("127.0.0.1", 40000)) -> Reply:
        """The app's answer; ``headers`` as sent (a body gets its Content-Length unless given)."""
        sent = list(headers or [])
        if body and not any(k.lower() == "content-length" for k, _ in sent):
            sent.append(("Content-Length", str(len(body))))
        scope: dict[str, Any] = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": query.encode(), "root_path": "", "client": client, "server": ("127.0.0.1", 8000),
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in sent],
        }
        return asyncio.run_coroutine_threadsafe(self._call(scope, body), self.loop).result(TIMEOUT_SECONDS)

    async def _call(self, scope: dict[str, Any], body: bytes) -> Reply:
        messages: list[dict[str, Any]] = []
        given = False
        done = asyncio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            messages.append(message)

        try:
            await self.app(scope, receive, send)
        finally:
            done.set()
        start = next(m for m in messages if m["type"] == "http.response.start")
        out = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in start["headers"]]
        return Reply(start["status"], headers, out)

    def loop_counts(self) -> tuple[int, int]:
        """(answered on the loop, handed to Flask) so far."""
        routes = self.app.loop_routes
        return (routes.answered, routes.handed_over) if routes is not None else (0, 0)

    def close(self) -> None:
        async def stop() -> None:
            if self.app.loop_routes is not None and self.app.loop_routes.redis is not None:
                self.app.loop_routes.redis.close()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(TIMEOUT_SECONDS)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.app.executor.shutdown(wait=False)
