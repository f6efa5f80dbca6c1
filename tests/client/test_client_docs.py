"""docs/clients.md stays true: its Python example plays a game on a real server, the client
methods it names exist, its error table names codes the service raises, and the SSE
command lines (there and in the README) send the Accept header SSE needs."""

from __future__ import annotations

import re
from pathlib import Path

from client import Client, Seat

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs/clients.md").read_text()


def test_the_python_example_plays_a_game_to_its_end(server: str) -> None:
    code = re.search(r"```python\n(.*?)```", DOC, re.S).group(1)
    code = code.replace('"http://127.0.0.1:8000"', repr(server))
    scope: dict = {}
    exec(compile(code, "docs/clients.md", "exec"), scope)  # noqa: S102 - the page's own example
    assert scope["ann"].view()["status"] == "over"
    scope["api"].close()


def test_the_client_methods_named_exist() -> None:
    methods = re.search(r"One method per endpoint: (.*?)\. Answers", DOC, re.S).group(1)
    names = re.findall(r"`([a-z_]+)`", methods)
    assert len(names) >= 15
    for name in names:
        assert callable(getattr(Client, name)), name
    for name in ("move", "view", "my_turn", "legal", "stream", "long_poll", "to_bot", "take_back", "dry_run", "hint"):
        assert hasattr(Seat, name), name


def test_the_error_codes_listed_are_raised() -> None:
    table = DOC[DOC.index("| status | codes |"):DOC.index("## The web table")]
    listed = set(re.findall(r"`([a-z][a-z_]+)`", table)) - {"errors", "version", "to_act", "detail"}
    source = "\n".join(p.read_text() for folder in ("service", "web") for p in (ROOT / folder).rglob("*.py"))
    engine_codes = set(re.findall(r"^\| `([a-z_]+)` \|", (ROOT / "docs/reason-codes.md").read_text(), re.M))
    for code in listed - engine_codes:
        assert f'"{code}"' in source, f"{code} is not a code the API raises"


def test_sse_command_lines_send_the_accept_header() -> None:
    for text in (DOC, (ROOT / "README.md").read_text()):
        lines = [line for line in text.splitlines() if line.startswith("curl") and "/events" in line]
        assert lines
        for line in lines:
            assert "-H 'Accept: text/event-stream'" in line, line
