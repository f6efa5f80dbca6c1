"""Benchmarks (not tests), one module per ``canasta bench WHAT`` (``cli/bench.py``): each
measures against a baseline taken in the same run and prints a small table; the current
figures are in ``BENCHMARKS.md``. The fair-play audit's cheating
players live here too (``bench/cheaters.py``): nothing else imports this package."""
