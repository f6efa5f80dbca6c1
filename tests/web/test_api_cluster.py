"""The game service on a Redis Cluster: URLs, the local cluster of the tests, one slot per game,
the rate limiter, the bot queue on its own Redis, a failover in the middle of a game, and
the durability confirmation on the game's node. A local cluster of its own (3 primaries, 3
replicas) for the module: a few seconds, so these run in ``make test`` too; the whole API,
worker and export suites run on a cluster with ``make test-cluster``."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import Table, auth, four_humans
from redis.crc import key_slot

from servers.embedded import EmbeddedRedis
from servers.localcluster import LocalCluster
from service.config import queue_url
from service.redis_io import connect, parse_url
from service.store import Store
from web import create_app

pytestmark = pytest.mark.cluster


def test_a_cluster_is_named_by_its_url_scheme() -> None:
    assert parse_url("redis+cluster://10.0.0.5:7000").url == "redis://10.0.0.5:7000"
    assert parse_url("rediss+cluster://u:p@node:7000?ssl_cert_reqs=none").url == "rediss://u:p@node:7000?ssl_cert_reqs=none"
    assert parse_url("redis+cluster://node:7000/0").cluster
    assert not parse_url("redis://node:6379/3").cluster and parse_url("unix:///run/r.sock").url == "unix:///run/r.sock"
    with pytest.raises(ValueError, match="only database 0"):
        parse_url("redis+cluster://node:7000/2")
    # the bot queue: the games' server by default; its own one server with a cluster
    assert queue_url("redis://a:1/0", None) == "redis://a:1/0"
    assert queue_url("redis+cluster://a:1", "redis://q:2/0") == "redis://q:2/0"
    with pytest.raises(ValueError, match="CANASTA_QUEUE_URL"):
        queue_url("redis+cluster://a:1", "")
    with pytest.raises(ValueError, match="needs one server"):
        queue_url("redis://a:1/0", "redis+cluster://q:2")


def test_a_cluster_that_fails_to_start_leaves_no_process() -> None:
    cluster = LocalCluster()
    cluster._cli = Path("/nonexistent/valkey-cli")  # the nodes start, then nothing answers for them
    with pytest.raises(OSError):
        cluster.start()
    assert len(cluster.nodes) == 6 and all(n.proc.poll() is not None for n in cluster.nodes)
    assert cluster.dir is None


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster() as c:
        yield c
    assert all(n.proc.poll() is not None for n in c.nodes)  # every node it started is gone


@pytest.fixture(scope="module")
def queue_redis() -> Iterator[str]:
    with EmbeddedRedis() as server:
        yield server.url


def _app(cluster: LocalCluster, queue: str, **settings: Any) -> Any:
    return create_app({"redis_url": cluster.url, "queue_url": queue, "key_prefix": f"ct-{uuid.uuid4().hex[:8]}",
                       "test_seeds": True, "rate_limit_enabled": False, **settings})


def test_the_local_cluster_has_three_primaries_with_a_replica_each(cluster: LocalCluster) -> None:
    roles = sorted(cluster.roles().values())
    assert roles == ["master"] * 3 + ["slave"] * 3
    client = connect(cluster.url)
    assert len(client.get_primaries()) == 3


def test_a_cluster_without_a_queue_redis_is_refused_at_start(cluster: LocalCluster) -> None:
    with pytest.raises(ValueError, match="CANASTA_QUEUE_URL"):
        create_app({"redis_url": cluster.url, "queue_url": ""})  # (the environment may name one)


def test_every_key_of_a_game_is_in_its_slot_and_the_bot_queue_on_its_own_redis(
        cluster: LocalCluster, queue_redis: str) -> None:
    app = _app(cluster, queue_redis)
    client = app.test_client()
    store: Store = app.extensions["canasta"].store
    body = {"preset": "classic", "seats": [{"name": "a"}, {"bot": "random"}, {"name": "c"}, {"bot": "random"}], "seed": 1}
    t = Table(client, body)
    view, etag = t.view(0)
    r = t.move(0, {"type": "draw"}, etag, **{"Idempotency-Key": "k1"})
    assert r.status_code == 200
    card = r.get_json()["view"]["legal"]["discards"][0]
    r = t.move(0, {"type": "discard", "card": card}, r.headers["ETag"], **{"Idempotency-Key": "k2"})
    assert r.status_code == 200 and r.get_json()["view"]["to_act"] == 1  # a bot is to act: the queue is told
    store.cache_hint(t.id, r.get_json()["version"], 2, "greedy", b"{}", 60)
    keys = [k.decode() for k in store.redis.scan_iter(match=f"{store.keys.prefix}:*")]
    assert {store.keys.state(t.id), store.keys.events(t.id), store.keys.log(t.id)} <= set(keys)
    assert any(":idem:" in k for k in keys)
    assert {key_slot(k.encode()) for k in keys} == {key_slot(store.keys.state(t.id).encode())}
    # RQ and the awaiting set are on the queue's Redis, nothing of them on the cluster
    assert store.queue is not store.redis
    assert store.queue.zscore(f"{store.keys.prefix}:bots:awaiting", t.id) is not None
    assert store.queue.exists(f"rq:job:bot-{t.id}-v{r.get_json()['version']}")
    assert not any(k.startswith("rq:") for k in store.redis.scan_iter(match="rq:*"))


def test_the_rate_limiter_counts_on_a_cluster(cluster: LocalCluster, queue_redis: str) -> None:
    app = _app(cluster, queue_redis, rate_limit_enabled=True, rate_limit_per_token=3, rate_limit_per_address=1000,
               rate_limit_hints_per_token=2)
    client = app.test_client()
    t = Table(client, four_humans())
    statuses = [client.get(f"/games/{t.id}", headers=auth(t.tokens[1])).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]  # address and token counters, two slots: no CROSSSLOT
    assert client.get("/healthz").get_json() == {"status": "ok", "rate_limiter_failures": 0}


def _move_until_confirmed(t: Table, seat: int, action: dict[str, Any], etag: str) -> Any:
    """As a client does: a 503 (not confirmed by the replica in time on a busy machine) is sent
    again with the same Idempotency-Key, which applies the move once."""
    key = uuid.uuid4().hex
    for _ in range(5):
        r = t.move(seat, action, etag, **{"Idempotency-Key": key})
        if r.status_code != 503:
            return r
    return r


def _step(t: Table) -> int:
    """A move of the seat to act (a draw, or a discard); its version."""
    seat = t.view(0)[0]["view"]["to_act"]
    view, etag = t.view(seat)
    action = ({"type": "draw"} if view["view"]["phase"] == "draw" else
              {"type": "discard", "card": view["view"]["legal"]["discards"][0]})
    r = _move_until_confirmed(t, seat, action, etag)
    assert r.status_code == 200, r.get_json()
    return int(r.get_json()["version"])


def test_a_game_goes_on_across_a_failover_of_its_primary(cluster: LocalCluster, queue_redis: str) -> None:
    """CLUSTER FAILOVER of the node that holds the game: the next requests meet MOVED (or a
    closed connection), re-read the slot table and go to the new primary; nothing is lost
    and nothing applied twice. The changes wait for the replica (WAIT 1, then WAITAOF 0 1 on the
    game's node)."""
    app = _app(cluster, queue_redis, durability_replicas=1, durability_timeout_ms=3000)
    client = app.test_client()
    store: Store = app.extensions["canasta"].store
    t = Table(client, four_humans(seed=3))

    view, etag = t.view(0)
    r = _move_until_confirmed(t, 0, {"type": "draw"}, etag)
    assert r.status_code == 200
    node = store.redis.get_node_from_key(store.keys.state(t.id))
    cluster.failover(node.port)
    assert store.redis.get_node_from_key(store.keys.state(t.id)).port == node.port  # the client does not know yet
    card = r.get_json()["view"]["legal"]["discards"][0]
    r = _move_until_confirmed(t, 0, {"type": "discard", "card": card}, r.headers["ETag"])
    assert r.status_code == 200, r.get_json()
    assert store.redis.get_node_from_key(store.keys.state(t.id)).port != node.port  # it followed the failover
    assert store.load(t.id).version == r.get_json()["version"] == store.event_count(t.id)
    assert client.get(f"/games/{t.id}/events?after=0").status_code == 200


def test_a_change_waits_for_the_replica_s_disk_not_for_its_next_report(cluster: LocalCluster, queue_redis: str) -> None:
    """With ``durability_replicas=1`` a commit is confirmed once the game's replica has it on
    disk. A replica reports its fsynced offset when asked, and the request that came with the
    write is answered before the fsync: ``WAITAOF 0 1`` alone waited for the replica's next
    report, a second later, on every move. After a ``WAIT 1`` it is a few milliseconds."""
    import time

    app = _app(cluster, queue_redis, durability_replicas=1, durability_timeout_ms=5000)
    client = app.test_client()
    store: Store = app.extensions["canasta"].store
    t = Table(client, four_humans(seed=3))
    took = []
    for _ in range(6):
        seat = t.view(0)[0]["view"]["to_act"]
        view, etag = t.view(seat)
        started = time.perf_counter()
        r = t.move(seat, {"type": "draw"} if view["view"]["phase"] == "draw" else
                   {"type": "discard", "card": view["view"]["legal"]["discards"][0]}, etag)
        took.append(time.perf_counter() - started)
        assert r.status_code == 200, r.get_json()  # confirmed by the replica (else 503 not_durable)
    assert store.load(t.id).version == r.get_json()["version"]
    assert sorted(took)[len(took) // 2] < 0.5, took  # was 1.0 s each: the replica's report interval


def test_the_event_hub_wakes_listeners_on_a_cluster(cluster: LocalCluster, queue_redis: str) -> None:
    """The hub's sharded subscription goes to the game's node, its XRANGE reads there: a move
    reaches every seat's listener, rendered for that seat."""
    import asyncio

    import service
    from web import hub as hub_module

    app = _app(cluster, queue_redis)
    client = app.test_client()
    store: Store = app.extensions["canasta"].store
    t = Table(client, four_humans(seed=5))
    _, last_id = store.snapshot(t.id)

    async def scenario() -> None:
        hub = hub_module.EventHub(hub_module.connect(cluster.url), store.keys)
        try:
            listeners = [hub_module.Listener(t.id, seat, last_id) for seat in (None, 0, 1, 2, 3)]
            for listener in listeners:
                await hub.listen(listener)
            await asyncio.sleep(0.3)
            _, etag = await asyncio.to_thread(t.view, 0)
            r = await asyncio.to_thread(t.move, 0, {"type": "draw"}, etag)
            assert r.status_code == 200
            fields = store.events_after(t.id, last_id)[0].fields
            for listener in listeners:
                await asyncio.wait_for(listener.wake.wait(), 10)
                (event_id, body), = listener.take()
                assert body == service.render_event(event_id, fields, listener.seat)
        finally:
            await hub.close()

    asyncio.run(scenario())


def test_serve_and_worker_refuse_a_cluster_without_a_queue_redis(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Before starting anything (no node is asked: the URL alone says it is a cluster)."""
    from web.serve import main as serve
    from worker.cli import main as worker

    monkeypatch.delenv("CANASTA_QUEUE_URL", raising=False)
    assert serve(["--redis-url", "redis+cluster://127.0.0.1:1", "--no-bot-worker"]) == 2
    assert "CANASTA_QUEUE_URL" in capsys.readouterr().err
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        assert worker(["--redis-url", "redis+cluster://127.0.0.1:1"]) == 2
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)  # the worker's own, installed first thing
    assert "CANASTA_QUEUE_URL" in capsys.readouterr().err


CLUSTER_ONLY = "redis+cluster://127.0.0.1:1"  # no node answers there: a refusal must come before any is asked


def test_every_command_that_runs_bots_refuses_a_cluster_without_a_queue_redis(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``canasta play``, ``canasta bench bots latency``, ``bench hints``, ``bench api`` and ``bench app`` with a
    cluster's URL and no queue Redis: one line naming ``CANASTA_QUEUE_URL``, exit 2, nothing started;
    a queue URL that names a cluster is refused too."""
    from bench.api import main as bench_api
    from bench.app import main as bench_app
    from bench.bots import main as bench_bots
    from bench.hints import main as bench_hints
    from cli.play import main as play
    from web.serve import main as serve

    monkeypatch.delenv("CANASTA_QUEUE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    for run, stream in ((lambda: play(["--redis-url", CLUSTER_ONLY]), "out"),  # the terminal client's console
                        (lambda: bench_bots(["latency", "--redis-url", CLUSTER_ONLY]), "err"),
                        (lambda: bench_hints(["--redis-url", CLUSTER_ONLY]), "err"),
                        (lambda: bench_api(["--redis-url", CLUSTER_ONLY]), "err"),
                        (lambda: bench_app(["--redis-url", CLUSTER_ONLY]), "err")):
        assert run() == 2
        said = getattr(capsys.readouterr(), stream).strip()
        assert stream == "out" or len(said.splitlines()) == 1, said  # one line (the terminal's console wraps it)
        said = " ".join(said.split())
        assert "names a Redis Cluster" in said and "CANASTA_QUEUE_URL" in said and "--queue-url" in said, said
    monkeypatch.setenv("REDIS_URL", CLUSTER_ONLY)  # from the environment as from the option
    assert bench_bots(["latency"]) == 2 and "CANASTA_QUEUE_URL" in capsys.readouterr().err
    assert serve(["--redis-url", CLUSTER_ONLY, "--queue-url", "redis+cluster://127.0.0.1:2", "--no-bot-worker"]) == 2
    assert "needs one server" in capsys.readouterr().err


def test_the_event_hub_wakes_games_on_every_node_and_follows_a_failover(cluster: LocalCluster,
                                                                        queue_redis: str) -> None:
    """A reader per node: a game on each primary wakes its listener (redis-py's own cluster
    read waits on the nodes in turn, so a wake-up on one waited out the others' slices); after
    a ``CLUSTER FAILOVER`` of a game's primary (the old one ends the subscription) and after a
    ``kill -9`` of it (the node's reader fails) the hub subscribes the game on its new primary
    and the next move still wakes the listener."""
    import asyncio

    from web import hub as hub_module

    app = _app(cluster, queue_redis, durability_replicas=1, durability_timeout_ms=3000)
    client = app.test_client()
    store: Store = app.extensions["canasta"].store
    tables: dict[int, Table] = {}
    for seed in range(100, 160):
        t = Table(client, four_humans(seed=seed))
        tables.setdefault(store.redis.get_node_from_key(store.keys.state(t.id)).port, t)
        if len(tables) == len(cluster.primary_ports()):
            break
    assert len(tables) == 3

    async def scenario() -> None:
        hub = hub_module.EventHub(hub_module.connect(cluster.url), store.keys)
        try:
            listeners = {}
            for port, t in tables.items():
                listeners[port] = hub_module.Listener(t.id, None, store.snapshot(t.id)[1])
                await hub.listen(listeners[port])
            await asyncio.sleep(0.5)
            for listener in listeners.values():
                listener.take()
            for port, t in tables.items():
                version = await asyncio.to_thread(_step, t)
                await asyncio.wait_for(listeners[port].wake.wait(), 10)
                assert [body["version"] for _, body in listeners[port].take()] == [version]
            port, t = next(iter(tables.items()))
            await asyncio.to_thread(cluster.failover, port)
            version = await asyncio.to_thread(_step, t)
            await asyncio.wait_for(listeners[port].wake.wait(), 20)
            assert [body["version"] for _, body in listeners[port].take()] == [version]
            version = await asyncio.to_thread(_step, t)  # and the one after: the reader is on the new node
            await asyncio.wait_for(listeners[port].wake.wait(), 20)
            assert [body["version"] for _, body in listeners[port].take()] == [version]
            # kill -9 of the game's primary: no sunsubscribe, the node's reader fails instead
            primary = store.redis.get_node_from_key(store.keys.state(t.id)).port
            await asyncio.to_thread(cluster.kill_primary, primary)
            # the game's replica, for the WAIT; started from this (the main) thread: a node
            # dies with the thread that started it (procstat.die_with_parent), and to_thread's
            # worker ended with the loop, taking the node with it (the next test found the
            # game's primary without a replica)
            cluster.restart(primary)
            version = await asyncio.to_thread(_step, t)
            await asyncio.wait_for(listeners[port].wake.wait(), 20)
            assert [body["version"] for _, body in listeners[port].take()] == [version]
        finally:
            await hub.close()

    asyncio.run(scenario())
    assert all(n.proc.poll() is None for n in cluster.nodes)  # the restarted node outlived the loop


def test_the_event_hub_hears_a_game_whose_primary_froze(cluster: LocalCluster, queue_redis: str,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """A primary that stops answering without closing its connections (``SIGSTOP``, as a
    partition that drops packets) sends no ``sunsubscribe`` and no error: the node's reader
    would wait on it for ever while its replica, promoted, takes the game's moves. The hub
    hears a node's silence (a ``PING`` after a quiet spell, no answer in time), reads the
    slot table again and subscribes the game on its new primary: the next move wakes the
    listener. The node runs again at the end and rejoins as a replica (this test is last in
    the module: the cluster is whole again, with its roles swapped). A node that answers its
    ``PING`` keeps its reader however long it is quiet. And the move itself is held up by the
    frozen node no longer than the store's short socket timeout."""
    import asyncio
    import logging
    import time

    from web import hub as hub_module

    monkeypatch.setattr(hub_module, "QUIET_SECONDS", 0.5)  # a PING every half second, answered or not
    silent = "answered no PING"

    app = _app(cluster, queue_redis)  # the default waits: a long-poll's 30 s does not hold a move up
    client = app.test_client()
    store: Store = app.extensions["canasta"].store
    t = Table(client, four_humans(seed=11))
    primary = store.redis.get_node_from_key(store.keys.state(t.id)).port

    def move() -> int:
        """:func:`_step`, through a failover's retries; the version."""
        deadline = time.monotonic() + 60
        while True:
            try:
                return _step(t)
            except (AssertionError, KeyError):  # a 503 while the slot table moves
                pass
            assert time.monotonic() < deadline, "no move went through the failover"
            time.sleep(0.2)

    async def scenario() -> None:
        hub = hub_module.EventHub(hub_module.connect(cluster.url), store.keys)
        frozen = None
        try:
            listener = hub_module.Listener(t.id, None, store.snapshot(t.id)[1])
            await hub.listen(listener)
            await asyncio.sleep(0.5)
            listener.take()
            version = await asyncio.to_thread(move)
            await asyncio.wait_for(listener.wake.wait(), 10)
            assert [body["version"] for _, body in listener.take()] == [version]
            with caplog.at_level(logging.INFO, logger="canasta.hub"):
                await asyncio.sleep(4 * hub_module.ANSWER_SECONDS)  # quiet, pinged, answering
            assert silent not in caplog.text
            frozen = primary
            with caplog.at_level(logging.INFO, logger="canasta.hub"):
                await asyncio.to_thread(cluster.freeze_primary, primary)
                started = time.monotonic()
                version = await asyncio.to_thread(move)
            # the store's socket gave up on the silent node after the durability timeout and
            # 10 s (it waited the longest long-poll's 30 s and 10 s when one client did both)
            assert time.monotonic() - started < 30
            await asyncio.wait_for(listener.wake.wait(), 20)
            assert [body["version"] for _, body in listener.take()][-1] == version
            assert caplog.text.count(silent) == 1  # once for the whole silence
            version = await asyncio.to_thread(move)  # and the next: the reader is on the new primary
            await asyncio.wait_for(listener.wake.wait(), 10)
            assert [body["version"] for _, body in listener.take()] == [version]
        finally:
            await hub.close()
            if frozen is not None:
                await asyncio.to_thread(cluster.thaw, frozen)

    asyncio.run(scenario())
