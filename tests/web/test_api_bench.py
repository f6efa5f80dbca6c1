"""`canasta bench api` runs end to end (a very short run)."""

from __future__ import annotations

import os

import pytest

from bench import api as bench


@pytest.mark.parametrize("extra", [["--fanout-games", "1", "--fanout-seconds", "1.5"], ["--rate", "40", "--fanout-games", "0", "--listeners", "8", "--listener-moves", "10"]],
                         ids=["saturating", "paced-with-listeners"])
def test_bench_api_short_run(redis_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                             extra: list[str]) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    # a REDIS_URL that does not fsync runs the session with CANASTA_DURABILITY=off (conftest_redis)
    durability = ["--durability", "off"] if os.environ.get("CANASTA_DURABILITY") == "off" else []
    assert bench.main(["--seconds", "1.5", "--games", "2", "--workers", "1", "--threads", "8",
                       "--warmup", "0.5", "--health-seconds", "0.5", *durability, *extra]) == 0
    out = capsys.readouterr().out
    assert "accepted moves/s" in out and "/healthz requests/s" in out and "Redis memory per active game" in out
    assert "moves/s : /healthz req/s" in out and "CPU ms per accepted move" in out
    ratio_by_cpu = float(out.split("same ratio, by CPU time")[1].split()[0])
    assert 0 < ratio_by_cpu < 1
    moves = int(out.split("accepted moves/s")[1].split("(")[1].split(" moves")[0])
    assert moves > 0
    if "--fanout-games" in extra and extra[extra.index("--fanout-games") + 1] != "0":
        # one game, four readers: every move reaches the three other seats
        line = out.split("event fan-out p50 / p99")[1].splitlines()[0]
        deliveries = int(line.split("(")[1].split(" deliveries")[0])
        assert deliveries >= 3 and "0 polls refused" in line
    else:
        assert "event fan-out" not in out
    if "--listeners" in extra:
        # two extra games, a stream or a long-poll on each seat, every move delivered to all four
        assert "4 SSE streams + 4 long-polls of 8 (0 refused, 0 errors) on 2 extra games" in out
        line = out.split("move -> listener p50 / p99")[1].splitlines()[0]
        assert int(line.split("; ")[-1].split(" deliveries")[0]) >= 4
    else:
        assert "open listeners" not in out


def test_bench_hints_short_run(redis_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import hints as bench_hints

    monkeypatch.setenv("REDIS_URL", redis_url)
    assert bench_hints.main(["--games", "6", "--seconds", "0.6", "--health-seconds", "0.3", "--connections", "2",
                             "--workers", "1", "--threads", "4", "--bot", "greedy"]) == 0
    out = capsys.readouterr().out
    assert "/healthz (baseline)" in out and "greedy hints, new positions" in out and "asked again" in out
    fresh = out.split("greedy hints, new positions")[1].splitlines()[0]
    assert "200: 6" in fresh  # each position once
    one = out.split("one token, limiter on")[1].splitlines()[0]
    assert "429" in one  # one token asking as fast as it can is held back


def test_bench_api_compares_durability_modes(redis_url: str, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)  # each mode on its own embedded Valkey
    assert bench.main(["--durability", "off,fsync", "--seconds", "0.6", "--games", "2", "--workers", "1",
                       "--threads", "4", "--warmup", "0.2", "--health-seconds", "0.2", "--fanout-games", "0"]) == 0
    out = capsys.readouterr().out
    assert "CANASTA_DURABILITY=off; the server's append-only file off" in out
    assert "CANASTA_DURABILITY=fsync; the server's append-only file on, appendfsync always" in out
    summary = out.split("durability  obs  listeners  accepted moves/s")[1]
    assert "\noff " in summary and "\nfsync " in summary and "fsync: " in summary


def test_bench_api_compares_observability_on_and_off(redis_url: str, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """--observability compare: the same run with the request metrics and access log on, then
    off; the access lines went to the run's log file (not the terminal), and the summary
    gives the cost as moves/s and as the moves : /healthz ratio."""
    monkeypatch.setenv("REDIS_URL", redis_url)
    durability = ["--durability", "off"] if os.environ.get("CANASTA_DURABILITY") == "off" else []
    assert bench.main(["--observability", "compare", "--seconds", "0.6", "--games", "2", "--workers", "1",
                       "--threads", "4", "--warmup", "0.2", "--health-seconds", "0.2", "--fanout-games", "0",
                       *durability]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "request metrics and access log ON" in out and "request metrics and access log OFF" in out
    on_log = int(out.split("request metrics and access log ON (")[1].split(" kB")[0])
    off_log = int(out.split("request metrics and access log OFF (")[1].split(" kB")[0])
    assert on_log > 0 and off_log == 0
    assert "observability on: " in out and " off (" in out and "moves : /healthz" in out
    assert '"canasta.access"' not in captured.out + captured.err


def test_bench_app_times_the_app_alone_and_leaves_nothing(redis_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`canasta bench app`: moves through the WSGI callable, the CPU per move printed, and
    the bench's games deleted afterwards."""
    from bench import app as bench_app
    from service.redis_io import connect

    games = connect(redis_url)  # one server, or the local cluster under make test-cluster
    before = set(games.scan_iter(match="bench-app-*"))
    assert bench_app.main(["--moves", "60", "--redis-url", redis_url]) == 0
    out = capsys.readouterr().out
    assert "accepted moves          60" in out
    assert float(out.split("CPU ms per accepted move")[1].split()[0]) > 0
    assert set(games.scan_iter(match="bench-app-*")) == before
