"""``canasta play`` in a pseudo-terminal (pexpect): its help in plain words (no markup of the
docs, no jargon of the API), the running points of each side as the server counts them, and
the command to come back with as it was typed (``.venv/bin/canasta``)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect

from client import Client, tokens_of
from tests.client.test_play_terminal import (
    PROMPT,
    _a_deal_where_ann_can_meld,
    _bea_plays_until_ann,
    read,
    transcript,
)

ROOT = Path(__file__).resolve().parents[2]
CANASTA = Path(sys.executable).parent / "canasta"  # the venv's own command
MARKUP = re.compile(r"``|:mod:|:func:|:class:|legal summary")


def _spawn_canasta(*args: str) -> pexpect.spawn:
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update({"NO_COLOR": "1", "COLUMNS": "120", "LINES": "50", "PYTHONIOENCODING": "utf-8", "TERM": "xterm"})
    # not on the PATH: the command to come back with is then the path it was started by
    environ["PATH"] = os.pathsep.join(d for d in environ.get("PATH", "").split(os.pathsep)
                                      if Path(d).resolve() != CANASTA.parent.resolve())
    command = os.path.relpath(CANASTA, ROOT)
    child = pexpect.spawn(command, list(args), cwd=str(ROOT), env=environ, encoding="utf-8", timeout=60,
                          dimensions=(50, 120))
    child.transcript = []  # type: ignore[attr-defined]
    return child


def test_play_help_is_plain_words() -> None:
    child = _spawn_canasta("play", "--help")
    read(child, [pexpect.EOF], timeout=30)
    child.close()
    out = transcript(child)
    assert child.exitstatus == 0, out
    assert "Play Canasta in the terminal" in out and "--bots" in out
    assert not MARKUP.search(out), MARKUP.search(out)


def _running(api: Client, game_id: str, token: str) -> list[int]:
    return [r["on_table"] for r in api.game(game_id, token).body["view"]["running"]]


def test_the_help_key_and_the_running_points_at_the_prompt(server: str) -> None:
    with Client(server) as api:
        seed = _a_deal_where_ann_can_meld(api)
        game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=seed)
        tokens = tokens_of(game)
        _bea_plays_until_ann(api.seat(game["id"], tokens[1]))
        child = _spawn_canasta("play", "--api", server, f"--game={game['id']}", f"--token={tokens[0]}")
        try:
            _, table = read(child, [PROMPT])
            on_table = _running(api, game["id"], tokens[0])
            for points in on_table:
                assert f"this hand: {points} on the table" in table, table
            child.sendline("?")
            _, help_text = read(child, [PROMPT])
            assert "Only the moves you may make now are offered" in help_text and "x 7h" in help_text
            assert not MARKUP.search(help_text), help_text
            child.sendline("d")  # draw, then meld the first meld listed
            read(child, [PROMPT])
            child.sendline("m")
            read(child, [r"Which one\? \(.*\) "])
            child.sendline("1")
            read(child, [PROMPT])
            child.sendline("t")  # the table again: the meld's points
            _, table = read(child, [PROMPT])
            after = _running(api, game["id"], tokens[0])
            assert after[0] > on_table[0] or api.game(game["id"], tokens[0]).body["view"]["running"][0]["melds"] > 0
            assert f"this hand: {after[0]} on the table (melds " in table, table
            child.sendline("quit")
            read(child, [pexpect.EOF], timeout=20)
        finally:
            child.close(force=child.isalive())
    out = transcript(child)
    assert child.exitstatus == 0, out[-3000:]
    # the command as it was typed here, with its path
    assert f"Come back with: {os.path.relpath(CANASTA, ROOT)} play --api {server} --game={game['id']}" in out
