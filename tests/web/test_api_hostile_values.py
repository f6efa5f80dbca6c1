"""A hostile client sends a huge value in every place a request has one: a field's value, a
field's name, deep in a move's action, in house rules, in headers (within the server's limit
on their size), in the path and the query, in a game log. Against a real server (granian),
from its own address: every answer is a problem (``application/problem+json``) of a few KB
with its stable code, quoting at most a little of the value, and nothing is created or
changed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import redis
from addresses import client_from
from api_servers import api_server

from client import Client
from engine.text import QUOTE_CHARS
from web.problems import MEMBERS_CHARS, SENTENCE_CHARS

BODY_CHARS = 900_000  # a value in a body (the server takes bodies of up to 1 MiB)
HEAD_CHARS = 300_000  # a value in a header (granian reads ~400 KB of head)
URI_CHARS = 60_000  # in the path or the query (granian answers 414 itself past 64 KB)
MAX_ANSWER_BYTES = 4096  # "a few KB"
HOSTILE, VICTIM = "127.0.0.2", "127.0.0.3"
OWN = ":values"  # this module's key prefix under the session's: other tests' keys are not in its snapshots
BIG = "x" * BODY_CHARS
HEAD = "y" * HEAD_CHARS
URI = "z" * URI_CHARS


@pytest.fixture(scope="module")
def base(redis_url: str, key_prefix: str) -> Iterator[str]:
    with api_server(redis_url, key_prefix + OWN, threads=2) as url:
        yield url


class Games:
    """A game being played (the hostile client holds seat 0), one waiting with open seats."""

    def __init__(self, base: str) -> None:
        with client_from(base, VICTIM) as victim:
            playing = victim.create_game("classic", [{"name": n} for n in ("eve", "bob", "cy", "dee")], seed=5)
            waiting = victim.create_game("classic", [{"name": "ann"}, None, None, None])
        self.playing: str = playing["id"]
        self.token: str = playing["seats"][0]["token"]
        self.waiting: str = waiting["id"]


def _snapshot(r: redis.Redis, prefix: str) -> dict[str, Any]:
    """Every key of the server's prefix, and what a change would move: a game's version, the
    length of its event stream and of its log."""
    found: dict[str, Any] = {}
    for raw in r.scan_iter(match=f"{prefix}:*", count=1000):
        key = raw.decode()
        kind = r.type(key).decode()
        if kind == "hash":
            found[key] = r.hget(key, "version")
        elif kind == "stream":
            found[key] = r.xlen(key)
        elif kind == "list":
            found[key] = r.llen(key)
        else:
            found[key] = r.get(key) if kind == "string" else kind
    return found


def _cases(g: Games) -> list[tuple[str, str, str, dict[str, Any], set[str]]]:
    """(what, method, path, request keywords, codes it may answer)."""
    auth = {"Authorization": f"Bearer {g.token}"}
    move = {**auth, "If-Match": '"1"', "Content-Type": "application/json"}
    game, moves = f"/games/{g.playing}", f"/games/{g.playing}/moves"
    join = f"/games/{g.waiting}/seats/1"

    def body(value: Any) -> bytes:
        return orjson.dumps(value)

    def create(**fields: Any) -> dict[str, Any]:
        return {"data": body({"preset": "classic", "seats": [{"name": "a"}, None, None, None], **fields}),
                "headers": {"Content-Type": "application/json"}}

    def action(value: Any) -> dict[str, Any]:
        return {"data": body({"action": value}), "headers": move}

    schema = {"invalid_request"}
    return [
        # POST /games: every field, and field names
        ("create: preset", "POST", "/games", create(preset=BIG), schema),
        ("create: players", "POST", "/games", create(players=BIG), schema),
        ("create: a house rule's name", "POST", "/games", create(rules={BIG: 1}), schema),
        ("create: a house rule's number", "POST", "/games", create(rules={"target_score": BIG}), {"invalid_rules"}),
        ("create: a house rule's choice", "POST", "/games", create(rules={"ask_go_out": BIG}), {"invalid_rules"}),
        ("create: a house rule's pairs", "POST", "/games", create(rules={"opening_minimums": [[BIG, 1]]}),
         {"invalid_rules"}),
        ("create: a seat's name", "POST", "/games", create(seats=[{"name": BIG}, None, None, None]),
         {"invalid_name"}),
        ("create: a seat's bot", "POST", "/games", create(seats=[{"bot": BIG}, None, None, None]), schema),
        ("create: a seat's field name", "POST", "/games", create(seats=[{BIG: 1}, None, None, None]), schema),
        ("create: a field name", "POST", "/games", create(**{BIG: 1}), schema),
        ("create: many field names", "POST", "/games", create(**{f"{n:06d}{'z' * 80}": 1 for n in range(9000)}),
         schema),
        ("create: seed", "POST", "/games", create(seed=BIG), schema),
        ("create: turn_timeout", "POST", "/games", create(turn_timeout=BIG), schema),
        ("create: content type", "POST", "/games", {"data": b"{}", "headers": {"Content-Type": HEAD}},
         {"unsupported_media_type"}),
        # joins
        ("join: name", "POST", join, {"data": body({"name": BIG}), "headers": {"Content-Type": "application/json"}},
         {"invalid_name"}),
        ("join: a field name", "POST", join, {"data": body({"name": "a", BIG: 1}),
                                              "headers": {"Content-Type": "application/json"}}, schema),
        ("join: Idempotency-Key", "POST", join, {"data": body({"name": "a"}),
                                                 "headers": {"Content-Type": "application/json",
                                                             "Idempotency-Key": HEAD}},
         {"invalid_idempotency_key"}),
        ("join: the seat", "POST", f"/games/{g.waiting}/seats/{'9' * URI_CHARS}",
         {"data": body({"name": "a"}), "headers": {"Content-Type": "application/json"}}, {"not_found"}),
        ("join: a long seat number", "POST", f"/games/{g.waiting}/seats/{'9' * 60}",
         {"data": body({"name": "a"}), "headers": {"Content-Type": "application/json"}}, {"seat_not_found"}),
        ("join: the game id", "POST", f"/games/{URI}/seats/1",
         {"data": body({"name": "a"}), "headers": {"Content-Type": "application/json"}}, {"game_not_found"}),
        # a seat to a bot and back
        ("bot: the bot", "POST", f"{game}/seats/1/bot", {"data": body({"bot": BIG}),
                                                         "headers": {**auth, "Content-Type": "application/json"}},
         schema),
        ("bot: budget", "POST", f"{game}/seats/0/bot", {"data": body({"bot": "expert", "budget_ms": BIG}),
                                                        "headers": {**auth, "Content-Type": "application/json"}},
         schema),
        ("bot back: Authorization", "DELETE", f"{game}/seats/0/bot", {"headers": {"Authorization": f"Bearer {HEAD}"}},
         {"invalid_token"}),
        # moves: the action's every field, field names, headers, query
        ("move: type", "POST", moves, action({"type": BIG}), schema),
        ("move: card", "POST", moves, action({"type": "discard", "card": BIG}), schema),
        ("move: a meld's card", "POST", moves, action({"type": "meld", "melds": [[BIG, "3H", "3D"]]}), schema),
        ("move: many bad cards", "POST", moves, action({"type": "meld", "melds": [["ZZ"] * 200] * 40}), schema),
        ("move: rank", "POST", moves, action({"type": "add", "rank": BIG, "cards": ["3H"]}), schema),
        ("move: yes", "POST", moves, action({"type": "answer_go_out", "yes": BIG}), schema),
        ("move: an action's field name", "POST", moves, action({"type": "draw", BIG: 1}), schema),
        ("move: the action", "POST", moves, action(BIG), schema),
        ("move: a field name", "POST", moves, {"data": body({"action": {"type": "draw"}, BIG: 1}), "headers": move},
         schema),
        ("move: not JSON", "POST", moves, {"data": b"{" + BIG.encode(), "headers": move}, {"invalid_json"}),
        ("move: If-Match", "POST", moves, {"data": body({"action": {"type": "draw"}}), "headers": {**move, "If-Match": HEAD}},
         {"invalid_parameter"}),
        ("move: Idempotency-Key", "POST", moves, {"data": body({"action": {"type": "draw"}}),
                                                  "headers": {**move, "Idempotency-Key": HEAD}},
         {"invalid_idempotency_key"}),
        ("move: Authorization", "POST", moves, {"data": body({"action": {"type": "draw"}}),
                                                "headers": {**move, "Authorization": f"Bearer {HEAD}"}},
         {"invalid_token"}),
        ("move: dry_run", "POST", moves, {"data": body({"action": {"type": "draw"}}), "headers": move,
                                          "params": {"dry_run": URI}}, {"invalid_parameter"}),
        ("move: a query parameter's name", "POST", moves, {"data": body({"action": {"type": "draw"}}),
                                                           "headers": move, "params": {URI: "1"}},
         {"unknown_parameter"}),
        # reads
        ("read: Authorization", "GET", game, {"headers": {"Authorization": f"Bearer {HEAD}"}}, {"invalid_token"}),
        ("read: a scheme", "GET", game, {"headers": {"Authorization": HEAD}}, {"invalid_token"}),
        ("read: a query value", "GET", game, {"params": {"q": URI}}, {"unknown_parameter"}),
        ("read: the game id", "GET", f"/games/{URI}", {}, {"game_not_found"}),
        ("events: Last-Event-ID", "GET", f"{game}/events", {"headers": {**auth, "Last-Event-ID": HEAD}},
         {"invalid_event_id"}),
        ("events: after", "GET", f"{game}/events", {"headers": auth, "params": {"after": URI}}, {"invalid_event_id"}),
        ("events: wait", "GET", f"{game}/events", {"headers": auth, "params": {"after": "0", "wait": URI}},
         {"invalid_parameter"}),
        ("events: access_token", "GET", f"{game}/events", {"params": {"access_token": URI}}, {"invalid_token"}),
        ("hint: bot", "GET", f"{game}/hint", {"headers": auth, "params": {"bot": URI}}, {"invalid_parameter"}),
        ("log: the game id", "GET", f"/games/{URI}/log", {}, {"game_not_found"}),
        ("rules: preset", "GET", f"/rules/{URI}", {}, {"preset_not_found"}),
        ("rules: players", "GET", "/rules/classic", {"params": {"players": URI}}, {"invalid_parameter"}),
        # a game log to replay
        ("replay: the format", "POST", "/replay", _log({"log": BIG}), {"unsupported_version"}),
        ("replay: a preset", "POST", "/replay", _log({"log": "canasta-log/1", "preset": BIG, "rules": {},
                                                      "seats": []}), {"invalid_rules"}),
        ("replay: a rule", "POST", "/replay", _log({"log": "canasta-log/1", "preset": "classic",
                                                    "rules": {BIG: 1}, "seats": []}), {"invalid_rules"}),
        ("replay: a line's field name", "POST", "/replay", _log({"log": "canasta-log/1", "preset": "classic",
                                                                 "rules": {}, "seats": []}, {BIG: 1}),
         {"unknown_line", "invalid_header", "invalid_seats", "invalid_rules"}),
        ("replay: a line", "POST", "/replay", {"data": b'{"log":"canasta-log/1"}\n' + b"[" * 400_000,
                                               "headers": {"Content-Type": "application/x-ndjson"}},
         {"not_json", "wrong_type", "invalid_json"}),
    ]


def _log(*lines: dict[str, Any]) -> dict[str, Any]:
    return {"data": b"\n".join(orjson.dumps(line) for line in lines) + b"\n",
            "headers": {"Content-Type": "application/x-ndjson"}}


def _strings(value: Any) -> Iterator[tuple[str, str]]:
    """(where, text) of every string and key of a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield "key", k
            yield from ((f"{k}.{w}" if w else k, t) for w, t in _strings(v))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield "", value


def test_a_huge_value_anywhere_gets_a_short_problem_and_changes_nothing(
        base: str, redis_client: redis.Redis, key_prefix: str) -> None:
    games = Games(base)
    before = _snapshot(redis_client, key_prefix + OWN)
    hostile: Client
    failures = []
    with client_from(base, HOSTILE) as hostile:
        for what, method, path, kwargs, codes in _cases(games):
            r = hostile.http.request(method, base + path, timeout=60, **kwargs)
            problem = r.json() if r.headers.get("Content-Type") == "application/problem+json" else None
            if problem is None or problem.get("code") not in codes or not 400 <= r.status_code < 500:
                failures.append((what, r.status_code, r.headers.get("Content-Type"), r.content[:300]))
                continue
            if len(r.content) > MAX_ANSWER_BYTES or r.headers.get("Cache-Control") != "no-store":
                failures.append((what, "answer", len(r.content), r.headers.get("Cache-Control")))
            for where, text in _strings(problem):
                sentence = where in ("title", "detail")
                if len(text) > (SENTENCE_CHARS if sentence else QUOTE_CHARS) or any(v[:QUOTE_CHARS + 1] in text for v in (BIG, HEAD, URI)):
                    failures.append((what, where, len(text), text[:120]))
    assert not failures, "\n".join(map(repr, failures))
    assert _snapshot(redis_client, key_prefix + OWN) == before  # nothing created, nothing changed
    assert MEMBERS_CHARS + 2 * SENTENCE_CHARS < MAX_ANSWER_BYTES
