"""Attacks of a cheating seat, each tried over HTTP against twin games: two games whose decks
differ only in cards the attacker cannot see. Whatever the attacker (or a spectator) can ask
must answer the same in both, byte for byte once the game ids and event ids are replaced.

The games are made through :func:`service.games.create_game` with its test-only deck seam (the
only way to choose a deck); every question is then asked over HTTP with the seats' tokens.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
from api_helpers import auth
from flask.testing import FlaskClient

import engine
import service
from service.config import Settings
from service.store import Store

SALT = "5" * 32


class Twin:
    """A game dealt from a chosen deck, asked over HTTP."""

    def __init__(self, client: FlaskClient, store: Store, settings: Settings, preset: str, players: int | None,
                 deck: list[str], options: dict[str, Any] | None = None) -> None:
        rules = engine.resolve(preset, players, options)
        body: dict[str, Any] = {"preset": preset, "players": rules.players,
                                "seats": [{"name": f"p{i}"} for i in range(rules.players)]}
        if options:
            body["rules"] = options
        created, self.version = service.create_game(store, settings, body,
                                                    deck_source=lambda r, hand: (list(deck), SALT))
        self.client = client
        self.id: str = created["id"]
        self.commitment: str = created["view"]["commitment"]
        self.tokens: dict[int, str] = {s["seat"]: s["token"] for s in created["seats"]}

    def move(self, seat: int, action: dict[str, Any], *, dry_run: bool = False) -> Any:
        url = f"/games/{self.id}/moves" + ("?dry_run=1" if dry_run else "")
        r = self.client.post(url, json={"action": action},
                             headers=auth(self.tokens[seat], **{"If-Match": f'"{self.version}"'}))
        if r.status_code == 200 and not dry_run:
            self.version = int(r.headers["ETag"].strip('"'))
        return r

    def events(self, seat: int | None) -> list[dict[str, Any]]:
        token = self.tokens[seat] if seat is not None else None
        r = self.client.get(f"/games/{self.id}/events?after=0", headers=auth(token))
        assert r.status_code == 200, r.get_json()
        events = r.get_json()["events"]
        for n, e in enumerate(events):
            e["id"] = f"event-{n}"
        return events

    def render(self, value: Any) -> bytes:
        blob = orjson.dumps(value).replace(self.id.encode(), b"<game>")
        return blob.replace(self.commitment.encode(), b"<commitment>")


def _arrange(rules: engine.RuleOptions, seed: int, hand: dict[int, list[str]],
             stock: list[str]) -> list[str]:
    """A shuffled deck with ``hand[seat]``'s cards dealt to that seat and ``stock`` the first
    stock cards (in drawing order)."""
    deck, _, _ = engine.shuffle(rules, random.Random(seed))
    deck = list(deck)
    fixed: set[int] = set()

    def put(pos: int, code: str) -> None:
        j = next(i for i, c in enumerate(deck) if c == code and i != pos and i not in fixed)
        deck[pos], deck[j] = deck[j], deck[pos]
        fixed.add(pos)

    dealt = rules.players * rules.dealing.hand_size
    for seat, cards in hand.items():
        for pos, code in zip([i for i in range(dealt) if i % rules.players == seat], cards, strict=False):
            put(pos, code)
    start = engine.deal(engine.new_game(rules), deck, SALT).stock_pos
    for n, code in enumerate(stock):
        put(start + n, code)
    assert engine.deal(engine.new_game(rules), deck, SALT).stock_pos == start
    return deck


def _swapped_in_stock(rules: engine.RuleOptions, deck: list[str], pos: int, code: str) -> list[str]:
    """``deck`` with ``code`` brought to stock position ``pos`` (counted from the stock's top)
    from deeper in the stock: the two decks differ only where no seat can see."""
    start = engine.deal(engine.new_game(rules), deck, SALT).stock_pos
    out = list(deck)
    j = next(i for i in range(start + pos + 1, len(out)) if out[i] == code)
    out[start + pos], out[j] = out[j], out[start + pos]
    return out


def test_laying_a_red_three_does_not_tell_the_table_its_replacement(
        client: FlaskClient, store: Store, settings: Settings) -> None:
    """norwegian (R14, optional red threes): seat 0 lays a red three from its hand and draws
    its replacement. The event told every seat ``drew: 0`` when the replacement was the same
    card as one laid or melded by the action (a hand's count of that card did not grow), and
    ``drew: 1`` otherwise: the table learnt the hidden replacement."""
    rules = engine.resolve("norwegian", None)
    seat = engine.deal(engine.new_game(rules), _arrange(rules, 1, {}, []), SALT).to_act
    lay = {"type": "meld", "melds": [["3H"]]}
    told: dict[int | None, list[bytes]] = {v: [] for v in [None, *range(rules.players)] if v != seat}
    base = _arrange(rules, 1, {seat: ["3H"]}, ["5S", "KD"])
    for deck in (base, _swapped_in_stock(rules, base, 1, "3H")):  # the replacement: KD, or the other 3H
        twin = Twin(client, store, settings, "norwegian", None, deck)
        assert twin.move(seat, {"type": "draw"}).status_code == 200
        r = twin.move(seat, lay)
        assert r.status_code == 200, r.get_json()
        for viewer in told:
            told[viewer].append(twin.render(twin.events(viewer)))
    for viewer, (a, b) in told.items():
        assert a == b, f"viewer {viewer} tells the replacement apart:\n{a.decode()[-400:]}\n{b.decode()[-400:]}"


def test_a_dry_run_of_a_red_three_lay_does_not_judge_the_hidden_replacement(
        client: FlaskClient, store: Store, settings: Settings) -> None:
    """norwegian, one canasta to go out (house rule): seat 0 holds 3H, six kings and five
    queens after its draw. Melding them all with the red three laid leaves it only the red
    three's replacement, the next stock card, which it has not seen. The engine judged the
    move with that card in the hand: legal when it is a king (it completes a canasta, so the
    last card can go out), ``must_keep_card`` otherwise. A dry run (or the refused move
    itself) told the seat the top card of the stock before it committed to anything."""
    options = {"canastas_to_go_out": 1}
    rules = engine.resolve("norwegian", None, options)
    seat = engine.deal(engine.new_game(rules), _arrange(rules, 1, {}, []), SALT).to_act
    hand = ["3H", "KS", "KS", "KH", "KH", "KD", "KD", "QS", "QS", "QH", "QH"]
    base = _arrange(rules, 1, {seat: hand}, ["QD", "5S"])
    meld = {"type": "meld", "melds": [["3H"], ["KS", "KS", "KH", "KH", "KD", "KD"], ["QS", "QS", "QH", "QH", "QD"]]}
    answers = []
    for deck in (base, _swapped_in_stock(rules, base, 1, "KC")):  # the replacement: 5S, or a seventh king
        twin = Twin(client, store, settings, "norwegian", None, deck, options)
        assert twin.move(seat, {"type": "draw"}).status_code == 200
        for dry_run in (True, False):  # the dry run, then the move itself
            r = twin.move(seat, meld, dry_run=dry_run)
            answers.append((dry_run, r.status_code, twin.render(r.get_json())))
    assert answers[:2] == answers[2:], f"the seat tells the replacement apart: {answers}"


def test_a_dry_run_answer_to_may_i_go_out_does_not_tell_whether_the_asker_can_take_the_pile() -> None:
    """bicycle asks before the draw (R17); on an empty stock (R21) the hand ends at once when
    the asker cannot take the pile, which its hidden cards decide. The partner's dry-run
    answer must give the same reason whatever those cards are (two hands of the same size:
    one takes the pile, one cannot)."""
    from engine.cards import parse_card
    from tests.engine.helpers import set_table, skip_stock, start

    kings = ["KH", "KS", "KD", "KC", "KH", "KS", "KD"]
    answer = {"type": "answer_go_out", "yes": True}
    reasons = set()
    for held in (["QH", "QS"], ["QH", "9S"]):
        state = set_table(start("bicycle"), melds={0: [kings]}, hands={0: held})
        state = skip_stock(state, 0)._replace(pile=(parse_card("QC"),), pile_frozen_by=-1)
        asked = engine.apply(state, 0, {"type": "ask_go_out"})
        reasons.add(service.withheld_reason(asked, engine.apply(asked, 2, answer), 2, answer))
    assert reasons == {"ends_hand"}
