"""Scenario builders for the engine tests: explicit deck orders, moves, expected refusals.

A scenario is built from a deck order, never by editing a dealt state, so every test goes
through ``engine.deal`` exactly as a game log would. :func:`make_deck` places the cards a
test names and fills every other position with the rest of the pack in a fixed order that
keeps the surprises (red threes, jokers, 2s, black threes) for the end of the stock.

Dealing (docs/gamelog.md, "Deal"): one card at a time, clockwise from the dealer's left,
i.e. seat ``(dealer + 1) % n`` gets the first card; the first dealer of a game is the last
seat, so seat 0 gets the first card. Then the upcard sequence (R1), then the stock, top first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from engine import IllegalMove, RuleOptions, State, apply, deal, new_game, resolve
from engine.cards import (
    CODES,
    IS_BLACK_THREE,
    IS_RED_THREE,
    IS_WILD,
    RANK_OF,
    THREE,
    pack,
    parse_card,
)

Action = dict[str, Any]

PRESET_NAMES = ("classic", "finnish", "finnish-2p", "finnish-3p", "bicycle", "wiki", "norwegian")
# The rank order of the filler: every rank a meld can have, so that consecutive filler cards
# are of different ranks and a filled hand rarely holds a pair by accident.
_FILL_RANKS = "456789TJQKA"
_SUIT_ORDER = "SHDC"


def _category(kind: int) -> int:
    """0: natural 4..A, 1: black 3, 2: a 2, 3: a joker, 4: a red 3 (the last to come out)."""
    if IS_RED_THREE[kind]:
        return 4
    if kind == 52:
        return 3
    if IS_WILD[kind]:
        return 2
    if IS_BLACK_THREE[kind]:
        return 1
    return 0


def filler_order(rules: RuleOptions, busy: str = "") -> list[str]:
    """The whole pack in the order the filler uses: naturals (rank by rank, then suit, then
    copy; ranks in ``busy``, the ones a test names, after the others), then black threes,
    2s, jokers and red threes last."""
    copies: Counter[str] = Counter()
    keyed = []
    for kind in pack(rules.dealing.decks):
        c = CODES[kind]
        copy = copies[c]
        copies[c] += 1
        if _category(kind) == 0:
            key = (0, c[0] in busy, copy, _SUIT_ORDER.index(c[1]), _FILL_RANKS.index(c[0]))
        else:
            key = (_category(kind), False, copy, _SUIT_ORDER.index(c[1]) if c != "JK" else 0, 0)
        keyed.append((key, c))
    keyed.sort()
    return [c for _, c in keyed]


def is_natural(code: str) -> bool:
    kind = parse_card(code)
    return not IS_WILD[kind] and RANK_OF[kind] != THREE


def make_deck(
    rules: RuleOptions,
    hands: Mapping[int, Sequence[str]] | None = None,
    upcards: Sequence[str] | None = None,
    stock: Sequence[str] | None = None,
    stock_bottom: Sequence[str] | None = None,
    dealer: int | None = None,
) -> list[str]:
    """A full, valid deck (top card first) that deals the given cards.

    ``hands``: seat -> the first cards dealt to that seat (the rest are filled).
    ``upcards``: the upcard sequence: jokers, 2s and 3s, then one natural 4..A that stops it.
    ``stock``: the stock from its top; ``stock_bottom``: the last cards of the stock (the
    last one is the last card drawn). ``dealer``: the seat dealing this hand (default: the
    last seat, the first dealer of a game).
    """
    n, size = rules.players, rules.dealing.hand_size
    dealer = n - 1 if dealer is None else dealer
    hands = dict(hands or {})
    stock = list(stock or [])
    stock_bottom = list(stock_bottom or [])
    left = Counter(filler_order(rules))

    def take(c: str) -> str:
        parse_card(c)
        if left[c] <= 0:
            raise ValueError(f"the pack has no more copies of {c}")
        left[c] -= 1
        return c

    total = len(pack(rules.dealing.decks))
    deck: list[str | None] = [None] * total
    for seat, cards in hands.items():
        if not 0 <= seat < n:
            raise ValueError(f"no seat {seat}")
        if len(cards) > size:
            raise ValueError(f"seat {seat} is dealt {size} cards, not {len(cards)}")
        offset = (seat - dealer - 1) % n
        for r, c in enumerate(cards):
            deck[r * n + offset] = take(c)
    pos = n * size
    if upcards is not None:
        if not upcards or not is_natural(upcards[-1]) or any(is_natural(c) for c in upcards[:-1]):
            raise ValueError("upcards: jokers, 2s and 3s, ending with one natural 4..A")
        for c in upcards:
            deck[pos] = take(c)
            pos += 1
    for c in stock:
        take(c)
    for c in stock_bottom:
        take(c)
    named = [c for cards in hands.values() for c in cards] + list(upcards or []) + stock + stock_bottom
    busy = {c[0] for c in named if is_natural(c)}
    pool = []
    for c in filler_order(rules, busy="".join(busy)):
        if left[c] > 0:
            left[c] -= 1
            pool.append(c)
    # Each seat's empty slots take, from the front of the pool, the card whose rank the seat
    # holds least (ranks the test names last): hands full of unrelated singles.
    for seat in range(n):
        offset = (seat - dealer - 1) % n
        slots = [r * n + offset for r in range(size)]
        held = Counter(deck[i][0] for i in slots if deck[i] is not None)
        for i in slots:
            if deck[i] is None:
                best = min(
                    range(len(pool)),
                    key=lambda j: (_category(parse_card(pool[j])), pool[j][0] in busy, held[pool[j][0]], j),
                )
                deck[i] = pool.pop(best)
                held[deck[i][0]] += 1
    it = iter(pool)
    if upcards is None:
        deck[pos] = next(it)  # the filler starts with naturals: a single upcard
        pos += 1
    rest = list(it)
    middle = total - pos - len(stock) - len(stock_bottom)
    assert middle == len(rest)
    out = [c for c in deck[:pos] if c is not None] + stock + rest + stock_bottom
    assert len(out) == total and Counter(out) == Counter(CODES[k] for k in pack(rules.dealing.decks))
    return out


def start(
    preset: str,
    players: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    totals: Sequence[int] | None = None,
    **deck: Any,
) -> State:
    """A new game of ``preset`` (with house-rule ``overrides`` and starting ``totals``), dealt
    from :func:`make_deck` with ``deck`` (hands, upcards, stock, stock_bottom)."""
    rules = resolve(preset, players, dict(overrides or {}))
    state = new_game(rules)
    if totals is not None:
        state = state._replace(totals=tuple(totals))
    return deal(state, make_deck(rules, **deck))


def play(state: State, *moves: tuple[int, Action]) -> State:
    """Apply ``(seat, action)`` pairs in order; any refusal fails the test with its code."""
    for i, (seat, action) in enumerate(moves):
        try:
            state = apply(state, seat, action)
        except IllegalMove as e:
            pytest.fail(f"move {i} {seat} {action} was refused: {e}")
    return state


def illegal(state: State, seat: int, action: Action, code: str) -> IllegalMove:
    """Assert that ``action`` is refused with reason ``code`` (and nothing else is raised)."""
    before = state.to_json()
    with pytest.raises(IllegalMove) as info:
        apply(state, seat, action)
    assert info.value.code == code, f"expected {code}, got {info.value.code}: {info.value.message}"
    assert state.to_json() == before
    return info.value


def hand(state: State, seat: int) -> Counter[str]:
    return Counter(CODES[k] for k, n in enumerate(state.hands[seat]) for _ in range(n))


def hand_list(state: State, seat: int) -> list[str]:
    return sorted(hand(state, seat).elements())


def meld_codes(state: State, team: int) -> dict[str, list[str]]:
    """rank code -> sorted card codes of the team's melds."""
    return {
        "A23456789TJQK"[m.rank]: sorted(CODES[k] for k in m.cards) for m in state.melds[team] if m is not None
    }


def all_cards(state: State) -> Counter[str]:
    """Every card a dealt state holds: hands, stock, pile (and wilds beside it), melds and laid
    red threes."""
    out: Counter[str] = Counter()
    for h in state.hands:
        out.update(CODES[k] for k, n in enumerate(h) for _ in range(n))
    out.update(CODES[k] for k in state.stock)
    out.update(CODES[k] for k in state.pile)
    out.update(CODES[k] for k in state.pile_beside)
    for side in state.melds:
        for m in side:
            if m is not None:
                out.update(CODES[k] for k in m.cards)
    for r in state.red_threes:
        out.update(CODES[k] for k in r)
    return out


def pack_counter(rules: RuleOptions) -> Counter[str]:
    return Counter(CODES[k] for k in pack(rules.dealing.decks))


def row(state: State, team: int) -> dict[str, Any]:
    """The team's score row of the hand that just ended."""
    assert state.hand_result is not None, "the hand has not ended"
    return state.hand_result["scores"][team]


# -- action constructors ------------------------------------------------------------------


def draw() -> Action:
    return {"type": "draw"}


def discard(card: str) -> Action:
    return {"type": "discard", "card": card}


def meld(*groups: Iterable[str]) -> Action:
    return {"type": "meld", "melds": [list(g) for g in groups]}


def add(rank: str, *cards: str) -> Action:
    return {"type": "add", "rank": rank, "cards": list(cards)}


def take(*with_: str, melds: Sequence[Sequence[str]] | None = None) -> Action:
    action: Action = {"type": "take_pile", "with": list(with_)}
    if melds:
        action["melds"] = [list(g) for g in melds]
    return action


def onto(rank: str, melds: Sequence[Sequence[str]] | None = None) -> Action:
    action: Action = {"type": "take_pile", "onto": rank}
    if melds:
        action["melds"] = [list(g) for g in melds]
    return action


def ask() -> Action:
    return {"type": "ask_go_out"}


def answer(yes: bool) -> Action:
    return {"type": "answer_go_out", "yes": yes}


def pass_() -> Action:
    return {"type": "pass"}


def skip_stock(state: State, leave: int) -> State:
    """Fast-forward the stock so that ``leave`` cards remain (the cards skipped are set aside:
    use only in tests that do not count cards). The remaining ones are the deck's last."""
    assert 0 <= leave <= state.stock_size
    return state._replace(stock_pos=len(state.deck) - leave)


# -- a common scenario: one side opens, the others play, a seat of the opened side takes --


def taker_of(rules: RuleOptions) -> int:
    """The next seat of seat 0's side to play after seat 0: its partner, or seat 0 itself."""
    partners = rules.partners(0)
    return partners[0] if partners else 0


def between_seats(rules: RuleOptions) -> list[int]:
    """The seats that play between seat 0 and :func:`taker_of`."""
    taker = taker_of(rules)
    return list(range(1, taker if taker else rules.players))


def after_opening(
    preset: str,
    players: int | None = None,
    *,
    taker_cards: Sequence[str] = (),
    opener_melds: Sequence[Sequence[str]] = (("AH", "AS", "AD"),),
    opener_discard: str = "5C",
    last_discard: str = "KC",
    between_cards: Sequence[str] = ("6C", "7C", "4C", "5D", "6D"),
    upcards: Sequence[str] | None = None,
    stock: Sequence[str] | None = None,
    stock_bottom: Sequence[str] | None = None,
    stock_left: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    totals: Sequence[int] | None = None,
    extra: Mapping[int, Sequence[str]] | None = None,
) -> tuple[State, int]:
    """Seat 0 draws, opens with ``opener_melds`` and discards ``opener_discard``; every seat
    between it and the next seat of its side (:func:`taker_of`) draws and discards, the last
    one ``last_discard``. Returns the state, in the draw phase of that next seat, and the seat.

    ``taker_cards`` are dealt to that seat, ``extra`` to any seat. ``stock_left``: the stock
    is fast-forwarded (:func:`skip_stock`) to that many cards just before the last discard.
    """
    rules = resolve(preset, players, dict(overrides or {}))
    taker = taker_of(rules)
    between = between_seats(rules)
    hands: dict[int, list[str]] = {0: [c for m in opener_melds for c in m] + [opener_discard]}
    hands.setdefault(taker, []).extend(taker_cards)
    discards = {}
    for i, seat in enumerate(between):
        discards[seat] = last_discard if i == len(between) - 1 else between_cards[i]
        hands.setdefault(seat, []).append(discards[seat])
    for seat, cards in (extra or {}).items():
        hands.setdefault(seat, []).extend(cards)
    state = new_game(rules)
    if totals is not None:
        state = state._replace(totals=tuple(totals))
    state = deal(
        state,
        make_deck(rules, hands=hands, upcards=upcards, stock=stock, stock_bottom=stock_bottom),
    )
    state = play(state, (0, draw()), (0, meld(*opener_melds)), (0, discard(opener_discard)))
    for seat in between:
        state = play(state, (seat, draw()))
        if seat == between[-1] and stock_left is not None:
            state = skip_stock(state, stock_left)
        state = play(state, (seat, discard(discards[seat])))
    return state, taker


def set_table(
    state: State,
    melds: Mapping[int, Sequence[Sequence[str]]] | None = None,
    hands: Mapping[int, Sequence[str]] | None = None,
    red_threes: Mapping[int, Sequence[str]] | None = None,
    hidden: bool = False,
) -> State:
    """A dealt state with the given teams' melds, seats' hands and teams' laid red threes
    (for scoring examples: the cards are not taken from anywhere)."""
    from engine.cards import counts
    from engine.melds import meld_rank
    from engine.state import NO_MELDS, Meld

    if melds is not None:
        sides = list(state.melds)
        for team, groups in melds.items():
            row: list[Meld | None] = list(NO_MELDS)
            for g in groups:
                kinds = [parse_card(c) for c in g]
                rank = meld_rank(kinds)
                row[rank] = Meld.of(rank, kinds, hidden)
            sides[team] = tuple(row)
        state = state._replace(melds=tuple(sides))
    if hands is not None:
        seats = list(state.hands)
        for seat, cards in hands.items():
            seats[seat] = counts(parse_card(c) for c in cards)
        state = state._replace(hands=tuple(seats))
    if red_threes is not None:
        reds = list(state.red_threes)
        for team, cards in red_threes.items():
            reds[team] = tuple(parse_card(c) for c in cards)
        state = state._replace(red_threes=tuple(reds))
    return state
