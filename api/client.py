"""A small client for the API (``requests``); tests and benchmarks use it.

    c = Client("http://127.0.0.1:8000")
    game = c.create_game("classic", seats=[{"name": "ann"}, None, {"bot": "random"}, None])
    seat = c.seat(game["id"], game["seats"][0]["token"])
    view = seat.view()
    seat.move({"type": "draw"})          # If-Match from the last view read
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import requests


class ApiProblem(Exception):
    """An error answer (problem+json): ``status``, ``code``, ``detail``, the whole ``body``."""

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.body = body
        self.code = str(body.get("code", ""))
        self.detail = str(body.get("detail", ""))
        self.headers = headers or {}
        super().__init__(f"{status} {self.code}: {self.detail}")


@dataclass
class Response:
    status: int
    body: Any
    headers: dict[str, str]

    @property
    def etag(self) -> str | None:
        return self.headers.get("ETag")


class Client:
    """Plain calls; raises :class:`ApiProblem` for 4xx/5xx unless ``raw=True``."""

    def __init__(self, base_url: str, session: requests.Session | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = session or requests.Session()
        self.timeout = timeout

    def request(self, method: str, path: str, *, token: str | None = None, body: Any = None,
                headers: dict[str, str] | None = None, params: dict[str, Any] | None = None,
                raw: bool = False, stream: bool = False, timeout: float | None = None) -> Response:
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            h["Content-Type"] = "application/json"
            data = json.dumps(body)
        r = self.http.request(method, self.base_url + path, data=data, headers=h, params=params,
                              timeout=timeout or self.timeout, stream=stream)
        if stream:
            return Response(r.status_code, r, dict(r.headers))
        ctype = r.headers.get("Content-Type", "")
        parsed: Any = r.json() if "json" in ctype and "ndjson" not in ctype and r.content else r.text
        resp = Response(r.status_code, parsed, dict(r.headers))
        if r.status_code >= 400 and not raw:
            raise ApiProblem(r.status_code, parsed if isinstance(parsed, dict) else {"detail": parsed}, resp.headers)
        return resp

    # -- resources -----------------------------------------------------------------------
    def create_game(self, preset: str, seats: list[dict[str, str] | None], *, players: int | None = None,
                    rules: dict[str, Any] | None = None, seed: int | None = None,
                    turn_timeout: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"preset": preset, "seats": seats}
        if players is not None:
            body["players"] = players
        if rules:
            body["rules"] = rules
        if seed is not None:
            body["seed"] = seed
        if turn_timeout is not None:
            body["turn_timeout"] = turn_timeout
        return self.request("POST", "/games", body=body).body

    def game(self, game_id: str, token: str | None = None) -> Response:
        return self.request("GET", f"/games/{game_id}", token=token)

    def join(self, game_id: str, seat: int, name: str) -> dict[str, Any]:
        return self.request("POST", f"/games/{game_id}/seats/{seat}", body={"name": name}).body

    def seat_to_bot(self, game_id: str, seat: int, bot: str, token: str) -> dict[str, Any]:
        return self.request("POST", f"/games/{game_id}/seats/{seat}/bot", body={"bot": bot}, token=token).body

    def take_seat_back(self, game_id: str, seat: int, token: str) -> dict[str, Any]:
        """The seat's person plays again (only the seat's own token)."""
        return self.request("DELETE", f"/games/{game_id}/seats/{seat}/bot", token=token).body

    def move(self, game_id: str, token: str, action: dict[str, Any], etag: str, *,
             idempotency_key: str | None = None, dry_run: bool = False, raw: bool = False) -> Response:
        headers = {"If-Match": etag}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        params = {"dry_run": "true"} if dry_run else None
        return self.request("POST", f"/games/{game_id}/moves", token=token, body={"action": action},
                            headers=headers, params=params, raw=raw)

    def events(self, game_id: str, token: str | None = None, after: str | None = None,
               wait: float | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if after is not None:
            params["after"] = after
        if wait is not None:
            params["wait"] = wait
        timeout = self.timeout + (wait or 0)
        return self.request("GET", f"/games/{game_id}/events", token=token, params=params, timeout=timeout).body

    def stream(self, game_id: str, token: str | None = None, last_event_id: str | None = None,
               timeout: float = 60.0) -> Iterator[dict[str, Any]]:
        """Server-Sent Events as dicts {id, event, data}; ``: ping`` comments as {event: "ping"}."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        r = self.request("GET", f"/games/{game_id}/events", token=token, headers=headers, stream=True,
                         timeout=timeout, raw=True)
        resp: requests.Response = r.body
        try:
            if resp.status_code >= 400:
                raise ApiProblem(resp.status_code, resp.json(), dict(resp.headers))
            yield from parse_sse(resp.iter_lines(decode_unicode=True))
        finally:
            resp.close()

    def log(self, game_id: str) -> list[dict[str, Any]]:
        text = self.request("GET", f"/games/{game_id}/log").body
        return [json.loads(line) for line in text.splitlines() if line]

    def hint(self, game_id: str, token: str, bot: str = "greedy") -> dict[str, Any]:
        return self.request("GET", f"/games/{game_id}/hint", token=token, params={"bot": bot}).body

    def rules(self, preset: str | None = None) -> dict[str, Any]:
        return self.request("GET", "/rules" if preset is None else f"/rules/{preset}").body

    def healthz(self) -> bool:
        return self.request("GET", "/healthz", raw=True).status == 200

    def seat(self, game_id: str, token: str) -> SeatClient:
        return SeatClient(self, game_id, token)


def parse_sse(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    event: dict[str, Any] = {}
    data: list[str] = []
    for line in lines:
        if line == "":
            if data or event:
                if data:
                    event["data"] = json.loads("\n".join(data))
                event.setdefault("event", "message")
                yield event
            event, data = {}, []
        elif line.startswith(":"):
            yield {"event": "ping", "comment": line[1:].strip()}
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name in ("id", "event", "retry"):
                event[name] = value


@dataclass
class SeatClient:
    """One seat: remembers the last ETag it saw and sends it with each move."""

    client: Client
    game_id: str
    token: str
    etag: str | None = None
    last_view: dict[str, Any] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
        r = self.client.game(self.game_id, self.token)
        self.etag, self.last_view = r.etag, r.body
        return r.body

    def move(self, action: dict[str, Any], *, idempotency_key: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        if self.etag is None:
            self.view()
        assert self.etag is not None
        key = idempotency_key if idempotency_key is not None else (None if dry_run else uuid.uuid4().hex)
        r = self.client.move(self.game_id, self.token, action, self.etag, idempotency_key=key, dry_run=dry_run)
        if not dry_run:
            self.etag, self.last_view = r.etag, r.body
        return r.body
