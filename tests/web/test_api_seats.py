"""Who controls a seat, tried over HTTP by a cheating seat: only a seat's own token hands it to
a bot and takes it back; any seat fills an open seat; another seat may bot a person's seat
only once it has been to act for longer than the game's turn timeout (Redis server time)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from api_helpers import Table, auth
from flask.testing import FlaskClient

import service
from service.store import Store


def four(turn_timeout: int | None = None, seats: list[Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"preset": "classic", "seed": 5,
                            "seats": seats or [{"name": f"p{i}"} for i in range(4)]}
    if turn_timeout is not None:
        body["turn_timeout"] = turn_timeout
    return body


def hand(client: FlaskClient, t: Table, seat: int, by: int | None, bot: str = "greedy") -> Any:
    return client.post(f"/games/{t.id}/seats/{seat}/bot", json={"bot": bot},
                       headers=auth(t.tokens[by] if by is not None else None))


def take_back(client: FlaskClient, t: Table, seat: int, by: int | None) -> Any:
    return client.delete(f"/games/{t.id}/seats/{seat}/bot", headers=auth(t.tokens[by] if by is not None else None))


def problem(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.get_json())
    assert r.mimetype == "application/problem+json"
    body = r.get_json()
    assert body["code"] == code, body
    return body


def seat_events(client: FlaskClient, t: Table, reader: int | None) -> list[dict[str, Any]]:
    page = client.get(f"/games/{t.id}/events?after=0", headers=auth(t.tokens[reader] if reader is not None else None))
    return [e for e in page.get_json()["events"] if e["type"] in ("bot", "bot_removed")]


def test_turn_timeout_is_a_validated_game_setting(client: FlaskClient) -> None:
    t = Table(client, four())
    assert t.created["turn_timeout"] == service.DEFAULT_TURN_TIMEOUT == 300
    assert Table(client, four(0)).view(None)[0]["turn_timeout"] == 0
    assert Table(client, four(45)).view(1)[0]["turn_timeout"] == 45
    for bad in (-1, 7 * 24 * 3600 + 1, "60", 1.5, True, None):
        problem(client.post("/games", json={**four(), "turn_timeout": bad}), 422, "invalid_request")


def test_a_seat_cannot_bot_a_person_who_is_not_idle(client: FlaskClient, store: Store) -> None:
    t = Table(client, four(turn_timeout=2))  # the refusals below have over a second to spare
    to_act = t.created["view"]["to_act"]
    other, bystander = (to_act + 1) % 4, (to_act + 2) % 4
    before = service.load_game(store, t.id).version
    problem(hand(client, t, to_act, None), 401, "missing_token")
    r = client.post(f"/games/{t.id}/seats/{to_act}/bot", json={"bot": "greedy"},
                    headers={"Authorization": "Bearer " + "x" * 43})
    problem(r, 401, "invalid_token")
    body = problem(hand(client, t, to_act, other), 403, "seat_not_idle")  # to act, but only just
    assert body["turn_timeout"] == 2 and 0 <= body["idle_seconds"] <= 2
    problem(hand(client, t, bystander, other), 403, "not_seat_owner")  # not to act at all
    problem(take_back(client, t, to_act, other), 403, "not_seat_owner")
    assert service.load_game(store, t.id).version == before  # nothing changed
    # the seat to act moves: its clock restarts, so waiting out the first timeout is not enough
    time.sleep(1.3)
    _, etag = t.view(to_act)
    assert t.move(to_act, {"type": "draw"}, etag).status_code == 200
    time.sleep(0.8)  # 2.1 s since the game began, 0.8 s since the move
    problem(hand(client, t, to_act, other), 403, "seat_not_idle")
    # idle past the timeout: any seat may hand it to a bot; the event says who and why
    time.sleep(1.4)
    r = hand(client, t, to_act, other)
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["seat"] == other and r.get_json()["seats"][to_act]["bot"] == "greedy"
    problem(hand(client, t, to_act, bystander, "random"), 409, "already_bot")  # no second takeover
    events = seat_events(client, t, bystander)
    assert [e["data"] for e in events] == [{"seat": to_act, "bot": "greedy", "by": other, "reason": "turn_timeout"}]
    # the person takes the seat back (only with its own token) and plays again
    problem(take_back(client, t, to_act, bystander), 403, "not_seat_owner")
    r = take_back(client, t, to_act, to_act)
    assert r.status_code == 200 and r.get_json()["seats"][to_act]["bot"] is None
    problem(take_back(client, t, to_act, to_act), 409, "seat_not_bot")
    assert seat_events(client, t, None)[-1]["data"] == {"seat": to_act, "bot": "greedy", "by": to_act}
    # taking it back restarted its clock: no immediate second takeover
    problem(hand(client, t, to_act, other), 403, "seat_not_idle")
    view, etag = t.view(to_act)
    card = view["view"]["legal"]["discards"][0]
    assert t.move(to_act, {"type": "discard", "card": card}, etag).status_code == 200


def test_a_game_without_turn_timeout_never_lets_another_seat_take_over(client: FlaskClient) -> None:
    t = Table(client, four(turn_timeout=0))
    to_act = t.created["view"]["to_act"]
    time.sleep(1.1)
    problem(hand(client, t, to_act, (to_act + 1) % 4), 403, "turn_timeout_disabled")
    assert hand(client, t, to_act, to_act).status_code == 200  # its own token still may


def test_play_for_me_and_open_seats(client: FlaskClient, store: Store) -> None:
    t = Table(client, four(seats=[{"name": "ann"}, None, {"bot": "random"}, {"name": "dan"}]))
    assert t.created["status"] == "waiting"
    problem(hand(client, t, 3, 0), 403, "not_seat_owner")  # dan's seat, game not started
    problem(hand(client, t, 2, 0, "greedy"), 409, "seat_taken")  # a bot seat belongs to nobody
    problem(take_back(client, t, 2, 0), 403, "not_seat_owner")
    problem(hand(client, t, 7, 0), 404, "seat_not_found")
    r = hand(client, t, 1, 3, "random")  # any seat fills an open seat: the game starts
    assert r.status_code == 200 and r.get_json()["status"] == "playing"
    r = hand(client, t, 3, 3)  # "play for me", whenever
    assert r.status_code == 200 and r.get_json()["seats"][3]["bot"] == "greedy"
    r = hand(client, t, 3, 3, "expert")  # and another bot
    assert r.status_code == 200 and r.get_json()["seats"][3]["bot"] == "expert"
    reasons = [(e["data"]["seat"], e["data"]["by"], e["data"]["reason"]) for e in seat_events(client, t, 0)]
    assert reasons == [(1, 3, "open_seat"), (3, 3, "owner"), (3, 3, "owner")]
    # a person whose seat a bot plays reads it but does not move it, until taking it back
    view, etag = t.view(0)
    assert view["view"]["to_act"] == 0
    assert hand(client, t, 0, 0).status_code == 200
    view, etag = t.view(0)
    problem(t.move(0, {"type": "draw"}, etag), 403, "seat_is_bot")
    assert take_back(client, t, 0, 0).status_code == 200
    view, etag = t.view(0)
    assert t.move(0, {"type": "draw"}, etag).status_code == 200


def test_the_turn_clock_is_the_redis_servers(client: FlaskClient, store: Store) -> None:
    """Every API process compares against the same clock: the commit records Redis TIME."""
    t = Table(client, four())
    record = store.load(t.id)
    assert record is not None and record.turn_at is not None
    assert abs(store.server_time_ms(t.id) - record.turn_at) < 5_000
    _, etag = t.view(0)
    before = record.turn_at
    time.sleep(0.01)
    assert t.move(0, {"type": "draw"}, etag).status_code == 200
    moved = store.load(t.id).turn_at
    assert moved > before
    time.sleep(0.01)
    assert hand(client, t, 2, 2).status_code == 200  # another seat's change does not restart seat 0's wait
    assert store.load(t.id).turn_at == moved


@pytest.mark.parametrize("method", ["post", "delete"])
def test_a_finished_game_changes_no_seat(client: FlaskClient, store: Store, method: str) -> None:
    t = Table(client, four(seats=[{"name": "a"}, {"bot": "random"}, {"bot": "random"}, {"bot": "random"}]))
    record = store.load(t.id)
    assert record is not None
    meta = {**record.meta, "status": "over"}  # as if the game had been played to its end
    event = service.games._event_fields(service.games._envelope("move", meta, None), {None: {}})
    assert store.commit(t.id, record.version, meta=meta, state=None, event=event, log_lines=[], ttl=60).outcome == "ok"
    r = hand(client, t, 0, 0) if method == "post" else take_back(client, t, 0, 0)
    problem(r, 409, "game_over")
