"""engine.text: what a message quotes of a bad value is short."""

from __future__ import annotations

import pytest

import engine
from engine.text import MORE, QUOTE_CHARS, clip, names_text, quote


def test_a_short_value_is_quoted_whole() -> None:
    assert quote("abc") == "'abc'" and quote(12) == "12" and clip("went_out") == "went_out"


def test_a_long_value_is_cut_and_its_length_said() -> None:
    text = quote("x" * 900_000)
    assert text.startswith("'" + "x" * QUOTE_CHARS + "'" + MORE) and text.endswith("(900000 characters)")
    assert len(quote(list(range(100_000)))) < QUOTE_CHARS + 30
    assert len(clip("y" * 10_000)) < QUOTE_CHARS + 30


def test_names_are_listed_a_few_and_short() -> None:
    assert names_text(["b", "a"]) == "a, b"
    listed = names_text([f"{n}{'z' * 1000}" for n in range(50)])
    assert listed.endswith("and 45 more") and len(listed) < 6 * QUOTE_CHARS


@pytest.mark.parametrize("overrides", [{"x" * 900_000: 1}, {"target_score": "9" * 900_000},
                                       {"ask_go_out": "y" * 900_000}, {"red_threes_optional": "z" * 900_000}])
def test_a_rules_error_quotes_little_of_the_value(overrides: dict[str, object]) -> None:
    with pytest.raises(engine.RulesError) as e:
        engine.resolve("classic", None, overrides)
    assert len(str(e.value)) < 400


def test_an_unknown_preset_and_card_are_quoted_short() -> None:
    with pytest.raises(engine.RulesError) as e:
        engine.resolve("p" * 900_000)
    assert len(str(e.value)) < 400
    with pytest.raises(engine.CardError) as c:
        engine.parse_card("Q" * 900_000)
    assert len(str(c.value)) < 300
