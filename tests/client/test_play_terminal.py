"""``canasta play`` driven in a pseudo-terminal (pexpect), as a person types: a whole game
against three bots on the local service it starts (and stops), and a seat of a game on a
running server, with another player's moves shown live and a refused move's reason."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pexpect
import psutil
import pytest

from client import ApiProblem, Client, Seat, tokens_of

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
MENU_KEY = re.compile(r"^  (\w)  ", re.M)
PROMPT = r"Your move: "
PICK = r"Which one\? \(.*\) "
PREFERENCE = ("o", "n", "d", "s", "x", "p")  # go out when offered, else draw, else discard (or take a forced pile)


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    environ = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    environ.update({"NO_COLOR": "1", "COLUMNS": "120", "LINES": "50", "PYTHONIOENCODING": "utf-8", "TERM": "xterm"})
    environ.update(env or {})
    child = pexpect.spawn(sys.executable, ["-m", "cli.main", "play", *args], cwd=str(ROOT), env=environ,
                          encoding="utf-8", timeout=60, dimensions=(50, 120))
    child.transcript = []  # type: ignore[attr-defined]
    return child


def read(child: pexpect.spawn, patterns: list[Any], timeout: float = 60) -> tuple[int, str]:
    """Wait for one of ``patterns``; the index and the text before it, without colours."""
    try:
        i = child.expect(patterns, timeout=timeout)
    except (pexpect.TIMEOUT, pexpect.EOF) as e:
        shown = transcript(child) + ANSI.sub("", child.before or "")
        raise AssertionError(f"waited for {patterns!r} ({type(e).__name__}); the terminal showed:\n"
                             f"{shown[-4000:]}") from None
    text = ANSI.sub("", child.before or "")
    child.transcript.append(text + (ANSI.sub("", child.after) if isinstance(child.after, str) else ""))
    return i, text


def transcript(child: pexpect.spawn) -> str:
    return "".join(child.transcript)


def marked(marker: str) -> list[psutil.Process]:
    """Every process whose environment carries ``marker`` (the client's children inherit
    it; the Valkey daemon rewrites its own: see :func:`valkey_on`)."""
    found = []
    for p in psutil.process_iter(["pid"]):
        try:
            if p.environ().get("CANASTA_PLAY_TEST") == marker:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def valkey_on(port: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if "valkey-server" in cmd and re.search(rf":{port}\b", cmd):
            found.append(p)
    return found


def test_a_game_against_three_bots_played_to_its_end_in_the_terminal() -> None:
    marker = uuid.uuid4().hex
    child = spawn("--preset", "finnish", "--bots", "greedy,greedy,greedy", "--name", "ann", "--set", "target_score=1",
                  env={"CANASTA_PLAY_TEST": marker})
    moves: list[str] = []
    service: list[psutil.Process] = []
    names = ""
    valkeys: list[psutil.Process] = []
    started = time.monotonic()
    try:
        while True:
            i, text = read(child, [PROMPT, PICK, pexpect.EOF], timeout=90)
            if i == 2:
                break
            if i == 1:
                child.sendline("1")  # the first card listed
                continue
            if not service:
                service = [p for p in marked(marker) if p.pid != child.pid]
                names = " ".join(" ".join(p.cmdline()) for p in service)
                port = re.search(r"--redis-url redis://127\.0\.0\.1:(\d+)/", names)
                valkeys = valkey_on(port.group(1)) if port else []
                service += valkeys
            keys = MENU_KEY.findall(text.rsplit("Your turn", 1)[-1])
            assert keys, text
            key = next(k for k in PREFERENCE if k in keys)
            moves.append(key)
            child.sendline(key)
    finally:
        child.close(force=child.isalive())
    out = transcript(child)
    assert child.exitstatus == 0, out[-3000:]
    assert "d" in moves and ("x" in moves or "o" in moves), moves
    # the table: hand grouped by rank, both sides, the pile and the stock, whose turn, the minimum
    assert re.search(r"Your hand \(\d+ cards, \d+ points\): .+ │ ", out)
    assert "Your side: you & greedy bot (seat 2)" in out and "greedy bot (seat 1) & greedy bot (seat 3)" in out
    assert re.search(r"this hand: -?\d+ on the table \(melds \d+", out)  # the running points
    assert re.search(r"Pile: .* · \d+ cards? · ", out) and re.search(r"Stock: \d+ cards", out)
    assert "Your side's first meld needs" in out and "Your turn: draw from the stock or take the pile." in out
    # the bots' moves, live, and the end: the hand's scores and the result
    assert re.search(r"Seat [123] \(greedy\) drew a card|Greedy bot \(seat [123]\) drew a card", out), out[-3000:]
    assert re.search(r"Hand \d+: .+(went out|ran out|red three)", out)
    assert "Side" in out and "Canastas" in out and "Total" in out
    assert "Game over: " in out and "Final totals: " in out
    assert "Stopping the local service" in out
    # it started the API, a bot worker and a Valkey, and stopped them all
    assert "granian" in names and " worker " in names, names
    assert len(valkeys) == 1, names
    _, alive = psutil.wait_procs(service, timeout=10)
    assert not alive and not marked(marker), f"left behind: {alive}"
    assert time.monotonic() - started < 120


def test_a_killed_client_leaves_no_server_behind() -> None:
    """SIGKILL gives the client no chance to stop its local service: its reaper does."""
    marker = uuid.uuid4().hex
    child = spawn("--bots", "greedy,greedy,greedy", env={"CANASTA_PLAY_TEST": marker})
    try:
        read(child, [PROMPT])
        service = [p for p in marked(marker) if p.pid != child.pid]
        names = " ".join(" ".join(p.cmdline()) for p in service)
        port = re.search(r"--redis-url redis://127\.0\.0\.1:(\d+)/", names)
        assert port, names
        service += valkey_on(port.group(1))
        assert "granian" in names and len(service) >= 4, names  # API, worker, reaper, Valkey
        child.kill(9)
    finally:
        child.close(force=True)
    _, alive = psutil.wait_procs(service, timeout=20)
    assert not alive, f"left behind: {alive}"


# -- a seat of a game on a running server ---------------------------------------------------------
def _simple(view: dict[str, Any]) -> dict[str, Any]:
    legal = view["legal"]
    return {"type": "draw"} if legal["may_draw"] else {"type": "discard", "card": legal["discards"][0]}


def _bea_plays_until_ann(bea: Seat) -> None:
    while bea.view()["view"]["legal"]["to_act"]:
        bea.move(_simple(bea.last_view["view"]))


def _a_deal_where_ann_can_meld(api: Client) -> int:
    """A seed whose deal lets ann (seat 0) meld after her first draw, when bea plays by
    drawing and discarding: so that the terminal offers her 'm'."""
    for seed in range(1, 200):
        game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=seed)
        tokens = tokens_of(game)
        ann, bea = api.seat(game["id"], tokens[0]), api.seat(game["id"], tokens[1])
        _bea_plays_until_ann(bea)
        ann.view()
        if ann.legal["may_draw"] and ann.move({"type": "draw"})["view"]["legal"]["melds"]:
            return seed
    raise AssertionError("no deal found")


def test_a_seat_of_a_running_game_with_live_moves_and_a_refused_move(server: str) -> None:
    with Client(server) as api:
        seed = _a_deal_where_ann_can_meld(api)
        game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}], seed=seed)
        tokens = tokens_of(game)
        ann, bea = api.seat(game["id"], tokens[0]), api.seat(game["id"], tokens[1])
        bea_first = bool(bea.view()["view"]["legal"]["to_act"])
        child = spawn("--api", server, f"--game={game['id']}", f"--token={tokens[0]}")  # ids may start with -
        try:
            read(child, [r"Your (turn|move)|Waiting for"])
            if bea_first:
                _bea_plays_until_ann(bea)
                read(child, [r"Bea \(seat 1\) drew (a card|\d cards)\."])  # bea's moves, as they happen
                read(child, [r"Bea \(seat 1\) discarded "])
            _, text = read(child, [PROMPT])
            assert "draw from the stock" in text and "  x  " not in text  # no discard before drawing
            child.sendline("x")
            read(child, [r"'x' is not one of your choices now"])
            read(child, [PROMPT])
            child.sendline("d")
            _, text = read(child, [PROMPT])
            keys = MENU_KEY.findall(text.rsplit("Your turn", 1)[-1])
            assert "m" in keys and "x" in keys and "d" not in keys, text
            # a meld the server refuses: two cards of different ranks from ann's hand
            hand = [c for c in ann.view()["view"]["hand"] if c != "JK" and c[0] not in "23"]
            first = hand[0]
            second = next(c for c in hand if c[0] != first[0])
            with pytest.raises(ApiProblem) as expected:
                ann.dry_run({"type": "meld", "melds": [[first, second]]})
            child.sendline(f"m {first.lower()} {second.lower()}")
            read(child, [re.escape(f"Refused by the server: {expected.value.detail} ({expected.value.code})")])
            read(child, [PROMPT])
            assert api.game(game["id"]).version == ann.last_view["version"]  # nothing changed
            child.sendline("x")
            read(child, [PICK])
            child.sendline("1")
            read(child, [r"You discarded "])
            bea.view()
            bea.move({"type": "draw"})
            read(child, [r"Bea \(seat 1\) drew (a card|\d cards)\."])  # and not which card
            child.sendintr()  # Ctrl-C: leave
            _, text = read(child, [pexpect.EOF])
        finally:
            child.close(force=child.isalive())
    out = transcript(child)
    assert child.exitstatus == 0, out[-3000:]
    assert f"You left game {game['id']}" in out
    assert f"canasta play --api {server} --game={game['id']} --token={tokens[0]}" in out
    drawn = re.findall(r"Bea \(seat 1\) drew (?:a card|\d cards)(.*)", out)
    assert drawn and all(rest.startswith(".") for rest in drawn)  # bea's cards are never named


@pytest.mark.parametrize(("when", "how"), [("prompt", "ctrl-c"), ("prompt", "ctrl-d"), ("prompt", "quit"),
                                           ("prompt", "SIGHUP"), ("waiting", "SIGTERM"), ("waiting", "ctrl-c")])
def test_leaving_at_the_prompt_or_while_the_others_play(server: str, when: str, how: str) -> None:
    """Each way out, at the move prompt (input() interrupted) or while bea is to play (the
    events awaited): exit status 0, "You left game" and the command to come back."""
    with Client(server) as api:
        game = api.create_game("finnish-2p", [{"name": "ann"}, {"name": "bea"}])
        tokens = tokens_of(game)
        ann, bea = api.seat(game["id"], tokens[0]), api.seat(game["id"], tokens[1])
        _bea_plays_until_ann(bea)
        if when == "waiting":
            ann.move(_simple(ann.view()["view"]))  # ann draws: still hers to discard
            ann.move(_simple(ann.view()["view"]))  # and now bea is to play
        child = spawn("--api", server, f"--game={game['id']}", f"--token={tokens[0]}")
        try:
            read(child, [PROMPT if when == "prompt" else r"Waiting for bea"])
            time.sleep(0.3)  # in input(), or in the wait for events
            if how == "ctrl-c":
                child.sendintr()
            elif how == "ctrl-d":
                child.sendeof()
            elif how == "quit":
                child.sendline("quit")
            else:
                child.kill(getattr(signal, how))
            read(child, [pexpect.EOF], timeout=20)
        finally:
            child.close(force=child.isalive())
    out = transcript(child)
    assert child.exitstatus == 0, out[-3000:]
    assert f"You left game {game['id']}" in out, out[-3000:]
    assert f"canasta play --api {server} --game={game['id']} --token={tokens[0]}" in out
