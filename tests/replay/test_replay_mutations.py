"""One change to a valid log: the validator names the right line with a fitting code."""

from __future__ import annotations

import random

import pytest
from replay_corpus import CONFIGS, MUTATIONS, config_id, encode, simulate

from replay.validate import validate_bytes


def _check_all(logs, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    applied = {m.__name__: 0 for m in MUTATIONS}
    for n, lines in enumerate(logs):
        for mutate in MUTATIONS:
            made = mutate(lines, rng)
            if made is None:
                continue
            mutated, expect = made
            result = validate_bytes(encode(mutated), f"log{n}-{mutate.__name__}")
            expect.check(result)
            # --all-errors reports the same first violation
            again = validate_bytes(encode(mutated), "again", all_errors=True)
            assert again.status == result.status
            if result.violations:
                assert again.violations[0] == result.violations[0]
            applied[mutate.__name__] += 1
    return applied


@pytest.mark.parametrize("seed", [1, 2])
def test_mutations_of_the_sample(sample_logs, seed):
    applied = _check_all(sample_logs, seed)
    # every kind of mutation was really tried, most of them on every log
    assert all(n > 0 for n in applied.values()), applied


@pytest.mark.slow
def test_mutations_of_200_logs():
    logs = [simulate(*CONFIGS[g % len(CONFIGS)], 5000 + g, 1500) for g in range(200)]
    applied = _check_all(logs, 3)
    assert all(n > 100 for n in applied.values()), applied


def test_config_ids_are_unique():
    assert len({config_id(c) for c in CONFIGS}) == len(CONFIGS)
