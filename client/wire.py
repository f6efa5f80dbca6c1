"""The HTTP plumbing the client shares: its media types, the answer of a request
(:class:`Reply`), JSON decoding, path segments, sessions from a chosen source address, and
Idempotency-Keys."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests
import requests.adapters

USER_AGENT = "canasta-client/1"
EVENT_STREAM = "text/event-stream"
NDJSON = "application/x-ndjson"
_ETAG = re.compile(r'^(?:W/)?"(\d+)"$')


# -- answers ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    """An answer: status, decoded body (JSON, or text/bytes for other types), headers."""

    status: int
    body: Any
    headers: Mapping[str, str]

    @property
    def etag(self) -> str | None:
        return self.headers.get("ETag")

    @property
    def version(self) -> int | None:
        """The game version the ETag names."""
        m = _ETAG.match(self.etag or "")
        return int(m.group(1)) if m else None

    @property
    def replayed(self) -> bool:
        """True when the server answered a retried move from its stored answer."""
        return self.headers.get("Idempotent-Replayed") == "true"


def decode(r: requests.Response) -> Any:
    ctype = r.headers.get("Content-Type", "")
    if not r.content:
        return None
    if ctype.startswith(("application/json", "application/problem+json")):
        try:
            return r.json()
        except ValueError:
            return r.text
    if ctype.startswith(NDJSON):
        return r.content
    if ctype.startswith(("text/", "application/yaml")):
        return r.text
    return r.content


def segment(value: str) -> str:
    return quote(str(value), safe="")


class SourceAddressAdapter(requests.adapters.HTTPAdapter):
    """An adapter whose connections leave from one local ``address`` (a host with several
    addresses; tests and benchmarks that play several clients from loopback addresses)."""

    def __init__(self, address: str, **kwargs: Any) -> None:
        self.address = address
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def session_from(address: str) -> requests.Session:
    """A ``requests.Session`` (for :class:`Client`'s ``session``) whose every connection
    comes from the local ``address``."""
    session = requests.Session()
    adapter = SourceAddressAdapter(address)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def new_idempotency_key() -> str:
    return uuid.uuid4().hex


