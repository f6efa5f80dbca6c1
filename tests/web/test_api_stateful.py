"""A stateful test of the HTTP API (hypothesis ``RuleBasedStateMachine``): one four-seat
classic game per example, played through the Flask test client against the real app and a
real Redis, with hypothesis choosing what to send next.

Rules: legal moves picked from the mover's ``view.legal`` summary (with or without an
Idempotency-Key, ``If-Match`` of the current ETag or ``*``), moves a client might guess
(some legal, some not), retries with a stored Idempotency-Key, a key reused with another
body, stale or future ``If-Match``, a seat out of turn, illegal and malformed actions, a
missing ``If-Match``, bad tokens, dry runs, event reads (``?after=``, long-poll) and
conditional reads (``If-None-Match``).

A model predicts every answer: the checks the service makes, in its order, with
:func:`engine.apply` on the stored state as the oracle of legality. Invariants after every
step: a refused request changes nothing (the stored hash is byte for byte the same); the
version grows by one per accepted move; ``event_count == version``; the log holds exactly
the accepted moves, numbered 1, 2, ...; each seat's view shows its own hand (and
``hand_sizes``) as the stored state has it, no card hidden from it, and the same view
whenever the version is the same; the events a reader gets are consecutive, carry the
accepted moves, and name drawn cards only to the seat that drew them.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
from api_helpers import Table, auth, cards_in, four_humans, public_cards, replay_log
from api_players import candidates
from flask.testing import FlaskClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import engine
import service
from engine.cards import CODES, hand_codes
from service.store import Record, Store

# each example plays one of these deals (test seeds are on); in the first three a greedy
# client often ends the first hand within about 20 moves
SEEDS = (3, 103, 169, 202)
SEATS = (0, 1, 2, 3)
VIEWERS: tuple[int | None, ...] = (None, *SEATS)
STATEFUL = settings(
    max_examples=20,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
CHECKED_APART = ("hand", "pile", "legal")  # the parts of a seat view checked on their own


def roundtrip(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples become lists)."""
    return orjson.loads(orjson.dumps(value))


def etag_of(version: int) -> str:
    return f'"{version}"'


def id_key(event_id: str) -> tuple[int, int]:
    ms, _, seq = event_id.partition("-")
    return int(ms), int(seq or 0)






def summary_moves(view: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The concrete actions a seat's legal summary offers, by kind (bench/api.py ``choose``
    picks from the same fields)."""
    legal = view["legal"]
    out: dict[str, list[dict[str, Any]]] = {}
    if legal["must_answer_go_out"]:
        out["answer_go_out"] = [{"type": "answer_go_out", "yes": True}, {"type": "answer_go_out", "yes": False}]
    if legal["take_pile"]:
        out["take_pile"] = list(legal["take_pile"])
    if legal["may_draw"]:
        out["draw"] = [{"type": "draw"}]
    if legal["may_pass"]:
        out["pass"] = [{"type": "pass"}]
    if legal["may_ask_go_out"]:
        out["ask_go_out"] = [{"type": "ask_go_out"}]
    if legal["melds"]:
        out["meld"] = list(legal["melds"])
    if legal["go_out"]:
        out["go_out"] = [legal["go_out"][0]]
    if legal["discards"]:
        out["discard"] = [{"type": "discard", "card": c} for c in legal["discards"]]
    return out


@dataclass
class Stored:
    """An accepted move made with an Idempotency-Key: what a retry must get back."""

    seat: int
    action: dict[str, Any]
    body: dict[str, Any] = field(repr=False)
    etag: str
    if_match: str


@dataclass
class Expected:
    status: int
    code: str | None = None
    replay: Stored | None = None
    after: engine.State | None = field(default=None, repr=False)  # the engine's result of the move


class GameMachine(RuleBasedStateMachine):
    def __init__(self, client: FlaskClient, store: Store) -> None:
        super().__init__()
        self.client = client
        self.store = store
        self.keys = itertools.count()

    # -- the model --------------------------------------------------------------------
    @initialize(seed=st.sampled_from(SEEDS))
    def create(self, seed: int) -> None:
        self.t = Table(self.client, four_humans(seed=seed))
        self.id = self.t.id
        self.version = self.created_version = self.t.created["version"]
        self.record = self._record()
        self.state = self._parse(self.record)
        self.moves: list[tuple[int, dict[str, Any]]] = []  # accepted, in order
        self.move_at: dict[int, tuple[int, dict[str, Any]]] = {}  # version -> (seat, action)
        self.hand_at: dict[int, int] = {self.version: self.state.hand_no}
        self.views: dict[int, dict[int | None, dict[str, Any]]] = {}  # version -> viewer -> view
        self.idem: dict[tuple[int, str], Stored] = {}
        self.event_ids: list[tuple[str, int]] = []  # (id, version) of events read
        self.long_run = False
        self.last_refusal: dict[str, Any] = {}

    def _record(self) -> Record:
        record = self.store.load(self.id)
        assert record is not None
        return record

    @staticmethod
    def _parse(record: Record) -> engine.State:
        """The stored state itself (not the process cache of parsed games)."""
        assert record.state is not None
        return service.parse_state(record.state, orjson.loads(record.meta_json))

    def _status(self) -> str:
        return str(orjson.loads(self.record.meta_json)["status"])

    def playing(self) -> bool:
        return self._status() == "playing" and self.state.to_act >= 0

    def _view(self, seat: int | None) -> dict[str, Any]:
        known = self.views.get(self.version, {}).get(seat)
        if known is not None:
            return known
        body, etag = self.t.view(seat)
        assert etag == etag_of(self.version) and body["version"] == self.version
        self.views.setdefault(self.version, {})[seat] = body["view"]
        return body["view"]

    def _expect(self, seat: int, action: dict[str, Any], if_match: str | None, key: str | None,
                dry_run: bool) -> Expected:
        """What the service must answer, from its checks in their order."""
        if if_match is None:
            return Expected(428, "precondition_required")
        if key is not None and not dry_run and (seat, key) in self.idem:
            stored = self.idem[(seat, key)]
            if stored.action == action:
                return Expected(200, replay=stored)
            return Expected(422, "idempotency_key_reused")
        if self._status() == "over":
            return Expected(409, "game_over")
        if if_match != "*" and if_match != etag_of(self.version):
            return Expected(412, "stale_version")
        if self.state.to_act != seat:
            return Expected(403, "not_your_turn")
        try:
            after = engine.apply(self.state, seat, action)
        except engine.IllegalMove as e:
            return Expected(422, e.code)
        except (engine.CardError, ValueError, TypeError, KeyError, IndexError):
            return Expected(422, "invalid_action")
        return Expected(200, after=after)

    def _send(self, seat: int, action: dict[str, Any], if_match: str | None, key: str | None = None,
              dry_run: bool = False, token: str | None = None) -> Any:
        headers = auth(token or self.t.tokens[seat])
        if if_match is not None:
            headers["If-Match"] = if_match
        if key is not None:
            headers["Idempotency-Key"] = key
        url = f"/games/{self.id}/moves" + ("?dry_run=true" if dry_run else "")
        return self.client.post(url, json={"action": action}, headers=headers)

    def _move(self, seat: int, action: dict[str, Any], if_match: str | None, key: str | None = None,
              dry_run: bool = False) -> Expected:
        """Send a move and check the answer against the model (and update the model)."""
        expected = self._expect(seat, action, if_match, key, dry_run)
        before = self.state
        r = self._send(seat, action, if_match, key, dry_run)
        body = r.get_json()
        assert r.status_code == expected.status, (expected, r.status_code, body, action)
        if expected.status != 200:
            assert r.mimetype == "application/problem+json"
            assert body["code"] == expected.code, (expected, body, action)
            self._check_refused(body, seat, action)
            self.last_refusal = body
            return expected
        if expected.replay is not None:
            stored = expected.replay
            assert r.headers.get("Idempotent-Replayed") == "true"
            assert r.headers["ETag"] == stored.etag
            assert body == stored.body
            self._unchanged()
            return expected
        assert "Idempotent-Replayed" not in r.headers
        assert expected.after is not None
        if dry_run:
            assert r.headers["ETag"] == etag_of(self.version)
            assert body["dry_run"] is True and body["legal"] is True and body["version"] == self.version
            withheld = self._withheld(seat, action, expected.after)
            assert body["view_withheld"] == withheld, (body["view_withheld"], withheld, action)
            if withheld is None:
                assert body["view"] == roundtrip(engine.seat_view(expected.after, seat))
            else:
                assert body["view"] is None
            self._unchanged()
            return expected
        # accepted
        self.version += 1
        assert r.headers["ETag"] == etag_of(self.version), (r.headers["ETag"], self.version)
        assert body["version"] == self.version and body["seat"] == seat
        self.record = self._record()
        assert self.record.version == self.version
        self.state = self._parse(self.record)
        after = expected.after
        if after.phase == "deal":  # the hand ended: the service dealt the next one
            assert self.state.hand_no == after.hand_no + 1 and self.state.totals == after.totals
            assert self.state.phase in ("draw", "play")
        else:
            assert self.state == after
        assert before.moves + 1 == self.state.moves
        self.moves.append((seat, action))
        self.move_at[self.version] = (seat, action)
        self.hand_at[self.version] = self.state.hand_no
        self.views.setdefault(self.version, {})[seat] = body["view"]  # GETs must show the same
        if key is not None:
            self.idem[(seat, key)] = Stored(seat, action, body, r.headers["ETag"], if_match or "")
        return expected

    def _withheld(self, seat: int, action: dict[str, Any], after: engine.State) -> str | None:
        """Why a legal dry run may not show its view (openapi.yaml, postMove): the move would
        draw, take the pile, end the turn or end the hand."""
        before = self.state
        if action["type"] == "draw" or after.stock_pos != before.stock_pos and action["type"] != "discard":
            return "draws_cards"
        if action["type"] == "take_pile":
            return "takes_pile"
        if action["type"] == "answer_go_out" and before.stock_size == 0 and before.drawn == "":
            return "ends_hand"  # the asker's cards decide whether the hand ends
        if after.phase in ("deal", "over"):
            return "ends_hand"
        if after.turn != before.turn:
            return "ends_turn"
        return None

    def _check_refused(self, body: dict[str, Any], seat: int, action: dict[str, Any]) -> None:
        """An error names no card but the sender's own, public ones and those it sent."""
        allowed = Counter(hand_codes(self.state.hands[seat])) + public_cards(self.state) + cards_in(action)
        assert not cards_in(body) - allowed, body
        self._unchanged()

    def _unchanged(self) -> None:
        record = self._record()
        assert (record.version, record.meta_json, record.state) == (
            self.record.version, self.record.meta_json, self.record.state)

    def _fresh_key(self) -> str:
        return f"k{next(self.keys)}:{self.id}"

    # -- rules: moves ---------------------------------------------------------------------
    @precondition(lambda self: self.playing())
    @rule(data=st.data(), key_kind=st.sampled_from(["none", "fresh", "another_seats"]), star=st.booleans())
    def legal_move(self, data: st.DataObject, key_kind: str, star: bool) -> None:
        seat = self.state.to_act
        options = summary_moves(self._view(seat))
        assert options, "the seat to act has nothing to do"
        kind = data.draw(st.sampled_from(sorted(options)), label="kind")
        action = data.draw(st.sampled_from(options[kind]), label="action")
        if_match = "*" if star else etag_of(self.version)
        key = None
        if key_kind == "fresh":
            key = self._fresh_key()
        elif key_kind == "another_seats":  # keys are scoped to the seat: another's is new here
            others = sorted({k for (s, k) in self.idem if s != seat} - {k for (s, k) in self.idem if s == seat})
            key = data.draw(st.sampled_from(others), label="key") if others else self._fresh_key()
        expected = self._move(seat, action, if_match, key)
        assert expected.status == 200 and expected.after is not None, (expected, action)

    @precondition(lambda self: self.playing())
    @rule(data=st.data(), moves=st.integers(1, 8))
    def play_on(self, data: st.DataObject, moves: int) -> None:
        """A few moves as a greedy client makes them (bench/api.py ``choose``: take the pile,
        go out, meld whenever it can)."""
        self._play_greedy(data, moves)

    @precondition(lambda self: self.playing() and not self.long_run)
    @rule(data=st.data())
    def play_long(self, data: st.DataObject) -> None:
        """Once per example, up to 30 greedy moves: with these seeds some examples reach the
        end of the first hand (a deal event, views of a new hand, replays across it)."""
        self.long_run = True
        self._play_greedy(data, 30, until_hand_end=True)

    def _play_greedy(self, data: st.DataObject, moves: int, until_hand_end: bool = False) -> None:
        hand_no = self.state.hand_no
        for _ in range(moves):
            if not self.playing() or (until_hand_end and self.state.hand_no != hand_no):
                return
            seat = self.state.to_act
            legal = self._view(seat)["legal"]
            if legal["must_answer_go_out"]:
                action = {"type": "answer_go_out", "yes": True}
            elif self.state.phase == "draw":
                action = (legal["take_pile"][0] if legal["take_pile"]
                          else {"type": "draw"} if legal["may_draw"] else {"type": "pass"})
            elif legal["go_out"]:
                action = legal["go_out"][0]
            elif legal["melds"]:
                action = legal["melds"][0]
            else:
                card = data.draw(st.sampled_from(legal["discards"]), label="discard")
                action = {"type": "discard", "card": card}
            key = self._fresh_key() if data.draw(st.booleans(), label="with_key") else None
            expected = self._move(seat, action, etag_of(self.version), key)
            assert expected.status == 200 and expected.after is not None, (expected, action)

    @precondition(lambda self: self.playing())
    @rule(data=st.data())
    def guessed_move(self, data: st.DataObject) -> None:
        """What a simple client tries (tests/web/api_players.py), legal or not."""
        seat = self.state.to_act
        view = self._view(seat)
        guesses = candidates(view)
        hand = view["hand"]
        if hand:
            guesses.append({"type": "meld", "melds": [hand[:3]]})
            guesses.append({"type": "add", "rank": "A", "cards": hand[:1]})
            guesses.append({"type": "take_pile", "with": hand[:2]})
        action = data.draw(st.sampled_from(guesses), label="action")
        self._move(seat, action, etag_of(self.version))

    @precondition(lambda self: self.idem)
    @rule(data=st.data(), current=st.booleans())
    def retry_with_key(self, data: st.DataObject, current: bool) -> None:
        (seat, key), stored = data.draw(st.sampled_from(sorted(self.idem.items())), label="stored")
        if_match = etag_of(self.version) if current else stored.if_match
        expected = self._move(seat, stored.action, if_match, key)
        assert expected.replay is stored

    @precondition(lambda self: self.idem)
    @rule(data=st.data())
    def reuse_key_with_another_body(self, data: st.DataObject) -> None:
        (seat, key), stored = data.draw(st.sampled_from(sorted(self.idem.items())), label="stored")
        other = {"type": "pass"} if stored.action != {"type": "pass"} else {"type": "draw"}
        expected = self._move(seat, other, etag_of(self.version), key)
        assert expected.code == "idempotency_key_reused"

    @precondition(lambda self: self.playing())
    @rule(data=st.data(), future=st.booleans())
    def stale_if_match(self, data: st.DataObject, future: bool) -> None:
        seat = self.state.to_act
        options = summary_moves(self._view(seat))
        action = data.draw(st.sampled_from([a for kind in sorted(options) for a in options[kind]]))
        if future or self.version == self.created_version:
            version = self.version + data.draw(st.integers(1, 3))
        else:
            version = data.draw(st.integers(self.created_version, self.version - 1))
        expected = self._move(seat, action, etag_of(version))
        assert expected.code == "stale_version" and self.last_refusal["version"] == self.version

    @precondition(lambda self: self.playing())
    @rule(data=st.data())
    def out_of_turn(self, data: st.DataObject) -> None:
        seat = data.draw(st.sampled_from([s for s in SEATS if s != self.state.to_act]))
        hand = self._view(seat)["hand"]
        action = data.draw(st.sampled_from(
            [{"type": "draw"}, {"type": "pass"}, *({"type": "discard", "card": c} for c in hand)]))
        expected = self._move(seat, action, etag_of(self.version))
        assert expected.code == "not_your_turn" and self.last_refusal["to_act"] == self.state.to_act

    @precondition(lambda self: self.playing())
    @rule(data=st.data())
    def illegal_action(self, data: st.DataObject) -> None:
        seat = self.state.to_act
        held = set(self._view(seat)["hand"])
        missing = [c for c in CODES if c not in held]
        wrong_phase = {"type": "discard", "card": sorted(held)[0]} if self.state.phase == "draw" and held \
            else {"type": "draw"}
        action = data.draw(st.sampled_from([
            {"type": "discard", "card": missing[0]},
            {"type": "discard", "card": missing[-1]},
            {"type": "meld", "melds": [missing[:3]]},
            {"type": "add", "rank": "K", "cards": missing[:1]},
            wrong_phase,
        ]), label="action")
        expected = self._move(seat, action, etag_of(self.version))
        assert expected.status == 422, (expected, action)

    @precondition(lambda self: self.playing())
    @rule(data=st.data())
    def malformed_action(self, data: st.DataObject) -> None:
        seat = self.state.to_act
        action = data.draw(st.sampled_from([
            {"type": "discard"},
            {"type": "discard", "card": "ZZ"},
            {"type": "fly"},
            {"type": "draw", "cards": ["AS"]},
            {"type": "meld", "melds": []},
            {"type": "answer_go_out", "yes": "yes"},
            {"type": "add", "rank": "2", "cards": ["2S"]},
        ]), label="action")
        r = self._send(seat, action, etag_of(self.version))
        assert r.status_code == 422 and r.get_json()["code"] == "invalid_request", r.get_json()
        self._unchanged()
        r = self.client.post(f"/games/{self.id}/moves", data=b'{"action": ', content_type="application/json",
                             headers=auth(self.t.tokens[seat], **{"If-Match": etag_of(self.version)}))
        assert r.status_code == 400 and r.get_json()["code"] == "invalid_json"
        self._unchanged()

    @precondition(lambda self: self.playing())
    @rule(data=st.data(), kind=st.sampled_from(
        ["no_if_match", "no_token", "unknown", "malformed", "scheme", "hex", "bad_key", "bad_dry_run"]))
    def bad_request(self, data: st.DataObject, kind: str) -> None:
        """A legal move by the seat to act, with something wrong in the request itself."""
        seat = self.state.to_act
        options = summary_moves(self._view(seat))
        action = data.draw(st.sampled_from([a for k in sorted(options) for a in options[k]]), label="action")
        if kind == "no_if_match":
            expected = self._move(seat, action, None)
            assert expected.code == "precondition_required"
            return
        headers = auth(self.t.tokens[seat], **{"If-Match": etag_of(self.version)})
        url = f"/games/{self.id}/moves"
        status, code = 401, "invalid_token"
        if kind == "no_token":
            del headers["Authorization"]
            code = "missing_token"
        elif kind == "scheme":
            headers["Authorization"] = f"Basic {self.t.tokens[seat]}"
        elif kind in ("unknown", "malformed", "hex"):
            token = {"unknown": "A" * 43, "malformed": "not-a-token",
                     "hex": hashlib.sha256(self.id.encode()).hexdigest()[:43]}[kind]
            headers.update(auth(token))
        elif kind == "bad_key":
            headers["Idempotency-Key"] = data.draw(st.sampled_from(["has space", "x" * 256, "caf\u00e9"]))
            status, code = 400, "invalid_idempotency_key"
        else:
            url += "?dry_run=maybe"
            status, code = 400, "invalid_parameter"
        r = self.client.post(url, json={"action": action}, headers=headers)
        assert r.status_code == status and r.get_json()["code"] == code, (kind, r.get_json())
        if status == 401:
            assert "WWW-Authenticate" in r.headers
        self._unchanged()

    @precondition(lambda self: self.playing())
    @rule(data=st.data(), with_key=st.booleans(), legal=st.booleans())
    def dry_run(self, data: st.DataObject, with_key: bool, legal: bool) -> None:
        seat = self.state.to_act
        view = self._view(seat)
        if legal:
            options = summary_moves(view)
            action = data.draw(st.sampled_from([a for kind in sorted(options) for a in options[kind]]))
        else:
            held = set(view["hand"])
            missing = next(c for c in CODES if c not in held)
            action = data.draw(st.sampled_from([*candidates(view), {"type": "discard", "card": missing}]))
        key = None
        if with_key:  # a dry run neither replays a stored key nor stores one
            stored_keys = [k for (s, k) in self.idem if s == seat]
            key = data.draw(st.sampled_from([self._fresh_key(), *stored_keys]))
        expected = self._move(seat, action, etag_of(self.version), key, dry_run=True)
        if legal:
            assert expected.status == 200
        if key is not None and (seat, key) not in self.idem:
            assert self.store.redis.get(self.store.keys.idem(self.id, seat, hashlib.sha256(key.encode()).hexdigest()[:40])) is None

    # -- rules: reads ---------------------------------------------------------------------
    @rule(viewer=st.sampled_from(VIEWERS), data=st.data())
    def read_events(self, viewer: int | None, data: st.DataObject) -> None:
        cursor, cursor_version = data.draw(st.sampled_from([("0", 0), *self.event_ids]), label="after")
        latest = cursor_version == self.version
        url = f"/games/{self.id}/events?after={cursor}" + ("&wait=0.05" if latest else "")
        r = self.client.get(url, headers=auth(self.t.tokens[viewer] if viewer is not None else None))
        assert r.status_code == 200, r.get_json()
        page = r.get_json()
        first = self.store.snapshot_after(self.id, "0-0").first
        assert first is not None
        after = cursor if cursor != "0" else "0-0"
        if first[1] > 1 and id_key(after) < id_key(first[0]):
            # events after the cursor were trimmed (CANASTA_EVENTS_KEEP): a snapshot instead
            assert page["events"] == [] and page["snapshot"]["version"] == self.version
            known = self.views.get(self.version, {}).get(viewer)
            assert known is None or page["snapshot"]["view"] == known
            assert id_key(page["last_id"]) >= id_key(first[0])
            return
        assert "snapshot" not in page
        events = page["events"]
        assert [e["version"] for e in events] == list(range(cursor_version + 1, self.version + 1))
        keys = [id_key(i) for i in [after, *(e["id"] for e in events)]]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert page["last_id"] == (events[-1]["id"] if events else after)
        for event in events:
            self._check_event(event, viewer)
            if (event["id"], event["version"]) not in self.event_ids:
                self.event_ids.append((event["id"], event["version"]))

    def _check_event(self, event: dict[str, Any], viewer: int | None) -> None:
        version = event["version"]
        data = event["data"]
        known = self.views.get(version, {}).get(viewer)
        if version == self.created_version:
            assert event["type"] == "created"
            assert "move" not in data
        else:
            assert event["type"] == "move"
            seat, action = self.move_at[version]
            move = data["move"]
            assert move["seat"] == seat and move["action"] == action
            if viewer != seat:
                assert "cards" not in move, (viewer, move)
            elif action["type"] == "draw":
                assert len(move["cards"]) == move["drew"] >= 1
                if self.hand_at[version] == self.hand_at[version - 1] and viewer in self.views.get(version, {}):
                    drawn = Counter(move["cards"])
                    assert not drawn - Counter(self.views[version][viewer]["hand"])
            assert ("deal" in data) == (self.hand_at[version] != self.hand_at[version - 1])
        if "deal" in data:
            assert data["deal"]["hand"] == self.hand_at[version]
            deal_view = data["deal"]["view"]
            if viewer is None:
                assert "hand" not in deal_view
            if known is not None:
                assert deal_view == known
        if known is not None:
            assert event["phase"] == known["phase"] and event["to_act"] == known["to_act"]
        assert not cards_in({k: v for k, v in event.items() if k != "data"})

    @rule(viewer=st.sampled_from(VIEWERS), data=st.data(),
          which=st.sampled_from(["current", "weak", "list", "star", "old", "junk"]))
    def conditional_get(self, viewer: int | None, data: st.DataObject, which: str) -> None:
        current = etag_of(self.version)
        old = etag_of(data.draw(st.integers(0, self.version - 1)))
        header = {"current": current, "weak": f"W/{current}", "list": f"{old}, {current}", "star": "*",
                  "old": old, "junk": "abc"}[which]
        token = self.t.tokens[viewer] if viewer is not None else None
        r = self.client.get(f"/games/{self.id}", headers=auth(token, **{"If-None-Match": header}))
        assert r.headers["ETag"] == current
        if which in ("old", "junk"):
            assert r.status_code == 200 and r.get_json()["version"] == self.version
            view = r.get_json()["view"]
            known = self.views.get(self.version, {}).get(viewer)
            if known is not None:
                assert view == known
        else:
            assert r.status_code == 304 and r.data == b""

    # -- invariants -----------------------------------------------------------------------
    @invariant()
    def stored_game_matches_the_model(self) -> None:
        record = self._record()
        assert record.version == self.version == self.created_version + len(self.moves)
        assert (record.meta_json, record.state) == (self.record.meta_json, self.record.state)
        assert self.store.event_count(self.id) == self.version
        lines = [orjson.loads(line) for line in self.store.read_log(self.id)]
        moves = [line for line in lines if "move" in line]
        assert [m["move"] for m in moves] == list(range(1, len(self.moves) + 1))
        assert [(m["seat"], m["action"]) for m in moves] == [(s, roundtrip(a)) for s, a in self.moves]

    @invariant()
    def every_view_shows_its_own_hand_only(self) -> None:
        s = self.state
        shown = public_cards(s)
        pile = {CODES[k] for k in s.pile + s.pile_beside}
        for viewer in VIEWERS:
            body, etag = self.t.view(viewer)
            assert etag == etag_of(self.version) and body["version"] == self.version
            view = body["view"]
            known = self.views.setdefault(self.version, {}).setdefault(viewer, view)
            assert view == known, f"two views of seat {viewer} at version {self.version}"
            assert view["hand_sizes"] == [sum(h) for h in s.hands]
            rest = {k: v for k, v in view.items() if k not in CHECKED_APART}
            if viewer is None:
                assert "hand" not in view and "legal" not in view
                assert not cards_in(rest) - shown
                continue
            own = Counter(hand_codes(s.hands[viewer]))
            assert Counter(view["hand"]) == own
            assert len(view["hand"]) == view["hand_sizes"][viewer]
            assert not cards_in(rest) - (shown + own), f"hidden cards in the view of {viewer}"
            assert set(cards_in(view["legal"])) <= set(own) | pile
            assert set(cards_in(view["pile"])) <= pile
            assert view["legal"]["to_act"] == (viewer == s.to_act)

    def teardown(self) -> None:
        if not hasattr(self, "id"):
            return
        state = replay_log([orjson.loads(line) for line in self.store.read_log(self.id)])
        assert state == self._parse(self._record())


def test_api_stateful(client: FlaskClient, store: Store) -> None:
    run_state_machine_as_test(lambda: GameMachine(client, store), settings=STATEFUL)
