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

from pytest_uiground.gate.baseline import Baseline, recorded_ids
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.latency import run_latency_benchmark
from pytest_uiground.run.worker import run_sample
from pytest_uiground.suite.items import SAMPLE_ARG, SuiteModule


def stratified_subset(samples: Sequence[Sample], n: int, keys: Sequence[str], seed: int) -> list[Sample]:
    """A seeded subset of ``n`` samples, proportional over the strata of ``keys``, on few screens.

    Seats per stratum are proportional (largest remainder, at least one per stratum while
    seats last). The seats are then filled screen by screen (samples sharing an image):
    each step takes the screen whose samples fill the most open seats, so the subset
    touches about ``n / samples-per-screen`` screens rather than ``n``. That is what a smoke
    run costs for models whose work is per screen (OCR, image encoding, a served model's
    upload). Deterministic on every worker (xdist requires identical collections): screens
    and members are ordered by key and id before a seeded shuffle, ties go to the earlier
    screen in that order.
    """
    if n >= len(samples):
        return list(samples)
    strata: dict[tuple[str, ...], list[Sample]] = defaultdict(list)
    for s in samples:
        strata[_stratum(s, keys)].append(s)
    order = sorted(strata)
    seats = _seats({k: len(v) for k, v in strata.items()}, n)
    rng = random.Random(seed)
    screens: dict[str, list[Sample]] = defaultdict(list)
    for s in sorted(samples, key=lambda s: s.id):
        screens[s.image.key].append(s)
    screen_order = sorted(screens)
    rng.shuffle(screen_order)
    for key in screen_order:
        rng.shuffle(screens[key])
    open_seats = {k: seats[k] for k in order if seats[k]}
    chosen: list[Sample] = []
    remaining = list(screen_order)
    while open_seats and remaining:
        def fits(key: str) -> int:
            counts: dict[tuple[str, ...], int] = defaultdict(int)
            for s in screens[key]:
                counts[_stratum(s, keys)] += 1
            return sum(min(c, open_seats.get(k, 0)) for k, c in counts.items())

        best = max(remaining, key=lambda key: (fits(key), -remaining.index(key)))
        remaining.remove(best)
        for s in screens[best]:
            k = _stratum(s, keys)
            if open_seats.get(k, 0) > 0:
                chosen.append(s)
                open_seats[k] -= 1
                if not open_seats[k]:
                    del open_seats[k]
    return sorted(chosen, key=lambda s: s.id)


def only_new(samples: Sequence[Sample], base: Baseline | None) -> list[Sample]:
    """``--uiground-only-new``: the samples the baseline never recorded (all of them without a usable baseline:
    a new suite's samples are all new)."""
    if base is None or base.damaged:
        return list(samples)
    recorded = recorded_ids(base)
    return [s for s in samples if s.id not in recorded]


def _stratum(sample: Sample, keys: Sequence[str]) -> tuple[str, ...]:
    return tuple(sample.meta.get(k, "") for k in keys)


def _seats(sizes: dict[tuple[str, ...], int], n: int) -> dict[tuple[str, ...], int]:
    """Seats per stratum: proportional by largest remainder, then one for every stratum while seats last."""
    order = sorted(sizes)
    total = sum(sizes.values())
    quotas = {k: n * sizes[k] / total for k in order}
    seats = {k: int(q) for k, q in quotas.items()}
    for k in sorted(order, key=lambda k: (-(quotas[k] - int(quotas[k])), k)):  # largest remainder
        if sum(seats.values()) >= n:
            break
        seats[k] += 1
    for k in sorted(order, key=lambda k: (-sizes[k], k)):  # then every stratum gets a seat
        donor = max(order, key=lambda d: (seats[d], d))
        if seats[k] == 0 and seats[donor] > 1:
            seats[donor] -= 1
            seats[k] = 1
    return seats


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


#: the marker that carries a sample's metadata: ``-m "uiground(theme='dark')"``
SLICE_MARKER = "uiground"


def slice_mark(sample: Sample) -> pytest.MarkDecorator:
    """The sample's metadata as one marker's keyword arguments, for ``-m "uiground(key='value')"``.

    Why a marker: ``-m`` matches keyword arguments exactly (pytest ≥ 8.3), which ``-k``'s
    substring match on names cannot (``-k button`` also selects ``radio_button``).
    """
    mark: pytest.MarkDecorator = getattr(pytest.mark, SLICE_MARKER)
    return mark(**{k: str(v) for k, v in sample.meta.items() if k.isidentifier()})


def add_slice_keywords(item: pytest.Item) -> None:
    """Each sample test answers ``-k`` to its metadata: ``-k icon``, ``-k "theme:dark and not size:lt32"``.

    ``key=value`` is not valid in a ``-k`` expression (``=`` is not an identifier character),
    so the pair is spelled ``key:value``; both forms are substring matches, like all of ``-k``.
    """
    callspec = getattr(item, "callspec", None)
    sample = callspec.params.get(SAMPLE_ARG) if callspec is not None else None
    if isinstance(sample, Sample):
        for key, value in sample.meta.items():
            item.extra_keyword_matches.update((str(value), f"{key}:{value}"))
