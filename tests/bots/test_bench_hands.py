"""``canasta bench bots hands``: a match's hands counted from each side; a bot against itself
on the duplicate decks comes out even in every figure."""

from __future__ import annotations

import re

import pytest

from bench import hands
from cli import bench
from engine.rules import resolve

SHORT = 1500  # a target of a few hands


def test_a_bot_against_itself_is_even_in_every_figure() -> None:
    rules = resolve("finnish", overrides={"target_score": SHORT})
    tally = hands.Tally()
    for game in range(2):  # one deck seating, played from each side
        hands.play(rules, "standard", "standard", 5, game, tally)
    assert tally.games == 2 and tally.a_points == 1.0 and tally.hands >= 2
    assert tally.points["A"] == tally.points["B"] and tally.canastas["A"] == tally.canastas["B"]
    assert tally.ended["A"] == tally.ended["B"]
    assert sum(tally.ended.values()) == sum(tally.first.values()) == tally.hands


def test_the_bench_prints_the_rate_and_each_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["bots", "hands", "--bots", "standard,asker", "--games", "2", "--target", str(SHORT)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"A = standard, B = asker: 2 games, A won \d+\.\d%", out)
    for source in (*hands.SOURCES, "natural canastas", "points in hand when the other side went out"):
        assert re.search(rf"^  {source} +-?\d", out, re.M), source


@pytest.mark.parametrize("argv", [["--bots", "standard"], ["--bots", "standard,oracle"],
                                  ["--bots", "standard,asker", "--preset", "finish"],
                                  ["--bots", "standard,asker", "--games", "0"]])
def test_bad_input_is_an_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert hands.main(argv) == 2
    assert "canasta bench bots hands:" in capsys.readouterr().err
