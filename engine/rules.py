"""Rule options: one frozen object per game, named presets, house-rule overrides.

Every rule point R1-R23 of docs/rules.md where the rule texts differ is an option here. The
engine reads options, never preset names: a preset is only a bundle of values, chosen per
player count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any


class RulesError(ValueError):
    """A preset name, an option or a combination of options that cannot be played."""


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """The resolved rule system of one game. Field comments name the matrix row."""

    preset: str = "classic"
    players: int = 4
    team_size: int = 2  # 1: each alone; 2: partners; 3: two teams of three (six players)
    decks: int = 2  # 2: 108 cards; 3: 162 cards
    hand_size: int = 11
    draw_count: int = 1
    target_score: int = 5000
    # R1: the upcard sequence. Jokers, 2s and 3s are always turned over; these say which freeze.
    upcard_wild_freezes: bool = True
    upcard_red_three_freezes: bool = True
    upcard_black_three_freezes: bool = True
    # R2: dealt red threes are replaced "at_once" after the deal, or at each seat's "first_turn".
    dealt_red_threes: str = "at_once"
    # R3 is the same everywhere: drawn red threes are laid and replaced.
    # R4: red threes in a taken pile are "laid" for the side (not replaced) or go "to_hand"
    # with the rest of the pile (then laid, kept or discarded as R14 allows).
    pile_red_threes: str = "laid"
    # R5: meld composition.
    min_naturals: int = 2
    max_wilds: int | None = 3  # None: no cap
    wild_ratio: str = "any"  # "any" | "at_most_naturals" | "fewer_than_naturals"
    # R6
    one_meld_per_rank: bool = True
    # R7
    canasta_size: int = 7
    canasta_min_naturals: int = 4
    natural_canasta_bonus: int = 500
    mixed_canasta_bonus: int = 300
    # R8: (threshold, minimum) pairs, highest threshold first; below all: the negative minimum.
    opening_minimums: tuple[tuple[int, int], ...] = ((3000, 120), (1500, 90), (0, 50))
    negative_opening_minimum: int = 15
    # R9: before opening, what a pile take counts toward the minimum: "all_melds" (the meld
    # made with the top card and the action's other melds) or "pile_meld_alone".
    opening_from_pile: str = "all_melds"
    # R10/R12 are the same everywhere (see docs/rules.md).
    # R11: what freezes the discard pile.
    discard_wild_freezes: bool = True
    discard_black_three_freezes: bool = True  # False: it only blocks the next player (R13)
    red_three_discard_locks_round: bool = False  # a discarded red 3 locks the pile for a round
    # R13: a discarded joker or 2 goes "on_pile", or "beside_pile": the card under it stays the
    # top card, and the wild (freezing the pile) goes with the pile to whoever takes it.
    discarded_wilds: str = "on_pile"
    # R14
    red_threes_optional: bool = False  # True: a red 3 may be kept in hand and discarded
    # R15
    black_three_meld_on_going_out: bool = True
    # R16
    canastas_to_go_out: int = 1
    # R17: when "may I go out?" may be asked: "after_stock_draw_before_melds",
    # "after_stock_draw_before_discard" or "before_melds_or_pile_take" (before or after the
    # draw); the penalty when asking while unable
    ask_go_out: str = "after_stock_draw_before_melds"
    ask_unable_penalty: int = 0  # 0: asking while unable is an illegal move
    # R18
    going_out_bonus: int = 100
    concealed_going_out_bonus: int = 200
    hidden_canasta_bonus: int = 0
    # R19: "player" (the player melded nothing before) or "side" (neither partner did);
    # the opening minimum when going out concealed: "applies", "waived" (after a stock draw or
    # a pile take) or "waived_after_stock_draw"
    concealed_scope: str = "player"
    concealed_minimum: str = "applies"
    # R20
    red_three_bonus: int = 100
    red_three_all_bonus: int | None = 800  # all four to one side; None: no extra
    red_three_unopened: int | None = None  # per card without a meld; None: the bonus negated
    # R21: "play_on_forced" | "play_on_optional" | "end"
    stock_out: str = "play_on_forced"
    last_red_three_ends: bool = True
    # R22
    red_three_in_hand_penalty: int = 0
    # R23
    lone_last_card_completes_draw: bool = True

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

    def opening_minimum(self, total: int) -> int:
        """R8: the side's total at the start of the hand decides its opening minimum."""
        if total < 0:
            return self.negative_opening_minimum
        for threshold, minimum in self.opening_minimums:
            if total >= threshold:
                return minimum
        return self.opening_minimums[-1][1]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["opening_minimums"] = [list(p) for p in self.opening_minimums]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleOptions:
        """Exact inverse of :meth:`to_dict`; validates every value."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(f"unknown rule option(s): {', '.join(unknown)}")
        values = {k: _coerce(k, v) for k, v in data.items()}
        options = cls(**values)
        validate(options)
        return options


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(RuleOptions))
_FIELD_TYPES = {f.name: f.type for f in fields(RuleOptions)}
_CHOICES = {
    "dealt_red_threes": ("at_once", "first_turn"),
    "wild_ratio": ("any", "at_most_naturals", "fewer_than_naturals"),
    "pile_red_threes": ("laid", "to_hand"),
    "opening_from_pile": ("all_melds", "pile_meld_alone"),
    "discarded_wilds": ("on_pile", "beside_pile"),
    "ask_go_out": ("after_stock_draw_before_melds", "after_stock_draw_before_discard", "before_melds_or_pile_take"),
    "concealed_scope": ("player", "side"),
    "concealed_minimum": ("applies", "waived", "waived_after_stock_draw"),
    "stock_out": ("play_on_forced", "play_on_optional", "end"),
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
    kind = _FIELD_TYPES[name]
    if name == "opening_minimums":
        try:
            pairs = tuple((int(a), int(b)) for a, b in value)
        except (TypeError, ValueError):
            raise RulesError("opening_minimums must be a list of [threshold, minimum] pairs") from None
        return tuple(sorted(pairs, reverse=True))
    if isinstance(value, str) and kind != "str":
        text = value.strip().lower()
        if text in ("none", "null") and "None" in kind:
            return None
        if kind == "bool":
            if text in ("true", "yes", "1", "on"):
                return True
            if text in ("false", "no", "0", "off"):
                return False
            raise RulesError(f"{name} must be true or false, not {value!r}")
        try:
            return int(text)
        except ValueError:
            raise RulesError(f"{name} must be a whole number, not {value!r}") from None
    if kind == "bool":
        if not isinstance(value, bool):
            raise RulesError(f"{name} must be true or false")
        return value
    if kind == "str":
        if not isinstance(value, str):
            raise RulesError(f"{name} must be a string")
        return _FORMER_VALUES.get(name, {}).get(value, value)
    if value is None:
        if "None" not in kind:
            raise RulesError(f"{name} may not be null")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"{name} must be a whole number")
    return value


def validate(o: RuleOptions) -> None:
    """Reject contradictory or unsupported combinations, naming the options involved."""
    for name, choices in _CHOICES.items():
        if getattr(o, name) not in choices:
            raise RulesError(f"{name} must be one of {', '.join(choices)}, not {getattr(o, name)!r}")
    if o.preset not in PRESETS:
        raise RulesError(f"unknown preset {o.preset!r}")
    if not 2 <= o.players <= 6:
        raise RulesError("players must be between 2 and 6")
    if o.team_size not in (1, 2, 3) or o.players % o.team_size or o.players // o.team_size < 2:
        raise RulesError(f"team_size {o.team_size} does not divide players {o.players} into two or more teams")
    if o.decks not in (2, 3):
        raise RulesError("decks must be 2 or 3")
    if o.draw_count not in (1, 2):
        raise RulesError("draw_count must be 1 or 2")
    pack = 54 * o.decks
    if o.hand_size < 1 or o.players * o.hand_size > pack - 20:
        raise RulesError(
            f"hand_size {o.hand_size} for players {o.players} leaves fewer than 20 of the {pack} cards (decks {o.decks})"
        )
    if o.min_naturals < 2:
        raise RulesError("min_naturals below 2 is not supported (a meld needs two natural cards, R5)")
    if o.max_wilds is not None and o.max_wilds < 0:
        raise RulesError("max_wilds must be null or at least 0")
    if o.max_wilds is None and o.wild_ratio == "any":
        raise RulesError("max_wilds null (no cap) needs wild_ratio at_most_naturals or fewer_than_naturals")
    if not o.one_meld_per_rank:
        raise RulesError("one_meld_per_rank false is not supported: every seed allows one meld per rank (R6)")
    if o.canasta_size < 3 or o.canasta_min_naturals < 2 or o.canasta_min_naturals > o.canasta_size:
        raise RulesError("canasta_size and canasta_min_naturals are inconsistent")
    if not o.opening_minimums:
        raise RulesError("opening_minimums needs at least one [threshold, minimum] pair (R8)")
    if o.canastas_to_go_out < 1:
        raise RulesError("canastas_to_go_out must be at least 1")
    if o.red_three_discard_locks_round and not o.red_threes_optional:
        raise RulesError(
            "red_three_discard_locks_round needs red_threes_optional: a red 3 can only be discarded when laying it is optional"
        )
    if o.pile_red_threes == "to_hand" and not o.red_threes_optional:
        raise RulesError(
            "pile_red_threes to_hand needs red_threes_optional: a red 3 in hand must be one the player may lay or discard"
        )
    if o.discarded_wilds == "beside_pile" and not o.discard_wild_freezes:
        raise RulesError("discarded_wilds beside_pile needs discard_wild_freezes: the wild beside the pile marks its freeze")
    if o.ask_unable_penalty < 0:
        raise RulesError("ask_unable_penalty must not be negative")
    if o.last_red_three_ends and o.red_threes_optional:
        raise RulesError("last_red_three_ends needs red threes laid automatically (red_threes_optional false)")
    if not o.lone_last_card_completes_draw:
        raise RulesError("lone_last_card_completes_draw false is not supported: no seed makes a lone last card an incomplete draw (R23)")
    if o.target_score < 1:
        raise RulesError("target_score must be positive")
    if o.concealed_going_out_bonus < o.going_out_bonus:
        raise RulesError("concealed_going_out_bonus must be at least going_out_bonus")


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
        values = {**self.base, **self.by_players[n], "preset": self.name, "players": n}
        return RuleOptions(**values)


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
        raise RulesError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
    overrides = dict(overrides or {})
    if "preset" in overrides:
        raise RulesError("preset cannot be overridden; choose another preset")
    if "players" in overrides:
        value = _coerce("players", overrides.pop("players"))
        if players is not None and value != players:
            raise RulesError("players given twice with different values")
        players = value
    base = PRESETS[preset].options(players)
    unknown = sorted(set(overrides) - set(OPTION_NAMES))
    if unknown:
        raise RulesError(f"unknown rule option(s): {', '.join(unknown)}")
    values = {k: _coerce(k, v) for k, v in overrides.items()}
    if preset == "norwegian" and "team_size" in values and "canastas_to_go_out" not in values:
        # R16 (seed 004): partners need two canastas, players alone one.
        values["canastas_to_go_out"] = 2 if values["team_size"] > 1 else 1
    if preset == "norwegian" and "team_size" in values and "hand_size" not in values:
        # seed 004: partners are dealt 11 cards, players alone 13.
        values["hand_size"] = 11 if values["team_size"] > 1 else 13
    options = replace(base, **values)
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
