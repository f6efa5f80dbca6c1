"""No hidden card reaches a seat: not in its view, not in any event it can read, not in any
error it gets. Random games (engine.legal_actions picks the moves), several presets."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from api_helpers import Table, auth, cards_in, own_cards, public_cards
from flask.testing import FlaskClient

import engine
import service
from engine.cards import CODES
from service.store import Store
from web.hub import Listener, deliver

GAMES = [  # preset, players, seed, moves (a hand of random moves lasts about 120)
    ("classic", 4, 1, 400),
    ("finnish-2p", 2, 2, 300),
    ("norwegian", 3, 3, 300),
    ("wiki", 6, 4, 250),
    pytest.param("finnish", 4, 5, 5000, marks=pytest.mark.slow),  # to the end
]








def allowed(s: engine.State, seat: int | None) -> Counter[str]:
    return own_cards(s, seat) + public_cards(s)


def within(seen: Counter[str], limit: Counter[str]) -> Counter[str]:
    """What ``seen`` holds beyond ``limit`` (empty: nothing hidden)."""
    return Counter({c: n - limit[c] for c, n in seen.items() if n > limit[c]})


def check_view(view: dict[str, Any] | None, s: engine.State, seat: int | None, where: str) -> None:
    if view is None:
        return
    view = dict(view)
    pile = view.pop("pile", None)
    legal = view.pop("legal", None)
    assert not within(cards_in(view), allowed(s, seat)), f"{where}: hidden cards in the view of {seat}"
    if seat is not None and s.hands:
        assert Counter(view["hand"]) == own_cards(s, seat), f"{where}: wrong hand"
    else:
        assert "hand" not in view
    pile_set = {CODES[k] for k in s.pile + s.pile_beside}
    assert set(cards_in(pile)) <= pile_set, f"{where}: pile refs"
    if legal is not None:
        assert set(cards_in(legal)) <= set(own_cards(s, seat)) | pile_set, f"{where}: legal refs"


def _game(store: Store, game_id: str) -> engine.State:
    game = service.load_game(store, game_id)
    assert game.state is not None
    return game.state


@pytest.mark.parametrize(("preset", "players", "seed", "max_moves"), GAMES)
def test_no_hidden_card_reaches_a_seat(client: FlaskClient, store: Store, preset: str, players: int,
                                       seed: int, max_moves: int) -> None:
    rng = random.Random(seed)
    t = Table(client, {"preset": preset, "players": players, "seed": seed,
                       "seats": [{"name": f"p{i}"} for i in range(players)]})
    viewers: list[int | None] = [None, *range(players)]
    cursors = {v: "0" for v in viewers}
    # version -> (before, after the move, after the next deal, mover)
    history: dict[int, tuple[engine.State | None, engine.State | None, engine.State, int | None]] = {}
    state = _game(store, t.id)
    _, etag = t.view(None)
    history[int(etag.strip('"'))] = (None, None, state, None)
    hands_seen = 1
    for n in range(max_moves):
        if state.phase == "over":
            break
        seat = state.to_act
        if n % 7 == 0:  # everybody's view, now and then
            for v in viewers:
                body, _ = t.view(v)
                check_view(body["view"], state, v, f"move {n} view")
        if n % 5 == 0:  # errors: someone else's move, a card one does not hold
            other = (seat + 1) % players
            r = t.move(other, {"type": "draw"}, etag)
            assert r.status_code in (403, 412, 422)
            assert not within(cards_in(r.get_json()), allowed(state, other))
            missing = next(c for c in CODES if c not in own_cards(state, seat))
            r = t.move(seat, {"type": "discard", "card": missing}, etag)
            assert r.status_code == 422
            assert not within(cards_in(r.get_json()), allowed(state, seat) + Counter([missing]))
        action = rng.choice(engine.legal_actions(state, seat))
        r = t.move(seat, action, etag)
        assert r.status_code == 200, r.get_json()
        etag = r.headers["ETag"]
        after_move = engine.apply(state, seat, action)
        new_state = _game(store, t.id)
        check_view(r.get_json()["view"], new_state, seat, f"move {n} response")
        history[int(etag.strip('"'))] = (state, after_move, new_state, seat)
        hands_seen += new_state.hand_no != state.hand_no
        state = new_state
        if n % 10 == 9 or state.phase == "over":
            _check_events(client, store, t, viewers, cursors, history)
    _check_events(client, store, t, viewers, cursors, history)
    assert hands_seen >= 2, "no deal after the first: raise the move count"
    if max_moves >= 5000:
        assert state.phase == "over"


def _check_events(client: FlaskClient, store: Store, t: Table, viewers: list[int | None],
                  cursors: dict[int | None, str], history: dict[int, Any]) -> None:
    """Each viewer's events as a poll reads them, and as the event hub (web/hub.py) hands
    them to an open stream of that viewer: the same, and nothing hidden in them."""
    for v in viewers:
        page = client.get(f"/games/{t.id}/events?after={cursors[v]}",
                          headers=auth(t.tokens[v] if v is not None else None)).get_json()
        listener = Listener(t.id, v, "0-0" if cursors[v] == "0" else cursors[v])
        deliver([(e.id, e.fields) for e in store.events_after(t.id, listener.cursor, 100_000)], [listener])
        assert [body for _, body in listener.take()] == page["events"], f"the hub's events to {v}"
        for event in page["events"]:
            before, after_move, final, mover = history[event["version"]]
            data = event["data"]
            if "move" in data:
                move = dict(data["move"])
                laid = cards_in(move.pop("red_threes_laid", None))  # the action's own red threes, again
                assert not within(laid, public_cards(after_move)), f"event v{event['version']} to {v}"
                seen = cards_in(move)
                assert not within(seen, allowed(after_move, v)), f"event v{event['version']} to {v}"
                if v != mover:
                    assert "cards" not in data["move"]
            if "deal" in data:
                check_view(data["deal"]["view"], final, v, f"deal event v{event['version']}")
            rest = {k: x for k, x in data.items() if k not in ("move", "deal")}
            assert not cards_in(rest)
        cursors[v] = page["last_id"]
