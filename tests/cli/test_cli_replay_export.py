"""`canasta replay export`: a finished game's log from Redis or from the API."""

from __future__ import annotations

import http.server
import random
import threading
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

import engine
from bots.random_bot import random_policy
from bots.simulate import play_game
from cli.replay_export import main
from replay.log import encode_log
from replay.validate import validate_path
from service.keys import Keys
from tests.conftest_redis import key_prefix, redis_client, redis_url  # noqa: F401

GAME = "AbCdEf123456"


@pytest.fixture(scope="module")
def sample_logs() -> list[list[dict[str, Any]]]:
    """Two finished random games' log lines (a header first)."""
    logs = []
    for seed in (1, 2):
        rules = engine.resolve("finnish", overrides={"target_score": 1000})
        rng = random.Random(f"export:{seed}")
        logs.append(play_game(rules, rng, random_policy(rng)).log_lines(game_id=f"export-{seed}"))
    return logs


def encode(lines: list[dict[str, Any]]) -> bytes:
    return encode_log(lines)


@pytest.fixture
def stored(redis_client, key_prefix, monkeypatch, sample_logs) -> Iterator[list[bytes]]:  # noqa: F811
    """A finished game's log lines in Redis, as the API's store keeps them."""
    monkeypatch.setenv("CANASTA_KEY_PREFIX", key_prefix)
    items = [orjson.dumps(line) for line in sample_logs[0]]
    key = Keys(key_prefix).log(GAME)
    assert key == f"{key_prefix}:{{{GAME}}}:log"
    redis_client.delete(key)
    redis_client.rpush(key, *items)
    yield items
    redis_client.delete(key)


def test_export_from_redis(stored, redis_url, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "sub" / "game.jsonl"
    assert main(["export", GAME, "--redis-url", redis_url, "-o", str(out)]) == 0
    assert out.read_bytes() == b"".join(item + b"\n" for item in stored)
    assert validate_path(str(out)).valid
    assert f"{len(stored)} lines" in capsys.readouterr().err


def test_export_to_stdout(stored, redis_url, capsysbinary):  # noqa: F811
    assert main(["export", GAME, "--redis-url", redis_url]) == 0
    assert capsysbinary.readouterr().out == b"".join(item + b"\n" for item in stored)


def test_unfinished_or_missing_games_are_refused(stored, redis_client, redis_url, key_prefix, tmp_path, capsys):  # noqa: F811
    redis_client.rpop(Keys(key_prefix).log(GAME))  # the game_end line: the game goes on
    out = tmp_path / "g.jsonl"
    assert main(["export", GAME, "--redis-url", redis_url, "-o", str(out)]) == 1
    assert "is not finished" in capsys.readouterr().err
    assert not out.exists()
    assert main(["export", "NoSuchGame00", "--redis-url", redis_url]) == 1
    assert "no log for game NoSuchGame00" in capsys.readouterr().err
    assert main(["export", "bad{id}", "--redis-url", redis_url]) == 1
    assert "is not a game id" in capsys.readouterr().err


def test_redis_down(capsys):
    assert main(["export", GAME, "--redis-url", "redis://127.0.0.1:1/0"]) == 1
    assert "redis redis://127.0.0.1:1/0" in capsys.readouterr().err


class _Api(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        if self.path == f"/v1/games/{GAME}/log":
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            payload = self.body
        else:
            self.send_response(403 if self.path.endswith("Running00000/log") else 404)
            self.send_header("Content-Type", "application/problem+json")
            code = "game_not_over" if self.path.endswith("Running00000/log") else "game_not_found"
            payload = orjson.dumps({"code": code, "detail": "nope"})
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api(sample_logs) -> Iterator[str]:
    _Api.body = encode(sample_logs[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_export_from_the_api(api, tmp_path, capsys, sample_logs):
    out = tmp_path / "a.jsonl"
    assert main(["export", GAME, "--api", api + "/", "-o", str(out)]) == 0
    assert out.read_bytes() == encode(sample_logs[1])
    assert main(["export", "Running00000", "--api", api]) == 1
    assert "403 game_not_over: nope" in capsys.readouterr().err
    assert main(["export", "Missing00000", "--api", api]) == 1
    assert "404 game_not_found" in capsys.readouterr().err


def test_no_source(monkeypatch, capsys):
    monkeypatch.delenv("CANASTA_API_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert main(["export", GAME]) == 1
    assert "give --api URL or --redis-url URL" in capsys.readouterr().err
