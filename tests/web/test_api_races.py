"""Concurrency: one compare-and-set wins; an Idempotency-Key applies a move once."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from api_helpers import Table, auth, four_humans
from flask import Flask

from service.store import Store

THREADS = 16


def _race(app: Flask, url: str, body: dict[str, Any], headers: dict[str, str]) -> list[Any]:
    barrier = threading.Barrier(THREADS)
    results: list[Any] = [None] * THREADS

    def run(i: int) -> None:
        client = app.test_client()
        barrier.wait()
        r = client.post(url, json=body, headers=headers)
        results[i] = (r.status_code, r.get_json(), r.headers.get("ETag"))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_same_move_same_version(app: Flask, store: Store) -> None:
    t = Table(app.test_client(), four_humans())
    _, etag = t.view(0)
    events = store.event_count(t.id)
    results = _race(app, f"/games/{t.id}/moves", {"action": {"type": "draw"}}, auth(t.tokens[0], **{"If-Match": etag}))
    statuses = Counter(r[0] for r in results)
    assert statuses == {200: 1, 412: THREADS - 1}, statuses
    assert all(r[1]["code"] == "stale_version" for r in results if r[0] == 412)
    assert store.event_count(t.id) == events + 1
    view, etag2 = t.view(0)
    assert len(view["view"]["hand"]) == 12 and int(etag2.strip('"')) == int(etag.strip('"')) + 1
    moves = [line for line in store.read_log(t.id) if line.startswith(b'{"move"')]
    assert len(moves) == 1


def test_idempotency_key_retried_concurrently(app: Flask, store: Store) -> None:
    t = Table(app.test_client(), four_humans())
    _, etag = t.view(0)
    events = store.event_count(t.id)
    headers = auth(t.tokens[0], **{"If-Match": etag, "Idempotency-Key": "retry-me"})
    results = _race(app, f"/games/{t.id}/moves", {"action": {"type": "draw"}}, headers)
    assert {r[0] for r in results} == {200}, Counter(r[0] for r in results)
    assert len({str(r[1]) for r in results}) == 1 and len({r[2] for r in results}) == 1
    assert store.event_count(t.id) == events + 1
    # and a later retry, long after, still gets the same answer
    again = app.test_client().post(f"/games/{t.id}/moves", json={"action": {"type": "draw"}}, headers=headers)
    assert again.status_code == 200 and again.get_json() == results[0][1]
