"""The books of games (service.retention): an unfinished game that expired is counted once, and a
finished game's log is archived before the retention lets it go."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import service
from replay.validate import validate_path
from service import retention
from service.config import Settings
from service.store import Store
from tests.worker.conftest import new_game, run_worker
from worker.config import WorkerConfig
from worker.sweeper import archive_pass, expire_pass


def test_an_unfinished_game_whose_keys_expired_is_counted_once(wstore: Store, wsettings: Settings, rclient: Any,
                                                               cfg: WorkerConfig) -> None:
    books = retention.Books(rclient, cfg.prefix)
    kept = new_game(wstore, wsettings, [{"name": "a"}, {"name": "b"}], preset="finnish-2p", seed=3)["id"]
    gone = new_game(wstore, wsettings, [{"name": "a"}, {"name": "b"}], preset="finnish-2p", seed=4)["id"]
    assert rclient.zscore(books.open_key, kept) is not None and rclient.zscore(books.open_key, gone) is not None
    # as if both had been created before the idle time and one had expired since
    rclient.zadd(books.open_key, {kept: 1, gone: 1})
    for key in (wstore.keys.state(gone), wstore.keys.events(gone), wstore.keys.log(gone)):
        wstore.redis.delete(key)
    assert expire_pass(rclient, cfg) == [gone]
    assert expire_pass(rclient, cfg) == []
    assert rclient.zscore(books.open_key, kept) is not None


def test_a_finished_games_log_is_archived_and_validates(wstore: Store, wsettings: Settings, rclient: Any,
                                                        cfg: WorkerConfig, tmp_path: Path) -> None:
    books = retention.Books(rclient, cfg.prefix)
    game = new_game(wstore, wsettings, [{"bot": "random"}] * 2, preset="finnish-2p", seed=5,
                    rules={"target_score": 50})["id"]
    run_worker(rclient, cfg, rounds=2000)
    assert service.load_game(wstore, game).status == "over"
    assert rclient.zscore(books.finished_key, game) is not None
    assert rclient.zscore(books.open_key, game) is None
    archived = WorkerConfig.from_env(cfg.prefix, archive_dir=str(tmp_path))
    assert archive_pass(rclient, archived) >= 1
    files = list(tmp_path.glob(f"*/{game}.jsonl"))
    assert len(files) == 1 and time.strftime("%Y-%m-%d", time.gmtime()) in str(files[0])
    verdict = validate_path(str(files[0]))
    assert verdict.valid and verdict.finished, verdict.describe()
    assert rclient.zscore(books.finished_key, game) is None
    # without an archive, the books forget finished games once the retention is over
    rclient.zadd(books.finished_key, {"old-game": 1, "new-game": time.time()})
    assert archive_pass(rclient, cfg) == 0
    assert rclient.zscore(books.finished_key, "old-game") is None
    assert rclient.zscore(books.finished_key, "new-game") is not None
