"""The Python client (client/) against a real server process, a real bot worker and a
real Redis; a loopback proxy loses answers and connections the way networks do."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from proxy import Proxy

from client import (
    NO_RETRY,
    ApiProblem,
    Client,
    Event,
    RetryPolicy,
    Seat,
    SseDecoder,
    StaleVersion,
    Unreachable,
    parse_retry_after,
    tokens_of,
)
from tests.web.api_servers import api_server

ROOT = Path(__file__).resolve().parents[2]
SHORT = {"target_score": 1}  # one hand decides the game


def simple_action(view: dict[str, Any]) -> dict[str, Any]:
    """A legal move from the view's legal summary alone: draw, then discard."""
    legal = view["legal"]
    if legal["must_answer_go_out"]:
        return {"type": "answer_go_out", "yes": False}
    if legal["may_draw"]:
        return {"type": "draw"}
    if legal["may_pass"]:
        return {"type": "pass"}
    if legal["go_out"]:
        return legal["go_out"][0]
    return {"type": "discard", "card": legal["discards"][0]}


def two_people(api: Client, seed: int = 7) -> tuple[str, dict[int, Seat]]:
    game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=seed)
    return game["id"], {n: api.seat(game["id"], token) for n, token in tokens_of(game).items()}


def seat_to_act(seats: dict[int, Seat]) -> Seat:
    for seat in seats.values():
        seat.view()
        if seat.my_turn:
            return seat
    raise AssertionError("no seat is to act")


def play(seats: dict[int, Seat], moves: int, pause: float = 0.0) -> int:
    """Make ``moves`` moves (whoever is to act); returns the game's version after them."""
    version = 0
    for _ in range(moves):
        seat = seat_to_act(seats)
        assert seat.last_view is not None
        version = seat.move(simple_action(seat.last_view["view"]))["version"]
        time.sleep(pause)
    return version


# -- the contract -------------------------------------------------------------------------
ENDPOINTS = {
    ("post", "/games"): "create_game",
    ("get", "/games/{game_id}"): "game",
    ("post", "/games/{game_id}/seats/{seat}"): "join",
    ("post", "/games/{game_id}/seats/{seat}/bot"): "seat_to_bot",
    ("delete", "/games/{game_id}/seats/{seat}/bot"): "take_seat_back",
    ("post", "/games/{game_id}/moves"): "move",
    ("get", "/games/{game_id}/events"): "stream",  # and poll(), long_poll()
    ("get", "/games/{game_id}/log"): "log",
    ("get", "/games/{game_id}/hint"): "hint",
    ("post", "/replay"): "replay",
    ("get", "/"): "table_url",
    ("get", "/rules"): "presets",
    ("get", "/rules/{preset}"): "rules",
    ("get", "/bots"): "bots",
    ("get", "/healthz"): "health",
    ("get", "/readyz"): "ready",
    ("get", "/openapi.yaml"): "openapi",
    ("get", "/metrics"): "metrics",
}


def test_every_endpoint_of_the_contract_has_a_method() -> None:
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    operations = {(method, path) for path, item in spec["paths"].items() for method in item
                  if method in ("get", "post", "put", "patch", "delete")}
    missing = operations - set(ENDPOINTS)
    assert not missing, f"endpoints without a client method: {sorted(missing)}"
    for name in ENDPOINTS.values():
        assert callable(getattr(Client, name)), name
        assert getattr(Client, name).__doc__, f"Client.{name} says what it does"


# -- reading and moving ---------------------------------------------------------------------
def test_create_join_read_and_move_with_the_etag_remembered(api: Client) -> None:
    game = api.create_game("finnish-2p", [{"name": "ann"}, None], seed=3)
    assert game["status"] == "waiting" and game["seats"][1]["open"]
    joined = api.join(game["id"], 1, "bea")
    assert joined["status"] == "playing" and joined["seat"] == 1
    seats = {0: api.seat(game["id"], tokens_of(game)[0]), 1: api.seat(game["id"], joined["token"])}
    seat = seat_to_act(seats)
    held = seat.last_view
    assert seat.etag == f'"{held["version"]}"'
    again = api.game(game["id"], seat.token, if_none_match=seat.etag)
    assert again.status == 304 and again.body is None and again.version == held["version"]
    assert seat.view() is held  # unchanged: the server said 304 and the view held is kept
    after = seat.move({"type": "draw"})
    assert after["version"] == held["version"] + 1
    assert seat.etag == f'"{after["version"]}"' and seat.last_view is after
    assert seat.number in (0, 1) and seat.legal["discards"]
    other = seats[1 - seat.number]
    assert other.view()["version"] == after["version"]  # the other seat reads the new version
    assert other.view(fresh=True)["version"] == after["version"]


def test_a_stale_move_is_raised_with_the_current_version_and_not_retried(api: Client) -> None:
    _, seats = two_people(api)
    seat = seat_to_act(seats)
    twin = api.seat(seat.game_id, seat.token)  # the same seat read by a second device
    twin.view()
    seat.move({"type": "draw"})
    version = seat.last_view["version"]
    with pytest.raises(StaleVersion) as stale:
        twin.move({"type": "draw"})  # decided on the version before the draw
    assert stale.value.status == 412 and stale.value.code == "stale_version"
    assert stale.value.version == version
    assert api.game(seat.game_id).version == version  # nothing was applied
    twin.view()  # read again, decide again
    card = twin.legal["discards"][0]
    assert twin.move({"type": "discard", "card": card})["version"] == version + 1


def test_a_move_whose_answer_was_lost_is_applied_once(server: str) -> None:
    proxy = Proxy(server)
    try:
        with Client(proxy.url) as api:
            game_id, seats = two_people(api, seed=11)
            seat = seat_to_act(seats)
            before = seat.last_view["version"]
            proxy.drop_next_answer()  # the server applies the draw; its answer is lost
            after = seat.move({"type": "draw"})  # the client retries with the same key
            assert proxy.dropped == 1
            assert after["version"] == before + 1
            assert api.game(game_id).version == before + 1  # applied once
            moves = [e for e in api.poll(game_id, after="0").events if e.type == "move"]
            assert len(moves) == 1
    finally:
        proxy.close()


def test_a_join_whose_answer_was_lost_gets_its_token_on_the_retry(server: str) -> None:
    """The join's answer is the seat's only copy of its token: lost on the way back, the
    client's retry (same Idempotency-Key) gets it again, and the token plays the seat."""
    proxy = Proxy(server)
    try:
        with Client(proxy.url) as api:
            game = api.create_game("classic", [{"name": "a"}, None, None, None])
            proxy.drop_next_answer()  # the server seats bea; its answer is lost
            joined = api.join(game["id"], 1, "bea")
            assert proxy.dropped == 1
            assert joined["seat"] == 1 and joined["version"] == game["version"] + 1
            assert api.game(game["id"], joined["token"]).body["seat"] == 1
    finally:
        proxy.close()


def test_a_callers_retry_after_unreachable_reuses_the_key(server: str) -> None:
    proxy = Proxy(server)
    try:
        with Client(proxy.url, retry=NO_RETRY) as api:
            game_id, seats = two_people(api, seed=12)
            seat = seat_to_act(seats)
            before = seat.last_view["version"]
            proxy.drop_next_answer()
            with pytest.raises(Unreachable):
                seat.move({"type": "draw"})
            assert api.game(game_id).version == before + 1  # it was applied all the same
            view = seat.move({"type": "draw"})  # the same move again: the same key, the stored answer
            assert view["version"] == before + 1
            assert seat.legal["discards"]  # the view after the draw
            card = seat.legal["discards"][0]
            assert seat.move({"type": "discard", "card": card})["version"] == before + 2
    finally:
        proxy.close()


def test_errors_are_typed_problems(api: Client) -> None:
    waits: list[float] = []
    api.sleep = waits.append
    game_id, seats = two_people(api, seed=5)
    seat = seat_to_act(seats)
    with pytest.raises(ApiProblem) as illegal:
        seat.move({"type": "discard", "card": seat.last_view["view"]["hand"][0]})  # before drawing
    assert illegal.value.status == 422 and illegal.value.code and illegal.value.detail
    assert illegal.value.body["type"] == f"urn:canasta:problem:{illegal.value.code}"
    other = seats[1 - seat.number]
    with pytest.raises(ApiProblem) as turn:
        other.move({"type": "draw"})
    assert (turn.value.status, turn.value.code) == (403, "not_your_turn")
    with pytest.raises(ApiProblem) as missing:
        api.game("NoSuchGame00")
    assert (missing.value.status, missing.value.code) == (404, "game_not_found")
    with pytest.raises(ApiProblem) as token:
        api.game(game_id, "x" * 43)
    assert (token.value.status, token.value.code) == (401, "invalid_token")
    with pytest.raises(ApiProblem) as precondition:
        api.request("POST", f"/games/{game_id}/moves", token=seat.token, json_body={"action": {"type": "draw"}})
    assert (precondition.value.status, precondition.value.code) == (428, "precondition_required")
    with pytest.raises(ApiProblem) as taken:
        api.join(game_id, 0, "cat")
    assert (taken.value.status, taken.value.code) == (409, "seat_taken")
    assert waits == []  # none of these is worth a retry


def test_rules_health_hint_bots_log_and_replay(api: Client) -> None:
    assert api.health() and api.ready()
    assert "openapi: 3" in api.openapi()
    assert "canasta_http_requests_total" in api.metrics()  # a loopback client
    names = [p["name"] for p in api.presets()]
    assert "finnish" in names
    assert api.rules("finnish", players=4)["rules"]["players"] == 4
    assert [b["name"] for b in api.bots()] == ["random", "greedy", "standard", "expert"]
    game = api.create_game("finnish", [{"name": "ann"}, {"bot": "greedy"}, {"bot": "random"}, {"bot": "greedy"}],
                           rules=SHORT)
    ann = api.seat(game["id"], tokens_of(game)[0])
    deadline = time.monotonic() + 30
    while not ann.view()["view"]["legal"]["to_act"]:
        assert time.monotonic() < deadline, "the bots before ann play their turns"
        time.sleep(0.05)
    hint = ann.hint("greedy")
    assert hint["seat"] == 0 and hint["version"] == ann.last_view["version"] and hint["action"]["type"]
    assert ann.dry_run(hint["action"])["dry_run"] is True
    assert api.game(game["id"]).version == ann.last_view["version"]  # a dry run changes nothing
    assert api.table_url(game["id"], seat=0, token=ann.token) == f"{api.base_url}/#game={game['id']}&seat=0&token={ann.token}"
    assert api.table_url(game["id"], join=2) == f"{api.base_url}/#game={game['id']}&join=2"
    ann.to_bot("greedy")  # a bot plays ann's seat to the end
    assert ann.last_view["seats"][0]["bot"] == "greedy"
    for _ in ann.stream():
        pass  # the iteration ends with the game
    assert ann.view()["status"] == "over"
    lines = api.log(game["id"])
    assert lines[0]["log"] == "canasta-log/1" and "game_end" in lines[-1]
    replay = api.replay(api.log_bytes(game["id"]))
    assert replay["finished"] and replay["frames"][-1]["view"]["phase"] == "over"
    assert api.replay(lines)["frames"] == replay["frames"]


# -- retries ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def strict_server(redis_url: str, key_prefix: str) -> Iterator[str]:
    """A server that rate-limits tokens hard and holds one waiting event reader per address at most."""
    env = {"CANASTA_RATE_LIMIT": "1", "CANASTA_RATE_LIMIT_WINDOW": "1", "CANASTA_RATE_LIMIT_PER_TOKEN": "4",
           "CANASTA_MAX_STREAMS_PER_ADDRESS": "1", "CANASTA_POLL_MAX_WAIT": "2"}
    with api_server(redis_url, key_prefix, threads=4, extra_env=env) as base:
        yield base


def test_rate_limited_requests_wait_as_the_server_says(strict_server: str) -> None:
    waits: list[float] = []
    with Client(strict_server) as api, Client(strict_server, retry=NO_RETRY) as impatient:
        api.sleep = lambda s: (waits.append(s), time.sleep(s))
        _, seats = two_people(api, seed=9)
        seat = seats[0]
        for _ in range(8):  # twice the token's limit in one window
            seat.view(fresh=True)
        assert waits and all(w == 1.0 for w in waits)  # Retry-After: 1
        with pytest.raises(ApiProblem) as limited:
            for _ in range(8):
                impatient.game(seat.game_id, seat.token)
        assert (limited.value.status, limited.value.code) == (429, "rate_limited")
        assert limited.value.retry_after == 1.0


def test_a_stream_over_the_limit_is_retried_after_retry_after(strict_server: str) -> None:
    with Client(strict_server) as api, Client(strict_server, retry=NO_RETRY) as impatient:
        game_id, _ = two_people(api, seed=10)
        last = api.poll(game_id).last_id
        holder = threading.Thread(target=lambda: api.poll(game_id, after=last, wait=2), daemon=True)
        holder.start()  # the address's one stream, for 2 s
        time.sleep(0.3)
        with pytest.raises(ApiProblem) as busy:
            impatient.poll(game_id, after=last, wait=0.5)
        assert (busy.value.status, busy.value.code) == (429, "too_many_streams")
        assert busy.value.retry_after == 5.0
        waits: list[float] = []
        api.sleep = lambda s: (waits.append(s), time.sleep(0.6))  # seen, but not the whole 5 s
        page = api.poll(game_id, after=last, wait=0.5)  # retried until the stream is free
        assert page.events == [] and page.last_id == last
        assert waits and set(waits) == {5.0}
        holder.join(5)


def test_retry_policy() -> None:
    policy = RetryPolicy(attempts=3, backoff=1.0, max_backoff=3.0, max_retry_after=10)
    assert [0.5 <= policy.wait(1) <= 1.0, 1.0 <= policy.wait(2) <= 2.0, 1.5 <= policy.wait(3) <= 3.0] == [True] * 3
    assert policy.wait(4) is None
    assert policy.wait(1, retry_after=7) == 7
    assert policy.wait(1, retry_after=11) is None  # too long to sleep through: the caller decides
    assert NO_RETRY.wait(1) is None
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after("²") is None  # a digit to str.isdigit, not to float()


# -- events -----------------------------------------------------------------------------------
def _follow(events: Any, out: queue.Queue[Event | BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            for event in events:
                out.put(event)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out.put(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _collect_until(out: queue.Queue[Event | BaseException], version: int, timeout: float = 20.0) -> list[Event]:
    got: list[Event] = []
    deadline = time.monotonic() + timeout
    while not got or got[-1].version < version:
        item = out.get(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(item, BaseException):
            raise item
        got.append(item)
    return got


def test_the_stream_resumes_across_server_ends_and_dropped_connections(server: str) -> None:
    proxy = Proxy(server)
    try:
        with Client(server) as api, Client(proxy.url) as reader:
            game_id, seats = two_people(api, seed=21)
            stream = reader.stream(game_id, seats[0].token)
            out: queue.Queue[Event | BaseException] = queue.Queue()
            _follow(stream, out)
            first = _collect_until(out, 0)
            assert first[0].is_snapshot and first[0].body["seat"] == 0
            version = play(seats, 6)
            proxy.cut()  # a dropped connection
            version = play(seats, 6)
            got = first + _collect_until(out, version)
            time.sleep(2.5)  # the server ends streams after 2 s: the client comes back
            version = play(seats, 4)
            got += _collect_until(out, version)
            stream.close()
    finally:
        proxy.close()
    assert stream.connections >= 3 and proxy.cuts == 1
    assert stream.retry_ms == 2000  # the server's retry: was honoured
    assert [e.type for e in got].count("snapshot") == 1  # resumed with Last-Event-ID, not a new snapshot
    versions = [e.version for e in got if not e.is_snapshot]
    assert versions == list(range(got[0].version + 1, version + 1))  # every event once, in order
    drawn = [e.move for e in got if e.move and e.move["action"]["type"] == "draw"]
    assert all(("cards" in m) == (m["seat"] == 0) for m in drawn)  # seat 0 sees only its own cards


def test_a_stream_from_the_views_cursor_tells_a_change_made_before_it_started(api: Client) -> None:
    """A reader that reads the view and then opens the stream must be told what changed in
    between; a stream without a cursor starts with a snapshot and tells it not."""
    _, seats = two_people(api, seed=11)
    mover = seat_to_act(seats)
    reader = next(s for s in seats.values() if s is not mover)
    view, cursor = reader.view_and_cursor()
    mover.move(simple_action(mover.view()["view"]))  # after the read, before the stream
    with reader.stream(last_event_id=cursor) as stream:
        first = next(iter(stream))
    assert not first.is_snapshot and first.version == view["version"] + 1 and first.move is not None
    with reader.stream() as stream:
        assert next(iter(stream)).is_snapshot  # without the cursor: the change folded into a snapshot


def test_the_stream_and_the_long_poll_follow_a_bot_game_to_its_end(api: Client) -> None:
    game = api.create_game("finnish", [{"bot": "greedy"}] * 4, rules=SHORT)
    streamed = list(api.stream(game["id"]))
    polled = list(api.long_poll(game["id"], wait=5))
    for events in (streamed, polled):
        assert events[0].is_snapshot and events[-1].status == "over"
    final = api.game(game["id"]).body
    assert final["status"] == "over" and polled[-1].version == final["version"]
    # resuming from any point gives the events after it, in order
    middle = next(e for e in streamed if not e.is_snapshot and e.version > 1) if len(streamed) > 2 else None
    if middle is not None:
        rest = list(api.long_poll(game["id"], after=middle.id, wait=1))
        assert [e.version for e in rest] == list(range(middle.version + 1, final["version"] + 1))
        sse_rest = list(api.stream(game["id"], last_event_id=middle.id))
        assert [e.version for e in sse_rest] == [e.version for e in rest]


def test_a_stream_refused_for_good_is_raised_at_once(api: Client) -> None:
    game_id, _ = two_people(api, seed=4)
    started = time.monotonic()
    with pytest.raises(ApiProblem) as refused:
        next(iter(api.stream(game_id, "y" * 43)))
    assert (refused.value.status, refused.value.code) == (401, "invalid_token")
    assert time.monotonic() - started < 2
    with pytest.raises(Unreachable):
        next(iter(Client("http://127.0.0.1:9").stream(game_id, max_failures=1)))


def test_the_event_stream_format() -> None:
    decoder = SseDecoder()
    messages = decoder.feed("retry: 2500\r\n\r")
    messages += decoder.feed("\nid: 1-0\r\nevent: move\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: ping\n\n")
    messages += decoder.feed("id: 2-0\rdata: x\r\rid: bad\0id\ndata: y\n")
    messages += decoder.feed("\nevent: empty\n\nretry: \u00b2\n\n")  # not ASCII digits: ignored (9.2.6)
    assert decoder.retry_ms == 2500 and decoder.comments == 1
    assert [(m.event, m.data, m.id) for m in messages] == [
        ("move", '{"a":\n1}', "1-0"), ("message", "x", "2-0"), ("message", "y", "2-0"),
    ]


# -- what needs the fair-play branch's routes ----------------------------------------------
def test_a_seat_is_taken_back_from_its_bot(api: Client) -> None:
    game = api.create_game("finnish", [{"name": "ann"}, {"bot": "greedy"}, {"bot": "greedy"}, {"bot": "greedy"}],
                           rules={"target_score": 50000})
    ann = api.seat(game["id"], tokens_of(game)[0])
    ann.to_bot("greedy")
    assert ann.last_view["seats"][0]["bot"] == "greedy"
    back = ann.take_back()
    assert back["seats"][0]["bot"] is None
    assert ann.etag == f'"{back["version"]}"'


def test_a_game_is_created_with_a_turn_timeout(api: Client) -> None:
    game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], turn_timeout=60)
    assert game["turn_timeout"] == 60  # type: ignore[typeddict-item]


def test_which_answers_are_retried() -> None:
    from client.problems import retryable as _retryable

    def problem(status: int, code: str) -> ApiProblem:
        return ApiProblem(status, {"code": code, "detail": ""})

    assert _retryable(problem(429, "rate_limited"), idempotent=False)  # refused before anything happened
    assert _retryable(problem(409, "conflict"), idempotent=False)  # the server gave up and changed nothing
    assert not _retryable(problem(409, "seat_taken"), idempotent=True)
    assert _retryable(problem(503, "redis_unavailable"), idempotent=True)
    assert not _retryable(problem(503, "redis_unavailable"), idempotent=False)  # it may have happened
    assert not _retryable(problem(412, "stale_version"), idempotent=True)  # the caller decides again
    assert not _retryable(problem(422, "pile_frozen"), idempotent=True)
