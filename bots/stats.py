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


def t975(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom (Cornish-Fisher
    expansion about the normal's 1.96, within 0.002 of the tables from 6 degrees on; the
    tables' values below that)."""
    if df < 1:
        return math.inf
    exact = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706}
    if df in exact:
        return exact[df]
    z = 1.959964
    z3, z5, z7 = z ** 3, z ** 5, z ** 7
    return (z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3))


def paired_difference(first: list[float], second: list[float], block: int = 2) -> tuple[float, float, float, int]:
    """The mean of ``first[i] - second[i]`` over games played on the same decks and seats, with
    its 95% interval (Student's t): ``(mean, lo, hi, units)``.

    Why paired and not two intervals side by side: two bots that meet an opponent on the same
    deals share the luck of the cards, which the difference removes; two independent Wilson
    intervals carry it twice and overlap where the paired one may not. The unit is a ``block``
    of consecutive games (a tournament's pair of games that deal the same decks with the sides
    swapped are not independent of each other): the differences are averaged within a block,
    and the interval is over the blocks. Only the games both lists have are compared (the
    first ``min(len)``); fewer than two blocks give an infinite interval.
    """
    n = min(len(first), len(second))
    units = [[first[i] - second[i] for i in range(start, min(start + block, n))] for start in range(0, n, block)]
    means = [sum(u) / len(u) for u in units]
    if not means:
        return 0.0, -math.inf, math.inf, 0
    mean = sum(means) / len(means)
    if len(means) < 2:
        return mean, -math.inf, math.inf, len(means)
    var = sum((x - mean) ** 2 for x in means) / (len(means) - 1)
    half = t975(len(means) - 1) * math.sqrt(var / len(means))
    return mean, mean - half, mean + half, len(means)
