"""`canasta bench replay` (bench/replay.py) runs end to end on a tiny corpus."""

from __future__ import annotations

from bench import replay as bench_replay


def test_bench_runs_small(capsys, tmp_path):
    assert bench_replay.main(["--games", "4", "--unique", "2", "--sample", "2", "--repeat", "1", "--jobs", "2",
                              "--corpus", str(tmp_path / "corpus")]) == 0
    out = capsys.readouterr().out
    assert "validate, one core" in out and "corpus 4 files, --jobs 2" in out
    assert "4 files: 4 valid, 0 invalid, 0 unreadable (exit 0)" in out
