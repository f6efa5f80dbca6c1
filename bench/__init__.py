"""Benchmarks (not tests): run by ``canasta bench ...``; each prints a small table."""
