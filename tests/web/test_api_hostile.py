"""Hostile clients against real servers on loopback, told apart by their source address: the
quotas per client (games created, games of bots only, API keys), a full store, open streams
per address across processes, and connections that send nothing, send slowly or stall.
Whatever one address does, another address is still served."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from addresses import client_from, session_from, socket_from
from api_servers import api_server

from client import ApiProblem
from service.apikeys import ApiKeys
from service.redis_io import connect

LIMITED = {"CANASTA_RATE_LIMIT": "1", "CANASTA_RATE_LIMIT_PER_ADDRESS": "100000", "CANASTA_RATE_LIMIT_PER_TOKEN": "100000"}
PERSON_AND_BOTS: list[dict[str, Any] | None] = [{"name": "ann"}, {"bot": "random"}, {"bot": "random"},
                                                {"bot": "random"}]
FOUR_BOTS: list[dict[str, Any] | None] = [{"bot": "random"}] * 4


def refused(call: Any, status: int, code: str) -> ApiProblem:
    with pytest.raises(ApiProblem) as caught:
        call()
    problem = caught.value
    assert (problem.status, problem.code) == (status, code), problem.body
    return problem


def games_of_prefix(redis_url: str, prefix: str) -> int:
    client = connect(redis_url)
    try:
        return sum(1 for _ in client.scan_iter(match=f"{prefix}:{{*}}:state", count=1000))
    finally:
        client.close()


@pytest.fixture
def prefix(key_prefix: str) -> str:
    return f"{key_prefix}:h{uuid.uuid4().hex[:6]}"


@pytest.fixture
def quota_server(redis_url: str, prefix: str) -> Iterator[str]:
    env = {**LIMITED, "CANASTA_CREATE_PER_ADDRESS": "5", "CANASTA_BOT_GAMES_PER_ADDRESS": "2"}
    with api_server(redis_url, prefix, extra_env=env) as base:
        yield base


def test_one_address_uses_up_its_creation_quota_and_another_still_creates(quota_server: str, redis_url: str,
                                                                          prefix: str) -> None:
    hostile, other = client_from(quota_server, "127.0.0.2"), client_from(quota_server, "127.0.0.3")
    for _ in range(5):
        hostile.create_game("classic", PERSON_AND_BOTS)
    problem = refused(lambda: hostile.create_game("classic", PERSON_AND_BOTS), 429, "creation_quota")
    assert 0 < float(problem.headers["Retry-After"]) <= 3600 and problem.body["limit"] == 5
    assert games_of_prefix(redis_url, prefix) == 5  # the refused creation wrote nothing
    other.create_game("classic", PERSON_AND_BOTS)
    # an invalid body is refused as such, and does not count on the quota
    refused(lambda: other.create_game("classic", [{"name": "x"}] * 3), 422, "seat_count")
    for _ in range(4):
        other.create_game("classic", PERSON_AND_BOTS)
    refused(lambda: other.create_game("classic", PERSON_AND_BOTS), 429, "creation_quota")


def test_games_of_bots_only_are_limited_per_address(quota_server: str) -> None:
    hostile, other = client_from(quota_server, "127.0.0.4"), client_from(quota_server, "127.0.0.5")
    for _ in range(2):
        hostile.create_game("classic", FOUR_BOTS, rules={"target_score": 100})
    refused(lambda: hostile.create_game("classic", FOUR_BOTS), 429, "too_many_bot_games")
    hostile.create_game("classic", PERSON_AND_BOTS)  # a person's game is not one of them
    other.create_game("classic", FOUR_BOTS)


def test_an_api_key_carries_its_own_quotas_and_is_refused_once_revoked(quota_server: str, redis_url: str,
                                                                       prefix: str) -> None:
    keys = ApiKeys(connect(redis_url), prefix)
    secret, key = keys.issue("cup", games_per_window=8, bot_games=3, bot_runs=2, created="2026-12-06T00:00:00Z")
    stored = connect(redis_url).hgetall(keys.by_hash)
    assert secret.encode() not in b"".join(k + v for k, v in stored.items())  # only its hash is kept
    plain = client_from(quota_server, "127.0.0.6")
    for _ in range(5):
        plain.create_game("classic", PERSON_AND_BOTS)
    refused(lambda: plain.create_game("classic", PERSON_AND_BOTS), 429, "creation_quota")
    site = client_from(quota_server, "127.0.0.6", api_key=secret)  # the same address, with the key
    for _ in range(3):
        site.create_game("classic", FOUR_BOTS, rules={"target_score": 100})
    for _ in range(5):
        site.create_game("classic", PERSON_AND_BOTS)
    refused(lambda: site.create_game("classic", PERSON_AND_BOTS), 429, "creation_quota")
    forged = client_from(quota_server, "127.0.0.6", api_key="ck_" + "A" * 32)
    refused(lambda: forged.create_game("classic", PERSON_AND_BOTS), 401, "invalid_api_key")
    assert keys.revoke(key.id) and not keys.revoke(key.id)
    refused(lambda: site.create_game("classic", PERSON_AND_BOTS), 401, "invalid_api_key")


def test_a_full_store_refuses_new_games_and_plays_on_the_games_in_progress(redis_url: str, prefix: str) -> None:
    with api_server(redis_url, prefix, extra_env=LIMITED) as roomy:
        game = client_from(roomy, "127.0.0.2").create_game("classic", [{"name": n} for n in "abcd"])
    # the same store, as a server that finds it full (its budget: a byte)
    with api_server(redis_url, prefix, extra_env={**LIMITED, "CANASTA_STORE_MAX_BYTES": "1"}) as full:
        client = client_from(full, "127.0.0.2")
        problem = refused(lambda: client.create_game("classic", PERSON_AND_BOTS), 503, "store_full")
        assert int(problem.headers["Retry-After"]) > 0
        seat = client.seat(game["id"], str(game["seats"][0]["token"]))
        assert seat.view()["status"] == "playing"
        assert seat.move({"type": "draw"})["version"] == game["version"] + 1


def test_open_streams_are_counted_per_address_across_api_processes(redis_url: str, prefix: str) -> None:
    env = {**LIMITED, "CANASTA_MAX_STREAMS_PER_ADDRESS": "3", "CANASTA_MAX_STREAMS_PER_TOKEN": "0"}
    with api_server(redis_url, prefix, extra_env=env) as one, api_server(redis_url, prefix, extra_env=env) as two:
        game = client_from(one, "127.0.0.3").create_game("classic", [{"name": n} for n in "abcd"])
        url = f"/games/{game['id']}/events"
        hostile = session_from("127.0.0.7")

        def stream(base: str, session: requests.Session = hostile) -> requests.Response:
            return session.get(base + url, headers={"Accept": "text/event-stream"}, stream=True, timeout=10)

        held = [stream(one), stream(two), stream(one)]
        assert [r.status_code for r in held] == [200, 200, 200]
        fourth = stream(two)  # the other process: the same address's count
        assert fourth.status_code == 429 and fourth.json()["code"] == "too_many_streams"
        other = stream(two, session_from("127.0.0.8"))
        assert other.status_code == 200
        other.close()
        held.pop().close()
        deadline = time.monotonic() + 10  # the server notices the closed stream and gives its slot back
        while (again := stream(two)).status_code == 429 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert again.status_code == 200
        for r in [*held, again]:
            r.close()


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """How long until the server closed ``sock`` (None: still open after ``seconds``)."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def test_connections_that_send_nothing_or_send_slowly_are_closed(redis_url: str, prefix: str) -> None:
    env = {**LIMITED, "CANASTA_HEADER_READ_SECONDS": "1", "CANASTA_BODY_READ_SECONDS": "1"}
    with api_server(redis_url, prefix, extra_env=env) as base:
        idle = [socket_from(base, "127.0.0.9") for _ in range(200)]
        slow_head = socket_from(base, "127.0.0.9")
        slow_head.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        keep_alive = socket_from(base, "127.0.0.9")
        keep_alive.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert keep_alive.recv(65536).startswith(b"HTTP/1.1 200")
        slow_body = socket_from(base, "127.0.0.9")
        slow_body.sendall(b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100\r\n\r\n{\"pre")
        # meanwhile another address is served at once
        started = time.monotonic()
        assert client_from(base, "127.0.0.10", timeout=5).health()
        assert time.monotonic() - started < 1.0
        for sock in (slow_head, keep_alive, *idle[:5]):
            closed = _closed_within(sock, 10)
            assert closed is not None and closed < 5, closed
        slow_body.settimeout(10)
        answer = slow_body.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408") and b"body_timeout" in answer
        for sock in (*idle, slow_head, keep_alive, slow_body):
            sock.close()
