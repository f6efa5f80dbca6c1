"""The stream limits' renewer: it runs while this process holds a stream, and only then."""

from __future__ import annotations

import time

import pytest

from service.redis_io import connect
from web import stream_limits
from web.stream_limits import StreamLimits


def test_the_renewer_runs_while_streams_are_held_and_ends_after(redis_url: str, key_prefix: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_limits, "RENEW_SECONDS", 0.05)
    client = connect(redis_url)
    limits = StreamLimits(2, 4, client, prefix=f"{key_prefix}:holds")
    release = limits.acquire("a-token", "127.0.0.9")
    first = limits._renewer
    assert first is not None and first.is_alive()
    key = limits.key("token", "a-token")
    lapse = client.zscore(key, next(iter(limits._held)))
    time.sleep(0.3)
    assert client.zscore(key, next(iter(limits._held))) > lapse  # renewed while held
    release()
    first.join(timeout=5)
    assert not first.is_alive() and limits._renewer is None  # nothing held: no thread
    again = limits.acquire("a-token", "127.0.0.9")
    assert limits._renewer is not None and limits._renewer is not first and limits._renewer.is_alive()
    again()
    client.close()
