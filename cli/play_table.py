"""The table of ``canasta play`` drawn with rich: everything shown is read from the server's
views and events (melds with their canasta kind, the pile and why it is frozen, scores); no
rule is worked out here. The table shows what a player with a perfect memory would know and
the bots are told: the pile's cards in order, the wilds beside it, and the cards each seat
was seen to take with the pile and still holds.

Cards read without colour: every suit has a symbol (or, on a terminal that cannot show
them, its letter), and red suits are also drawn in red.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich import box
from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

RANK_NAMES = {
    "A": ("A", "ace", "aces"), "2": ("2", "two", "twos"), "3": ("3", "three", "threes"),
    "4": ("4", "four", "fours"), "5": ("5", "five", "fives"), "6": ("6", "six", "sixes"),
    "7": ("7", "seven", "sevens"), "8": ("8", "eight", "eights"), "9": ("9", "nine", "nines"),
    "T": ("10", "ten", "tens"), "J": ("J", "jack", "jacks"), "Q": ("Q", "queen", "queens"),
    "K": ("K", "king", "kings"),
}
SUITS = {"S": ("♠", "spades"), "H": ("♥", "hearts"), "D": ("♦", "diamonds"), "C": ("♣", "clubs")}
RED_SUITS = "HD"
# display order only (the engine decides what a card may do): low to high, then 2s and jokers
ORDER = "3456789TJQKA2"
SUIT_ORDER = "SHDC"
JOKER = "JK"


class Cards:
    """How cards are written: suit symbols, or letters where the terminal has no symbols."""

    def __init__(self, symbols: bool = True) -> None:
        self.symbols = symbols

    def short(self, code: str) -> str:
        if code == JOKER:
            return "Jkr"
        rank, suit = code[0], code[1:]
        face = RANK_NAMES.get(rank, (rank,))[0]
        return face + (SUITS[suit][0] if self.symbols and suit in SUITS else suit)

    def card(self, code: str) -> Text:
        style = "red" if code != JOKER and code[1:] in RED_SUITS else ("magenta" if code == JOKER else "")
        return Text(self.short(code), style=style)

    def row(self, codes: Iterable[str], sep: str = " ") -> Text:
        return Text(sep).join(self.card(c) for c in sort_cards(codes))

    def in_order(self, codes: Iterable[str]) -> Text:
        """The cards as given (the pile, bottom first), not sorted."""
        return Text(" ").join(self.card(c) for c in codes)

    def plain(self, codes: Iterable[str]) -> str:
        return " ".join(self.short(c) for c in sort_cards(codes))


def sort_key(code: str) -> tuple[int, int]:
    if code == JOKER:
        return (len(ORDER), 0)
    return (ORDER.index(code[0]) if code[0] in ORDER else -1, SUIT_ORDER.find(code[1:]))


def sort_cards(codes: Iterable[str]) -> list[str]:
    return sorted(codes, key=sort_key)


def group_hand(codes: Iterable[str]) -> list[tuple[str, list[str]]]:
    """The hand sorted and grouped by rank (jokers as one group)."""
    groups: list[tuple[str, list[str]]] = []
    for code in sort_cards(codes):
        rank = JOKER if code == JOKER else code[0]
        if groups and groups[-1][0] == rank:
            groups[-1][1].append(code)
        else:
            groups.append((rank, [code]))
    return groups


def rank_plural(rank: str) -> str:
    return RANK_NAMES.get(rank, (rank, rank, rank))[2]


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- names --------------------------------------------------------------------------------
def seat_name(seats: Sequence[Mapping[str, Any]] | None, seat: int | None, me: int | None = None) -> str:
    if seat is None:
        return "nobody"
    if seat == me:
        return "you"
    s = seats[seat] if seats and 0 <= seat < len(seats) else None
    if s is None:
        return f"seat {seat}"
    who = s.get("name") or (f"{s['bot']} bot" if s.get("bot") else "open seat")
    return f"{who} (seat {seat})"


def short_name(seats: Sequence[Mapping[str, Any]] | None, seat: int, me: int | None = None) -> str:
    """A seat in a few words: "you", its player's name, or a bot named as every sentence
    names it ("greedy bot (seat 2)")."""
    if seat == me:
        return "you"
    s = seats[seat] if seats and 0 <= seat < len(seats) else None
    if s is not None and s.get("name"):
        return str(s["name"])
    return seat_name(seats, seat, me)


def team_name(view: dict[str, Any], seats: Sequence[Mapping[str, Any]], team: int, me: int | None = None) -> str:
    teams = view.get("teams") or []
    names = [short_name(seats, p, me) for p in (teams[team] if team < len(teams) else [])]
    return " & ".join(names) if names else f"team {team}"


# -- moves in words ---------------------------------------------------------------------------
def describe_action(action: dict[str, Any], cards: Cards) -> str:
    kind = action.get("type")
    if kind == "draw":
        return "draw from the stock"
    if kind == "take_pile":
        parts = ["take the pile"]
        if action.get("onto"):
            parts.append(f"onto the {rank_plural(action['onto'])}")
        if action.get("with"):
            parts.append(f"with {cards.plain(action['with'])}")
        if action.get("melds"):
            parts.append("and meld " + " + ".join(cards.plain(m) for m in action["melds"]))
        return " ".join(parts)
    if kind == "meld":
        return "meld " + " + ".join(cards.plain(m) for m in action["melds"])
    if kind == "add":
        return f"add {cards.plain(action['cards'])} to the {rank_plural(action['rank'])}"
    if kind == "discard":
        return f"discard {cards.short(action['card'])}"
    if kind == "ask_go_out":
        return "ask your partner: may I go out?"
    if kind == "answer_go_out":
        return "answer: yes, go out" if action.get("yes") else "answer: no, play on"
    if kind == "pass":
        return "pass (leave the pile)"
    return str(action)


def describe_move(move: dict[str, Any], seats: Sequence[Mapping[str, Any]], cards: Cards, me: int | None = None) -> str:
    """One move event (engine ``describe_move``) as a sentence."""
    a = move.get("action") or {}
    kind = a.get("type")
    if kind == "draw":
        n = move.get("drew", 1)
        what = "drew a card" if n == 1 else f"drew {n} cards"
        if move.get("cards"):
            what += f" ({cards.plain(move['cards'])})"
    elif kind == "take_pile":
        what = f"took the pile ({plural(move.get('pile_taken', 0), 'card')})"
        if a.get("onto"):
            what += f" onto the {rank_plural(a['onto'])}"
        if a.get("with"):
            what += f" with {cards.plain(a['with'])}"
        if a.get("melds"):
            what += " and melded " + " + ".join(cards.plain(m) for m in a["melds"])
    elif kind == "meld":
        what = "melded " + " + ".join(cards.plain(m) for m in a["melds"])
    elif kind == "add":
        what = f"added {cards.plain(a['cards'])} to the {rank_plural(a['rank'])}"
    elif kind == "discard":
        what = f"discarded {cards.short(a['card'])}" + (" beside the pile" if move.get("beside_pile") else "")
    elif kind == "ask_go_out":
        what = "asked their partner: may I go out?"
    elif kind == "answer_go_out":
        what = "answered: yes, go out" if a.get("yes") else "answered: no, play on"
    elif kind == "pass":
        what = "passed"
    else:
        what = f"played {a}"
    who = seat_name(seats, move.get("seat"), me)
    lines = [f"{who} {what}"]
    if move.get("red_threes_laid"):
        lines.append(f"{who} {_red_threes(move['red_threes_laid'], cards)}")
    first = move.get("first_turn_red_threes")
    if first:  # the next player's own: a sentence of its own
        lines.append(f"{seat_name(seats, first['seat'], me)} {_red_threes(first['cards'], cards)}")
    if move.get("hand_end"):
        lines.append(f"hand {move['hand_end']['hand_end']} is over: {reason_text(move['hand_end'], seats, me)}")
    return " ".join(_sentence(line) for line in lines)


def _red_threes(codes: Sequence[str], cards: Cards) -> str:
    return f"laid a red three, {cards.plain(codes)}" if len(codes) == 1 else \
        f"laid {len(codes)} red threes, {cards.plain(codes)}"


def _sentence(text: str) -> str:
    """A capital first, and a full stop unless the text ends with its own mark."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def reason_text(result: dict[str, Any], seats: Sequence[Mapping[str, Any]], me: int | None = None) -> str:
    by = seat_name(seats, result.get("by"), me) if result.get("by") is not None else "a player"
    reason = result.get("reason")
    if reason == "went_out":
        return f"{by} went out"
    if reason == "stock_exhausted":
        return f"the stock ran out (last to play: {by})"
    if reason == "red_three_last":
        return f"the last card of the stock was a red three (drawn by {by})"
    if reason == "move_limit":
        return f"it was stopped at the move limit (next to play: {by})"
    return f"{str(reason).replace('_', ' ')} ({by})"


def end_text(result: Mapping[str, Any], rules: Mapping[str, Any] | None = None) -> str:
    """Why the game ended (the result's ``reason``), in a card player's words, with the
    rules' numbers where they are known; "" for a game of before limits (no reason)."""
    rules = rules or {}
    reason = result.get("reason")
    if reason == "target":
        target = rules.get("target_score")
        return f"A side reached the target of {target} points." if target else "A side reached the target score."
    if reason == "hand_limit":
        n = rules.get("max_hands")
        hands = f" ({n} hand{'' if n == 1 else 's'})" if n else ""
        return f"The game ended at the hand limit{hands}: no side reached the target."
    if reason == "move_limit":
        moves = rules.get("max_moves_per_hand") or "the most"
        return f"The game ended at the move limit: a hand reached {moves} moves and was stopped there."
    return ""


def winner_text(result: dict[str, Any], view: dict[str, Any], seats: Sequence[Mapping[str, Any]],
                me: int | None = None) -> str:
    winner = result.get("winner")
    if winner is None:
        return "a draw"
    name = team_name(view, seats, winner, me)
    if me is not None and me in ((view.get("teams") or [[]] * (winner + 1))[winner]):
        return f"{name} win" if "&" in name else "you win"
    return f"{name} win{'' if '&' in name else 's'}"


# -- the table ----------------------------------------------------------------------------------
SCORE_COLUMNS = (
    ("melds", "Melds"), ("canasta_bonus", "Canastas"), ("red_threes", "Red 3s"), ("going_out", "Going out"),
    ("penalties", "Penalty"), ("in_hand", "In hand"), ("hand_total", "Hand"), ("total", "Total"),
)


def score_table(result: dict[str, Any], view: dict[str, Any], seats: Sequence[Mapping[str, Any]],
                me: int | None = None) -> Table:
    """The scoring table of a hand (engine ``hand_result``)."""
    table = Table(title=f"Hand {result['hand_end']}: {reason_text(result, seats, me)}", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("Side", min_width=10, ratio=1)
    for _, label in SCORE_COLUMNS:
        table.add_column(label, justify="right", no_wrap=True, min_width=len(label))
    for row in result.get("scores", []):
        table.add_row(team_name(view, seats, row["team"], me), *(str(row.get(key, "")) for key, _ in SCORE_COLUMNS))
    return table


def result_block(game: Mapping[str, Any], me: int | None = None, rules: Mapping[str, Any] | None = None) -> RenderableType:
    view = game["view"] or {}
    result = view.get("result") or {}
    seats = game["seats"]
    totals = " · ".join(f"{team_name(view, seats, t, me)} {total}" for t, total in enumerate(result.get("totals", [])))
    why = end_text(result, game.get("rules") or rules)
    lines = [Text(why)] if why else []
    return Group(Rule(f"Game over: {winner_text(result, view, seats, me)}"), *lines, Text(f"Final totals: {totals}"))


def turn_text(game: Mapping[str, Any]) -> str:
    view = game.get("view")
    seats = game["seats"]
    me = game.get("seat")
    if game["status"] == "waiting":
        return "Waiting for players to take the open seats."
    if game["status"] == "over" or not view:
        return "The game is over."
    if view["phase"] == "deal":
        return "The next hand is being dealt."
    legal = view.get("legal") or {}
    if legal.get("to_act"):
        if view["phase"] == "answer":
            return f"Your turn: {seat_name(seats, view.get('turn'), me)} asks you: may they go out?"
        if view["phase"] == "draw":
            return "Your turn: draw from the stock or take the pile."
        if legal.get("must_go_out"):
            return "Your turn: your partner said yes, so you must go out."
        return "Your turn: meld or add if you like, then discard."
    doing = {"draw": "to draw", "play": "to meld and discard",
             "answer": f"to answer {seat_name(seats, view.get('turn'), me)}"}.get(view["phase"], "")
    return f"Waiting for {seat_name(seats, view.get('to_act'), me)} {doing}."


def pile_lines(view: dict[str, Any], seats: Sequence[Mapping[str, Any]], cards: Cards, me: int | None) -> Text:
    pile = view.get("pile") or {}
    text = Text("Pile: ", style="bold")
    text.append_text(cards.card(pile["top"]) if pile.get("top") else Text("empty"))
    text.append(f" · {plural(pile.get('size', 0), 'card')}")
    beside = list(pile.get("beside") or [])
    if beside:  # wilds laid beside the pile (R13): they go with it to whoever takes it
        text.append(" + beside it ")
        text.append_text(cards.in_order(beside))
    reasons = []
    for r in pile.get("reasons") or []:
        if r.get("reason") == "frozen_by_card":
            reasons.append(f"frozen by {cards.short(r['card'])}")
        elif r.get("reason") == "wild_beside_pile":
            reasons.append(f"frozen by {cards.short(r['card'])} beside the pile")
        elif r.get("reason") == "locked_by_red_three":
            reasons.append(f"locked by a red three until {seat_name(seats, r.get('until_seat'), me)} plays")
        else:
            reasons.append(str(r.get("reason", "")).replace("_", " "))
    frozen_for = list(pile.get("frozen_for_teams") or [])
    if not pile.get("frozen_by") and frozen_for:
        if len(frozen_for) > 1 and len(frozen_for) == len(view.get("teams") or []):
            reasons.append("frozen until each side has melded")
        else:
            for team in frozen_for:
                side = "your side" if team == view.get("team") else team_name(view, seats, team, me)
                reasons.append(f"frozen for {side} until it has melded")
    text.append(" · " + ("; ".join(reasons) if reasons else "not frozen"), style="cyan" if reasons else "")
    text.append("    ")
    text.append("Stock: ", style="bold")
    text.append(plural(view.get("stock_size", 0), "card"))
    return text


def memory_lines(view: dict[str, Any], seats: Sequence[Mapping[str, Any]], cards: Cards,
                 me: int | None) -> list[RenderableType]:
    """What every player could remember (public): the pile's cards, bottom first, and the
    cards each other seat took with the pile and has not played since."""
    out: list[RenderableType] = []
    pile = list((view.get("pile") or {}).get("cards") or [])
    if len(pile) > 1:  # one card is the top, already shown
        line = Text("   the pile, bottom first: ", style="dim")
        line.append_text(cards.in_order(pile))
        out.append(line)
    known = view.get("known_from_pile") or []
    held = [(seat, codes) for seat, codes in enumerate(known) if codes and seat != me]
    if held:
        line = Text("   taken with the pile and still held: ", style="dim")
        for i, (seat, codes) in enumerate(held):
            if i:
                line.append(" · ")
            line.append(f"{short_name(seats, seat, me)} ")
            line.append_text(cards.row(codes))
        out.append(line)
    return out


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


def points_line(view: Mapping[str, Any], team: int) -> Text:
    """A side's running points as the server counts them (the view's ``running``): this hand's
    points on the table and what make them, and what the side still needs."""
    run = (view.get("running") or [None] * (team + 1))[team] if view.get("running") else None
    total = (view.get("totals") or [0] * (team + 1))[team]
    if not run:
        return Text(f"   game total {total}")
    line = Text("   this hand: ")
    line.append(f"{run['on_table']} on the table", style="bold")
    parts = [f"melds {run['melds']}"]
    natural, mixed = run["canastas"]["natural"], run["canastas"]["mixed"]
    if natural or mixed:
        kinds = " + ".join(k for k in (f"{natural} natural" if natural else "", f"{mixed} mixed" if mixed else "") if k)
        parts.append(f"{kinds} canasta{'s' if natural + mixed > 1 else ''} {_signed(run['canasta_bonus'])}")
    if run["red_threes"]:
        parts.append(f"red threes {_signed(run['red_threes'])}")
    if run["penalties"]:
        parts.append(f"penalties {_signed(run['penalties'])}")
    if run.get("opening_needed") is not None:
        parts.append(f"first meld needs {run['opening_needed']}")
    if run["canastas_to_go_out"]:
        parts.append(f"{plural(run['canastas_to_go_out'], 'more canasta')} to go out")
    line.append(f" ({', '.join(parts)}) · game total {total}")
    return line


def side_block(view: dict[str, Any], seats: Sequence[Mapping[str, Any]], team: int, cards: Cards,
               me: int | None) -> list[RenderableType]:
    mine = team == view.get("team")
    title = Text(("Your side: " if mine else "") + team_name(view, seats, team, me), style="bold")
    out: list[RenderableType] = [title, points_line(view, team)]
    reds = (view.get("red_threes") or [[]] * (team + 1))[team] if view.get("red_threes") else []
    if reds:
        line = Text("   red threes: ")
        line.append_text(cards.row(reds))
        out.append(line)
    melds = (view.get("melds") or [[]] * (team + 1))[team] if view.get("melds") else []
    if not melds:
        out.append(Text("   no melds yet", style="dim"))
    for m in melds:
        line = Text(f"   {RANK_NAMES.get(m['rank'], (m['rank'],))[0]:>2}: ")
        line.append_text(cards.row(m["cards"]))
        line.append(f"  ({plural(len(m['cards']), 'card')}{', ' + str(m['wilds']) + ' wild' if m.get('wilds') else ''})")
        if m.get("canasta"):
            line.append(f"  {'●' if cards.symbols else '*'} {m['canasta']} canasta", style="bold green")
        out.append(line)
    return out


SEAT_GAP = 3  # spaces between two seats on a row


def seats_line(game: Mapping[str, Any], cards: Cards) -> Columns:
    """Every seat with its side and hand size, the one to act marked; as many to a row as the
    terminal fits, none broken over two lines."""
    view = game.get("view") or {}
    me = game.get("seat")
    parts = []
    for s in game["seats"]:
        acting = view.get("to_act") == s["seat"]
        mark = ("▶ " if cards.symbols else "> ") if acting else ""
        part = f"{mark}{short_name(game['seats'], s['seat'], me)}: team {s['team']}"
        if view.get("hand_sizes"):
            part += f", {plural(view['hand_sizes'][s['seat']], 'card')}"
        parts.append(Text(part, style="bold" if acting else ""))
    return Columns(parts, padding=(0, SEAT_GAP))


def table(game: Mapping[str, Any], cards: Cards, rules: dict[str, Any] | None = None) -> RenderableType:
    """The whole table as the seat sees it (``rules``: the game's, which only the first
    read of a game carries)."""
    view = game.get("view")
    me = game.get("seat")
    rules = game.get("rules") or rules or {}
    header = f"Game {game['id']} · {game['preset']} · {game['players']} players"
    if view:
        header += f" · hand {view['hand_no']}"
    if rules.get("target_score"):
        header += f" · target {rules['target_score']}"
    parts: list[RenderableType] = [Rule(header), seats_line(game, cards)]
    if view:
        for team in range(len(view.get("teams") or [])):
            parts.extend(side_block(view, game["seats"], team, cards, me))
        parts.append(pile_lines(view, game["seats"], cards, me))
        parts.extend(memory_lines(view, game["seats"], cards, me))
        if me is not None:
            hand = view.get("hand") or []
            worth = f", {view['hand_points']} points" if view.get("hand_points") is not None else ""
            line = Text(f"Your hand ({plural(len(hand), 'card')}{worth}): ", style="bold")
            line.append_text(Text(" │ ").join(cards.row(group) for _, group in group_hand(hand)))
            parts.append(line)
            minimum = (view.get("legal") or {}).get("opening_minimum")
            if minimum:
                parts.append(Text(f"Your side's first meld needs {minimum} points.", style="yellow"))
    parts.append(Text(turn_text(game), style="bold"))
    return Group(*parts)
