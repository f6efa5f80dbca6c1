"""The game state: one immutable value per position.

A :class:`State` is a named tuple of small ints and tuples. Hands are count tuples over the
53 card kinds, the stock is the hand's deck plus a position, melds are :class:`Meld` tuples.
Nothing is ever mutated; ``state._replace(...)`` makes the next position and shares
everything that did not change.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from engine.cards import CODES, IS_WILD, KINDS, VALUE, parse_card
from engine.rules import RuleOptions

PHASES = ("deal", "draw", "play", "answer", "over")
IN_HAND = ("draw", "play", "answer")  # the phases of a hand being played
# Why a game ended (``game_result["reason"]``): a side reached the target score, the last
# hand the rules allow was played (``rules.limits.max_hands``), or a hand was cut at its move
# limit (``rules.limits.max_moves_per_hand``; that hand's own reason is MOVE_LIMIT too).
TARGET, HAND_LIMIT, MOVE_LIMIT = "target", "hand_limit", "move_limit"
NO_SEAT = -1
NOT_FROZEN = -1  # State.pile_frozen_by when no card froze the pile
# State.permission: the partner's answer to "may I go out?" this turn (R17)
NOT_ASKED, REFUSED, GRANTED = -1, 0, 1


class Meld(NamedTuple):
    """One side's meld of one rank. ``cards`` are kinds, sorted; ``hidden``: laid whole."""

    rank: int
    cards: tuple[int, ...]
    wilds: int  # counted once: build melds with :meth:`of`
    hidden: bool

    @classmethod
    def of(cls, rank: int, cards: tuple[int, ...] | list[int], hidden: bool = False) -> Meld:
        cards = tuple(sorted(cards))
        return cls(rank, cards, sum(map(IS_WILD.__getitem__, cards)), hidden)

    @property
    def naturals(self) -> int:
        return len(self.cards) - self.wilds

    @property
    def value(self) -> int:
        return sum(map(VALUE.__getitem__, self.cards))

    def is_canasta(self, rules: RuleOptions) -> bool:
        return self.reaches(rules.melding.canasta_size, rules.melding.canasta_min_naturals)

    def reaches(self, canasta_size: int, min_naturals: int) -> bool:
        """A canasta by these measures (the rules' ``canasta_size``, ``canasta_min_naturals``)."""
        return len(self.cards) >= canasta_size and self.naturals >= min_naturals

    def is_natural(self) -> bool:
        return self.wilds == 0


# Side melds: a tuple of 13 entries indexed by rank, None where the side has no meld.
NO_MELDS: tuple[Meld | None, ...] = (None,) * 13
EMPTY_HAND: tuple[int, ...] = (0,) * KINDS


class State(NamedTuple):
    """A position. Fields marked (hand) are reset by each deal, (turn) by each turn."""

    rules: RuleOptions
    phase: str = "deal"
    to_act: int = NO_SEAT  # the seat that must move now (the partner while answering)
    turn: int = NO_SEAT  # whose turn it is
    hand_no: int = 0
    dealer: int = NO_SEAT
    totals: tuple[int, ...] = ()
    moves: int = 0  # accepted moves over the whole game (the log's `move` counter)
    # (hand)
    hand_moves: int = 0  # accepted moves in this hand (its limit: rules.limits.max_moves_per_hand)
    deck: tuple[int, ...] = ()
    salt: str | None = None
    commitment: str | None = None
    stock_pos: int = 0
    hands: tuple[tuple[int, ...], ...] = ()
    pile: tuple[int, ...] = ()  # bottom first
    pile_beside: tuple[int, ...] = ()  # R13 "beside_pile": discarded wilds laid beside the pile
    pile_frozen_by: int = NOT_FROZEN  # the kind that froze the pile until taken
    pile_lock: int = NO_SEAT  # a red 3 discarder: nobody takes the pile before their turn
    melds: tuple[tuple[Meld | None, ...], ...] = ()  # per team
    red_threes: tuple[tuple[int, ...], ...] = ()  # per team, kinds in the order laid
    minimums: tuple[int, ...] = ()  # opening minimum per team (R8)
    melded: tuple[bool, ...] = ()  # per seat: melded or added in an earlier turn of the hand
    # per seat, sorted kinds: cards the whole table knows are in that hand because they came with
    # the pile (R18). Public knowledge, never more: melding, adding or discarding j copies of a
    # kind drops j of them (as many as there are), whatever else the hand may hold.
    known_from_pile: tuple[tuple[int, ...], ...] = ()
    first_turn_done: tuple[bool, ...] = ()  # per seat (R2 "first_turn")
    penalties: tuple[int, ...] = ()  # per team, this hand (positive numbers)
    # (turn)
    drawn: str = ""  # "", "stock" or "pile"
    permission: int = NOT_ASKED  # or REFUSED, GRANTED
    asked: bool = False
    turn_melded: bool = False
    turn_canasta: bool = False
    minimum_waived: bool = False  # R19: a concealed going out waived the minimum; go out this turn
    # results
    hand_result: dict[str, Any] | None = None
    game_result: dict[str, Any] | None = None

    # -- reading ------------------------------------------------------------------------
    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def stock_size(self) -> int:
        return len(self.deck) - self.stock_pos

    @property
    def stock(self) -> tuple[int, ...]:
        return self.deck[self.stock_pos:]

    @property
    def pile_top(self) -> int:
        return self.pile[-1] if self.pile else -1

    def team(self, seat: int) -> int:
        return self.rules.team_of(seat)

    def opened(self, team: int) -> bool:
        return self.melds[team] != NO_MELDS

    def canastas(self, team: int) -> int:
        rules = self.rules
        size, naturals = rules.melding.canasta_size, rules.melding.canasta_min_naturals
        count = 0  # a loop, not sum() over a generator: bots count canastas in every position they judge
        for m in self.melds[team]:
            if m is not None and len(m.cards) >= size and len(m.cards) - m.wilds >= naturals:
                count += 1
        return count

    def hand_size(self, seat: int) -> int:
        return sum(self.hands[seat])

    @property
    def over(self) -> bool:
        return self.phase == "over"

    # -- JSON ---------------------------------------------------------------------------
    def to_json(self, rules: bool = True) -> dict[str, Any]:
        """Plain data that :meth:`from_json` turns back into an equal state. ``rules=False``
        leaves the rule options out, for a store that keeps them once per game: they must
        then be put back under ``"rules"`` before :meth:`from_json`."""
        data = {
            "v": 1,
            "rules": _rules_out(self.rules) if rules else None,
            **{name: getattr(self, name) for name in _PLAIN},
            "totals": list(self.totals),
            "deck": _deck_out(self.deck),
            "hands": [_hand_out(h) for h in self.hands],
            "pile": [CODES[k] for k in self.pile],
            "pile_beside": [CODES[k] for k in self.pile_beside],
            "pile_frozen_by": CODES[self.pile_frozen_by] if self.pile_frozen_by != NOT_FROZEN else None,
            "melds": [
                [[m.rank, [CODES[k] for k in m.cards], m.hidden] for m in side if m is not None]
                for side in self.melds
            ],
            "red_threes": [[CODES[k] for k in r] for r in self.red_threes],
            "minimums": list(self.minimums),
            "melded": list(self.melded),
            "known_from_pile": [[CODES[k] for k in known] for known in self.known_from_pile],
            "first_turn_done": list(self.first_turn_done),
            "penalties": list(self.penalties),
            "minimum_waived": self.minimum_waived,
            "hand_moves": self.hand_moves,
            "hand_result": result_copy(self.hand_result),
            "game_result": result_copy(self.game_result),
        }
        if not rules:
            del data["rules"]
        return data

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> State:
        """The state :meth:`to_json` gave. Fields added later read as empty when missing, so
        states stored by an earlier version still load."""
        if d.get("v") != 1:
            raise ValueError("unknown state format")
        melds = []
        for side in d["melds"]:
            row: list[Meld | None] = [None] * 13
            for rank, cards, hidden in side:
                row[rank] = Meld.of(rank, [parse_card(c) for c in cards], bool(hidden))
            melds.append(tuple(row))
        frozen = d["pile_frozen_by"]
        hands = tuple(_hand_in(h) for h in d["hands"])
        known = d.get("known_from_pile") or [[] for _ in hands]
        return cls(
            rules=_rules_in(d["rules"]),
            **{name: d[name] for name in _PLAIN},
            totals=tuple(d["totals"]),
            deck=_deck_in(d["deck"]),
            hands=hands,
            pile=tuple(parse_card(c) for c in d["pile"]),
            pile_beside=tuple(parse_card(c) for c in d.get("pile_beside", ())),
            pile_frozen_by=parse_card(frozen) if frozen else NOT_FROZEN,
            melds=tuple(melds),
            red_threes=tuple(tuple(parse_card(c) for c in r) for r in d["red_threes"]),
            minimums=tuple(d["minimums"]),
            melded=tuple(d["melded"]),
            known_from_pile=tuple(tuple(parse_card(c) for c in cards) for cards in known),
            first_turn_done=tuple(d["first_turn_done"]),
            penalties=tuple(d["penalties"]),
            minimum_waived=d.get("minimum_waived", False),
            # a hand in progress when its state was stored without the count: counted from here
            hand_moves=d.get("hand_moves", 0),
            hand_result=result_copy(d["hand_result"]),
            game_result=_game_result_in(d["game_result"]),
        )


# The fields whose JSON is their value as it is (numbers, strings, booleans): written and read
# by name, the same way both ways. The others each have their own form in to_json/from_json.
_PLAIN = ("phase", "to_act", "turn", "hand_no", "dealer", "moves", "salt", "commitment", "stock_pos", "pile_lock",
          "drawn", "permission", "asked", "turn_melded", "turn_canasta")
_INDEX = {name: i for i, name in enumerate(State._fields)}
_new_tuple = tuple.__new__


def _replace(self: State, **changes: Any) -> State:
    """The next position: a copy with ``changes`` (faster than the namedtuple default)."""
    values = list(self)
    for name, value in changes.items():
        values[_INDEX[name]] = value
    return _new_tuple(State, values)


# A NamedTuple may not define _replace in its body; setattr installs the faster one (it takes
# the same keywords, so the types mypy gives ``State._replace`` stay true).
setattr(State, "_replace", _replace)  # noqa: B010


@lru_cache(maxsize=64)
def _rules_cached(rules: RuleOptions) -> dict[str, Any]:
    return rules.to_dict()


def _rules_out(rules: RuleOptions) -> dict[str, Any]:
    """A fresh dict each time (callers may change what they get), built from a cached one."""
    d = dict(_rules_cached(rules))
    d["opening_minimums"] = [list(p) for p in d["opening_minimums"]]
    return d


def result_copy(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A hand or game result that shares nothing with ``result`` (states share theirs)."""
    if result is None:
        return None
    out = dict(result)
    if "scores" in out:
        out["scores"] = [dict(row) for row in out["scores"]]
    if "totals" in out:
        out["totals"] = list(out["totals"])
    return out


def _game_result_in(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored game result; one stored before games had limits ended at the target, and
    says so now (``reason``, as :func:`engine.turns.end_hand` writes it)."""
    out = result_copy(result)
    if out is not None:
        out.setdefault("reason", TARGET)
    return out


_RULES_CACHE: dict[bytes, RuleOptions] = {}


def _rules_in(data: dict[str, Any]) -> RuleOptions:
    """Rules are the same for every state of a game: validate each distinct set once. A game
    created before the options had ranges keeps its values (``RuleOptions.from_stored``)."""
    key = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    rules = _RULES_CACHE.get(key)
    if rules is None:
        rules = RuleOptions.from_stored(data)
        if len(_RULES_CACHE) > 256:
            _RULES_CACHE.clear()
        _RULES_CACHE[key] = rules
    return rules


@lru_cache(maxsize=256)
def _deck_out(deck: tuple[int, ...]) -> str:
    return "".join(CODES[k] for k in deck)


@lru_cache(maxsize=256)
def _deck_in(text: str) -> tuple[int, ...]:
    if len(text) % 2:
        raise ValueError("a deck is a string of two-character card codes")
    return tuple(parse_card(text[i:i + 2]) for i in range(0, len(text), 2))


@lru_cache(maxsize=4096)
def _hand_out(hand: tuple[int, ...]) -> str:
    """A hand as compact text: card codes joined, copies repeated ("7H7HJK"). Cached: a move
    changes one hand, so the others' text is the previous state's."""
    return "".join(CODES[k] * n for k, n in enumerate(hand) if n)


def _hand_in(text: str) -> tuple[int, ...]:
    hand = [0] * KINDS
    for i in range(0, len(text), 2):
        hand[parse_card(text[i:i + 2])] += 1
    return tuple(hand)


