"""The bots' fair share (service.botqueue): a person's game before games of bots only, and one
client's many games limited to its share of runs at once, on a real Redis and real RQ."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from rq.job import Job, JobStatus

import service
from service.botqueue import BOTS, PERSONS, BotKeys, BotWork, games_of, job_id, rq_queue
from service.clients import Client, Quotas
from service.config import Settings
from service.store import Store
from tests.worker.conftest import run_worker
from worker.cli import _make_worker
from worker.config import WorkerConfig
from worker.recovery import ensure_job
from worker.sweeper import release_stale_shares, sweep_once

SERIALIZER = "rq.serializers.JSONSerializer"
FOUR_BOTS = [{"bot": "random"}] * 4


def client(ident: str, runs: int = 1) -> Client:
    return Client(ident, Quotas(0, 3600, 0, runs))


def create(store: Store, settings: Settings, seats: list[dict[str, Any]], who: Client, seed: int) -> str:
    body = {"preset": "finnish", "seats": seats, "seed": seed, "rules": {"target_score": 1000}}  # short games
    return str(service.create_game(store, settings, body, client=who)[0]["id"])


def status_of(rclient: Any, game_id: str, store: Store) -> str:
    version = service.load_game(store, game_id).version
    return JobStatus(Job.fetch(job_id(game_id, version), connection=rclient, serializer=SERIALIZER).get_status()).value


def test_a_game_knows_its_lane_and_its_client(wstore: Store, wsettings: Settings, cfg: WorkerConfig) -> None:
    bots_only = create(wstore, wsettings, FOUR_BOTS, client("a:one", runs=3), 1)
    person = create(wstore, wsettings, [{"name": "p"}, *FOUR_BOTS[:3]], client("a:two"), 2)
    assert BotWork.of(bots_only, service.load_game(wstore, bots_only).meta, cfg) == BotWork(BOTS, "a:one", 3)
    assert BotWork.of(person, service.load_game(wstore, person).meta, cfg) == BotWork(PERSONS, "a:two", 1)
    # a game of before (no client in its meta) is a client of its own, with the default share
    old = {"seats": [{"name": None, "bot": "random"}] * 4}
    assert BotWork.of("g1", old, cfg) == BotWork(BOTS, "g:g1", cfg.runs_per_client)


def test_one_client_has_one_run_queued_at_once_and_the_rest_follow(wstore: Store, wsettings: Settings,
                                                                   rclient: Any, cfg: WorkerConfig) -> None:
    flooder = client("a:flooder")
    games = [create(wstore, wsettings, FOUR_BOTS, flooder, 10 + i) for i in range(4)]
    statuses = sorted(status_of(rclient, g, wstore) for g in games)
    assert statuses == ["queued", "rate_limited", "rate_limited", "rate_limited"]
    queued = rq_queue(rclient, cfg, BOTS).job_ids
    assert sum(job_id(g, service.load_game(wstore, g).version) in queued for g in games) == 1
    run_worker(rclient, cfg, rounds=2000)  # slices hand each game on; the share lets the next through
    for g in games:
        assert service.load_game(wstore, g).status == "over"


def test_a_persons_game_is_played_before_games_of_bots_only(wstore: Store, wsettings: Settings,
                                                            rclient: Any, cfg: WorkerConfig) -> None:
    # three clients' games of bots only are queued first; a person's game comes last
    background = [create(wstore, wsettings, FOUR_BOTS, client(f"a:bg{i}"), 20 + i) for i in range(3)]
    person = create(wstore, wsettings, [{"bot": "random"}, {"name": "p"}, {"bot": "random"}, {"bot": "random"}],
                    client("a:person"), 30)
    assert rq_queue(rclient, cfg, PERSONS).job_ids == [job_id(person, service.load_game(wstore, person).version)]
    worker = _make_worker(rclient, cfg)
    worker.work(burst=True, max_jobs=1, with_scheduler=False, logging_level="WARNING")
    # the one job the worker took was the person's: it played the bots until the person's turn
    game = service.load_game(wstore, person)
    assert game.state is not None and game.state.to_act == 1
    assert all(service.load_game(wstore, g).version == 1 for g in background)


def test_a_share_held_by_a_dead_worker_is_given_back(wstore: Store, wsettings: Settings, rclient: Any,
                                                     cfg: WorkerConfig) -> None:
    flooder = client("a:crashed")
    first, second = (create(wstore, wsettings, FOUR_BOTS, flooder, 40 + i) for i in range(2))
    v = service.load_game(wstore, first).version
    work = BotWork.of(first, service.load_game(wstore, first).meta, cfg)
    # the first game's job was taken by a worker that was then killed -9: "started" long ago,
    # no lease; the second waits for the share it holds
    job = Job.fetch(job_id(first, v), connection=rclient, serializer=SERIALIZER)
    rq_queue(rclient, cfg, BOTS).remove(job)
    job.started_at = datetime.now(UTC) - timedelta(seconds=60)
    job.set_status(JobStatus.STARTED)
    job.save()
    assert status_of(rclient, second, wstore) == "rate_limited"
    assert ensure_job(rclient, cfg, first, v, work) == "replaced"
    # the share went to the oldest waiting run (the second game's); the first waits its turn
    assert status_of(rclient, second, wstore) == "queued"
    assert status_of(rclient, first, wstore) == "rate_limited"
    counts = sweep_once(rclient, cfg)
    assert counts["waiting"] >= 2 and not counts["replaced"] and not counts["enqueued"]
    run_worker(rclient, cfg, rounds=2000)
    assert service.load_game(wstore, first).status == service.load_game(wstore, second).status == "over"


def test_the_sweeper_frees_a_share_that_a_killed_worker_held(wstore: Store, wsettings: Settings, rclient: Any,
                                                             cfg: WorkerConfig) -> None:
    """A worker killed -9 leaves its job "started" for RQ until its heartbeat's registry is
    cleaned (minutes): the job holds its client's share, and the client's other games wait.
    The sweeper sees the job holds no lease of its game and gives the share back."""
    client_ = client("a:killed")
    first, second = (create(wstore, wsettings, FOUR_BOTS, client_, 50 + i) for i in range(2))
    v = service.load_game(wstore, first).version
    job = Job.fetch(job_id(first, v), connection=rclient, serializer=SERIALIZER)
    rq_queue(rclient, cfg, BOTS).remove(job)
    job.started_at = datetime.now(UTC) - timedelta(seconds=30)
    job.set_status(JobStatus.STARTED)
    job.save()
    assert status_of(rclient, second, wstore) == "rate_limited"
    assert release_stale_shares(rclient, cfg) == 1
    assert status_of(rclient, second, wstore) == "queued"
    # a started job that holds its game's lease is alive: left alone
    third = create(wstore, wsettings, FOUR_BOTS, client("a:alive"), 60)
    v3 = service.load_game(wstore, third).version
    live = Job.fetch(job_id(third, v3), connection=rclient, serializer=SERIALIZER)
    rq_queue(rclient, cfg, BOTS).remove(live)
    live.started_at = datetime.now(UTC) - timedelta(seconds=30)
    live.set_status(JobStatus.STARTED)
    live.save()
    games_of(rclient).set(BotKeys(cfg.prefix).lease(third), live.id, px=5000)
    assert release_stale_shares(rclient, cfg) == 0
    games_of(rclient).delete(BotKeys(cfg.prefix).lease(third))
    run_worker(rclient, cfg, rounds=2000)
    assert service.load_game(wstore, second).status == "over"
