"""Bot runs on a real Redis with real RQ workers (SimpleWorker in-process, no fork)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rq.job import Job

import bots
import service
from engine.rules import DEFAULT_MAX_HANDS
from replay.validate import validate_bytes
from service.botqueue import BotKeys as Keys
from service.botqueue import BotWork, games_of, job_id, notify
from service.botqueue import rq_queue as queue
from service.config import Settings
from service.store import Store
from tests.worker.conftest import event_versions, move_events, new_game, run_worker
from worker.config import WorkerConfig
from worker.recovery import ensure_job
from worker.runner import BotRun
from worker.sweeper import deep_sweep, sweep_once

ONE_HUMAN = [{"name": "ann"}, {"bot": "greedy"}, {"bot": "expert"}, {"bot": "random"}]
FOUR_BOTS = [{"bot": "greedy"}, {"bot": "random"}, {"bot": "expert"}, {"bot": "greedy"}]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def human_turn(http: Any, store: Store, game_id: str, seat: int, token: str) -> int:
    """Play the human's whole turn over HTTP (greedy chooses); returns the moves made."""
    made = 0
    while True:
        game = service.load_game(store, game_id)
        if game.status != "playing" or game.state is None or game.state.to_act != seat:
            return made
        action = bots.choose("greedy", game.state, seat)
        r = http.post(f"/games/{game_id}/moves", json={"action": action},
                      headers={**auth(token), "If-Match": f'"{game.version}"'})
        assert r.status_code == 200, r.get_json()
        made += 1


def test_one_human_three_bots_turn_comes_back(http: Any, wstore: Store, rclient: Any, cfg: WorkerConfig) -> None:
    r = http.post("/games", json={"preset": "finnish", "seats": ONE_HUMAN, "seed": 21})
    assert r.status_code == 201, r.get_json()
    created = r.get_json()
    gid, token = created["id"], created["seats"][0]["token"]
    assert created["seats"][1]["bot"] == "greedy"
    for _ in range(3):  # three rounds: human turn, then the three bots answer
        assert human_turn(http, wstore, gid, 0, token) > 0
        before = service.load_game(wstore, gid).version
        assert len(queue(rclient, cfg)) == 1  # the API enqueued the bots' run
        run_worker(rclient, cfg)
        game = service.load_game(wstore, gid)
        assert game.version > before
        seats = [e["seat"] for e in move_events(wstore, gid) if e["version"] > before]
        assert {1, 2, 3} <= set(seats), seats
        if game.status == "over":
            break
        assert game.state is not None and game.state.to_act == 0  # the turn came back
        assert rclient.zscore(Keys(cfg.prefix).awaiting(), gid) is None
    assert event_versions(wstore, gid) == list(range(1, service.load_game(wstore, gid).version + 1))


def test_hint_and_hand_a_seat_to_a_bot(http: Any, wstore: Store, rclient: Any, cfg: WorkerConfig) -> None:
    r = http.post("/games", json={"preset": "finnish-2p", "seats": [{"name": "a"}, {"name": "b"}], "seed": 4})
    gid = r.get_json()["id"]
    tokens = {s["seat"]: s["token"] for s in r.get_json()["seats"]}
    hint = http.get(f"/games/{gid}/hint?bot=greedy", headers=auth(tokens[0]))
    assert hint.status_code == 200, hint.get_json()
    game = service.load_game(wstore, gid)
    assert hint.get_json()["action"] == bots.choose("greedy", game.state, 0)
    # seat 1 leaves its seat to a bot; the human plays a turn; the bot answers
    r = http.post(f"/games/{gid}/seats/1/bot", json={"bot": "greedy"}, headers=auth(tokens[1]))
    assert r.status_code == 200, r.get_json()
    human_turn(http, wstore, gid, 0, tokens[0])
    run_worker(rclient, cfg)
    game = service.load_game(wstore, gid)
    assert game.status == "over" or game.state.to_act == 0
    assert 1 in {e["seat"] for e in move_events(wstore, gid)}


def test_four_bots_play_a_game_to_the_end(wstore: Store, wsettings: Settings, rclient: Any,
                                          cfg: WorkerConfig) -> None:
    created = new_game(wstore, wsettings, FOUR_BOTS, rules={"target_score": 600}, seed=8)
    gid = created["id"]
    assert rclient.zscore(Keys(cfg.prefix).awaiting(), gid) == 1.0
    run_worker(rclient, cfg)
    game = service.load_game(wstore, gid)
    assert game.status == "over", game.version
    versions = event_versions(wstore, gid)
    assert versions == list(range(1, game.version + 1))  # every version once: nothing applied twice
    log = [line for line in wstore.read_log(gid)]
    assert log[-1].startswith(b'{"game_end":true')
    assert rclient.zscore(Keys(cfg.prefix).awaiting(), gid) is None


def _played_to_its_end(store: Store, rclient: Any, cfg: WorkerConfig, gid: str) -> dict[str, Any]:
    """Run workers until the queue is empty; the game's result, its log checked by the validator."""
    run_worker(rclient, cfg, rounds=500)
    game = service.load_game(store, gid)
    assert game.status == "over" and game.state is not None, game.version
    verdict = validate_bytes(b"".join(line + b"\n" for line in store.read_log(gid)), gid)
    assert verdict.valid and verdict.finished, verdict.describe()
    assert rclient.zscore(Keys(cfg.prefix).awaiting(), gid) is None
    result = game.state.game_result
    assert result is not None
    return result


def test_four_random_bots_end_at_the_hand_limit(wstore: Store, wsettings: Settings, rclient: Any,
                                                cfg: WorkerConfig) -> None:
    """Random bots at the highest target a client may choose need not ever reach it: the
    hand limit (lowered here to 3 hands) ends the game, and its log validates."""
    created = new_game(wstore, wsettings, [{"bot": "random"}] * 4, preset="classic", seed=3,
                       rules={"target_score": 50000, "max_hands": 3})
    result = _played_to_its_end(wstore, rclient, cfg, created["id"])
    assert result["reason"] == "hand_limit"
    assert service.load_game(wstore, created["id"]).state.hand_no == 3


@pytest.mark.slow
def test_four_random_bots_at_the_highest_target_end_within_the_default_limits(
        wstore: Store, wsettings: Settings, rclient: Any, cfg: WorkerConfig) -> None:
    """Four random bots at a target of 10^15 played on for ever before the ranges (a worker
    busy for good); at the highest target a client may choose and the default limits, a real
    worker plays their game to its end."""
    created = new_game(wstore, wsettings, [{"bot": "random"}] * 4, preset="classic", seed=6,
                       rules={"target_score": 50000})
    assert created["rules"]["max_hands"] == DEFAULT_MAX_HANDS
    result = _played_to_its_end(wstore, rclient, cfg, created["id"])
    assert result["reason"] in ("hand_limit", "target")
    assert service.load_game(wstore, created["id"]).state.hand_no <= DEFAULT_MAX_HANDS


def test_the_same_job_enqueued_twice_is_applied_once(wstore: Store, wsettings: Settings, rclient: Any,
                                                     cfg: WorkerConfig) -> None:
    created = new_game(wstore, wsettings, [{"name": "h"}, {"bot": "greedy"}], preset="finnish-2p", seed=12)
    gid = created["id"]
    game = service.load_game(wstore, gid)
    # the human plays a turn through the service (as the HTTP route does)
    while game.state.to_act == 0:
        move = service.MoveRequest(gid, 0, bots.choose("greedy", game.state, 0), game.version)
        service.apply_move(wstore, wsettings, move)
        game = service.load_game(wstore, gid)
    v = game.version
    q = queue(rclient, cfg)
    assert job_id(gid, v) in q.job_ids
    work = BotWork.of(gid, game.meta, cfg)
    assert notify(rclient, cfg, gid, v, work) is None  # the duplicate is dropped
    assert q.job_ids.count(job_id(gid, v)) == 1
    run_worker(rclient, cfg)
    assert notify(rclient, cfg, gid, v, work) is None  # still dropped after the run finished
    run_worker(rclient, cfg)
    # running the same run again by hand changes nothing: the version has moved on
    assert BotRun(rclient, cfg, gid, "manual").run(v)["outcome"] == "moved_on"
    after = service.load_game(wstore, gid)
    assert after.version > v
    assert event_versions(wstore, gid) == list(range(1, after.version + 1))


def test_sweeper_recovers_lost_and_failed_jobs(wstore: Store, wsettings: Settings, rclient: Any,
                                               cfg: WorkerConfig) -> None:
    created = new_game(wstore, wsettings, [{"bot": "greedy"}, {"name": "h"}], preset="finnish-2p", seed=13)
    gid = created["id"]
    game = service.load_game(wstore, gid)
    v = game.version
    work = BotWork.of(gid, game.meta, cfg)
    jid = job_id(gid, v)
    # the enqueue was lost (the queue emptied, the job gone): the sweeper enqueues again
    Job.fetch(jid, connection=rclient, serializer="rq.serializers.JSONSerializer").delete(remove_from_queue=True)
    counts = sweep_once(rclient, cfg)  # (other tests' games may await a bot too: counted alike)
    assert counts["enqueued"] >= 1 and jid in queue(rclient, cfg).job_ids
    assert sweep_once(rclient, cfg)["waiting"] >= 1  # queued: nothing more to do
    assert queue(rclient, cfg).job_ids.count(jid) == 1
    # a job that failed for good: replaced, with attempt + 1
    job = Job.fetch(jid, connection=rclient, serializer="rq.serializers.JSONSerializer")
    queue(rclient, cfg).remove(job)
    job.set_status("failed")
    assert ensure_job(rclient, cfg, gid, v, work) == "replaced"
    job = Job.fetch(jid, connection=rclient, serializer="rq.serializers.JSONSerializer")
    assert job.kwargs["attempt"] == 1
    # a started job holding its game's lease is alive, however long ago it started; one whose
    # worker died (no lease) is replaced
    queue(rclient, cfg).remove(job)
    job.started_at = datetime.now(UTC) - timedelta(seconds=60)
    job.set_status("started")
    job.save()
    lease = Keys(cfg.prefix).lease(gid)
    games_of(rclient).set(lease, jid, px=5000)
    assert ensure_job(rclient, cfg, gid, v, work) == "running"
    games_of(rclient).delete(lease)
    assert ensure_job(rclient, cfg, gid, v, work) == "replaced"
    run_worker(rclient, cfg)
    game = service.load_game(wstore, gid)
    assert game.version > v and (game.status == "over" or game.state.to_act == 1)
    # a game no longer awaiting a bot leaves the set; a lost set entry is found by the deep sweep
    assert rclient.zscore(Keys(cfg.prefix).awaiting(), gid) is None
    assert deep_sweep(rclient, cfg) == 0


@pytest.mark.parametrize("bad", ["a:b", "a b", "ä"])
def test_job_ids_use_only_the_allowed_characters(bad: str) -> None:
    assert job_id("Ab_9-x", 17) == "bot-Ab_9-x-v17"
    with pytest.raises(ValueError):
        job_id(bad, 1)


def test_release_reads_the_version_with_the_release_and_frees_only_its_own_lease(
        wstore: Store, wsettings: Settings, rclient: Any, cfg: WorkerConfig) -> None:
    from service.botqueue import games_of
    from worker.lease import Lease

    games = games_of(rclient)  # a lease lives beside its game (a cluster's node of the game)

    created = new_game(wstore, wsettings, [{"name": "h"}, {"bot": "greedy"}], preset="finnish-2p", seed=15)
    gid = created["id"]
    version = service.load_game(wstore, gid).version
    key, state_key = Keys(cfg.prefix).lease(gid), wstore.keys.state(gid)
    mine = Lease(games, key, "mine", 5000)
    assert mine.acquire() and not Lease(games, key, "other", 5000).acquire()
    assert mine.renew()
    assert mine.release_and_version(state_key)[0] == version
    assert games.get(key) is None and not mine.held
    # an expired lease taken over by another job: the release leaves the new holder's alone
    theirs = Lease(games, key, "theirs", 5000)
    assert theirs.acquire()
    mine.held = True  # it believes it still holds it
    assert mine.release_and_version(state_key)[0] == version
    assert games.get(key) == b"theirs"
    theirs.release()
    assert games.get(key) is None
    # a script the server does not know (lost, or never loaded) is loaded and run again
    import uuid

    from service.redis_io import Script, execute

    fresh = Script(f"return ARGV[1] -- {uuid.uuid4().hex}")
    assert execute(games, fresh.command([], ["x"]), ("GET", key), scripts=(fresh,)) == [b"x", None]


def test_the_worker_beats_its_heartbeat_in_one_round_trip_and_not_before_every_job(rclient: Any,
                                                                                   cfg: WorkerConfig) -> None:
    from worker.cli import HEARTBEAT_SECONDS, _make_worker

    w = _make_worker(rclient, cfg)
    sent: list[int] = []
    real = rclient.connection_pool.get_connection

    def counting(*a: Any, **k: Any) -> Any:
        sent.append(1)
        return real(*a, **k)

    rclient.connection_pool.get_connection = counting  # type: ignore[method-assign]
    try:
        w.heartbeat()
        w.heartbeat()  # a beat younger than HEARTBEAT_SECONDS is not sent again
        assert len(sent) == 1  # hset + 2 expires, pipelined
        w.last_heartbeat = w.last_heartbeat - timedelta(seconds=HEARTBEAT_SECONDS + 1)
        w.heartbeat()
        assert len(sent) == 2
        w.heartbeat(timeout=600)  # an explicit ttl always goes out
        assert len(sent) == 3
    finally:
        del rclient.connection_pool.get_connection
    try:
        assert rclient.ttl(w.key) > 500
    finally:
        rclient.delete(w.key)


def test_a_stopping_worker_does_not_wait_for_its_command_listener(rclient: Any, cfg: WorkerConfig) -> None:
    """RQ's listener thread may read the reply to UNSUBSCRIBE before it is told to stop (the
    stopping thread descheduled in between, as on a loaded machine); it then waited RQ's 60 s
    poll for a new subscription, and the worker with it."""
    from worker.cli import PUBSUB_STOP_SECONDS, _make_worker

    w = _make_worker(rclient, cfg)
    w.subscribe()
    thread = w.pubsub_thread
    assert thread is not None and thread.is_alive()
    real_stop = thread.stop

    def descheduled(*a: Any, **k: Any) -> None:
        time.sleep(0.5)  # the listener reads on meanwhile
        real_stop(*a, **k)

    thread.stop = descheduled  # type: ignore[method-assign]
    started = time.monotonic()
    w.unsubscribe()
    assert time.monotonic() - started < PUBSUB_STOP_SECONDS
    assert not thread.is_alive()
