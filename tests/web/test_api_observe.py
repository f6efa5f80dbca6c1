"""Request ids, access lines and metrics in one process (web.observe, service.metrics, service.logs):
through Flask's WSGI app (``web:create_app()``, no granian) and the ASGI app's two paths (the
event loop's and Flask's). The same over real ``canasta serve`` processes:
``test_api_metrics_serve.py``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from api_helpers import Table, auth, four_humans
from asgi_driver import AsgiDriver
from flask import Flask
from flask.testing import FlaskClient
from metrics_helpers import total, value

from service import botqueue, metrics
from service.logs import JsonFormatter
from service.store import Store, connect
from tests.conftest_redis import queue_client
from web import Settings, create_app
from web.observe import REQUEST_ID_RE, Routes

ACCESS = "canasta.access"


def _lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The access lines logged, as the JSON formatter writes them."""
    out = []
    for record in caplog.records:
        if record.name == ACCESS:
            line = JsonFormatter().format(record)
            assert "\n" not in line
            out.append(json.loads(line))
    return out


def _line(caplog: pytest.LogCaptureFixture, request_id: str) -> dict[str, Any]:
    (found,) = [line for line in _lines(caplog) if line["request_id"] == request_id]
    return found


def _get(client: FlaskClient, path: str, **kwargs: Any) -> Any:
    r = client.get(path, **kwargs)
    r.get_data()  # the request ends (and is logged) when its body is read to its end
    return r


def _scrape(client: FlaskClient) -> str:
    r = _get(client, "/metrics")
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return r.get_data(as_text=True)


# -- request ids ------------------------------------------------------------------------------
@pytest.mark.parametrize("given", ["abc-1.X_y", "a" * 64, "0"])
def test_a_well_formed_request_id_is_taken(client: FlaskClient, given: str,
                                           caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, ACCESS):
        r = _get(client, "/healthz", headers={"X-Request-Id": given})
    assert r.headers["X-Request-Id"] == given
    assert _line(caplog, given)["route"] == "/healthz"


@pytest.mark.parametrize("given", ["x" * 65, "x" * 10_240, "a b", "a\nb", "a\r\nSet-Cookie: x=1", "ab\x00", "é", ""])
def test_a_malformed_request_id_is_replaced_never_echoed(client: FlaskClient, given: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, ACCESS):
        # in the environ itself: Werkzeug's test client refuses a newline in a header it sends
        r = _get(client, "/healthz", environ_overrides={"HTTP_X_REQUEST_ID": given})
    made = r.headers["X-Request-Id"]
    assert made != given and REQUEST_ID_RE.fullmatch(made) and len(made) == 16
    line = _line(caplog, made)
    assert given not in json.dumps(line) or not given


def test_the_loop_and_flask_replace_a_malformed_id_alike(pair_apps: tuple[AsgiDriver, AsgiDriver],
                                                         caplog: pytest.LogCaptureFixture) -> None:
    for driver in pair_apps:
        with caplog.at_level(logging.INFO, ACCESS):
            r = driver.request("GET", "/healthz", [("X-Request-Id", "a\nb" + "x" * 100)])
        made = r.header("x-request-id")
        assert made is not None and REQUEST_ID_RE.fullmatch(made) and "\n" not in made
        assert _line(caplog, made)["status"] == 200


def test_every_answer_carries_its_id_on_both_paths(pair_apps: tuple[AsgiDriver, AsgiDriver],
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Success, problem and 304, answered on the event loop and through Flask: the id sent
    comes back, and the access line names the game and its version."""
    for n, driver in enumerate(pair_apps):
        created = driver.request("POST", "/games", [("Content-Type", "application/json"), ("X-Request-Id", f"c{n}")],
                                 orjson.dumps(four_humans(seed=3)))
        assert created.status == 201 and created.header("x-request-id") == f"c{n}"
        game = orjson.loads(created.body)
        gid, token = game["id"], game["seats"][0]["token"]
        with caplog.at_level(logging.INFO, ACCESS):
            read = driver.request("GET", f"/games/{gid}", [("Authorization", f"Bearer {token}"), ("X-Request-Id", f"r{n}")])
            etag = read.header("etag")
            same = driver.request("GET", f"/games/{gid}", [("Authorization", f"Bearer {token}"),
                                                          ("If-None-Match", str(etag)), ("X-Request-Id", f"n{n}")])
            refused = driver.request("POST", f"/games/{gid}/moves",
                                     [("Authorization", "Bearer nobody"), ("Content-Type", "application/json"),
                                      ("If-Match", str(etag)), ("X-Request-Id", f"p{n}")], b'{"action": {"type": "draw"}}')
        assert (read.status, same.status, refused.status) == (200, 304, 401)
        for reply, rid in ((read, f"r{n}"), (same, f"n{n}"), (refused, f"p{n}")):
            assert reply.header("x-request-id") == rid
        line = _line(caplog, f"r{n}")
        assert line["route"] == "/games/{game_id}" and line["game"] == gid and line["version"] == game["version"]
        assert line["bytes_out"] == len(read.body) and line["client"] == "127.0.0.1"
        assert _line(caplog, f"n{n}")["status"] == 304
        problem = _line(caplog, f"p{n}")
        assert problem["status"] == 401 and problem["code"] == "invalid_token" and problem["version"] == game["version"]


@pytest.fixture(scope="module")
def pair_apps(redis_url: str, key_prefix: str) -> Iterator[tuple[AsgiDriver, AsgiDriver]]:
    prefix = key_prefix + ":observe"
    base = {"redis_url": redis_url, "key_prefix": prefix, "test_seeds": True, "rate_limit_enabled": False}
    on = AsgiDriver(Settings.from_env(base))
    off = AsgiDriver(Settings.from_env({**base, "loop_routes": False}))
    yield on, off
    on.close()
    off.close()
    Store(connect(redis_url), prefix).delete_all()


def test_a_move_is_one_line_with_its_game_and_version_and_one_sample(pair_apps: tuple[AsgiDriver, AsgiDriver],
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """A move answered on the loop and one answered by Flask: one access line each, and
    each one sample of canasta_move_seconds (the process's own registry here)."""
    for n, driver in enumerate(pair_apps):
        created = orjson.loads(driver.request("POST", "/games", [("Content-Type", "application/json")],
                                              orjson.dumps(four_humans(seed=5))).body)
        gid, version = created["id"], created["version"]
        seat = created["view"]["to_act"]
        token = created["seats"][seat]["token"]
        before = metrics.get().move_seconds.collect()[0]
        count = next(s.value for s in before.samples if s.name.endswith("_count"))
        with caplog.at_level(logging.INFO, ACCESS):
            r = driver.request("POST", f"/games/{gid}/moves",
                               [("Authorization", f"Bearer {token}"), ("Content-Type", "application/json"),
                                ("If-Match", f'"{version}"'), ("X-Request-Id", f"move-{n}")],
                               b'{"action": {"type": "draw"}}')
        assert r.status == 200, r.body
        line = _line(caplog, f"move-{n}")
        assert (line["method"], line["route"], line["path"]) == ("POST", "/games/{game_id}/moves", f"/games/{gid}/moves")
        assert line["game"] == gid and line["version"] == version + 1 and line["code"] is None
        assert isinstance(line["duration_ms"], float) and line["duration_ms"] > 0
        after = metrics.get().move_seconds.collect()[0]
        assert next(s.value for s in after.samples if s.name.endswith("_count")) == count + 1
    assert pair_apps[0].loop_counts()[0] >= 1  # one of them was the loop's


def test_routes_are_the_templates_of_the_contract(app: Flask) -> None:
    routes = Routes.of(app)
    assert routes.match("/games/abcdefghijkl/moves") == ("/games/{game_id}/moves", {"game_id": "abcdefghijkl"})
    assert routes.match("/games/x/seats/2/bot")[0] == "/games/{game_id}/seats/{seat}/bot"
    assert routes.match("/static/js/table.js")[0] == "/static/{filename}"
    assert routes.match("/")[0] == "/" and routes.match("/metrics")[0] == "/metrics"
    for stray in ("/wp-login.php", "/games/a/b/c/d/e", "/games/x/moves/", "//"):
        assert routes.match(stray)[0] == "other"


def test_unknown_paths_and_methods_are_one_label_each(client: FlaskClient) -> None:
    for n in range(5):
        _get(client, f"/probe-{n}.php")
    client.open("/healthz", method="BREW").get_data()
    text = _scrape(client)
    assert value(text, "canasta_http_requests_total", route="other", method="GET", status="404") >= 5
    assert total(text, "canasta_http_requests_total", method="other") >= 1
    assert "probe-" not in text and "BREW" not in text


# -- GET /metrics: who may read it ---------------------------------------------------------------
def test_metrics_without_a_token_answer_loopback_clients_only(client: FlaskClient) -> None:
    assert _get(client, "/metrics").status_code == 200
    assert _get(client, "/metrics", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200
    far = _get(client, "/metrics", environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert far.status_code == 403 and far.get_json()["code"] == "metrics_not_local"
    assert "canasta_" not in far.get_data(as_text=True)
    # a proxy on this box makes every client loopback: a forwarded request is not local
    for header in ("X-Forwarded-For", "Forwarded", "X-Real-IP"):
        proxied = _get(client, "/metrics", headers={header: "203.0.113.9"})
        assert proxied.status_code == 403, header


def test_metrics_with_a_token_need_it_from_everywhere(settings: Settings) -> None:
    client = create_app(settings.with_overrides({"metrics_token": "scrape-me"})).test_client()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic scrape-me"}):
        r = _get(client, "/metrics", headers=headers)
        assert r.status_code == 401 and r.get_json()["code"] == "metrics_token_required"
        assert r.headers["WWW-Authenticate"] == "Bearer"
    far = _get(client, "/metrics", headers={"Authorization": "Bearer scrape-me", "X-Forwarded-For": "198.51.100.1"},
               environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert far.status_code == 200 and "canasta_http_requests_total" in far.get_data(as_text=True)
    assert "scrape-me" not in repr(settings.with_overrides({"metrics_token": "scrape-me"}))


def test_metrics_are_exempt_from_the_rate_limiter(settings: Settings) -> None:
    client = create_app(settings.with_overrides({"rate_limit_enabled": True, "rate_limit_per_address": 2})).test_client()
    statuses = [_get(client, "/rules").status_code for _ in range(3)]
    assert statuses[-1] == 429
    assert all(_get(client, "/metrics").status_code == 200 for _ in range(5))
    text = _scrape(client)
    assert value(text, "canasta_refusals_total", status="429", code="rate_limited") >= 1


def test_refusals_count_whatever_code_a_429_or_503_carries(client: FlaskClient) -> None:
    before = _scrape(client)
    metrics.observe_request("/games", "POST", 429, 0.001, "creation_quota")
    metrics.observe_request("/games", "POST", 503, 0.001, "store_full")
    metrics.observe_request("/games", "POST", 404, 0.001, "game_not_found")  # not a refusal
    after = _scrape(client)
    for status, code in (("429", "creation_quota"), ("503", "store_full")):
        assert value(after, "canasta_refusals_total", status=status, code=code) == \
            value(before, "canasta_refusals_total", status=status, code=code) + 1
    assert value(after, "canasta_refusals_total", status="404", code="game_not_found") == 0


# -- what the metrics count ---------------------------------------------------------------------
def test_games_created_are_counted_and_every_metric_is_exposed(client: FlaskClient) -> None:
    before = value(_scrape(client), "canasta_games_created_total")
    Table(client, four_humans(seed=9))
    text = _scrape(client)
    assert value(text, "canasta_games_created_total") == before + 1
    for name in ("canasta_http_requests_total counter", "canasta_http_request_seconds histogram",
                 "canasta_move_seconds histogram", "canasta_refusals_total counter", "canasta_redis_errors_total counter",
                 "canasta_open_listeners gauge", "canasta_games_created_total counter",
                 "canasta_games_finished_total counter", "canasta_games_expired_total counter",
                 "canasta_bot_queue_depth gauge", "canasta_bot_wait_seconds histogram",
                 "canasta_bot_turn_seconds histogram", "canasta_bot_runs_total counter"):
        assert f"# TYPE {name}\n" in text, name


def test_games_expired_is_counted_by_the_function_the_retention_job_calls(client: FlaskClient) -> None:
    before = value(_scrape(client), "canasta_games_expired_total")
    metrics.count_games_expired(3)
    metrics.count_games_expired(0)
    assert value(_scrape(client), "canasta_games_expired_total") == before + 3


def test_the_queue_depth_is_read_per_lane_at_the_scrape(settings: Settings, redis_url: str, key_prefix: str) -> None:
    prefix = key_prefix + ":depth"
    app = create_app(settings.with_overrides({"key_prefix": prefix}))
    client = app.test_client()
    cfg = botqueue.config_for(prefix)
    queue = queue_client(redis_url)
    try:
        assert value(_scrape(client), "canasta_bot_queue_depth", lane="persons") == 0
        person = botqueue.BotWork(botqueue.PERSONS, "a:depth", 0)  # no share: every run is queued
        for version in (1, 2, 3):  # no worker takes them
            botqueue.enqueue(queue, cfg, "depthgame001", version, person)
        botqueue.enqueue(queue, cfg, "depthgame002", 1, botqueue.BotWork(botqueue.BOTS, "a:depth", 0))
        assert set(botqueue.lane_keys(cfg)) == set(botqueue.lanes(cfg)) == {"persons", "bots"}
        assert value(_scrape(client), "canasta_bot_queue_depth", lane="persons") == 3
        assert value(_scrape(client), "canasta_bot_queue_depth", lane="bots") == 1
    finally:
        for q in botqueue.rq_queues(queue, cfg):
            q.empty()
        Store(connect(redis_url), prefix).delete_all()


def test_open_listeners_follow_the_stream_slots(client: FlaskClient, store: Store) -> None:
    limits = client.application.extensions["canasta"].stream_limits
    before = value(_scrape(client), "canasta_open_listeners")
    releases = [limits.acquire(f"t{n}", "127.0.0.1") for n in range(3)]
    assert value(_scrape(client), "canasta_open_listeners") == before + 3
    for release in releases:
        release()
        release()  # a stream's several ways of ending give its slot back once
    assert value(_scrape(client), "canasta_open_listeners") == before


def test_a_wsgi_event_stream_logs_once_when_it_ends(client: FlaskClient, caplog: pytest.LogCaptureFixture) -> None:
    table = Table(client, four_humans(seed=4))
    with caplog.at_level(logging.INFO, ACCESS):
        r = client.get(f"/games/{table.id}/events", headers=auth(table.tokens[0], Accept="text/event-stream",
                                                                    **{"X-Request-Id": "sse-wsgi"}))
        assert r.headers["X-Request-Id"] == "sse-wsgi"
        assert not [line for line in _lines(caplog) if line["request_id"] == "sse-wsgi"]  # still open
        body = r.get_data()  # the stream ends after sse_max_seconds (1.5 s here)
    line = _line(caplog, "sse-wsgi")
    assert line["status"] == 200 and line["bytes_out"] == len(body) and line["duration_ms"] >= 1000


# -- the shared directory ---------------------------------------------------------------------
def test_a_dead_process_open_things_are_forgotten_its_counts_kept(tmp_path: Path) -> None:
    """What a scrape does for a worker granian respawned: the dead pid's live gauges go, its
    counters and histograms stay (they are part of the totals)."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for name in (f"gauge_livesum_{dead.pid}.db", f"counter_{dead.pid}.db", f"histogram_{dead.pid}.db",
                 f"gauge_livesum_{os.getpid()}.db"):
        (tmp_path / name).write_bytes(b"")
    assert metrics.forget_dead(str(tmp_path)) == [dead.pid]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"counter_{dead.pid}.db", f"histogram_{dead.pid}.db", f"gauge_livesum_{os.getpid()}.db"])
    assert metrics.pid_alive(os.getpid()) and not metrics.pid_alive(dead.pid)


def test_a_fresh_directory_clears_those_of_dead_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{metrics.DIR_PREFIX}{dead.pid}-old"
    stale.mkdir()
    (stale / "counter_1.db").write_bytes(b"")
    mine = metrics.fresh_dir()
    assert not stale.exists() and Path(mine).parent == tmp_path and not os.listdir(mine)
    metrics.remove_dir(mine)
    assert not Path(mine).exists()


def test_loopback_addresses() -> None:
    for address in ("127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"):
        assert metrics.is_loopback(address), address
    for address in ("10.0.0.1", "203.0.113.9", "::ffff:10.0.0.1", "", None, "localhost", "unknown"):
        assert not metrics.is_loopback(address), address
