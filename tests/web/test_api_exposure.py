"""Safe to expose: what a hostile client on another address could take or spoof, against a
real server (granian, the event loop's routes on) from addresses of its own.

- A join's stored answer (its seat's token) goes only to whoever made the join: the same
  Idempotency-Key from the same address. Redis keeps no token in clear.
- A move's stored answer goes only to the seat that moved (its own token).
- No cache stores an answer that holds a token or a seat's hand (``Cache-Control``).
- Names that would spoof the table are refused, with a reason.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
import pytest
import redis
import requests
from addresses import client_from, session_from
from api_servers import api_server
from requests.structures import CaseInsensitiveDict

from service import names

HOST, JOINER, THIEF = "127.0.0.4", "127.0.0.2", "127.0.0.3"
PRIVATE, NO_STORE, REVALIDATE = "private, no-store", "no-store", "no-cache"
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def base(redis_url: str, key_prefix: str) -> Iterator[str]:
    with api_server(redis_url, key_prefix, threads=2) as url:
        yield url


@pytest.fixture
def http() -> Iterator[dict[str, requests.Session]]:
    """A session per address: the host, the joiner and the thief."""
    sessions = {addr: session_from(addr) for addr in (HOST, JOINER, THIEF)}
    yield sessions
    for session in sessions.values():
        session.close()


def _create(base: str, s: requests.Session, seats: list[Any], **extra: Any) -> requests.Response:
    r = s.post(f"{base}/games", json={"preset": "classic", "seats": seats, **extra})
    return r


def _waiting_game(base: str, s: requests.Session) -> dict[str, Any]:
    r = _create(base, s, [{"name": "ann"}, None, None, None])
    assert r.status_code == 201, r.text
    return r.json()


def _join(base: str, s: requests.Session, game_id: str, seat: int, name: str, key: str | None) -> requests.Response:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return s.post(f"{base}/games/{game_id}/seats/{seat}", json={"name": name}, headers=headers)


def _everything(r: redis.Redis, prefix: str) -> bytes:
    """Every value under ``prefix``, raw, as one blob (a token in clear would be in it)."""
    blob = []
    for key in r.scan_iter(match=f"{prefix}:*", count=1000):
        kind = r.type(key)
        if kind == b"string":
            blob.append(r.get(key) or b"")
        elif kind == b"hash":
            blob += [k + b"=" + v for k, v in r.hgetall(key).items()]
        elif kind == b"list":
            blob += r.lrange(key, 0, -1)
        elif kind == b"stream":
            blob += [v for _, fields in r.xrange(key) for v in fields.values()]
        blob.append(key)
    return b"\n".join(blob)


# -- a join's token ---------------------------------------------------------------------------
def test_a_join_replayed_from_another_address_does_not_get_the_token(
        base: str, http: dict[str, requests.Session], redis_client: redis.Redis, key_prefix: str) -> None:
    game = _waiting_game(base, http[HOST])
    key = str(uuid.uuid4())
    first = _join(base, http[JOINER], game["id"], 1, "bea", key)
    assert first.status_code == 200, first.text
    token = first.json()["token"]

    stolen = _join(base, http[THIEF], game["id"], 1, "bea", key)  # the same key and name, elsewhere
    assert stolen.status_code == 403 and stolen.json()["code"] == "join_from_elsewhere", stolen.text
    assert token not in stolen.text and stolen.headers["Cache-Control"] == NO_STORE

    again = _join(base, http[JOINER], game["id"], 1, "bea", key)  # the joiner's retry still gets it
    assert again.status_code == 200 and again.json() == first.json(), again.text
    assert again.headers["Idempotent-Replayed"] == "true" and again.headers["Cache-Control"] == PRIVATE
    assert list(again.json()) == list(first.json())  # the same members in the same order

    other = _join(base, http[THIEF], game["id"], 1, "cy", key)  # another name: the key's misuse
    assert other.status_code == 422 and other.json()["code"] == "idempotency_key_reused"
    view = http[HOST].get(f"{base}/games/{game['id']}").json()
    assert view["seats"][1]["name"] == "bea" and view["seats"][2]["open"]

    everything = _everything(redis_client, key_prefix)
    raw = base64.urlsafe_b64decode(token + "=")
    assert token.encode() not in everything and raw not in everything  # only its hash, and sealed
    record = next(redis_client.scan_iter(match=f"{key_prefix}:{{{game['id']}}}:idem:1:join:*"))
    stored = orjson.loads(redis_client.get(record))
    assert stored["body"]["token"] is None and stored["sealed"] and stored["check"]


@pytest.mark.parametrize("key", ["aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1234567890123456789012345",
                                 "abcdefaaaaaaaaaaaaaaaaaa", "too-short-key"])
def test_a_guessable_join_key_is_refused_before_anything_is_written(
        base: str, http: dict[str, requests.Session], redis_client: redis.Redis, key_prefix: str, key: str) -> None:
    game = _waiting_game(base, http[HOST])
    before = _everything(redis_client, key_prefix)
    for address in (JOINER, THIEF):
        r = _join(base, http[address], game["id"], 1, "bea", key)
        assert r.status_code == 422 and r.json()["code"] == "weak_idempotency_key", r.text
        assert r.headers["Content-Type"] == "application/problem+json"
    assert _everything(redis_client, key_prefix) == before
    assert http[HOST].get(f"{base}/games/{game['id']}").json()["seats"][1]["open"]


def test_the_clients_join_keys_pass(base: str) -> None:
    """The Python client makes a key for every join (and sends it again on a retry)."""
    with client_from(base, HOST) as host, client_from(base, JOINER) as joiner:
        game = host.create_game("classic", [{"name": "ann"}, None, None, None])
        for seat in (1, 2, 3):
            joined = joiner.join(game["id"], seat, f"p{seat}")
            assert joined["seat"] == seat and len(joined["token"]) == 43
        assert joiner.game(game["id"], joined["token"]).body["status"] == "playing"


# -- a move's stored answer -------------------------------------------------------------------
def _playing_game(base: str, s: requests.Session) -> tuple[str, dict[int, str]]:
    r = _create(base, s, [{"name": n} for n in ("ann", "bob", "cy", "dee")], seed=3)
    assert r.status_code == 201, r.text
    body = r.json()
    return body["id"], {seat["seat"]: seat["token"] for seat in body["seats"]}


def _auth(token: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **headers}


def _read(base: str, s: requests.Session, game_id: str, token: str | None = None) -> requests.Response:
    return s.get(f"{base}/games/{game_id}", headers=_auth(token) if token else {})


def test_a_move_key_replays_only_to_the_seat_that_moved(base: str, http: dict[str, requests.Session]) -> None:
    game_id, tokens = _playing_game(base, http[HOST])
    read = _read(base, http[HOST], game_id, tokens[0])
    mover = read.json()["view"]["to_act"]
    other = (mover + 1) % 4
    key = str(uuid.uuid4())
    move = {"action": {"type": "draw"}}
    first = http[JOINER].post(f"{base}/games/{game_id}/moves", json=move,
                              headers=_auth(tokens[mover], **{"If-Match": read.headers["ETag"], "Idempotency-Key": key}))
    assert first.status_code == 200, first.text
    hand = first.json()["view"]["hand"]
    # another seat's token with the mover's key: that seat's own answer, never the mover's
    stolen = http[THIEF].post(f"{base}/games/{game_id}/moves", json=move,
                              headers=_auth(tokens[other], **{"If-Match": read.headers["ETag"], "Idempotency-Key": key}))
    plain = http[THIEF].post(f"{base}/games/{game_id}/moves", json=move,
                             headers=_auth(tokens[other], **{"If-Match": read.headers["ETag"],
                                                             "Idempotency-Key": str(uuid.uuid4())}))
    assert stolen.status_code == plain.status_code != 200 and stolen.json()["code"] == plain.json()["code"]
    assert "Idempotent-Replayed" not in stolen.headers and orjson.dumps(hand) not in stolen.content
    # the mover's own retry gets its answer
    again = http[JOINER].post(f"{base}/games/{game_id}/moves", json=move,
                              headers=_auth(tokens[mover], **{"If-Match": read.headers["ETag"], "Idempotency-Key": key}))
    assert again.status_code == 200 and again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"


# -- Cache-Control ----------------------------------------------------------------------------
def _sse_headers(s: requests.Session, url: str, headers: dict[str, str]) -> Mapping[str, str]:
    with s.get(url, headers={"Accept": "text/event-stream", **headers}, stream=True, timeout=10) as r:
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/event-stream")
        return CaseInsensitiveDict(r.headers)


def test_no_cache_stores_an_answer_with_a_token_or_a_hand(base: str, http: dict[str, requests.Session]) -> None:
    """Every endpoint a seat's token reaches, on both paths (the event loop answers plain moves
    and reads; Flask the rest): Cache-Control says so."""
    s = http[JOINER]
    seen: list[tuple[str, requests.Response | Mapping[str, str], str]] = []

    def check(what: str, r: requests.Response | Mapping[str, str], expected: str) -> None:
        seen.append((what, r, expected))

    created = _create(base, s, [{"name": "ann"}, None, None, None])
    check("POST /games (201, the tokens)", created, PRIVATE)
    gid = created.json()["id"]
    key = str(uuid.uuid4())
    check("a join", _join(base, s, gid, 1, "bea", key), PRIVATE)
    check("a join replayed", _join(base, s, gid, 1, "bea", key), PRIVATE)
    check("a join refused", _join(base, s, gid, 1, "bea", None), NO_STORE)

    game_id, tokens = _playing_game(base, s)
    read = _read(base, s, game_id, tokens[0])
    check("GET /games/{id}, a seat (loop)", read, PRIVATE)
    assert read.headers["Vary"] == "Authorization"
    etag, mover = read.headers["ETag"], read.json()["view"]["to_act"]
    check("GET /games/{id}, a seat, 304", s.get(f"{base}/games/{game_id}",
                                               headers=_auth(tokens[0], **{"If-None-Match": etag})), PRIVATE)
    check("GET /games/{id}, a seat, Flask", s.get(f"{base}/games/{game_id}", headers=_auth(tokens[0], Accept="*/*"),
                                                  data=b""), PRIVATE)
    check("GET /games/{id}, a spectator", _read(base, s, game_id), REVALIDATE)
    check("GET /games/{id}, a spectator, 304", s.get(f"{base}/games/{game_id}", headers={"If-None-Match": etag}),
          REVALIDATE)
    other = (mover + 1) % 4
    moves = f"{base}/games/{game_id}/moves"
    check("a move, not your turn", s.post(moves, json={"action": {"type": "draw"}},
                                          headers=_auth(tokens[other], **{"If-Match": etag})), NO_STORE)
    check("a move, stale", s.post(moves, json={"action": {"type": "draw"}},
                                  headers=_auth(tokens[mover], **{"If-Match": '"999"'})), NO_STORE)
    check("a move, illegal", s.post(moves, json={"action": {"type": "discard", "card": "JK"}},
                                    headers=_auth(tokens[mover], **{"If-Match": etag})), NO_STORE)
    check("a move, a bad token", s.post(moves, json={"action": {"type": "draw"}},
                                        headers=_auth("A" * 43, **{"If-Match": etag})), NO_STORE)
    check("a dry run", s.post(moves + "?dry_run=true", json={"action": {"type": "draw"}},
                              headers=_auth(tokens[mover], **{"If-Match": etag})), PRIVATE)
    check("a hint", s.get(f"{base}/games/{game_id}/hint?bot=greedy", headers=_auth(tokens[mover])), PRIVATE)
    check("a hint, not your turn", s.get(f"{base}/games/{game_id}/hint", headers=_auth(tokens[other])), NO_STORE)
    key = str(uuid.uuid4())
    moved = s.post(moves, json={"action": {"type": "draw"}},
                   headers=_auth(tokens[mover], **{"If-Match": etag, "Idempotency-Key": key}))
    check("a move (loop)", moved, PRIVATE)
    check("a move replayed", s.post(moves, json={"action": {"type": "draw"}},
                                    headers=_auth(tokens[mover], **{"If-Match": etag, "Idempotency-Key": key})), PRIVATE)
    etag = moved.headers["ETag"]
    card = moved.json()["view"]["legal"]["discards"][0]
    check("a move (Flask: If-Match *)", s.post(moves, json={"action": {"type": "discard", "card": card}},
                                               headers=_auth(tokens[mover], **{"If-Match": "*"})), PRIVATE)
    bot = f"{base}/games/{game_id}/seats/{other}/bot"
    check("a seat to a bot", s.post(bot, json={"bot": "random"}, headers=_auth(tokens[other])), PRIVATE)
    check("a seat back from a bot", s.delete(bot, headers=_auth(tokens[other])), PRIVATE)
    check("a seat back, not yours", s.delete(f"{base}/games/{game_id}/seats/{mover}/bot", headers=_auth(tokens[other])),
          NO_STORE)

    events = f"{base}/games/{game_id}/events"
    check("SSE, a seat", _sse_headers(s, events, _auth(tokens[0])), PRIVATE)
    check("SSE, a seat's access_token", _sse_headers(s, f"{events}?access_token={tokens[0]}", {}), PRIVATE)
    check("SSE, a spectator", _sse_headers(s, events, {}), REVALIDATE)
    snapshot = s.get(events, headers=_auth(tokens[0]))
    check("long-poll snapshot, a seat", snapshot, PRIVATE)
    check("long-poll page, a seat", s.get(f"{events}?after=0", headers=_auth(tokens[0])), PRIVATE)
    last = snapshot.json()["last_id"]
    check("long-poll waited, a seat (the hub)", s.get(f"{events}?after={last}&wait=1", headers=_auth(tokens[0])),
          PRIVATE)
    check("long-poll, a spectator", s.get(f"{events}?after=0"), NO_STORE)
    check("events, a bad token", s.get(events, headers=_auth("A" * 43)), NO_STORE)

    wrong = [(what, (r.headers if isinstance(r, requests.Response) else r).get("Cache-Control"), expected)
             for what, r, expected in seen
             if (r.headers if isinstance(r, requests.Response) else r).get("Cache-Control") != expected]
    assert not wrong, wrong
    for what, r, expected in seen:
        if isinstance(r, requests.Response) and expected == NO_STORE and "spectator" not in what:
            assert r.status_code >= 400 and r.headers["Content-Type"] == "application/problem+json", what


# -- names --------------------------------------------------------------------------------------
REFUSED = [
    ("\u202eann", names.BIDI_CONTROL), ("ann\u200f", names.BIDI_CONTROL), ("\u2066x\u2069", names.BIDI_CONTROL),
    ("a\u061cb", names.BIDI_CONTROL), ("a\u2028b", names.LINE_BREAK), ("a\u2029b", names.LINE_BREAK),
    ("a\nb", names.LINE_BREAK), ("a\rb", names.LINE_BREAK), ("a\x85b", names.LINE_BREAK),
    ("a\tb", names.CONTROL), ("a\x1bb", names.CONTROL), (" ", names.INVISIBLE), ("", names.INVISIBLE),
    ("\u200b\u200b", names.INVISIBLE), ("\u200d", names.INVISIBLE), ("\ufeff", names.INVISIBLE),
    ("\u3000\u00a0", names.INVISIBLE), ("\u0301\u0302", names.INVISIBLE), ("\u3164", names.INVISIBLE),
    ("an\u200bn", names.INVISIBLE), ("a\u00adb", names.INVISIBLE), ("\ue000", names.UNPRINTABLE),
    ("a" + "\u0301" * 6, names.STACKED_MARKS), ("x" * 41, names.TOO_LONG), ("x" * 5000, names.TOO_LONG),
]


@pytest.mark.parametrize(("name", "reason"), REFUSED)
def test_a_name_that_would_spoof_the_table_is_refused(base: str, http: dict[str, requests.Session],
                                                      name: str, reason: str) -> None:
    s = http[JOINER]
    created = _create(base, s, [{"name": "ann"}, {"name": name}, None, None])
    assert created.status_code == 422, created.text
    problem = created.json()
    assert problem["code"] == "invalid_name" and problem["reason"] == reason and problem["seat"] == 1, problem
    game = _waiting_game(base, s)
    joined = _join(base, s, game["id"], 2, name, str(uuid.uuid4()))
    assert joined.status_code == 422 and joined.json()["reason"] == reason and joined.json()["seat"] == 2
    assert _read(base, s, game["id"]).json()["seats"][2]["open"]


def test_a_name_is_normalised_and_trimmed(base: str, http: dict[str, requests.Session]) -> None:
    s = http[JOINER]
    decomposed = "Ame\u0301lie"  # NFD
    long_nfd = "e\u0301" * names.MAX_NAME_CHARS  # 80 characters sent, 40 once composed
    created = _create(base, s, [{"name": f"  {decomposed} "}, {"name": long_nfd}, {"name": "👩‍👩‍👧 ❤️"}, None])
    assert created.status_code == 201, created.text
    seats = created.json()["seats"]
    assert [seat["name"] for seat in seats[:3]] == ["Am\u00e9lie", "\u00e9" * names.MAX_NAME_CHARS, "👩‍👩‍👧 ❤️"]
    joined = _join(base, s, created.json()["id"], 3, "\u3000 دانا \u00a0", str(uuid.uuid4()))
    assert joined.status_code == 200 and joined.json()["name"] == "دانا", joined.text
    view = _read(base, s, created.json()["id"]).json()
    assert view["seats"][3]["name"] == "دانا" and view["status"] == "playing"


def test_the_problem_names_the_character_not_the_name(base: str, http: dict[str, requests.Session]) -> None:
    r = _create(base, http[JOINER], [{"name": "x" * 900 + "\u202e"}, None, None, None])
    problem = r.json()
    assert problem["character"] == "U+202E" and "xxxxxxxxxx" not in r.text
    assert "RIGHT-TO-LEFT OVERRIDE" in problem["detail"]
