"""``canasta bench bots strength`` prints every pairing asked for in one run: A's win rate with
its Wilson interval, the goal, and each bot's thinking time per decision."""

from __future__ import annotations

import re

import pytest

import bots
from bench import bots as bench
from bots.greedy import Greedy


def test_strength_prints_each_pairing_with_an_interval_and_the_thinking_times(
        capsys: pytest.CaptureFixture[str]) -> None:
    pairings = "standard-greedy-finnish-2p,expert@15-standard-finnish-2p"
    bench.main(["strength", "--games", "4", "--expert-games", "2", "--jobs", "1", "--target", "200",
                "--pairings", pairings])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if " vs " in line]
    assert [r.split()[0] + " " + r.split()[2] for r in rows] == ["standard greedy", "expert@15 standard"]
    games = [int(r.split()[4]) for r in rows]
    assert games == [4, 2]
    for r in rows:
        lo, hi = (float(x) for x in re.search(r"(\d+\.\d)%-(\d+\.\d)%", r).groups())
        rate = float(re.search(r" (\d+\.\d)% ", r).group(1))
        assert lo <= rate <= hi
        assert ("met" in r) or ("MISSED" in r)
    assert re.search(r"^standard: p99 [\d.]+ ms per decision over \d+ decisions \(goal <= 5 ms\)", out, re.M)
    assert re.search(r"^expert@15: p99 [\d.]+ ms per decision", out, re.M)


def test_a_bot_spec_names_a_level_and_its_budget() -> None:
    assert bench.bot_spec("expert@15", 75.0) == ("expert", 15.0)
    assert bench.bot_spec("standard", 75.0) == ("standard", 75.0)
    assert bench.bot_spec("expert-2026-11@75", 15.0) == ("expert-2026-11", 75.0)


def test_the_baseline_expert_is_a_bot_for_benchmarks_not_a_level() -> None:
    old = bots.get("expert-2026-11")
    assert old.max_candidates == 6 and type(old.greedy) is Greedy  # type: ignore[attr-defined]
    assert "expert-2026-11" not in bots.NAMES and "expert-2026-11" not in bots.LEVELS


def test_a_pairing_splits_where_both_bots_and_the_preset_are_named() -> None:
    assert bench.parse_pairing("expert@15-expert-2026-11@75-finnish-2p") == (
        "expert@15", "expert-2026-11@75", "finnish-2p", 0.50)
    assert bench.parse_pairing("standard-greedy-finnish") == ("standard", "greedy", "finnish", 0.75)
    assert bench.parse_pairing("expert@15-greedy-finnish") == ("expert@15", "greedy", "finnish", None)
    assert bench.parse_pairing("greedy-random-norwegian") == ("greedy", "random", "norwegian", None)
    assert bench.parse_pairing("standard-judged-standard-finnish") == ("standard-judged", "standard", "finnish", None)


@pytest.mark.parametrize("text", ["expert@15-greedy-finish", "standard-greddy-finnish", "standard@15-greedy-finnish",
                                  "expert@x-greedy-finnish", "standard-finnish", "finnish",
                                  "standard-judged@15-standard-finnish"])
def test_an_unknown_pairing_is_an_error_not_an_empty_run(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["strength", "--games", "2", "--jobs", "1", "--target", "200",
                       "--pairings", f"standard-greedy-finnish-2p,{text}"]) == 2
    out, err = capsys.readouterr()
    assert " vs " not in out  # nothing is played before the whole list is known
    assert err.count("\n") == 1 and f"unknown pairing {text!r}" in err


def test_a_pairing_without_a_goal_is_played_and_judges_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["strength", "--games", "2", "--jobs", "1", "--target", "200",
                       "--pairings", "greedy-random-finnish-2p"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if " vs " in line)
    assert row.split()[:4] == ["greedy", "vs", "random", "finnish-2p"]
    assert "met" not in row and "MISSED" not in row
