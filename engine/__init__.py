"""The Canasta rules engine: pure, immutable, no I/O.

A :class:`State` never changes. :func:`apply` returns a new state or raises
:class:`IllegalMove` with a stable reason code. Rule systems are data
(:class:`RuleOptions`); presets only choose values.

The life of a game::

    rules = resolve("finnish")
    state = new_game(rules)                      # phase "deal": waiting for a deck
    deck, salt, commitment = shuffle(rules)      # secure; or a deck from a log
    state = deal(state, deck, salt)              # phase "draw", state.to_act == first seat
    state = apply(state, seat, {"type": "draw"})
    ...                                          # after a hand: phase "deal" again, or "over"
"""

from engine.cards import CardError, code, parse_card
from engine.deal import commitment, deal, new_game, shuffle
from engine.errors import IllegalMove
from engine.legal import legal_actions, legal_summary
from engine.moves import apply
from engine.rules import PRESETS, RuleOptions, RulesError, preset_summary, resolve
from engine.state import State
from engine.views import describe_move, seat_view, spectator_view

__all__ = [
    "CardError",
    "IllegalMove",
    "PRESETS",
    "RuleOptions",
    "RulesError",
    "State",
    "apply",
    "code",
    "commitment",
    "deal",
    "describe_move",
    "legal_actions",
    "legal_summary",
    "new_game",
    "parse_card",
    "preset_summary",
    "resolve",
    "seat_view",
    "shuffle",
    "spectator_view",
]
