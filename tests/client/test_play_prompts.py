"""``canasta play``'s choices and table, read from real seat views (the engine's), without a
terminal: only what the legal summary allows is offered, typed cards are read and checked
against the hand, and the table shows what the view holds."""

from __future__ import annotations

import random
from typing import Any

import pytest
from rich.console import Console

import engine
from bots.random_bot import random_policy
from bots.simulate import play_game
from cli.play_prompts import BadCards, choices, decide, parse_card, parse_cards, pick
from cli.play_table import (
    Cards,
    describe_move,
    end_text,
    group_hand,
    result_block,
    score_table,
    table,
)
from tests.positions import WILD_BESIDE, played

CARDS = Cards()


def game_at(seed: int, moves: int = 0, preset: str = "finnish") -> tuple[dict[str, Any], engine.State]:
    """A game dealt from ``seed`` after ``moves`` legal moves, as the seat to act reads it."""
    rules = engine.resolve(preset)
    rng = random.Random(seed)
    deck, salt, _ = engine.shuffle(rules, rng)
    state = engine.deal(engine.new_game(rules), deck, salt)
    for _ in range(moves):
        state = engine.apply(state, state.to_act, engine.legal_actions(state, state.to_act)[0])
    seat = state.to_act
    seats = [{"seat": n, "team": rules.team_of(n), "name": "ann" if n == seat else None,
              "bot": None if n == seat else "greedy", "open": False} for n in range(rules.players)]
    view = {"id": "g" * 12, "status": "playing", "version": 2 + moves, "preset": preset, "players": rules.players,
            "seat": seat, "seats": seats, "view": engine.seat_view(state, seat), "rules": rules.to_dict()}
    return view, state


def keys(game: dict[str, Any]) -> list[str]:
    return [c.key for c in choices(game, CARDS)]


def test_only_the_legal_moves_are_offered() -> None:
    game, _ = game_at(1)
    legal = game["view"]["legal"]
    assert game["view"]["phase"] == "draw"
    offered = keys(game)
    assert ("d" in offered) == legal["may_draw"] and ("p" in offered) == legal["may_take_pile"]
    assert not {"x", "m", "a", "o", "y", "n"} & set(offered)
    drawn, _ = game_at(1, moves=1)
    assert drawn["view"]["phase"] == "play"
    offered = keys(drawn)
    assert "d" not in offered and "x" in offered
    assert ("m" in offered) == bool(drawn["view"]["legal"]["melds"])
    discard = next(c for c in choices(drawn, CARDS) if c.key == "x")
    assert sorted(o["card"] for o in discard.options) == sorted(drawn["view"]["legal"]["discards"])
    watching = {**drawn, "view": {**drawn["view"], "legal": {**drawn["view"]["legal"], "to_act": False}}}
    assert choices(watching, CARDS) == []


def test_typed_moves_are_read_and_checked_against_the_hand() -> None:
    game, _ = game_at(3, moves=1)
    menu = choices(game, CARDS)
    hand = game["view"]["hand"]
    assert decide("d", game, menu, CARDS).message.startswith("'d' is not one of your choices now")
    assert decide("x", game, menu, CARDS).pick.key == "x"
    card = game["view"]["legal"]["discards"][0]
    typed = card.replace("T", "10").lower()
    assert decide(f"x {typed}", game, menu, CARDS).action == {"type": "discard", "card": card}
    missing = next(f"{r}{s}" for r in "3456789TJQKA" for s in "SHDC" if f"{r}{s}" not in hand)
    assert decide(f"x {missing}", game, menu, CARDS).message == f"You hold no {CARDS.short(missing)}."
    assert decide("x zz", game, menu, CARDS).message.startswith("'zz' is not a card")
    discard = next(c for c in menu if c.key == "x")
    assert pick("1", discard, game, CARDS).action == discard.options[0]
    assert pick("99", discard, game, CARDS).message == f"Choose 1 to {len(discard.options)}."
    assert pick("", discard, game, CARDS).message == "Back to your choices."
    for other_digits in ("²", "１", "١"):  # digits of other scripts: not a number here, no crash
        assert pick(other_digits, discard, game, CARDS).action is None
    assert decide("h", game, menu, CARDS).command == "hint"
    assert decide("quit", game, menu, CARDS).command == "quit"


def test_card_names() -> None:
    assert [parse_card(t) for t in ("7h", "10S", "tc", "K♦", "jk", "Joker", "a♠")] == \
        ["7H", "TS", "TC", "KD", "JK", "JK", "AS"]
    assert parse_cards("7h, 7d 7s") == ["7H", "7D", "7S"]
    with pytest.raises(BadCards):
        parse_card("1h")
    assert Cards(symbols=False).plain(["TH", "3S", "JK", "2C"]) == "3S 10H 2C Jkr"
    assert CARDS.plain(["TH", "3S", "JK", "2C"]) == "3♠ 10♥ 2♣ Jkr"
    assert group_hand(["KH", "3S", "KD", "JK", "2C", "3H"]) == [("3", ["3S", "3H"]), ("K", ["KH", "KD"]),
                                                             ("2", ["2C"]), ("JK", ["JK"])]


def test_the_table_shows_what_the_view_holds() -> None:
    game, state = game_at(5, moves=1)
    console = Console(record=True, width=100, color_system=None)
    console.print(table(game, CARDS))
    text = console.export_text()
    view = game["view"]
    assert f"Your hand ({len(view['hand'])} cards, {view['hand_points']} points): " in text
    assert f"Stock: {view['stock_size']} cards" in text and "Pile: " in text
    assert "Your side: you & greedy bot (seat" in text and "target 5000" in text
    running = view["running"][view["team"]]
    assert f"this hand: {running['on_table']} on the table (melds {running['melds']}" in text
    assert "Your turn: meld or add if you like, then discard." in text
    assert f"first meld needs {view['opening_minimums'][view['team']]}" in text
    ascii_console = Console(record=True, width=100, color_system=None)
    ascii_console.print(table(game, Cards(symbols=False)))
    assert not set("♠♥♦♣") & set(ascii_console.export_text())
    seats = [{"seat": 0, "team": 0, "name": "ann", "bot": None}, {"seat": 1, "team": 1, "name": None, "bot": "greedy"}]
    move = {"seat": 1, "action": {"type": "draw"}, "drew": 1, "move": 3}
    assert describe_move(move, seats, CARDS, me=0) == "Greedy bot (seat 1) drew a card."
    beside = {"seat": 1, "action": {"type": "discard", "card": "2C"}, "move": 4, "beside_pile": True}
    assert describe_move(beside, seats, CARDS, me=0) == "Greedy bot (seat 1) discarded 2♣ beside the pile."
    mine = {"seat": 0, "action": {"type": "discard", "card": "7H"}, "move": 4,
            "hand_end": {"hand_end": 1, "reason": "went_out", "by": 0, "scores": []}}
    assert describe_move(mine, seats, CARDS, me=0) == "You discarded 7♥. Hand 1 is over: you went out."
    assert describe_move(mine, seats, CARDS, me=1) == "Ann (seat 0) discarded 7♥. Hand 1 is over: ann (seat 0) went out."
    result = {"hand_end": 1, "reason": "went_out", "by": 0,
              "scores": [{"team": t, "melds": 10 * t, "total": 100 + t} for t in range(2)]}
    console = Console(record=True, width=100, color_system=None)
    console.print(score_table(result, view, game["seats"], me=game["seat"]))
    text = console.export_text()
    assert "Hand 1: you went out" in text and "101" in text


def test_the_end_of_the_game_says_why_it_ended() -> None:
    """A limit that ends the game is named in a card player's words (docs/rules.md, "Limits")."""
    rules = engine.resolve("norwegian", 6, {"max_hands": 2})
    rng = random.Random(1)
    record = play_game(rules, rng, random_policy(rng))
    state = record.final
    assert state is not None and state.game_result["reason"] == "hand_limit"
    seats = [{"seat": n, "team": rules.team_of(n), "name": "ann" if n == 0 else None,
              "bot": None if n == 0 else "random", "open": False} for n in range(rules.players)]
    game = {"id": "g" * 12, "status": "over", "preset": "norwegian", "players": 6, "seat": 0, "seats": seats,
            "view": engine.seat_view(state, 0), "rules": rules.to_dict()}
    console = Console(record=True, width=100, color_system=None)
    console.print(result_block(game, me=0))
    text = console.export_text()
    assert "Game over: " in text and "The game ended at the hand limit (2 hands): no side reached the target." in text
    assert end_text({"reason": "move_limit"}, {"max_moves_per_hand": 900}) == (
        "The game ended at the move limit: a hand reached 900 moves and was stopped there.")
    assert end_text({"reason": "target"}, {"target_score": 5000}) == "A side reached the target of 5000 points."
    assert end_text({"winner": 0}, {}) == ""  # a game over before limits: its result has no reason
    cut = {"seat": 1, "action": {"type": "draw"}, "drew": 1, "move": 9,
           "hand_end": {"hand_end": 1, "reason": "move_limit", "by": 2, "scores": []}}
    assert describe_move(cut, seats, CARDS, me=0).endswith(
        "Random bot (seat 1) drew a card. Hand 1 is over: it was stopped at the move limit (next to play: random bot (seat 2)).")


def test_the_table_shows_what_every_player_could_remember() -> None:
    """The pile's cards in order, the wilds beside it (norwegian, R13) and the cards the other
    seats took with the pile: public, and what the bots are told (issue 15)."""
    state, _ = played(*WILD_BESIDE)
    rules = state.rules
    seat = state.to_act
    view = engine.seat_view(state, seat)
    pile = view["pile"]
    assert pile["beside"] == ["2H"] and pile["cards"] == ["3C", "8H", "6C"]
    seats = [{"seat": n, "team": rules.team_of(n), "name": "ann" if n == seat else None,
              "bot": None if n == seat else "greedy", "open": False} for n in range(rules.players)]
    game = {"id": "g" * 12, "status": "playing", "version": 9, "preset": "norwegian", "players": 4,
            "seat": seat, "seats": seats, "view": view}
    console = Console(record=True, width=200, color_system=None)
    console.print(table(game, CARDS))
    text = console.export_text()
    assert "Pile: 6♣ · 3 cards + beside it 2♥ · frozen by 2♥ beside the pile" in text
    assert "the pile, bottom first: 3♣ 8♥ 6♣" in text
    held = [f"greedy bot (seat {n}) {CARDS.plain(codes)}" for n, codes in enumerate(view["known_from_pile"])
            if codes and n != seat]
    assert held and "taken with the pile and still held: " + " · ".join(held) in text
    mine = view["known_from_pile"][seat]
    assert not mine or CARDS.plain(mine) not in text.split("still held:")[1].split("\n")[0]


@pytest.mark.parametrize("argv, says", [
    (["--bots", "greedy,smart"], "'smart' is not one of random, greedy, standard, expert, open"),
    (["--players", "4", "--bots", "greedy"], "--bots names 1 seat; 4 players have 3 besides you"),
    (["--set", "target_score"], "--set needs OPTION=VALUE"),
    (["--game=abc"], "--game and --token go together"),
    (["--game=abc", "--token=xyz"], "--game needs --api"),
])
def test_the_command_line_says_what_is_wrong(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.play import main

    assert main(argv) == 2
    assert says in " ".join(capsys.readouterr().out.split())  # the console wraps long lines
