"""The HTTP surface: resources, errors as problem+json, preconditions, idempotency, CORS,
rate limits."""

from __future__ import annotations

from typing import Any

import orjson
from api_helpers import Table, auth, four_humans
from flask import Flask
from flask.testing import FlaskClient

import engine
import service
from service import botqueue
from service.store import Store
from tests.conftest_redis import delete_test_keys
from web import Settings, create_app

PROBLEM = "application/problem+json"


def assert_problem(r, status: int, code: str | None = None) -> dict:
    assert r.status_code == status, (r.status_code, r.get_data(as_text=True))
    assert r.mimetype == PROBLEM
    body = r.get_json()
    assert {"type", "title", "status", "detail", "code"} <= set(body)
    assert body["status"] == status
    if code is not None:
        assert body["code"] == code, body
    return body


def test_create_gives_tokens_only_to_humans(client: FlaskClient) -> None:
    r = client.post("/games", json={"preset": "classic", "seats": [{"name": "ann"}, {"bot": "random"}, None, {"name": "dan"}]})
    assert r.status_code == 201
    body = r.get_json()
    assert r.headers["ETag"] == f'"{body["version"]}"'
    assert r.headers["Location"] == f"/games/{body['id']}"
    seats = body["seats"]
    assert [s["token"] is not None for s in seats] == [True, False, False, True]
    assert [s["open"] for s in seats] == [False, False, True, False]
    assert [s["team"] for s in seats] == [0, 1, 0, 1]
    assert body["status"] == "waiting" and body["view"] is None
    assert len({s["token"] for s in seats if s["token"]}) == 2
    assert all(len(s["token"]) == 43 for s in seats if s["token"])


def test_tokens_are_stored_hashed(client: FlaskClient, store: Store) -> None:
    t = Table(client, four_humans())
    raw = store.redis.hget(store.keys.state(t.id), "meta")
    for token in t.tokens.values():
        assert token.encode() not in raw


def test_join_starts_the_game(client: FlaskClient) -> None:
    t = Table(client, {"preset": "classic", "seats": [{"name": "a"}, None, None, {"name": "d"}]})
    r = client.post(f"/games/{t.id}/seats/1", json={"name": "b"})
    assert r.status_code == 200 and r.get_json()["status"] == "waiting"
    assert_problem(client.post(f"/games/{t.id}/seats/1", json={"name": "x"}), 409, "seat_taken")
    assert_problem(client.post(f"/games/{t.id}/seats/9", json={"name": "x"}), 404, "seat_not_found")
    assert_problem(client.post(f"/games/{t.id}/moves", json={"action": {"type": "draw"}},
                               headers=auth(t.tokens[0], **{"If-Match": '"2"'})), 409, "game_not_started")
    r = client.post(f"/games/{t.id}/seats/2", json={"name": "c"})
    joined = r.get_json()
    assert joined["status"] == "playing" and joined["seat"] == 2 and len(joined["token"]) == 43
    view = client.get(f"/games/{t.id}", headers=auth(joined["token"])).get_json()
    assert view["seat"] == 2 and len(view["view"]["hand"]) == 11
    assert view["view"]["commitment"] and len(view["view"]["commitment"]) == 64


def test_views_spectator_and_seat(client: FlaskClient) -> None:
    t = Table(client, four_humans())
    spectator, etag = t.view(None)
    assert spectator["seat"] is None and "hand" not in spectator["view"] and "legal" not in spectator["view"]
    seat0, etag0 = t.view(0)
    assert etag == etag0 == f'"{seat0["version"]}"'
    v = seat0["view"]
    assert len(v["hand"]) == 11 and v["legal"]["to_act"] is True and v["to_act"] == 0
    assert {"pile", "stock_size", "hand_sizes", "totals", "melds", "red_threes", "commitment"} <= set(v)
    assert_problem(client.get(f"/games/{t.id}", headers=auth("x" * 43)), 401, "invalid_token")
    assert_problem(client.get(f"/games/{t.id}", headers={"Authorization": "Basic abc"}), 401, "invalid_token")
    assert_problem(client.get("/games/AAAAAAAAAAAA"), 404, "game_not_found")
    assert_problem(client.get("/games/nope"), 404)


def test_move_preconditions(client: FlaskClient) -> None:
    t = Table(client, four_humans())
    _, etag = t.view(0)
    assert_problem(t.move(0, {"type": "draw"}, None), 428, "precondition_required")
    assert_problem(t.move(0, {"type": "draw"}, '"999"'), 412, "stale_version")
    assert_problem(t.move(0, {"type": "draw"}, 'W/"1"'), 412, "stale_version")
    for malformed in ("1", '"1', '"abc"', '"1",', '"\u0661"', "W/1", '"1" "2"'):
        # no ETag of this API: told so, not that its version is stale; nothing changes
        assert_problem(t.move(0, {"type": "draw"}, malformed), 400, "invalid_parameter")
    assert t.view(0)[1] == etag
    assert_problem(t.move(1, {"type": "draw"}, etag), 403, "not_your_turn")
    r = client.post(f"/games/{t.id}/moves", json={"action": {"type": "draw"}}, headers={"If-Match": etag})
    assert_problem(r, 401, "missing_token")
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    body = assert_problem(t.move(0, {"type": "discard", "card": "9C"}, etag), 422)
    assert body["title"] == "Illegal move" and body["code"] not in ("invalid_request",)
    r = t.move(0, {"type": "draw"}, etag)
    assert r.status_code == 200
    assert r.headers["ETag"] == f'"{int(etag.strip(chr(34))) + 1}"'
    assert len(r.get_json()["view"]["hand"]) == 12
    body = assert_problem(t.move(0, {"type": "draw"}, etag), 412, "stale_version")
    assert body["version"] == int(r.headers["ETag"].strip('"'))
    r2 = t.move(0, {"type": "draw"}, "*")
    body = assert_problem(r2, 422)  # a second draw is illegal, whatever the version
    assert body["code"] != "stale_version"


def test_bad_input_is_never_500(client: FlaskClient, app: Flask) -> None:
    t = Table(client, four_humans())
    _, etag = t.view(0)
    h = auth(t.tokens[0], **{"If-Match": etag})
    url = f"/games/{t.id}/moves"
    assert_problem(client.post(url, data="{}", headers=h, content_type="text/plain"), 415, "unsupported_media_type")
    assert_problem(client.post(url, data="{", headers=h, content_type="application/json"), 400, "invalid_json")
    assert_problem(client.post(url, data="[1]", headers=h, content_type="application/json"), 422, "invalid_request")
    body = assert_problem(client.post(url, json={"action": {"type": "draw"}, "x": 1}, headers=h), 422, "invalid_request")
    assert body["errors"] == {"x": ["Unknown field."]}
    assert_problem(client.post(url, json={"action": {"type": "draw", "x": 1}}, headers=h), 422, "invalid_request")
    assert_problem(client.post(url, json={"action": {"type": "fly"}}, headers=h), 422, "invalid_request")
    assert_problem(client.post(url, json={"action": {"type": "discard", "card": "ZZ"}}, headers=h), 422)
    assert_problem(client.post(url + "?dry_run=maybe", json={"action": {"type": "draw"}}, headers=h), 400)
    # a body shorter than its Content-Length (a client that stopped sending), and JSON with
    # a charset parameter (the content type is parsed only when it is not plain JSON)
    short = client.post(url, data=b'{"action": {"type": "draw"}}', headers=h, content_type="application/json",
                        environ_overrides={"CONTENT_LENGTH": "200"})
    assert_problem(short, 400, "invalid_json")
    ok = client.post(url + "?dry_run=true", data=b'{"action": {"type": "draw"}}', headers=h,
                     content_type="application/json; charset=utf-8")
    assert ok.status_code == 200 and ok.get_json()["dry_run"] is True
    big = b'{"action": {"type": "draw"}, "pad": "' + b"x" * (1024 * 1024 + 10) + b'"}'
    assert_problem(client.post(url, data=big, headers=h, content_type="application/json"), 413, "body_too_large")
    assert_problem(client.post("/games", json={"preset": "nope", "seats": [None, None]}), 422, "invalid_rules")
    assert_problem(client.post("/games", json={"preset": "classic", "seats": [None, None]}), 422, "seat_count")
    assert_problem(client.post("/games", json={"preset": "classic", "seats": [None] * 4, "rules": {"decks": 9}}), 422, "invalid_rules")
    assert_problem(client.post("/games", json={"preset": "classic", "seats": [{"name": "a", "bot": "random"}, None]}), 422)
    assert_problem(client.post("/games", json={"preset": "classic", "seats": [None] * 4, "players": True}), 422)
    assert_problem(client.put("/games"), 405, "method_not_allowed")
    assert_problem(client.get("/nothing"), 404, "not_found")
    assert_problem(client.post(f"/games/{t.id}/moves", json={"action": {"type": "draw"}},
                               headers=auth(t.tokens[0], **{"If-Match": etag, "Idempotency-Key": "a b"})), 400)


def test_a_rule_out_of_its_range_is_refused_with_a_short_detail(client: FlaskClient) -> None:
    """A target of 10^15 once made a game that never ended (docs/rules.md, "Bounds"): 422
    invalid_rules, naming the option and its range, quoting at most 20 digits of the value."""
    seats = [{"bot": "random"}] * 4
    body = assert_problem(client.post("/games", json={"preset": "classic", "seats": seats,
                                                      "rules": {"target_score": 10**15}}), 422, "invalid_rules")
    assert body["detail"] == "target_score must be 1 to 50000, not 1000000000000000"
    body = assert_problem(client.post("/games", json={"preset": "classic", "seats": seats,
                                                      "rules": {"max_hands": -(2**63)}}), 422, "invalid_rules")
    assert body["detail"] == "max_hands must be 1 to 2000, not -9223372036854775808"
    huge = b'{"preset": "classic", "seats": [null, null, null, null], "rules": {"max_hands": ' + b"9" * 4000 + b"}}"
    assert_problem(client.post("/games", data=huge, content_type="application/json"), 400, "invalid_json")
    body = assert_problem(client.post("/games", json={"preset": "classic", "seats": seats,
                                                      "rules": {"target_score": "9" * 1000}}), 422, "invalid_rules")
    assert body["detail"] == "target_score must be 1 to 50000, not a number of more than 20 digits"
    body = assert_problem(client.post("/games", json={"preset": "classic", "seats": seats,
                                                      "rules": {"max_moves_per_hand": None}}), 422, "invalid_rules")
    assert body["detail"].startswith("max_moves_per_hand must be 1 to ")
    r = client.post("/games", json={"preset": "classic", "seats": seats, "rules": {"max_hands": 3}})
    assert r.status_code == 201 and r.get_json()["rules"]["max_hands"] == 3


def test_a_small_body_limit_is_kept(redis_url: str, key_prefix: str) -> None:
    """Bodies under 4 KB are read without Werkzeug's stream: a lower configured limit still
    answers 413."""
    from web import create_app

    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix, "rate_limit_enabled": False,
                      "max_body_bytes": 100})
    client = app.test_client()
    body = {"preset": "classic", "seats": [{"name": "x" * 30}, {"name": "y" * 30}, {"name": "z" * 30}, None]}
    assert_problem(client.post("/games", json=body), 413, "body_too_large")
    assert client.post("/games", json={"preset": "classic", "seats": [None] * 4}).status_code == 201


def test_seed_needs_test_seeds(redis_url: str, key_prefix: str) -> None:
    app = create_app(Settings.from_env({"redis_url": redis_url, "key_prefix": key_prefix, "rate_limit_enabled": False}))
    r = app.test_client().post("/games", json=four_humans(seed=3))
    assert_problem(r, 422, "seed_not_allowed")


def test_seeded_games_deal_the_same(client: FlaskClient) -> None:
    a, b = Table(client, four_humans(seed=11)), Table(client, four_humans(seed=11))
    assert a.view(0)[0]["view"]["hand"] == b.view(0)[0]["view"]["hand"]
    c = Table(client, four_humans(seed=12))
    assert c.view(0)[0]["view"]["commitment"] != a.view(0)[0]["view"]["commitment"]


def test_dry_run_changes_nothing(client: FlaskClient, store: Store) -> None:
    t = Table(client, four_humans())
    before, etag = t.view(0)
    events = store.event_count(t.id)
    r = client.post(f"/games/{t.id}/moves?dry_run=true", json={"action": {"type": "draw"}},
                    headers=auth(t.tokens[0], **{"If-Match": etag}))
    assert r.status_code == 200
    body = r.get_json()
    assert body["dry_run"] is True and body["legal"] is True and body["version"] == before["version"]
    assert body["view"] is None and body["view_withheld"] == "draws_cards"  # the stock's next card stays hidden
    after, etag2 = t.view(0)
    assert etag2 == etag and after["view"]["hand"] == before["view"]["hand"]
    assert store.event_count(t.id) == events


def test_a_cheating_seat_learns_nothing_from_dry_runs(client: FlaskClient, store: Store) -> None:
    """The tries of a seat that wants to peek: draw, take the pile, discard to see the next
    seat's first turn; and what a dry run may show (a meld: only the seat's own cards)."""
    t = Table(client, {"preset": "finnish", "seats": [{"name": f"p{i}"} for i in range(4)], "seed": 32})

    def dry(seat: int, action: dict) -> Any:
        _, etag = t.view(seat)
        return client.post(f"/games/{t.id}/moves?dry_run=true", json={"action": action},
                           headers=auth(t.tokens[seat], **{"If-Match": etag}))

    game = service.load_game(store, t.id)
    seat = game.state.to_act
    for action, reason in (({"type": "draw"}, "draws_cards"),):
        r = dry(seat, action)
        assert r.status_code == 200 and r.get_json()["view"] is None and r.get_json()["view_withheld"] == reason
        assert not set(r.get_json()) - {"id", "status", "version", "preset", "players", "seat", "seats", "view",
                                        "turn_timeout",
                                        "dry_run", "legal", "view_withheld"}
    takes = [a for a in engine.legal_actions(game.state, seat) if a["type"] == "take_pile"]
    assert takes, "this deal lets the seat take the pile: pick another seed"
    for action in takes:
        r = dry(seat, action)
        assert r.get_json()["view"] is None and r.get_json()["view_withheld"] == "takes_pile"
    # an illegal dry run is answered as the move itself would be
    r = dry(seat, {"type": "discard", "card": "AS"})
    assert r.status_code == 422 and r.get_json()["code"] == "must_draw_first"
    # after drawing: a discard would start the next seat's first turn (its red threes)
    _, etag = t.view(seat)
    assert t.move(seat, {"type": "draw"}, etag).status_code == 200
    game = service.load_game(store, t.id)
    shown = 0
    for action in engine.legal_actions(game.state, seat):
        body = dry(seat, action).get_json()
        if action["type"] == "discard":
            assert body["view"] is None and body["view_withheld"] == "ends_turn", body
        elif body["view"] is not None:  # a meld or an add: the seat's own cards, nothing else
            shown += 1
            after = engine.apply(game.state, seat, action)
            assert body["view_withheld"] is None and body["view"] == orjson.loads(orjson.dumps(engine.seat_view(after, seat)))
            assert body["version"] == game.version and body["status"] == "playing"
    assert shown, "this deal lets the seat meld after its draw: pick another seed"
    assert service.load_game(store, t.id).version == game.version


def test_idempotency_key(client: FlaskClient, store: Store) -> None:
    t = Table(client, four_humans())
    _, etag = t.view(0)
    first = t.move(0, {"type": "draw"}, etag, **{"Idempotency-Key": "k-1"})
    assert first.status_code == 200
    events = store.event_count(t.id)
    again = t.move(0, {"type": "draw"}, etag, **{"Idempotency-Key": "k-1"})
    assert again.status_code == 200 and again.headers.get("Idempotent-Replayed") == "true"
    assert again.get_json() == first.get_json() and again.headers["ETag"] == first.headers["ETag"]
    assert store.event_count(t.id) == events
    other = t.move(0, {"type": "discard", "card": "9C"}, etag, **{"Idempotency-Key": "k-1"})
    assert_problem(other, 422, "idempotency_key_reused")
    ttl = store.redis.ttl(store.keys.idem(t.id, 0, __import__("hashlib").sha256(b"k-1").hexdigest()[:40]))
    assert 0 < ttl <= 24 * 3600


def test_log_only_after_the_game(client: FlaskClient, store: Store, settings: Settings) -> None:
    t = Table(client, four_humans())
    assert_problem(client.get(f"/games/{t.id}/log"), 403, "game_not_over")
    lines = [orjson.loads(x) for x in store.read_log(t.id)]
    assert lines[0]["log"] == "canasta-log/1" and lines[0]["game"] == t.id
    assert lines[0]["rules"] == engine.resolve("classic").to_dict()
    assert [s["name"] for s in lines[0]["seats"]] == ["p0", "p1", "p2", "p3"]
    deal = lines[1]
    assert deal["deal"] == 1 and len(deal["deck"]) == 108
    assert engine.commitment(deal["salt"], deal["deck"]) == deal["commitment"]
    # a game in progress expires when nobody moves it for the idle time (each change renews it)
    meta = orjson.loads(store.redis.hget(store.keys.state(t.id), "meta"))
    assert meta["status"] == "playing"
    assert settings.idle_seconds - 60 < store.redis.ttl(store.keys.state(t.id)) <= settings.idle_seconds


def test_rules_and_health(client: FlaskClient) -> None:
    presets = client.get("/rules").get_json()["presets"]
    assert {p["name"] for p in presets} == set(engine.PRESETS)
    r = client.get("/rules/wiki?players=6").get_json()
    assert r["rules"]["players"] == 6 and r["rules"]["decks"] == 3
    assert_problem(client.get("/rules/nope"), 404, "preset_not_found")
    assert_problem(client.get("/rules/classic?players=3"), 422, "invalid_rules")
    for other in ("\u00b2", "\u0664"):  # a superscript two (a 500: int() refuses it), an Arabic-Indic four
        assert_problem(client.get("/rules/classic", query_string={"players": other}), 400, "invalid_parameter")
    assert client.get("/healthz").get_json() == {"status": "ok", "rate_limiter_failures": 0}
    assert client.get("/readyz").get_json() == {"status": "ready"}
    assert client.get("/openapi.yaml").data.startswith(b"openapi: 3.1")


def test_readyz_without_redis() -> None:
    app = create_app({"redis_url": "redis://127.0.0.1:1/0", "rate_limit_enabled": True})
    c = app.test_client()
    assert c.get("/healthz").status_code == 200
    assert_problem(c.get("/readyz"), 503, "redis_unavailable")
    assert_problem(c.get("/games/AAAAAAAAAAAA"), 503, "redis_unavailable")
    # the limiter could not count that request: it went through, logged and counted
    assert c.get("/healthz").get_json()["rate_limiter_failures"] == 1


def test_rate_limit_counters_of_one_identity_share_a_slot() -> None:
    """On a cluster the counters of one request are counted per hash slot: a token's own
    counters (all requests, hints) share one, an address has its own."""
    from redis.crc import key_slot

    from service.keys import Keys

    k = Keys("canasta")
    tok, hint = k.rate("tok", "ab" * 16, 10), k.rate("hint", "ab" * 16, 10)
    assert key_slot(tok.encode()) == key_slot(hint.encode())
    assert k.rate("addr", "{10.0.0.1}", 10) == "canasta:rl:{10.0.0.1}:addr:10"  # braces from a forged header go


def test_cors(redis_url: str, key_prefix: str) -> None:
    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix, "cors_origins": "https://a.example",
                      "rate_limit_enabled": False})
    c = app.test_client()
    r = c.options("/games", headers={"Origin": "https://a.example", "Access-Control-Request-Method": "POST",
                                     "Access-Control-Request-Headers": "content-type"})
    assert r.status_code == 204
    assert r.headers["Access-Control-Allow-Origin"] == "https://a.example"
    assert "If-Match" in r.headers["Access-Control-Allow-Headers"]
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    r = c.get("/rules", headers={"Origin": "https://a.example"})
    assert r.headers["Access-Control-Allow-Origin"] == "https://a.example" and "ETag" in r.headers["Access-Control-Expose-Headers"]
    r = c.get("/rules", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in r.headers
    r = c.options("/games", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_rate_limit(redis_url: str, key_prefix: str) -> None:
    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix + ":rl-test", "rate_limit_per_address": 5,
                      "rate_limit_window": 30})
    c = app.test_client()
    statuses = [c.get("/rules").status_code for _ in range(7)]
    assert statuses[:5] == [200] * 5 and statuses[5:] == [429, 429]
    r = c.get("/rules")
    body = assert_problem(r, 429, "rate_limited")
    assert 1 <= int(r.headers["Retry-After"]) <= 30 and body["detail"]
    assert c.get("/healthz").status_code == 200  # probes are not limited
    other = c.get("/rules", environ_base={"REMOTE_ADDR": "127.0.0.9"})
    assert other.status_code == 200
    Store(app.extensions["canasta"].store.redis, key_prefix + ":rl-test").delete_all()


def test_rate_limit_per_token(redis_url: str, key_prefix: str) -> None:
    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix + ":rt-test", "rate_limit_per_token": 3,
                      "rate_limit_per_address": 0, "test_seeds": True})
    c = app.test_client()
    t = Table(c, four_humans())
    statuses = [c.get(f"/games/{t.id}", headers=auth(t.tokens[1])).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    assert c.get(f"/games/{t.id}", headers=auth(t.tokens[2])).status_code == 200
    Store(app.extensions["canasta"].store.redis, key_prefix + ":rt-test").delete_all()


def test_a_token_sent_as_access_token_is_counted_as_that_token(redis_url: str, key_prefix: str) -> None:
    """The events route takes the token in ``?access_token=`` (EventSource sends no headers):
    the same token, so the same per-token limit. Counted only by its Authorization header, a
    seat escaped its limit by sending the token in the query (only the address counted)."""
    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix + ":rt-query", "rate_limit_per_token": 3,
                      "rate_limit_per_address": 0, "test_seeds": True})
    c = app.test_client()
    try:
        t = Table(c, four_humans())
        statuses = [c.get(f"/games/{t.id}/events?after=0&access_token={t.tokens[1]}").status_code for _ in range(2)]
        statuses += [c.get(f"/games/{t.id}/events?after=0", headers=auth(t.tokens[1])).status_code for _ in range(2)]
        assert statuses == [200, 200, 200, 429]
        assert c.get(f"/games/{t.id}/events?after=0&access_token={t.tokens[2]}").status_code == 200
    finally:
        Store(app.extensions["canasta"].store.redis, key_prefix + ":rt-query").delete_all()


def test_seat_to_bot_and_bot_hook(redis_url: str, key_prefix: str) -> None:
    """A change after which a bot is to act hands the turn to the bot queue (by name: the
    API does not import the worker); one after which a person is to act does not. (A prefix
    of its own: no bot worker of another test takes the job from its queue.)"""
    app = create_app({"redis_url": redis_url, "key_prefix": key_prefix + ":hook", "test_seeds": True,
                      "rate_limit_enabled": False})
    client = app.test_client()
    store = app.extensions["canasta"].store
    try:
        _seat_to_bot_and_bot_hook(client, store)
    finally:
        delete_test_keys(store.queue, store.keys.prefix)


def _seat_to_bot_and_bot_hook(client: FlaskClient, store: Store) -> None:
    queue = botqueue.rq_queue(store.queue, botqueue.config_for(store.keys.prefix))
    awaiting = botqueue.BotKeys(store.keys.prefix).awaiting()

    def calls() -> list[tuple[str, int | None]]:
        jobs = [jid for jid in queue.job_ids if jid.startswith(f"bot-{t.id}-")]
        score = store.queue.zscore(awaiting, t.id)
        return [(jid, int(score) if score is not None else None) for jid in jobs]

    t = Table(client, {"preset": "classic", "seats": [{"name": "a"}, None, {"name": "c"}, None], "seed": 1})
    assert_problem(client.post(f"/games/{t.id}/seats/1/bot", json={"bot": "greedy"}), 401, "missing_token")
    assert_problem(client.post(f"/games/{t.id}/seats/1/bot", json={"bot": "nobody"}, headers=auth(t.tokens[0])), 422)
    r = client.post(f"/games/{t.id}/seats/1/bot", json={"bot": "greedy"}, headers=auth(t.tokens[2]))
    assert r.status_code == 200 and r.get_json()["seats"][1]["bot"] == "greedy" and r.get_json()["seat"] == 2
    r = client.post(f"/games/{t.id}/seats/3/bot", json={"bot": "random"}, headers=auth(t.tokens[0]))
    assert r.get_json()["status"] == "playing"
    assert calls() == []  # seat 0 plays first: a person
    view, etag = t.view(0)
    r = t.move(0, {"type": "draw"}, etag)
    view = r.get_json()["view"]
    card = view["legal"]["discards"][0]
    r = t.move(0, {"type": "discard", "card": card}, r.headers["ETag"])
    assert r.status_code == 200 and r.get_json()["view"]["to_act"] == 1
    version = r.get_json()["version"]
    assert calls() == [(botqueue.job_id(t.id, version), version)]
    assert queue.fetch_job(botqueue.job_id(t.id, version)).func_name == botqueue.JOB_FUNC == "worker.jobs.play_bot_turns"
    # the person who handed seat 0 over keeps reading it but no longer moves it
    client.post(f"/games/{t.id}/seats/0/bot", json={"bot": "random"}, headers=auth(t.tokens[0]))
    _, etag = t.view(0)
    assert_problem(t.move(0, {"type": "draw"}, etag), 403, "seat_is_bot")


def test_hint(client: FlaskClient) -> None:
    t = Table(client, four_humans())
    assert_problem(client.get(f"/games/{t.id}/hint"), 401, "missing_token")
    assert_problem(client.get(f"/games/{t.id}/hint?bot=nobody", headers=auth(t.tokens[0])), 400)
    assert_problem(client.get(f"/games/{t.id}/hint", headers=auth(t.tokens[1])), 403, "not_your_turn")
    r = client.get(f"/games/{t.id}/hint?bot=random", headers=auth(t.tokens[0]))
    assert r.status_code == 200 and r.get_json()["action"]["type"] == "draw"


def test_the_store_recovers_when_redis_comes_back() -> None:
    """Each thread's hot-path connection (Store.execute) is rebuilt after Redis went away:
    503 while it is down, normal answers once a server listens again."""
    from servers.embedded import EmbeddedRedis

    first = EmbeddedRedis()
    url = first.start()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    app = create_app({"redis_url": url, "rate_limit_enabled": False, "test_seeds": True})
    c = app.test_client()
    body = {"preset": "classic", "seats": [{"name": f"p{i}"} for i in range(4)], "seed": 3}
    try:
        created = c.post("/games", json=body)
        assert created.status_code == 201
        game = created.get_json()["id"]
        assert c.get(f"/games/{game}").status_code == 200  # the thread's connection is made
    finally:
        first.stop()
    assert_problem(c.get(f"/games/{game}"), 503, "redis_unavailable")
    second = EmbeddedRedis(port=port)
    second.start()
    try:
        assert_problem(c.get(f"/games/{game}"), 404, "game_not_found")  # a new, empty server
        assert c.post("/games", json=body).status_code == 201
    finally:
        second.stop()


def test_a_view_poller_gets_304_while_the_version_stands(client: FlaskClient) -> None:
    t = Table(client, four_humans(seed=41))
    view, etag = t.view(0)
    token = t.tokens[0]
    same = client.get(f"/games/{t.id}", headers=auth(token, **{"If-None-Match": etag}))
    assert same.status_code == 304 and same.data == b"" and same.headers["ETag"] == etag
    assert client.get(f"/games/{t.id}", headers=auth(token, **{"If-None-Match": f'W/{etag}, "x"'})).status_code == 304
    assert client.get(f"/games/{t.id}", headers=auth(token, **{"If-None-Match": '"999"'})).status_code == 200
    # a bad token is still refused, a move makes the old ETag stale
    assert_problem(client.get(f"/games/{t.id}", headers=auth("A" * 43, **{"If-None-Match": etag})), 401,
                   "invalid_token")
    seat = view["view"]["to_act"]
    _, seat_etag = t.view(seat)
    assert t.move(seat, {"type": "draw"}, seat_etag).status_code == 200
    fresh = client.get(f"/games/{t.id}", headers=auth(token, **{"If-None-Match": etag}))
    assert fresh.status_code == 200 and fresh.headers["ETag"] != etag


def test_if_match_with_a_list_proceeds_when_any_etag_is_current(client: FlaskClient) -> None:
    t = Table(client, four_humans(seed=3))
    view, etag = t.view(0)
    seat = view["view"]["to_act"]
    version = int(etag.strip('"'))
    stale = t.move(seat, {"type": "draw"}, f'"{version + 5}", "{version + 9}"')
    assert stale.status_code == 412 and stale.get_json()["code"] == "stale_version"
    r = t.move(seat, {"type": "draw"}, f'"{version}", "{version + 1}"')  # RFC 9110: any match
    assert r.status_code == 200 and r.headers["ETag"] == f'"{version + 1}"'


def test_a_content_length_of_other_digits_is_a_400(client: FlaskClient) -> None:
    """``str.isdigit`` takes a superscript two, ``int`` does not: a move whose Content-Length
    was ``²`` (a plain WSGI server passes it on; granian refuses it itself) was a 500."""
    t = Table(client, four_humans())
    view, etag = t.view(0)
    r = client.post(f"/games/{t.id}/moves", data=b'{"action": {"type": "draw"}}',
                    headers=auth(t.tokens[view["view"]["to_act"]], **{"Content-Type": "application/json", "If-Match": etag}),
                    environ_overrides={"CONTENT_LENGTH": "\u00b2"})
    assert_problem(r, 400, "invalid_json")
    assert t.view(0)[1] == etag
