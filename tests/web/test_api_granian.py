"""The API under granian, which has no request-body limit of its own: Flask's
``MAX_CONTENT_LENGTH`` (``CANASTA_MAX_BODY_BYTES``) still refuses a larger body with 413,
declared or chunked, on the small-body fast path too (``web.http.raw_body``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from api_servers import api_server

LIMIT = 1000


@pytest.fixture(scope="module")
def base(redis_url: str, key_prefix: str) -> Iterator[str]:
    with api_server(redis_url, key_prefix, threads=2, extra_env={"CANASTA_MAX_BODY_BYTES": str(LIMIT)}) as url:
        yield url


def _create(base: str, body: bytes | Iterator[bytes]) -> requests.Response:
    return requests.post(f"{base}/games", data=body, headers={"Content-Type": "application/json"}, timeout=10)


def test_a_body_over_the_limit_is_refused_with_413(base: str) -> None:
    over = b'{"preset": "classic", "seats": [' + b" " * LIMIT + b"]}"
    r = _create(base, over)  # with Content-Length
    assert r.status_code == 413 and r.headers["Content-Type"] == "application/problem+json", r.text
    r = _create(base, iter([over[:500], over[500:]]))  # chunked: no length declared
    assert r.status_code == 413, r.text


def test_a_body_within_the_limit_is_read(base: str) -> None:
    body = b'{"preset": "classic", "seats": [{"name": "a"}, null, null, null]' + b" " * 100 + b"}"
    assert len(body) < LIMIT
    assert _create(base, body).status_code == 201
    assert _create(base, iter([body[:20], body[20:]])).status_code == 201
