"""Small statistics for tournaments and benchmarks."""

from __future__ import annotations

import math


def wilson(successes: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default).

    Why Wilson and not the normal approximation: win rates near 0 or 1 (greedy against
    random) would give an interval past the bounds, and small samples would be too narrow.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def mean_margin(values: list[float], z: float = 1.959964) -> tuple[float, float]:
    """The mean and the half-width of its normal 95% interval (inf for fewer than two values):
    the per-decision gains of :mod:`bots.distillation` are sums of many rollouts, so near normal."""
    if not values:
        return 0.0, math.inf
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, math.inf
    var = sum((x - mean) ** 2 for x in values) / (len(values) - 1)
    return mean, z * math.sqrt(var / len(values))
