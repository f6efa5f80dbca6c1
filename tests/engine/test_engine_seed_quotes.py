"""The seed sentences quoted in these tests' docstrings are verbatim (up to line wrapping).

Every rule-point test (``test_r<N>_...``) quotes at least one seed sentence, written as
``"..." (00N)``; this checks each quote against the seed text in ``shared/seeds``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SEEDS = next(
    (p for p in (HERE.parents[2] / "shared" / "seeds", Path("/work/shared/seeds")) if p.is_dir()),
    None,
)
QUOTE = re.compile(r'"([^"]+)" \((00\d)\)')


def _norm(text: str) -> str:
    return " ".join(text.split())


def _docstrings():
    for path in sorted(HERE.glob("test_engine_*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield path.name, node.name, ast.get_docstring(node) or ""


def test_every_rule_point_test_quotes_a_seed():
    missing = [f"{f}::{name}" for f, name, doc in _docstrings() if re.match(r"test_r\d+_", name) and not QUOTE.search(doc)]
    assert not missing


@pytest.mark.skipif(SEEDS is None, reason="the seed texts (shared/seeds) are not here")
def test_quotes_are_verbatim():
    seeds = {}
    for path in SEEDS.glob("*.txt"):
        seeds[path.name[:3]] = _norm(path.read_text())
    quotes = [(f, name, q, n) for f, name, doc in _docstrings() for q, n in QUOTE.findall(doc)]
    assert len(quotes) > 50
    wrong = [f"{f}::{name}: ({n}) {q}" for f, name, q, n in quotes if _norm(q) not in seeds[n]]
    assert not wrong, "\n".join(wrong)
