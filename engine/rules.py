"""Rule options: one frozen object per game, in six groups; named presets; house rules.

Every rule point R1-R23 of docs/rules.md where the rule texts differ is an option here. The
engine reads options, never preset names: a preset is only a bundle of values, chosen per
player count. In code the options are grouped as the game goes (``rules.dealing``,
``rules.melding``, ``rules.pile``, ``rules.going_out``, ``rules.scoring``, and
``rules.limits``, the service's caps on a game's length; the seating stays on ``rules``
itself); on the wire (API bodies, views, log headers, presets, house rules) they are one
flat object, option name -> value, as they always were. Every number has a range
(:data:`BOUNDS`), so that no value a client sends makes a game that cannot end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from engine.cards import CARDS_PER_DECK
from engine.text import QUOTE_CHARS, names_text, quote


class RulesError(ValueError):
    """A preset name, an option or a combination of options that cannot be played."""


# The values a choice may take. A choice with one value is a rule every seed agrees on that the
# engine plays only one way: other values are refused (``_ONE_WAY`` says why).
TeamSize = Literal[1, 2, 3]  # 1: each alone; 2: partners; 3: two teams of three (six players)
Decks = Literal[2, 3]  # 2: 108 cards; 3: 162 cards
DrawCount = Literal[1, 2]
DealtRedThrees = Literal["at_once", "first_turn"]
StockOut = Literal["play_on_forced", "play_on_optional", "end"]
MinNaturals = Literal[2]
WildRatio = Literal["any", "at_most_naturals", "fewer_than_naturals"]
PileRedThrees = Literal["laid", "to_hand"]
OpeningFromPile = Literal["all_melds", "pile_meld_alone"]
DiscardedWilds = Literal["on_pile", "beside_pile"]
AskGoOut = Literal["after_stock_draw_before_melds", "after_stock_draw_before_discard", "before_melds_or_pile_take"]
ConcealedScope = Literal["player", "side"]
ConcealedMinimum = Literal["applies", "waived", "waived_after_stock_draw"]
OnlyTrue = Literal[True]

MIN_PLAYERS, MAX_PLAYERS = 2, 6
MIN_TEAMS = 2
MIN_STOCK = 20  # cards a deal must leave for the stock and the upcard
MIN_CANASTA_SIZE = 3  # a canasta is at least a meld (R5, R7)

# The limits' defaults (docs/rules.md, "Limits"): three and four times the longest game (302
# hands: standard self-play of six norwegian players) and the longest hand (250 moves) of
# greedy and standard self-play over every preset and player count, so that good play never
# meets them; random play does, and that is what they are for.
DEFAULT_MAX_HANDS = 1000
DEFAULT_MAX_MOVES_PER_HAND = 1000


@dataclass(frozen=True, slots=True)
class Dealing:
    """The pack, the deal and the upcard, drawing from the stock and its end (R1-R3, R21, R23)."""

    decks: Decks = 2
    hand_size: int = 11
    draw_count: DrawCount = 1
    # R1: the upcard sequence. Jokers, 2s and 3s are always turned over; these say which freeze.
    upcard_wild_freezes: bool = True
    upcard_red_three_freezes: bool = True
    upcard_black_three_freezes: bool = True
    # R2: dealt red threes are replaced "at_once" after the deal, or at each seat's "first_turn".
    # R3 is the same everywhere: drawn red threes are laid and replaced.
    dealt_red_threes: DealtRedThrees = "at_once"
    # R21: an exhausted stock: play on with taking the pile forced or optional, or the hand ends
    stock_out: StockOut = "play_on_forced"
    last_red_three_ends: bool = True  # R21: the last stock card a red three ends the hand
    lone_last_card_completes_draw: OnlyTrue = True  # R23


@dataclass(frozen=True, slots=True)
class Melding:
    """What a meld and a canasta are, the opening minimum, which threes meld (R5-R8, R14, R15)."""

    # R5: meld composition.
    min_naturals: MinNaturals = 2
    max_wilds: int | None = 3  # None: no cap
    wild_ratio: WildRatio = "any"
    one_meld_per_rank: OnlyTrue = True  # R6
    # R7
    canasta_size: int = 7
    canasta_min_naturals: int = 4
    # R8: (threshold, minimum) pairs, highest threshold first; below all: the negative minimum.
    opening_minimums: tuple[tuple[int, int], ...] = ((3000, 120), (1500, 90), (0, 50))
    negative_opening_minimum: int = 15
    red_threes_optional: bool = False  # R14: a red 3 may be kept in hand, laid later or discarded
    black_three_meld_on_going_out: bool = True  # R15; False: black threes never meld

    def opening_minimum(self, total: int) -> int:
        """R8: the side's total at the start of the hand decides its opening minimum."""
        if total < 0:
            return self.negative_opening_minimum
        for threshold, minimum in self.opening_minimums:
            if total >= threshold:
                return minimum
        return self.opening_minimums[-1][1]


@dataclass(frozen=True, slots=True)
class Pile:
    """Taking the discard pile, and what a discard does to it (R4, R9, R11, R13)."""

    # R4: red threes in a taken pile are "laid" for the side (not replaced) or go "to_hand"
    # with the rest of the pile (then laid, kept or discarded as R14 allows).
    pile_red_threes: PileRedThrees = "laid"
    # R9: before opening, what a pile take counts toward the minimum: "all_melds" (the meld
    # made with the top card and the action's other melds) or "pile_meld_alone".
    opening_from_pile: OpeningFromPile = "all_melds"
    # R10/R12 are the same everywhere (see docs/rules.md). R11: what freezes the pile.
    discard_wild_freezes: bool = True
    discard_black_three_freezes: bool = True  # False: it only blocks the next player (R13)
    red_three_discard_locks_round: bool = False  # a discarded red 3 locks the pile for a round
    # R13: a discarded joker or 2 goes "on_pile", or "beside_pile": the card under it stays the
    # top card, and the wild (freezing the pile) goes with the pile to whoever takes it.
    discarded_wilds: DiscardedWilds = "on_pile"


@dataclass(frozen=True, slots=True)
class GoingOut:
    """Going out, asking the partner, going out concealed (R16, R17, R19)."""

    canastas_to_go_out: int = 1  # R16
    # R17: when "may I go out?" may be asked; the penalty when asking while unable
    ask_go_out: AskGoOut = "after_stock_draw_before_melds"
    ask_unable_penalty: int = 0  # 0: asking while unable is an illegal move
    # R19: "player" (the player melded nothing before) or "side" (neither partner did);
    # the opening minimum when going out concealed: "applies", "waived" (after a stock draw or
    # a pile take) or "waived_after_stock_draw"
    concealed_scope: ConcealedScope = "player"
    concealed_minimum: ConcealedMinimum = "applies"


@dataclass(frozen=True, slots=True)
class Scoring:
    """What a hand scores and when the game ends (R7, R18, R20, R22)."""

    target_score: int = 5000
    natural_canasta_bonus: int = 500  # R7
    mixed_canasta_bonus: int = 300
    going_out_bonus: int = 100  # R18
    concealed_going_out_bonus: int = 200
    hidden_canasta_bonus: int = 0
    red_three_bonus: int = 100  # R20
    red_three_all_bonus: int | None = 800  # all four to one side; None: no extra
    red_three_unopened: int | None = None  # per card without a meld; None: the bonus negated
    red_three_in_hand_penalty: int = 0  # R22


@dataclass(frozen=True, slots=True)
class Limits:
    """How long a game may go on. Not a rule of the seed texts: the service's bound on the
    cost of a game, since random play (or a target no table would choose) can wander on for
    ever. ``engine.turns`` applies both: a hand cut at ``max_moves_per_hand`` moves is scored
    as one that ends without a going out, and the game ends with it; a game whose
    ``max_hands``-th hand leaves no side at the target ends after that hand.

    ``None`` is no limit: what a log written before limits existed means by leaving them out
    (``replay.validate`` reads it so). ``validate`` refuses it from anyone else.
    """

    max_hands: int | None = DEFAULT_MAX_HANDS
    max_moves_per_hand: int | None = DEFAULT_MAX_MOVES_PER_HAND


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """The resolved rule system of one game: the seating, and the rules in their groups."""

    preset: str = "classic"
    players: int = 4
    team_size: TeamSize = 2
    dealing: Dealing = Dealing()
    melding: Melding = Melding()
    pile: Pile = Pile()
    going_out: GoingOut = GoingOut()
    scoring: Scoring = Scoring()
    limits: Limits = Limits()

    # -- derived ------------------------------------------------------------------------
    @property
    def teams(self) -> int:
        return self.players // self.team_size

    def team_of(self, seat: int) -> int:
        return seat % self.teams

    def partners(self, seat: int) -> tuple[int, ...]:
        """The other seats of this seat's team, in playing order after the seat."""
        n = self.players
        return tuple((seat + k) % n for k in range(1, n) if self.team_of((seat + k) % n) == self.team_of(seat))

    # -- the wire: one flat object ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Option name -> value, JSON-ready: what API bodies, views and log headers carry."""
        d = self._flat()
        d["opening_minimums"] = [list(p) for p in self.melding.opening_minimums]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleOptions:
        """Exact inverse of :meth:`to_dict`; validates every value."""
        _check_known(data)
        options = _build({k: _coerce(k, v) for k, v in data.items()})
        validate(options)
        return options

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> RuleOptions:
        """The rules of a game in play, as stored with its state: :meth:`from_dict`, but a number
        out of today's ranges (:data:`BOUNDS`) is kept. Such a game was created before the
        ranges existed (a target of 10^15); refusing its rules would leave it unreadable, and
        the limits, which a state stored without them gets by default, now end it."""
        _check_known(data)
        options = _build({k: _coerce(k, v) for k, v in data.items()})
        validate(options, ranges=False)
        return options

    def with_values(self, values: Mapping[str, Any]) -> RuleOptions:
        """A copy with some options (flat names, values of their types) changed; not validated."""
        return _build({**self._flat(), **values})

    def _flat(self) -> dict[str, Any]:
        flat = {name: getattr(self, name) for name in SEATING}
        for group, names in _GROUP_OPTIONS.items():
            part = getattr(self, group)
            flat.update((name, getattr(part, name)) for name in names)
        return flat


SEATING: tuple[str, ...] = ("preset", "players", "team_size")
GROUPS: dict[str, type] = {
    "dealing": Dealing, "melding": Melding, "pile": Pile, "going_out": GoingOut, "scoring": Scoring, "limits": Limits,
}
_GROUP_OPTIONS: dict[str, tuple[str, ...]] = {g: tuple(f.name for f in fields(c)) for g, c in GROUPS.items()}
# Every option's flat name (the wire's), the seating first, then the groups in order.
OPTION_NAMES: tuple[str, ...] = SEATING + tuple(n for names in _GROUP_OPTIONS.values() for n in names)
GROUP_OF: dict[str, str] = {n: g for g, names in _GROUP_OPTIONS.items() for n in names}
LIMIT_OPTIONS: tuple[str, ...] = _GROUP_OPTIONS["limits"]

# The range of every whole-number option, both ends included (docs/rules.md, "Bounds"): what
# a real table could want, with room to spare, and no more, so that no house rule makes a
# game that cannot end. The choices (``decks``, ``team_size``, ...) are bounded by their lists.
MAX_TARGET = 50_000  # ten times the 5 000 of every seed
MAX_POINTS = 5_000  # a bonus or a penalty: ten times the largest of any seed (500)
MAX_OPENING_MINIMUM = 1_000  # the seeds ask 15 to 120
MAX_OPENING_PAIRS = 10  # the seeds have three steps
MAX_HANDS_CAP = 2_000  # a client may lower a limit, and raise it up to these caps only
MAX_MOVES_PER_HAND_CAP = 2_000
BOUNDS: dict[str, tuple[int, int]] = {
    "players": (MIN_PLAYERS, MAX_PLAYERS),
    "hand_size": (1, 30),  # the seeds deal 11 to 15; the pack limits it further (MIN_STOCK)
    "max_wilds": (0, 20),  # three decks hold 18 wild cards
    "canasta_size": (MIN_CANASTA_SIZE, 15),  # three decks hold 12 naturals of a rank
    "canasta_min_naturals": (2, 15),
    "negative_opening_minimum": (0, MAX_OPENING_MINIMUM),
    "canastas_to_go_out": (1, 5),
    "ask_unable_penalty": (0, MAX_POINTS),
    "target_score": (1, MAX_TARGET),
    "natural_canasta_bonus": (0, MAX_POINTS),
    "mixed_canasta_bonus": (0, MAX_POINTS),
    "going_out_bonus": (0, MAX_POINTS),
    "concealed_going_out_bonus": (0, MAX_POINTS),
    "hidden_canasta_bonus": (0, MAX_POINTS),
    "red_three_bonus": (0, MAX_POINTS),
    "red_three_all_bonus": (0, MAX_POINTS),
    "red_three_unopened": (-MAX_POINTS, 0),  # a debt per red three of a side that has not melded
    "red_three_in_hand_penalty": (0, MAX_POINTS),
    "max_hands": (1, MAX_HANDS_CAP),
    "max_moves_per_hand": (1, MAX_MOVES_PER_HAND_CAP),
}
# opening_minimums: 1 to MAX_OPENING_PAIRS pairs of (threshold, minimum), each in its range
OPENING_THRESHOLD = (0, MAX_TARGET)
OPENING_MINIMUM = (0, MAX_OPENING_MINIMUM)


def _build(values: Mapping[str, Any]) -> RuleOptions:
    """Options from flat values (missing ones take the defaults); not validated."""
    parts = {g: cls(**{n: values[n] for n in _GROUP_OPTIONS[g] if n in values}) for g, cls in GROUPS.items()}
    return RuleOptions(**{n: values[n] for n in SEATING if n in values}, **parts)


def _check_known(data: Mapping[str, Any]) -> None:
    unknown = sorted(set(data) - set(OPTION_NAMES))
    if unknown:
        raise RulesError(f"unknown rule option(s): {names_text(unknown)}")


@dataclass(frozen=True)
class _Kind:
    """What values an option takes, read from its type: bool, int or str, maybe None, maybe a
    fixed set of choices."""

    base: type
    nullable: bool = False
    choices: tuple[Any, ...] = ()


def _kind(hint: Any) -> _Kind:
    args = get_args(hint)
    if get_origin(hint) in (Union, UnionType):
        (inner,) = [a for a in args if a is not type(None)]
        kind = _kind(inner)
        return _Kind(kind.base, nullable=True, choices=kind.choices)
    if get_origin(hint) is Literal:
        return _Kind(type(args[0]), choices=args)
    return _Kind(hint)


_KINDS: dict[str, _Kind] = {
    name: _kind(hint)
    for cls in (RuleOptions, *GROUPS.values())
    for name, hint in get_type_hints(cls).items()
    if name in OPTION_NAMES
}
_CHOICES: dict[str, tuple[Any, ...]] = {n: k.choices for n, k in _KINDS.items() if k.choices}
# Why a choice has one value (its other values are refused).
_ONE_WAY = {
    "min_naturals": "a meld needs two natural cards in every seed (R5), and the engine's move "
                    "search builds melds from two naturals and a wild",
    "one_meld_per_rank": "every seed allows one meld per rank (R6)",
    "lone_last_card_completes_draw": "no seed makes a lone last card an incomplete draw (R23)",
}
# Values earlier versions wrote (in stored games and log headers), read as what they meant.
_FORMER_VALUES = {
    "ask_go_out": {
        "after_stock_draw": "after_stock_draw_before_melds",
        "before_or_after_draw": "before_melds_or_pile_take",
    },
}


def _coerce(name: str, value: Any) -> Any:
    """Turn a JSON or command-line value into the option's type, or say why not."""
    kind = _KINDS[name]
    if name == "opening_minimums":
        if not isinstance(value, list | tuple) or len(value) > MAX_OPENING_PAIRS:
            raise RulesError(f"opening_minimums must be a list of 1 to {MAX_OPENING_PAIRS} [threshold, minimum] pairs")
        try:
            pairs = tuple((int(a), int(b)) for a, b in value)
        except (TypeError, ValueError):
            raise RulesError("opening_minimums must be a list of [threshold, minimum] pairs") from None
        return tuple(sorted(pairs, reverse=True))
    if isinstance(value, str) and kind.base is not str:
        text = value.strip().lower()
        if text in ("none", "null") and kind.nullable:
            return None
        if kind.base is bool:
            if text in ("true", "yes", "1", "on"):
                return True
            if text in ("false", "no", "0", "off"):
                return False
            raise RulesError(f"{name} must be true or false, not {quote(value)}")
        try:
            return int(text)
        except ValueError:
            raise RulesError(f"{name} must be a whole number, not {quote(value)}") from None
    if kind.base is bool:
        if not isinstance(value, bool):
            raise RulesError(f"{name} must be true or false")
        return value
    if kind.base is str:
        if not isinstance(value, str):
            raise RulesError(f"{name} must be a string")
        return _FORMER_VALUES.get(name, {}).get(value, value)
    if value is None:
        if not kind.nullable:
            raise RulesError(f"{name} may not be null")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"{name} must be a whole number")
    return value


MAX_DIGITS = 20  # digits of a bad number an error spells out


def _value_text(value: Any) -> str:
    """A value as an error names it: a long one quoted short (:func:`engine.text.quote`), and
    a huge number in words (Python refuses to spell out one of more than 4 300 digits)."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, int) and abs(value) >= 10**MAX_DIGITS:
        return f"a {'negative ' if value < 0 else ''}number of more than {MAX_DIGITS} digits"
    text = str(value)
    return text if len(text) <= QUOTE_CHARS else quote(text)


def validate(o: RuleOptions, *, ranges: bool = True) -> None:
    """Reject values and combinations the engine cannot play, and (``ranges``) numbers out of
    their ranges, naming the options involved."""
    flat = o.to_dict()
    for name, choices in _CHOICES.items():
        if flat[name] not in choices:
            if name in _ONE_WAY:
                raise RulesError(f"{name} {_value_text(flat[name])} is not supported: {_ONE_WAY[name]}")
            raise RulesError(
                f"{name} must be one of {', '.join(map(_value_text, choices))}, not {_value_text(flat[name])}"
            )
    if o.preset not in PRESETS:
        raise RulesError(f"unknown preset {quote(o.preset)}")
    if ranges:
        _validate_bounds(flat)
    if o.players % o.team_size or o.players // o.team_size < MIN_TEAMS:
        raise RulesError(f"team_size {o.team_size} does not divide players {o.players} into two or more teams")
    _validate_dealing(o)
    _validate_melding(o.melding)
    _validate_red_threes(o)
    if o.pile.discarded_wilds == "beside_pile" and not o.pile.discard_wild_freezes:
        raise RulesError("discarded_wilds beside_pile needs discard_wild_freezes: the wild beside the pile marks its freeze")
    if o.scoring.concealed_going_out_bonus < o.scoring.going_out_bonus:
        raise RulesError("concealed_going_out_bonus must be at least going_out_bonus")


def _validate_bounds(flat: Mapping[str, Any]) -> None:
    """Every number in its range (:data:`BOUNDS`). ``null`` passes where it is a value of the
    rules (``max_wilds``: no cap); a limit's ``null`` (no limit) is refused: only old logs
    carry it, by leaving the limit out."""
    for name, (lo, hi) in BOUNDS.items():
        value = flat[name]
        if value is None and _KINDS[name].nullable and name not in LIMIT_OPTIONS:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            null = "null or " if _KINDS[name].nullable and name not in LIMIT_OPTIONS else ""
            raise RulesError(f"{name} must be {null}{lo} to {hi}, not {_value_text(value)}")
    pairs = flat["opening_minimums"]
    if not 1 <= len(pairs) <= MAX_OPENING_PAIRS:
        raise RulesError(f"opening_minimums needs 1 to {MAX_OPENING_PAIRS} [threshold, minimum] pairs (R8)")
    for threshold, minimum in pairs:
        if not (OPENING_THRESHOLD[0] <= threshold <= OPENING_THRESHOLD[1]
                and OPENING_MINIMUM[0] <= minimum <= OPENING_MINIMUM[1]):
            raise RulesError(
                f"opening_minimums: a threshold must be {OPENING_THRESHOLD[0]} to {OPENING_THRESHOLD[1]} and a "
                f"minimum {OPENING_MINIMUM[0]} to {OPENING_MINIMUM[1]}, not [{_value_text(threshold)}, "
                f"{_value_text(minimum)}]"
            )


def _validate_dealing(o: RuleOptions) -> None:
    pack = CARDS_PER_DECK * o.dealing.decks
    if o.players * o.dealing.hand_size > pack - MIN_STOCK:
        raise RulesError(
            f"hand_size {o.dealing.hand_size} for players {o.players} leaves fewer than {MIN_STOCK} of the "
            f"{pack} cards (decks {o.dealing.decks})"
        )


def _validate_melding(m: Melding) -> None:
    if m.max_wilds is None and m.wild_ratio == "any":
        raise RulesError("max_wilds null (no cap) needs wild_ratio at_most_naturals or fewer_than_naturals")
    if m.canasta_min_naturals < m.min_naturals or m.canasta_min_naturals > m.canasta_size:
        raise RulesError("canasta_size and canasta_min_naturals are inconsistent")


def _validate_red_threes(o: RuleOptions) -> None:
    optional = o.melding.red_threes_optional
    if o.pile.red_three_discard_locks_round and not optional:
        raise RulesError(
            "red_three_discard_locks_round needs red_threes_optional: a red 3 can only be discarded when laying it is optional"
        )
    if o.pile.pile_red_threes == "to_hand" and not optional:
        raise RulesError(
            "pile_red_threes to_hand needs red_threes_optional: a red 3 in hand must be one the player may lay or discard"
        )
    if o.dealing.last_red_three_ends and optional:
        raise RulesError("last_red_three_ends needs red threes laid automatically (red_threes_optional false)")
    if not o.dealing.last_red_three_ends and not optional:
        raise RulesError(
            "last_red_three_ends false needs red_threes_optional: a last stock card that is a red 3, laid at "
            "once with nothing to replace it, can leave the player one card and no move"
        )


# -- presets ------------------------------------------------------------------------------

_CLASSIC: dict[str, Any] = {}

_FINNISH: dict[str, Any] = dict(
    upcard_black_three_freezes=False,
    dealt_red_threes="first_turn",
    discard_black_three_freezes=False,
    ask_go_out="after_stock_draw_before_discard",
    ask_unable_penalty=100,
    concealed_scope="side",
    concealed_minimum="waived",
    red_three_all_bonus=None,
    red_three_unopened=-100,
    stock_out="play_on_optional",
    red_three_in_hand_penalty=500,
)

_BICYCLE: dict[str, Any] = dict(
    dealt_red_threes="first_turn",
    ask_go_out="before_melds_or_pile_take",
    concealed_minimum="waived_after_stock_draw",
)

_WIKI: dict[str, Any] = dict(
    upcard_red_three_freezes=False,
    upcard_black_three_freezes=False,
    discard_black_three_freezes=False,
    wild_ratio="at_most_naturals",
    hidden_canasta_bonus=100,
)

_NORWEGIAN: dict[str, Any] = dict(
    upcard_black_three_freezes=False,
    max_wilds=None,
    wild_ratio="fewer_than_naturals",
    discard_black_three_freezes=False,
    red_three_discard_locks_round=True,
    discarded_wilds="beside_pile",
    red_threes_optional=True,
    pile_red_threes="to_hand",
    opening_from_pile="pile_meld_alone",
    red_three_all_bonus=None,
    red_three_unopened=-200,
    stock_out="end",
    last_red_three_ends=False,
)


@dataclass(frozen=True)
class Preset:
    """A named rule system: its seed, base values and the values each player count changes."""

    name: str
    seed: str
    description: str
    base: dict[str, Any]
    by_players: dict[int, dict[str, Any]]
    default_players: int

    def options(self, players: int | None = None) -> RuleOptions:
        n = self.default_players if players is None else players
        if n not in self.by_players:
            counts = ", ".join(str(k) for k in sorted(self.by_players))
            raise RulesError(f"preset {self.name} is played by {counts} players, not {n}")
        return _build({**self.base, **self.by_players[n], "preset": self.name, "players": n})


_PARTNERS = dict(team_size=2, hand_size=11, draw_count=1, canastas_to_go_out=1)

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("finnish", "000", "Suomen Canastaliitto, four players in partnerships", _FINNISH,
               {4: dict(_PARTNERS)}, 4),
        Preset("finnish-2p", "000", "Suomen Canastaliitto, two players (Kaksinpeli)", _FINNISH,
               {2: dict(team_size=1, hand_size=15, draw_count=2, canastas_to_go_out=2)}, 2),
        Preset("finnish-3p", "000", "Suomen Canastaliitto, three players each alone (Kolminpeli)", _FINNISH,
               {3: dict(team_size=1, hand_size=13, draw_count=2, canastas_to_go_out=2)}, 3),
        Preset("classic", "001", "Classic canasta, four players in partnerships", _CLASSIC,
               {4: dict(_PARTNERS)}, 4),
        Preset("bicycle", "002", "Bicycle four-player canasta (black 3 freezes until taken)", _BICYCLE,
               {4: dict(_PARTNERS)}, 4),
        Preset("wiki", "003", "Translated classic text: 4 in partnerships, 2 or 3 alone, 6 as two teams of three",
               _WIKI,
               {
                   2: dict(team_size=1, hand_size=15, draw_count=2, canastas_to_go_out=2),
                   3: dict(team_size=1, hand_size=13, draw_count=2, canastas_to_go_out=1),
                   4: dict(_PARTNERS),
                   6: dict(team_size=3, hand_size=13, draw_count=1, canastas_to_go_out=2, decks=3),
               }, 4),
        Preset("norwegian", "004", "Norwegian canasta, 2-6 players; four play as partners", _NORWEGIAN,
               {
                   2: dict(team_size=1, hand_size=13, canastas_to_go_out=1),
                   3: dict(team_size=1, hand_size=13, canastas_to_go_out=1),
                   4: dict(team_size=2, hand_size=11, canastas_to_go_out=2),
                   5: dict(team_size=1, hand_size=13, canastas_to_go_out=1),
                   6: dict(team_size=1, hand_size=13, canastas_to_go_out=1),
               }, 4),
    )
}

def resolve(preset: str, players: int | None = None, overrides: dict[str, Any] | None = None) -> RuleOptions:
    """A preset for a player count, plus overrides (house rules), validated.

    ``players`` may also be given as an override. Overrides are applied on top of the
    preset's values for that player count; an unknown option or a value that cannot be
    played raises :class:`RulesError` naming the option.
    """
    if preset not in PRESETS:
        raise RulesError(f"unknown preset {quote(preset)}; presets: {', '.join(PRESETS)}")
    overrides = dict(overrides or {})
    if "preset" in overrides:
        raise RulesError("preset cannot be overridden; choose another preset")
    if "players" in overrides:
        value = _coerce("players", overrides.pop("players"))
        if players is not None and value != players:
            raise RulesError("players given twice with different values")
        players = value
    base = PRESETS[preset].options(players)
    _check_known(overrides)
    values = {k: _coerce(k, v) for k, v in overrides.items()}
    if preset == "norwegian" and "team_size" in values and "canastas_to_go_out" not in values:
        # R16 (seed 004): partners need two canastas, players alone one.
        values["canastas_to_go_out"] = 2 if values["team_size"] > 1 else 1
    if preset == "norwegian" and "team_size" in values and "hand_size" not in values:
        # seed 004: partners are dealt 11 cards, players alone 13.
        values["hand_size"] = 11 if values["team_size"] > 1 else 13
    options = base.with_values(values)
    validate(options)
    return options


def preset_summary() -> list[dict[str, Any]]:
    """What `canasta rules` and `GET /rules` list."""
    return [
        {
            "name": p.name,
            "seed": p.seed,
            "description": p.description,
            "players": sorted(p.by_players),
            "default_players": p.default_players,
        }
        for p in PRESETS.values()
    ]
