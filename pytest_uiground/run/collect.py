"""Collection: ``suites/<name>/suite.toml`` becomes a pytest module of sample tests.

The suite file is a :class:`SuiteFile` (a ``pytest.Module`` whose object is built in
memory) holding ``test_sample``, parametrised by ``pytest_generate_tests`` with one
case per sample (id = sample id), and ``test_latency`` for pytest-benchmark. Only
real ``pytest.Function`` items get fixtures, hence this shape. Collection loads
sample metadata only: no image is decoded and no model is imported, because every
xdist worker collects everything again.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_uiground.record.sample import Sample
from pytest_uiground.run.latency import run_latency_benchmark
from pytest_uiground.run.worker import run_sample
from pytest_uiground.suite.items import SuiteModule


def stratified_subset(samples: Sequence[Sample], n: int, keys: Sequence[str], seed: int) -> list[Sample]:
    """A seeded subset of ``n`` samples, proportional over the strata of ``keys``.

    Deterministic on every worker (xdist requires identical collections): strata
    and members are ordered by id before a seeded shuffle, and seats are handed out
    by largest remainder, at least one per stratum while seats last.
    """
    if n >= len(samples):
        return list(samples)
    strata: dict[tuple[str, ...], list[Sample]] = defaultdict(list)
    for s in samples:
        strata[tuple(s.meta.get(k, "") for k in keys)].append(s)
    rng = random.Random(seed)
    order = sorted(strata)
    for key in order:
        strata[key].sort(key=lambda s: s.id)
        rng.shuffle(strata[key])
    total = len(samples)
    quotas = {k: n * len(strata[k]) / total for k in order}
    seats = {k: int(q) for k, q in quotas.items()}
    for k in sorted(order, key=lambda k: (-(quotas[k] - int(quotas[k])), k)):  # largest remainder
        if sum(seats.values()) >= n:
            break
        seats[k] += 1
    for k in sorted(order, key=lambda k: (-len(strata[k]), k)):  # then every stratum gets a seat
        donor = max(order, key=lambda d: (seats[d], d))
        if seats[k] == 0 and seats[donor] > 1:
            seats[donor] -= 1
            seats[k] = 1
    chosen = [s for k in order for s in strata[k][: seats[k]]]
    return sorted(chosen, key=lambda s: s.id)


def test_sample(uiground_sample: Sample, uiground_model: Any, request: pytest.FixtureRequest) -> None:
    """One benchmark sample: predict, score, compare with the baseline."""
    run_sample(request.node, uiground_sample, uiground_model)


def test_latency(benchmark: Any, uiground_model: Any, request: pytest.FixtureRequest) -> None:
    """Serial model latency over a few samples, measured by pytest-benchmark."""
    run_latency_benchmark(request.node, benchmark, uiground_model)


class SuiteFile(SuiteModule):
    """A suite.toml file collected as a module of generated tests."""

    def tests(self) -> dict[str, object]:
        return {"test_sample": test_sample, "test_latency": test_latency}
