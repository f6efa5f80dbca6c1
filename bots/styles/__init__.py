"""Opponent styles: small seeded policies that play unlike our levels and unlike each other.

Why: a bot tuned only against our own ``standard`` learns our standard's habits (issue 37:
the four-player expert beat our standard 67% and lost to an outside pile-taker). Each style
is a :class:`bots.Bot` over the engine's legal actions and a :class:`~bots.view.SeatView`,
random only through the rng it is handed (a tournament seeds it per game and seat).

Two pools, kept apart: :data:`TUNING` is what the expert may be tuned against (its rollouts
draw their opponents from it); :data:`HELD_OUT` is only ever measured (``canasta bench bots
pool``). The styles are no levels: the API offers :data:`bots.NAMES` only.

The styles built on our standard bot play it as they were written
(:class:`~bots.styles.written.WrittenStandard`): what the bot learns later is off for them, so
a match measures our change instead of playing it on both sides.
"""

from __future__ import annotations

from typing import Any

# name -> one sentence (the bench prints it); the pools below split these names
DESCRIPTIONS = {
    "pile-eager": "takes the pile whenever it may, otherwise plays like our standard",
    "meld-all": "lays every meld it can at once, takes any pile of two or more, sheds singletons",
    "noisy-standard": "our standard, but a quarter of its choices are another move of the same kind",
    "mix-tuning": "each decision played by one of the tuning styles at random",
    "rusher": "goes out the moment it can, never asks, lays every meld once out is in reach; greedy otherwise",
    "hoarder": "opens, then lays nothing but a canasta until it can go out in one turn; greedy otherwise",
    "standard-asker": "our standard, but asks to go out at every chance, always says yes, goes out whenever it can",
    "frozen-shy": "never takes a frozen pile, takes an open one of three or more; greedy otherwise",
    "concealed": "keeps its melds in hand for a concealed going out until the hand is late or heavy",
    "asker": "asks to go out at every chance, always says yes, goes out whenever it can; takes most piles, "
             "melds as it goes, its own discards (no bot of ours beneath)",
    "careless": "discards its highest card with no thought of the next seat; greedy otherwise",
    "mix-held": "each decision played by one of the held-out styles at random",
}
TUNING = ("pile-eager", "meld-all", "noisy-standard", "mix-tuning", "rusher", "hoarder", "standard-asker")
HELD_OUT = ("frozen-shy", "concealed", "asker", "careless", "mix-held")
STYLES = TUNING + HELD_OUT
# the pure styles each mixture draws from, uniformly per decision
MIXES = {"mix-tuning": ("pile-eager", "meld-all", "noisy-standard"),
         "mix-held": ("frozen-shy", "concealed", "asker", "careless")}


def registry() -> dict[str, Any]:
    """Every style by name (``bots.get`` serves them beside the levels and baselines)."""
    from bots.styles.asker import Asker
    from bots.styles.careless import Careless
    from bots.styles.concealed import Concealed
    from bots.styles.frozen_shy import FrozenShy
    from bots.styles.hoarder import Hoarder
    from bots.styles.meld_all import MeldAll
    from bots.styles.mixture import Mixture
    from bots.styles.noisy import NoisyStandard
    from bots.styles.pile_eager import PileEager
    from bots.styles.rusher import Rusher
    from bots.styles.standard_asker import StandardAsker

    pure: dict[str, Any] = {"pile-eager": PileEager(), "meld-all": MeldAll(), "noisy-standard": NoisyStandard(),
                            "frozen-shy": FrozenShy(), "concealed": Concealed(), "asker": Asker(),
                            "careless": Careless(), "rusher": Rusher(), "hoarder": Hoarder(),
                            "standard-asker": StandardAsker()}
    mixes = {name: Mixture(name, [pure[p] for p in parts]) for name, parts in MIXES.items()}
    return {**pure, **mixes}


__all__ = ["DESCRIPTIONS", "HELD_OUT", "MIXES", "STYLES", "TUNING", "registry"]
