"""The seed sentences the project quotes are verbatim (up to line wrapping).

The five rule texts (the *seeds*, numbered 000-004) are not part of the repository; the
project carries what it needs of them as quotes, written ``"..." (00N)``: in the docstring
of every rule-point test (``test_r<N>_...``) and in every rule point of docs/rules.md.
The limits on a game's length (docs/rules.md, "Limits") are the service's, not a rule of any
seed: their tests (``test_limit_...``) quote none, and say so.
Where the seed texts are at hand, ``CANASTA_SEEDS_DIR`` names their folder (files
``00N_*.txt``) and each quote is checked against them; without it that check is skipped.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RULES_DOC = HERE.parents[1] / "docs" / "rules.md"
SEEDS_ENV = "CANASTA_SEEDS_DIR"
RULE_POINTS = range(1, 24)  # R1-R23
QUOTE = re.compile(r'"([^"]+)" \((00\d)\)')
MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!])")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _docstrings() -> Iterator[tuple[str, str, str]]:
    for path in sorted(HERE.glob("test_engine_*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield path.name, node.name, ast.get_docstring(node) or ""


def _rule_point_sections() -> dict[int, str]:
    """docs/rules.md's ``### R<n>`` sections: number -> text up to the next heading."""
    parts = re.split(r"^#{2,3} ", RULES_DOC.read_text(), flags=re.M)
    sections = {}
    for part in parts:
        m = re.match(r"R(\d+)\b", part)
        if m:
            sections[int(m.group(1))] = part
    return sections


def _quotes() -> list[tuple[str, str, str]]:
    """(where, quote, seed number) of every quote in the tests' docstrings and in docs/rules.md."""
    out = [(f"{f}::{name}", q, n) for f, name, doc in _docstrings() for q, n in QUOTE.findall(doc)]
    doc = RULES_DOC.read_text()
    out += [("docs/rules.md", MARKDOWN_ESCAPE.sub(r"\1", q), n) for q, n in QUOTE.findall(doc)]
    return out


def test_every_rule_point_test_quotes_a_seed() -> None:
    missing = [f"{f}::{name}" for f, name, doc in _docstrings() if re.match(r"test_r\d+_", name) and not QUOTE.search(doc)]
    assert not missing


LIMIT_TEST = re.compile(r"test_limit_")
NOT_A_RULE = 'not a rule of the seeds (docs/rules.md, "Limits")'


def test_every_limit_test_says_it_is_not_a_rule_of_the_seeds() -> None:
    """A limit has no seed sentence to quote: its test says so instead, and quotes none (a
    quote there would pass a house limit off as a rule of the texts)."""
    tests = [(f"{f}::{name}", doc) for f, name, doc in _docstrings() if LIMIT_TEST.match(name)]
    assert len(tests) >= 5, "the limit tests are gone, or named otherwise"
    wrong = [where for where, doc in tests if NOT_A_RULE not in _norm(doc) or QUOTE.search(doc)]
    assert not wrong


def test_every_rule_point_in_the_rules_doc_quotes_a_seed() -> None:
    sections = _rule_point_sections()
    assert set(sections) == set(RULE_POINTS)
    unquoted = [f"R{n}" for n, text in sections.items() if not QUOTE.search(text)]
    assert not unquoted


@pytest.mark.skipif(not os.environ.get(SEEDS_ENV), reason=f"{SEEDS_ENV} (the seed texts' folder) is not set")
def test_quotes_are_verbatim() -> None:
    folder = Path(os.environ[SEEDS_ENV])
    seeds = {path.name[:3]: _norm(path.read_text()) for path in folder.glob("00[0-9]_*.txt")}
    assert len(seeds) == 5, f"{SEEDS_ENV}={folder} holds {len(seeds)} seed texts, not five"
    quotes = _quotes()
    assert len(quotes) > 200
    wrong = [f"{where}: ({n}) {q}" for where, q, n in quotes if _norm(q) not in seeds[n]]
    assert not wrong, "\n".join(wrong)
