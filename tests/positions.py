"""Positions reached by bot play, for the tests of what the clients draw of them."""

from __future__ import annotations

import random
from typing import Any

import engine
from bots import policy
from replay.log import deal_line, header_line, move_line

# Greedy play of a norwegian hand to a wild beside a pile of three (3C 8H 6C, 2H beside) with
# a seat other than the one to act holding cards it took with the pile.
WILD_BESIDE = ("norwegian", 42, 161)


def played(preset: str, seed: int, moves: int, bot: str = "greedy") -> tuple[engine.State, list[dict[str, Any]]]:
    """The state after ``moves`` moves of a hand dealt from ``seed``, ``bot`` playing every
    seat, and the game log's lines up to it."""
    rules = engine.resolve(preset)
    deck, salt, digest = engine.shuffle(rules, random.Random(seed))
    state = engine.deal(engine.new_game(rules), deck, salt)
    lines = [header_line(rules, game_id="g1"), deal_line(state.hand_no, state.dealer, deck, salt, digest)]
    play = policy(bot, random.Random(seed))
    for _ in range(moves):
        seat = state.to_act
        action = play(state, seat, engine.legal_actions(state, seat))
        state = engine.apply(state, seat, action)
        lines.append(move_line(state.moves, state.hand_no, seat, action))
    return state, lines
