"""The standard bot as the styles built on it were written (2026-12-06): what it learns later
is switched off for them, so that a style stays put while our levels change and a match
against it measures the change, instead of playing it on both sides (issue 37: a style that
inherits every gain of our standard bot is never beaten by more than it was)."""

from __future__ import annotations

from bots.standard import Standard


class WrittenStandard(Standard):
    """:class:`~bots.standard.Standard` with each later addition off: one line here for every
    new tunable that changes its play."""

    play_for_the_game = False  # 2026-12-07: going out that ends the game decides by the game
