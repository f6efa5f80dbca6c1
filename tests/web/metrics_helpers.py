"""Reading Prometheus text and the service's JSON log lines in tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape: (name, sorted labels) -> value."""
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def value(text: str, name: str, **labels: str) -> float:
    """The sample ``name{labels}`` of a scrape (0 when absent)."""
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


def total(text: str, name: str, **labels: str) -> float:
    """The sum of the samples ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples(text).items() if n == name and want <= set(ls))


def json_lines(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The JSON objects of a log file, and its other lines (``canasta serve``'s own words to
    a person: its warnings)."""
    objects, others = [], []
    for raw in path.read_text(errors="replace").splitlines():
        try:
            found = json.loads(raw)
        except ValueError:
            found = None
        if isinstance(found, dict):
            objects.append(found)
        elif raw.strip():
            others.append(raw)
    return objects, others
