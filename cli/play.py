"""``canasta play``: a game in the terminal, one seat played through the API with the Python
client (:mod:`client`), like any third-party client.

Without ``--api`` it starts the service on this machine first (a private Valkey, the API,
a bot worker: :mod:`cli.local_service`) and stops it on the way out. The table is drawn
when it is your turn; the other seats' moves are printed as they happen (the game's event
stream); the choices offered are the moves the view's ``legal`` summary allows, and a move
the server refuses shows its reason. Ctrl-D, Ctrl-C or ``quit`` leaves.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from rich.console import Console
from rich.text import Text

from cli import play_prompts as prompts
from cli.play_table import (
    Cards,
    describe_action,
    describe_move,
    result_block,
    score_table,
    seat_name,
    table,
    turn_text,
)
from client import (
    ApiProblem,
    Client,
    Event,
    EventStream,
    GameView,
    Seat,
    StaleVersion,
    Unreachable,
    tokens_of,
)
from service.names import NameRefused, normalise_name
from service.procstat import STOP_POLL_SECONDS, StopFlag

BOTS = ("random", "greedy", "standard", "expert")
OPEN = "open"
QUIET_SECONDS = 1.0  # with no event for this long, whose turn it is is told
POLL_SECONDS = 2.0  # and after this much longer, the view is read again (a 304 when unchanged)
SETTLE_SECONDS = 1.0  # after a move, how long to wait for its event before drawing the table


class Leave(BaseException):
    """The player leaves (Ctrl-D, Ctrl-C, ``quit``, or the terminal went away). Not an
    ``Exception``: like ``KeyboardInterrupt``, no ``except Exception`` on its way may keep it."""


LEAVING = StopFlag()  # a stop signal came: every wait of the main thread sees it and leaves
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_READING = False  # the main thread is in input(): the one wait a stop signal's handler raises in


DESCRIPTION = """\
Play Canasta in the terminal: you are seat 0, the other seats are bots (or friends who join
from a link). Without --api, the game's server is started here for the game (a private
Valkey, the API and a bot worker) and stopped when you leave.

The table is drawn when it is your turn; the other players' moves are printed as they are
made. You are offered only the moves the server allows now: type a move's key, then pick
from the list it shows, or type the cards at once (x 7h, m 7h 7d 7s + kd kh jk). A move the
server refuses shows its reason. ? at the prompt lists the keys; Ctrl-C, Ctrl-D or quit
leaves."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="canasta play", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="finnish", help="the rules (canasta rules lists them; default finnish)")
    p.add_argument("--players", type=int, help="number of players (default: the preset's, or one more than --bots)")
    p.add_argument("--bots", help="the other seats, in order: random, greedy, standard, expert or open (a "
                                  "friend joins it from the link printed); default standard for each")
    p.add_argument("--name", default=os.environ.get("USER") or "player", help="your name at the table")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="OPTION=VALUE",
                   help="a house rule (repeatable), e.g. --set target_score=1000 for a shorter game")
    p.add_argument("--seed", type=int, help="deal a known deck (a local server allows it; another server only "
                                            "if started with CANASTA_TEST_SEEDS=1)")
    p.add_argument("--api", metavar="URL", help="play on this server instead of starting one here")
    p.add_argument("--redis-url", help="the local server's Redis, one server or a redis+cluster:// URL "
                                       "(default: $REDIS_URL, else a private Valkey)")
    p.add_argument("--queue-url", help="the local server's bot queue, one Redis server (default: $CANASTA_QUEUE_URL, "
                                       "else the --redis-url one; required with a cluster)")
    p.add_argument("--game", help="play your seat of an existing game (with --token; needs --api); write "
                                  "--game=ID --token=T, as an id or token may start with -")
    p.add_argument("--token", help="your seat's token in --game")
    p.add_argument("--ascii", action="store_true", help="suits as letters (automatic where the terminal has no symbols)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    console = Console(highlight=False)
    cards = Cards(symbols=not args.ascii and console.encoding.lower().startswith("utf"))
    if (args.game is None) != (args.token is None):
        console.print("canasta play: --game and --token go together")
        return 2
    if args.game and not args.api:
        console.print("canasta play: --game needs --api (the server the game is on)")
        return 2
    try:
        setup = GameSetup.from_args(args)
    except ValueError as e:
        console.print(f"canasta play: {e}")
        return 2
    LEAVING.clear()
    old = {s: signal.signal(s, _leave_on_signal) for s in STOP_SIGNALS}
    service = None
    try:
        base = args.api
        if not base:
            from cli.local_service import LocalService, ServiceFailed

            redis_url = args.redis_url or os.environ.get("REDIS_URL")
            try:
                service = LocalService(redis_url=redis_url, queue_url=args.queue_url, test_seeds=args.seed is not None)
            except ValueError as e:  # a cluster without a queue Redis, or a URL that names no Redis
                console.print(f"canasta play: {e}")
                return 2
            console.print("Starting the service here (" + ("on the given Redis" if redis_url else "a private Valkey")
                          + ", the API and a bot worker)…")
            try:
                base = service.start()
            except ServiceFailed as e:
                console.print(f"canasta play: {e}")
                return 1
        if LEAVING.is_set():  # a stop signal while the local service started
            return 0
        with Client(base, sleep=sleep_unless_leaving) as client:
            try:
                seat = client.seat(args.game, args.token) if args.game else setup.create(client, console)
                return PlaySession(console, client, seat, cards, local=service is not None).run()
            except ApiProblem as e:
                console.print(f"canasta play: the server refused: {e.detail} ({e.code})")
                return 1
            except Unreachable as e:
                console.print(f"canasta play: {e}")
                return 1
    except (Leave, KeyboardInterrupt):
        return 0
    finally:
        if service is not None:
            console.print("Stopping the local service…")
            service.stop()
        for s, handler in old.items():
            signal.signal(s, handler)


def _leave_on_signal(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C (SIGINT), SIGTERM, a closed terminal (SIGHUP): leave.

    Only the flag is set; the main thread's waits look at it (the events in short steps,
    the client's retry pauses) and raise :class:`Leave` from this module's own code. A
    handler runs between any two bytecodes of the main thread, and a raise there broke the
    libraries it landed in: inside rich's ``Console.print``, after its buffer count went up
    and before it went down, every later print was buffered and never written (the
    "You left game" line lost); inside ``queue.Queue.get``, just after its lock was taken,
    the lock stayed held, and the listener thread's next ``put`` waited for ever. The one
    exception is input(): the main thread is then in one C call that holds nothing, which
    the signal interrupts (:func:`read_line`)."""
    LEAVING.set()
    if _READING:
        raise Leave


def read_line() -> str:
    """A line typed at the terminal (the prompt printed already); :class:`Leave` on Ctrl-D
    or a stop signal. Only while the main thread waits in input() does the signal's handler
    raise (:data:`_READING`), so that Ctrl-C interrupts the wait at once. (A signal in the
    instant between the check of the flag and the read itself is seen when the read
    returns: at the next line typed, or the next signal.)"""
    global _READING
    try:
        _READING = True
        if LEAVING.is_set():
            raise Leave
        line = input()
        if LEAVING.is_set():
            raise Leave
        return line
    except (EOFError, KeyboardInterrupt):
        raise Leave from None
    finally:
        _READING = False


def sleep_unless_leaving(seconds: float) -> None:
    """The client's pause before a retry: :class:`Leave` as soon as a stop signal came."""
    if LEAVING.wait(seconds):
        raise Leave


@dataclass
class GameSetup:
    """The game to create: the preset, your seat (always seat 0) and the others."""

    preset: str
    name: str
    others: list[str]
    players: int | None
    rules: dict[str, Any]
    seed: int | None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> GameSetup:
        others = [b.strip().lower() for b in args.bots.split(",")] if args.bots else []
        for b in others:
            if b not in (*BOTS, OPEN):
                raise ValueError(f"--bots: {b!r} is not one of {', '.join((*BOTS, OPEN))}")
        if args.players is not None and others and len(others) != args.players - 1:
            named = f"{len(others)} seat{'' if len(others) == 1 else 's'}"
            raise ValueError(f"--bots names {named}; {args.players} players have {args.players - 1} besides you")
        rules: dict[str, Any] = {}
        for item in args.overrides:
            option, sep, value = item.partition("=")
            if not sep or not option.strip():
                raise ValueError(f"--set needs OPTION=VALUE, not {item!r}")
            rules[option.strip()] = _value(value.strip())
        try:  # the server's own check (service.names), before anything is started
            name = normalise_name(args.name)
        except NameRefused as e:
            raise ValueError(f"--name: {e.detail} ({e.reason})") from None
        return cls(args.preset, name, others, args.players, rules, args.seed)

    def seats(self, players: int) -> list[dict[str, str] | None]:
        others = self.others or ["standard"] * (players - 1)
        return [{"name": self.name}, *({"bot": b} if b != OPEN else None for b in others)]

    def create(self, client: Client, console: Console) -> Seat:
        players = self.players or (len(self.others) + 1 if self.others else None)
        if players is None:
            players = int(client.rules(self.preset)["default_players"])
        game = client.create_game(self.preset, self.seats(players), players=players, rules=self.rules or None,
                                  seed=self.seed)
        token = tokens_of(game)[0]
        console.print(f"Game {game['id']} ({game['preset']}, {game['players']} players): you are seat 0.")
        console.print(f"  the same seat in a browser: {client.table_url(game['id'], seat=0, token=token)}", soft_wrap=True)
        for s in game["seats"]:
            if s["open"]:
                console.print(f"  a friend joins seat {s['seat']} at: {client.table_url(game['id'], join=s['seat'])}",
                              soft_wrap=True)
        return client.seat(game["id"], token)


def _value(text: str) -> Any:
    """A house rule's value as JSON where it reads as JSON (numbers, true, null), else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class PlaySession:
    """One seat played at the terminal until the game is over or the player leaves."""

    def __init__(self, console: Console, client: Client, seat: Seat, cards: Cards, *, local: bool = False,
                 ask: Callable[[str], str] | None = None) -> None:
        self.console = console
        self.client = client
        self.seat = seat
        self.cards = cards
        self.local = local
        self.answer = ask or self._ask  # what answers a prompt: the terminal, or a test's function
        self.events: queue.Queue[Event | BaseException] = queue.Queue()
        self.stream: EventStream | None = None  # opened after the first read, from its cursor
        self.printed = 0  # the version of the last event told
        self.shown = -1  # the version of the last table drawn
        self.waiting_told = -1
        self.stale = False  # an event said the view held is out of date for this seat
        self.rules: dict[str, Any] | None = None

    # -- the loop ---------------------------------------------------------------------------------
    def run(self) -> int:
        try:
            # the stream starts at a cursor read before the view: a change made after the
            # view (a bot's move) is told, not folded into a snapshot the stream starts with
            game, cursor = self.seat.view_and_cursor()
            self.rules = game.get("rules")
            self.printed = game["version"]
            self.stream = self.seat.stream(last_event_id=cursor)
            threading.Thread(target=self._listen, args=(self.stream,), name="canasta-events", daemon=True).start()
            self.show_table()
            while self.game["status"] != "over":
                if self.seat.my_turn:
                    self.turn()
                else:
                    self.wait()
            self.tell_events(settle=True)
            self.finish()
            return 0
        except (Leave, KeyboardInterrupt):
            self.leave()
            return 0
        finally:
            if self.stream is not None:
                self.stream.close()

    @property
    def game(self) -> GameView:
        assert self.seat.last_view is not None
        return self.seat.last_view

    @property
    def me(self) -> int | None:
        return self.game["seat"]

    def _listen(self, stream: EventStream) -> None:
        # stop signals go to the main thread, whose waits they cut short (a signal the
        # kernel gave this thread would wait for the main thread's next bytecode)
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            for event in stream:
                self.events.put(event)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            self.events.put(e)

    def ask(self, prompt: str) -> str:
        """The answer to a prompt; :class:`Leave` once a stop signal came, whatever answers
        (the turn's loop asks again after a choice that is not offered)."""
        if LEAVING.is_set():
            raise Leave
        return self.answer(prompt)

    def _ask(self, prompt: str) -> str:
        self.console.print(prompt, end="")
        return read_line()

    # -- while the others play ------------------------------------------------------------------
    def wait(self) -> None:
        """Tell the events as they come; read the view again when one says it is this
        seat's turn (or the game's status changed), or after a while without events. Who
        is awaited is told only when nothing happens for a moment (bots move faster)."""
        try:
            item = self._next_event(QUIET_SECONDS)
        except queue.Empty:
            self.refresh()
            if self.seat.my_turn or self.game["status"] == "over":
                return
            if self.waiting_told != self.game["version"]:
                self.waiting_told = self.game["version"]
                if self.game["status"] == "waiting":
                    self.tell_open_seats()
                else:
                    self.console.print(Text(turn_text(self.game), style="dim"))
            try:
                item = self._next_event(POLL_SECONDS)
            except queue.Empty:
                self.refresh()
                return
        self.take(item)
        self.tell_events()
        if self.stale:
            self.refresh()

    def _next_event(self, timeout: float) -> Event | BaseException:
        """The next event or the listener's error, within ``timeout`` (else ``queue.Empty``;
        0: only one already received); :class:`Leave` once a stop signal came
        (:data:`LEAVING`), seen every :data:`STOP_POLL_SECONDS`."""
        deadline = time.monotonic() + timeout
        while True:
            if LEAVING.is_set():
                raise Leave
            left = deadline - time.monotonic()
            if left <= 0:
                return self.events.get_nowait()
            try:
                return self.events.get(timeout=min(left, STOP_POLL_SECONDS))
            except queue.Empty:
                continue

    def refresh(self) -> None:
        self.stale = False
        before = self.game["version"]
        self.seat.view()
        if self.game["version"] != before and self.seat.my_turn:
            self.tell_events(settle=True)

    def tell_events(self, *, settle: bool = False, until: int | None = None) -> None:
        """Tell the events already received; ``settle``: first wait a moment for those up to
        the view's version (or ``until``), so that they come before the table."""
        target = until if until is not None else self.game["version"]
        while True:
            try:
                item = self._next_event(SETTLE_SECONDS if settle and self.printed < target else 0)
            except queue.Empty:
                return
            self.take(item)

    def take(self, item: Event | BaseException) -> None:
        if isinstance(item, BaseException):
            if isinstance(item, ApiProblem | Unreachable):
                self.console.print(f"(no live updates: {item}; reading the table every {POLL_SECONDS:g} s)")
                return
            raise item
        if item.version <= self.printed:
            return  # told already (a stream resumed, or the snapshot we started from)
        self.printed = item.version
        body = item.body
        self.stale = self.stale or item.is_snapshot or body.get("to_act") == self.me \
            or body.get("status") != self.game["status"]
        if not item.is_snapshot:
            self.tell(item)

    def tell(self, event: Event) -> None:
        seats = self.game["seats"]
        data = event.body.get("data") or {}
        move = event.move
        if move is not None:
            self.console.print(describe_move(move, seats, self.cards, self.me))
            result = move.get("hand_end")
            if result and not move.get("game_end") and self.game.get("view"):
                self.console.print(score_table(result, self.game["view"] or {}, seats, self.me))
        elif event.type == "joined":
            self.console.print(f"{data.get('name', 'A player')} took seat {data.get('seat')}.")
        elif event.type == "bot":
            self.console.print(f"Seat {data.get('seat')} is now played by a {data.get('bot')} bot.")
        deal = data.get("deal")
        if deal:
            self.console.print(f"Hand {deal['hand']} is dealt by {seat_name(seats, deal['dealer'], self.me)}.")

    def tell_open_seats(self) -> None:
        self.console.print("Waiting for players. Send a friend the link of an open seat:")
        for s in self.game["seats"]:
            if s["open"]:
                self.console.print(f"  seat {s['seat']}: {self.client.table_url(self.seat.game_id, join=s['seat'])}",
                                   soft_wrap=True)

    # -- your turn --------------------------------------------------------------------------------
    def show_table(self) -> None:
        self.shown = self.game["version"]
        self.console.print(table(self.game, self.cards, self.rules))

    def turn(self) -> None:
        self.tell_events(settle=True)
        if self.shown != self.game["version"]:
            self.show_table()
        menu = prompts.choices(self.game, self.cards)
        self.print_menu(menu)
        while True:
            decision = prompts.decide(self.ask("Your move: "), self.game, menu, self.cards)
            if decision.pick is not None:
                decision = self.pick(decision.pick)
            if decision.message:
                self.console.print(decision.message)
                continue
            if decision.command:
                self.command(decision.command, menu)
                if decision.command == "table":
                    return
                continue
            if decision.action is not None:
                self.play(decision.action)
                return

    def print_menu(self, menu: list[prompts.Choice]) -> None:
        for c in menu:
            self.console.print(Text.assemble(("  " + c.key.ljust(3), "bold"), c.label))
        self.console.print(Text("  h  hint · t  the table again · ?  help · quit", style="dim"))

    def pick(self, choice: prompts.Choice) -> prompts.Decision:
        for n, option in enumerate(choice.options, 1):
            label = f"the {option['rank']} meld" if choice.key == "a" else describe_action(option, self.cards)
            self.console.print(f"  {n:>2}  {label}")
        typed = f"; or type {choice.typed}" if choice.typed else ""
        decision = prompts.pick(self.ask(f"Which one? (a number{typed}; Enter: back) "), choice, self.game,
                                self.cards)
        if decision.add_rank is not None:
            hand = list((self.game.get("view") or {}).get("hand") or [])
            ranks = [o["rank"] for o in choice.options]
            text = self.ask(f"Which cards do you add to the {decision.add_rank} meld? ")
            return prompts.add_move(text, ranks, hand, self.cards, rank=decision.add_rank)
        return decision

    def command(self, name: str, menu: list[prompts.Choice]) -> None:
        if name == "quit":
            raise Leave
        if name == "table":
            self.shown = -1
        elif name == "help":
            self.console.print(prompts.HELP)
            for c in menu:
                if c.typed:
                    self.console.print(f"  {c.typed}")
        elif name == "hint":
            try:
                hint = self.seat.hint("standard")
                self.console.print(f"Hint: the standard bot would {describe_action(hint['action'], self.cards)}.")
            except ApiProblem as e:
                self.console.print(f"No hint: {e.detail} ({e.code})")

    def play(self, action: dict[str, Any]) -> None:
        try:
            view = self.seat.move(action)
        except StaleVersion:
            self.console.print("The game moved on before your move arrived; here is the table again.")
            self.seat.view()
            self.shown = -1
            return
        except ApiProblem as e:
            self.console.print(Text(f"✗ Refused by the server: {e.detail} ({e.code})", style="bold red"))
            return
        except Unreachable as e:
            self.console.print(f"The server did not answer ({e}); choose again: the same move is applied once.")
            return
        self.tell_events(settle=True, until=view["version"])

    # -- the end --------------------------------------------------------------------------------------
    def finish(self) -> None:
        view = self.game.get("view") or {}
        if view.get("last_hand"):
            self.console.print(score_table(view["last_hand"], view, self.game["seats"], self.me))
        self.console.print(result_block(self.game, self.me, self.rules))

    def leave(self) -> None:
        self.console.print(f"\nYou left game {self.seat.game_id}.")
        if self.local:
            self.console.print("The local service stops, and the game with it.")
        else:
            self.console.print(f"Come back with: {own_command()} play --api {self.client.base_url} "
                               f"--game={self.seat.game_id} --token={self.seat.token}", soft_wrap=True)


def own_command(argv0: str | None = None) -> str:
    """How to run this ``canasta`` again from here: ``canasta`` where that name on the PATH is
    this very program, else the path it was started by (``.venv/bin/canasta`` after ``make
    run``), relative to the working directory when that is shorter."""
    argv0 = argv0 if argv0 is not None else sys.argv[0]
    if not argv0 or os.path.basename(argv0) != "canasta" or not os.path.exists(argv0):
        return "canasta"
    found = shutil.which("canasta")
    if found and os.path.realpath(found) == os.path.realpath(argv0):
        return "canasta"
    absolute = os.path.abspath(argv0)
    relative = os.path.relpath(absolute)
    return relative if len(relative) < len(absolute) and not relative.startswith("..") else absolute


if __name__ == "__main__":
    sys.exit(main())
