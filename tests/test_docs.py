"""The documents that are contracts stay true to the code."""

from __future__ import annotations

import re
from pathlib import Path

import engine
from engine.rules import OPTION_NAMES, PRESETS

ROOT = Path(__file__).resolve().parent.parent


def test_every_reason_code_is_documented():
    source = "\n".join(p.read_text() for p in (ROOT / "engine").glob("*.py"))
    raised = set(re.findall(r'IllegalMove\(\s*"([a-z_]+)"', source))
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", (ROOT / "docs/reason-codes.md").read_text(), re.M))
    assert raised, "no codes found: the pattern is wrong"
    assert raised - documented == set()


def test_rules_doc_names_every_preset_and_rule_point():
    text = (ROOT / "docs/rules.md").read_text()
    for name in PRESETS:
        assert f"`{name}`" in text
    for n in range(1, 24):
        assert re.search(rf"\bR{n}\b", text), f"R{n} missing"


def test_every_option_is_in_a_preset_dump():
    for name in PRESETS:
        assert set(engine.resolve(name).to_dict()) == set(OPTION_NAMES)


def test_readme_names_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert "make run" in text and "make test" in text
    assert "make test" in (ROOT / ".ci/run").read_text()
