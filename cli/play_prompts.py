"""The choices ``canasta play`` offers a seat, read from the view's ``legal`` summary exactly
as the web table enables its buttons: only what the seat may do now is offered, and the
cards a player types are judged by the server (a refused move shows the server's reason).

A choice is a key (the web table's keyboard shortcut: d draw, p take the pile, s pass,
m meld, a add, x discard, o go out, q ask, y/n answer, h hint) and, for a choice among
several moves, the moves it lists; cards can also be typed after the key (``x 7h``,
``m 7h 7d 7s + kd kh jk``, ``a k kd``, ``p 9h 9d``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cli.play_table import JOKER, RANK_NAMES, Cards, describe_action, rank_plural, sort_cards

Action = dict[str, Any]

# What ? prints: the keys, in a player's words.
HELP = """\
Only the moves you may make now are offered. Type a move's key, then pick from the list it
shows by number, or type the cards at once:
  d  draw from the stock            p  take the pile (p 9h 9d: the cards you take it with)
  s  pass (when the stock is empty) m  meld (m 7h 7d 7s + kd kh jk: one or more melds)
  a  add to a meld (a k kd)         x  discard (x 7h)
  o  go out                         q  ask your partner: may I go out?
  y / n  answer your partner        h  a hint: what a bot would do
  t  the table again                quit  leave (Ctrl-C, Ctrl-D too)
Cards are written like 7h, 10s, kd, jk (joker); suits as letters or symbols."""

COMMANDS = {"h": "hint", "t": "table", "?": "help", "quit": "quit", "exit": "quit"}
SUIT_LETTERS = {"S": "S", "H": "H", "D": "D", "C": "C", "♠": "S", "♥": "H", "♦": "D", "♣": "C"}
_CARD = re.compile(r"^(10|[A2-9TJQK])([SHDC♠♥♦♣])$", re.IGNORECASE)
MELD_SEPARATORS = re.compile(r"[+/]")


@dataclass(frozen=True)
class Choice:
    """One entry of the menu. ``action``: the move sent at once; ``options``: the moves it
    lists (the player picks one by number, or types cards: ``typed`` says how)."""

    key: str
    label: str
    action: Action | None = None
    options: list[Action] = field(default_factory=list)
    typed: str = ""


def choices(game: Mapping[str, Any], cards: Cards) -> list[Choice]:
    """What the seat may do now (nothing unless it is to act in a game being played)."""
    view = game.get("view") or {}
    legal = view.get("legal") or {}
    if game.get("status") != "playing" or not legal.get("to_act"):
        return []
    out: list[Choice] = []
    if legal.get("must_answer_go_out"):
        out.append(Choice("y", "yes, go out", {"type": "answer_go_out", "yes": True}))
        out.append(Choice("n", "no, play on", {"type": "answer_go_out", "yes": False}))
    if legal.get("may_draw"):
        out.append(Choice("d", "draw from the stock", {"type": "draw"}))
    if legal.get("may_take_pile"):
        takes = list(legal.get("take_pile") or [])
        out.append(Choice("p", f"take the pile… ({_ways(len(takes))})", options=takes,
                          typed="p CARDS [+ MELD ...]: the cards you take it with, and melds made with it"))
    if legal.get("may_pass"):
        out.append(Choice("s", "pass (leave the pile)", {"type": "pass"}))
    plan = legal.get("go_out")
    if plan and view.get("phase") == "play":
        step = f" (step 1 of {len(plan)})" if len(plan) > 1 else ""
        out.append(Choice("o", f"go out: {describe_action(plan[0], cards)}{step}", plan[0]))
    melds = list(legal.get("melds") or [])
    if melds:
        out.append(Choice("m", f"meld… ({_ways(len(melds), 'meld')} listed)", options=melds,
                          typed="m CARDS [+ CARDS ...]: one or more melds"))
    ranks = list(legal.get("add_ranks") or [])
    if ranks:
        names = ", ".join(rank_plural(r) for r in ranks)
        out.append(Choice("a", f"add to a meld… ({names})", options=[{"type": "add", "rank": r} for r in ranks],
                          typed="a [RANK] CARDS"))
    discards = sort_cards(legal.get("discards") or [])
    if discards:
        out.append(Choice("x", "discard…", options=[{"type": "discard", "card": c} for c in discards],
                          typed="x CARD"))
    if legal.get("may_ask_go_out"):
        out.append(Choice("q", "ask your partner: may I go out?", {"type": "ask_go_out"}))
    return out


def _ways(n: int, word: str = "way") -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- what the player typed ----------------------------------------------------------------------
@dataclass(frozen=True)
class Decision:
    """What a line typed at the prompt asks for: a move to send, a choice to pick from, a
    command of the client (hint, table, help, quit), or a message (ask again)."""

    action: Action | None = None
    pick: Choice | None = None
    command: str | None = None
    message: str | None = None
    add_rank: str | None = None  # add: the rank is known, the cards are still to be typed


class BadCards(ValueError):
    """Typed cards that cannot be read, or are not in the hand."""


def parse_card(token: str) -> str:
    t = token.strip()
    if t.lower() in ("jk", "jkr", "joker"):
        return JOKER
    m = _CARD.match(t)
    if not m:
        raise BadCards(f"{token!r} is not a card (write them like 7h, 10s, kd, jk)")
    rank = "T" if m.group(1) == "10" else m.group(1).upper()
    return rank + SUIT_LETTERS[m.group(2).upper()]


def parse_cards(text: str) -> list[str]:
    return [parse_card(t) for t in text.replace(",", " ").split()]


def from_hand(codes: list[str], hand: list[str], cards: Cards) -> list[str]:
    """``codes`` if the hand holds them all (as many of each as typed)."""
    left = list(hand)
    for code in codes:
        if code not in left:
            raise BadCards(f"you hold no {'more ' if code in hand else ''}{cards.short(code)}")
        left.remove(code)
    return codes


def decide(text: str, game: Mapping[str, Any], menu: list[Choice], cards: Cards) -> Decision:
    """A line typed at the prompt, against the menu offered."""
    text = text.strip()
    if not text:
        return Decision(message="Type the key of a move (? lists them).")
    key, _, rest = text.partition(" ")
    key = key.lower()
    if key in COMMANDS and not rest.strip():
        return Decision(command=COMMANDS[key])
    choice = next((c for c in menu if c.key == key), None)
    if choice is None:
        offered = ", ".join(c.key for c in menu)
        return Decision(message=f"{text!r} is not one of your choices now ({offered}; ? for help).")
    if not rest.strip():
        return Decision(action=choice.action) if choice.action is not None else Decision(pick=choice)
    if choice.action is not None:
        return Decision(message=f"{choice.key} takes no cards: type {choice.key} alone.")
    return typed_move(choice, rest, game, cards)


def pick(text: str, choice: Choice, game: Mapping[str, Any], cards: Cards) -> Decision:
    """The answer to a choice's list: a number, or typed cards; empty goes back."""
    text = text.strip()
    if not text:
        return Decision(message="Back to your choices.")
    if text.isascii() and text.isdigit():  # "²" is a digit to str.isdigit, not to int()
        n = int(text)
        if not 1 <= n <= len(choice.options):
            return Decision(message=f"Choose 1 to {len(choice.options)}.")
        option = choice.options[n - 1]
        if choice.key == "a":
            return Decision(add_rank=option["rank"])
        return Decision(action=option)
    return typed_move(choice, text, game, cards)


def typed_move(choice: Choice, text: str, game: Mapping[str, Any], cards: Cards) -> Decision:
    hand = list(((game.get("view") or {}).get("hand")) or [])
    try:
        if choice.key == "x":
            codes = from_hand(parse_cards(text), hand, cards)
            allowed = [o["card"] for o in choice.options]
            if len(codes) != 1:
                return Decision(message="Discard one card.")
            if codes[0] not in allowed:
                return Decision(message=f"You may not discard {cards.short(codes[0])} now; you may discard: "
                                        f"{cards.plain(allowed)}.")
            return Decision(action={"type": "discard", "card": codes[0]})
        if choice.key == "m":
            melds = [from_hand(parse_cards(part), hand, cards) for part in MELD_SEPARATORS.split(text) if part.strip()]
            from_hand([c for m in melds for c in m], hand, cards)
            return Decision(action={"type": "meld", "melds": melds})
        if choice.key == "p":
            first, *others = MELD_SEPARATORS.split(text)
            with_cards = from_hand(parse_cards(first), hand, cards)
            melds = [parse_cards(part) for part in others if part.strip()]
            from_hand(with_cards + [c for m in melds for c in m], hand, cards)
            action: Action = {"type": "take_pile", "with": with_cards}
            if melds:
                action["melds"] = melds
            return Decision(action=action)
        if choice.key == "a":
            ranks = [o["rank"] for o in choice.options]
            return add_move(text, ranks, hand, cards)
    except BadCards as e:
        return Decision(message=f"{str(e)[0].upper()}{str(e)[1:]}.")
    return Decision(message=f"{choice.key} takes no cards.")  # pragma: no cover - every listing key is above


def add_move(text: str, ranks: list[str], hand: list[str], cards: Cards, rank: str | None = None) -> Decision:
    """``[RANK] CARDS`` added to the side's meld of that rank: the rank is typed, or the
    rank of the natural cards typed, or the only meld there is to add to."""
    tokens = text.replace(",", " ").split()
    if rank is None and tokens and _rank_of(tokens[0]) is not None:
        rank = _rank_of(tokens[0])
        tokens = tokens[1:]
    try:
        codes = from_hand([parse_card(t) for t in tokens], hand, cards)
    except BadCards as e:
        return Decision(message=f"{str(e)[0].upper()}{str(e)[1:]}.")
    if not codes:
        return Decision(message="Which cards? (e.g. a k kd, or the cards alone)")
    if rank is None:
        naturals = {c[0] for c in codes if c != JOKER and c[0] in ranks}
        rank = naturals.pop() if len(naturals) == 1 else (ranks[0] if len(ranks) == 1 else None)
    if rank is None:
        return Decision(message=f"Which meld? Type its rank first ({', '.join(ranks)}).")
    if rank not in ranks:
        return Decision(message=f"Your side has no meld of {rank_plural(rank)} to add to "
                                f"({', '.join(rank_plural(r) for r in ranks)}).")
    return Decision(action={"type": "add", "rank": rank, "cards": codes})


def _rank_of(token: str) -> str | None:
    t = token.upper()
    if t == "10":
        return "T"
    return t if len(t) == 1 and t in RANK_NAMES else None
