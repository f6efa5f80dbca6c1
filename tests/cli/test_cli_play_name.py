"""``canasta play --name``: checked as the server checks it (service.names), before anything starts."""

from __future__ import annotations

import pytest

from cli import play


@pytest.mark.parametrize(("name", "reason"), [("\u202eann", "bidi_control"), ("a\u2028b", "line_break"),
                                              (" ", "invisible"), ("\u200b", "invisible"), ("x" * 41, "too_long")])
def test_a_name_the_server_would_refuse_stops_play_at_once(name: str, reason: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert play.main(["--name", name, "--api", "http://127.0.0.1:9"]) == 2
    out = capsys.readouterr().out
    assert "--name" in out and f"({reason})" in out


def test_a_name_is_normalised_and_trimmed() -> None:
    args = play.parser().parse_args(["--name", "  Ame\u0301lie "])
    assert play.GameSetup.from_args(args).name == "Am\u00e9lie"
