"""A person takes their seat back from a bot while a real ``canasta worker`` process plays it:
the bot run stops cleanly (its compare-and-set names an old version; it re-reads and finds no
bot to act), never moves the seat again, and the person plays on."""

from __future__ import annotations

import signal
import time
from typing import Any

import engine
import service
from service.botqueue import BotKeys as Keys
from service.botqueue import games_of
from service.store import Store
from tests.worker.conftest import move_events
from tests.worker.test_worker_cli import kill_group, wait_for, worker


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_taking_a_seat_back_stops_the_bot_run(http: Any, redis_url: str, wprefix: str, wstore: Store,
                                               rclient: Any) -> None:
    seats = [{"name": "ann"}, {"bot": "greedy"}, {"bot": "greedy"}, {"bot": "greedy"}]
    r = http.post("/games", json={"preset": "finnish", "seats": seats, "seed": 41, "rules": {"target_score": 3000}})
    assert r.status_code == 201, r.get_json()
    gid, token = r.get_json()["id"], r.get_json()["seats"][0]["token"]
    # "play for me": every seat is now a bot's, and one bot run plays them all, on and on
    r = http.post(f"/games/{gid}/seats/0/bot", json={"bot": "greedy"}, headers=auth(token))
    assert r.status_code == 200, r.get_json()
    start = r.get_json()["version"]
    lease = Keys(wprefix).lease(gid)
    proc = worker(redis_url, wprefix)
    try:
        wait_for(lambda: service.load_game(wstore, gid).version >= start + 40 and games_of(rclient).exists(lease), 60,
                 "the bot run to be playing")
        r = http.delete(f"/games/{gid}/seats/0/bot", headers=auth(token))
        assert r.status_code == 200, r.get_json()
        taken = r.get_json()["version"]
        assert r.get_json()["status"] == "playing", "the game ended before the take-back: the test proves nothing"

        def settled() -> bool:  # the run has let go of the game and of its bookkeeping
            game = service.load_game(wstore, gid)
            return game.status == "over" or (game.state is not None and game.state.to_act == 0
                                             and not games_of(rclient).exists(lease)
                                             and rclient.zscore(Keys(wprefix).awaiting(), gid) is None)

        wait_for(settled, 60, "the bot run to stop at ann's turn")
        game = service.load_game(wstore, gid)
        assert game.status == "playing" and game.state is not None and game.state.to_act == 0
        time.sleep(0.5)
        assert service.load_game(wstore, gid).version == game.version  # nobody plays ann's seat
        after = [e for e in move_events(wstore, gid) if e["version"] > taken]
        assert all(e["seat"] != 0 for e in after), after  # the bot never moved it again
        action = engine.legal_actions(game.state, 0)[0]
        r = http.post(f"/games/{gid}/moves", json={"action": action},
                      headers={**auth(token), "If-Match": f'"{game.version}"'})
        assert r.status_code == 200, r.get_json()  # ann plays again
    finally:
        kill_group(proc, signal.SIGTERM)
