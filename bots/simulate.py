"""Playing whole games in-process: simulations, tournaments and benchmarks."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.deal import deal, new_game, shuffle
from engine.legal import legal_actions
from engine.moves import apply
from engine.rules import RuleOptions
from engine.state import State
from replay.log import deal_line, game_end_line, hand_end_line, header_line, move_line

Policy = Callable[[State, int, list[dict[str, Any]]], dict[str, Any]]

MAX_MOVES = 2_000_000  # a game of random play may wander this long without reaching the target


class GameTooLong(RuntimeError):
    """The game reached no end within the move limit: not a rules error (random play need
    not ever reach the target score), so callers may count it apart from engine errors."""


@dataclass
class GameRecord:
    """Everything a game log holds, in order: deals, moves, hand ends, the game end."""

    rules: RuleOptions
    lines: list[dict[str, Any]] = field(default_factory=list)
    final: State | None = None

    @property
    def moves(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if "move" in line]

    @property
    def hands(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if "hand_end" in line]

    def moves_per_hand(self) -> list[int]:
        """How many moves each hand had, in order (the last, unfinished hand's too, if any moves)."""
        counts = [0]
        for line in self.lines:
            if "move" in line:
                counts[-1] += 1
            elif "hand_end" in line:
                counts.append(0)
        return counts[:-1] if counts[-1] == 0 and len(counts) > 1 else counts

    def log_lines(self, game_id: str = "", seats: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        return [header_line(self.rules, game_id=game_id, seats=seats), *self.lines]


def play_game(
    rules: RuleOptions, rng: random.Random, policy: Policy | dict[int, Policy], max_moves: int = MAX_MOVES,
    on_move: Callable[[State], None] | None = None,
) -> GameRecord:
    """Play one game to its end; ``policy`` is one policy for all seats or one per seat.
    ``on_move`` sees the state after every move (a benchmark that counts what happens within
    a hand, such as its first canasta, watches the game instead of playing it again)."""
    record = GameRecord(rules)
    state = new_game(rules)
    policies = policy if isinstance(policy, dict) else {seat: policy for seat in range(rules.players)}
    while state.phase != "over":
        if state.phase == "deal":
            deck, salt, digest = shuffle(rules, rng)
            state = deal(state, deck, salt)
            record.lines.append(deal_line(state.hand_no, state.dealer, deck, salt, digest))
            continue
        seat = state.to_act
        actions = legal_actions(state, seat)
        if not actions:
            raise RuntimeError(f"no legal action for seat {seat} in phase {state.phase} (move {state.moves + 1})")
        action = policies[seat](state, seat, actions)
        hand_no = state.hand_no
        state = apply(state, seat, action)
        record.lines.append(move_line(state.moves, hand_no, seat, action))
        if on_move is not None:
            on_move(state)
        if state.phase in ("deal", "over") and state.hand_result is not None:
            record.lines.append(hand_end_line(state.hand_result))
        if state.phase == "over" and state.game_result is not None:
            record.lines.append(game_end_line(state.game_result))
        if state.moves > max_moves:
            raise GameTooLong(f"game did not end within {max_moves} moves")
    record.final = state
    return record
