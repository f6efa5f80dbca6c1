"""POST /replay: a game log turned into the game's positions, or a problem naming its first bad line."""

from __future__ import annotations

import random

import orjson
import pytest
from flask.testing import FlaskClient

import engine
from bots.simulate import play_game
from cli.engine_cmds import random_policy
from replay.log import encode_log
from service.config import Settings
from service.store import Store
from web import create_app

NDJSON = "application/x-ndjson"


def _log(preset: str = "classic", seed: int = 11) -> tuple[bytes, engine.State]:
    rules = engine.resolve(preset, None, {"target_score": 500})
    record = play_game(rules, random.Random(seed), random_policy(random.Random(seed)))
    assert record.final is not None
    return encode_log(record.log_lines("g-web-test")), record.final


def test_a_log_is_answered_with_its_positions(client: FlaskClient) -> None:
    data, final = _log()
    r = client.post("/replay", data=data, content_type=NDJSON)
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert body["finished"] and body["header"]["game"] == "g-web-test"
    moves = data.count(b'"move":')
    assert len(body["frames"]) == moves + data.count(b'"deal":')
    last = body["frames"][-1]
    assert last["view"]["result"] == final.game_result and last["move"] == final.moves
    assert r.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(("body", "code", "line"), [
    (b"", "missing_header", None),
    (b'{"log": "canasta-log/1", "preset": "classic"}\n{oops\n', "not_json", 2),
    (b'{"log": "canasta-log/1", "preset": "nonesuch"}\n', "invalid_rules", 1),
    (b'{"log": "canasta-log/1", "preset": "classic"}\n{"move": 1, "seat": 0, "action": {"type": "draw"}}\n',
     "hand_not_started", 2),
])
def test_a_bad_log_is_a_problem_naming_its_line(client: FlaskClient, body: bytes, code: str, line: int | None) -> None:
    r = client.post("/replay", data=body, content_type=NDJSON)
    assert r.status_code == 422 and r.mimetype == "application/problem+json"
    problem = r.get_json()
    assert problem["code"] == code and problem.get("line") == line, problem
    assert problem["detail"]


def test_an_illegal_move_in_the_log_gets_the_engines_code(client: FlaskClient) -> None:
    data, _ = _log()
    lines = [orjson.loads(x) for x in data.splitlines()]
    at = next(i for i, x in enumerate(lines) if x.get("action", {}).get("type") == "draw")
    lines[at]["action"] = {"type": "pass"}  # pass while the stock has cards
    r = client.post("/replay", data=encode_log(lines), content_type=NDJSON)
    assert r.status_code == 422
    problem = r.get_json()
    assert problem["code"] == "stock_not_empty" and problem["line"] == at + 1 and problem["move"] == lines[at]["move"]


def test_only_a_log_media_type_is_accepted(client: FlaskClient) -> None:
    data, _ = _log()
    r = client.post("/replay", data=data, content_type="application/json")
    assert r.status_code == 415 and r.get_json()["code"] == "unsupported_media_type"
    assert client.post("/replay", data=data, content_type="application/jsonl").status_code == 200


def test_a_log_over_the_body_limit_is_413(settings: Settings) -> None:
    small = create_app(settings.with_overrides({"max_body_bytes": 8192}))
    data, _ = _log()
    assert len(data) > 8192
    r = small.test_client().post("/replay", data=data, content_type=NDJSON)
    assert r.status_code == 413 and r.get_json()["code"] == "body_too_large"


def test_replays_have_their_own_limit_per_address(settings: Settings) -> None:
    """A replay runs a whole game through the engine and needs no token: an address gets
    ``rate_limit_replays_per_address`` of them a window, whatever its general allowance."""
    prefix = settings.key_prefix + ":replay-limit"
    app = create_app(settings.with_overrides({"key_prefix": prefix, "rate_limit_enabled": True, "rate_limit_per_address": 100,
                                              "rate_limit_replays_per_address": 2, "rate_limit_window": 30}))
    c = app.test_client()
    try:
        data, _ = _log()
        statuses = [c.post("/replay", data=data, content_type=NDJSON).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]
        r = c.post("/replay", data=data, content_type=NDJSON)
        assert r.status_code == 429 and r.mimetype == "application/problem+json"
        assert r.get_json()["code"] == "rate_limited" and 1 <= int(r.headers["Retry-After"]) <= 30
        assert c.get("/rules").status_code == 200  # the address's other requests go on
        other = c.post("/replay", data=data, content_type=NDJSON, environ_base={"REMOTE_ADDR": "127.0.0.9"})
        assert other.status_code == 200
    finally:
        Store(app.extensions["canasta"].store.redis, prefix).delete_all()
