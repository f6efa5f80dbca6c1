"""Benchmarks (not tests), run by `canasta bench ...`; never imported by the service."""
