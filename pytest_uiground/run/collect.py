"""Collection: ``suites/<name>/suite.toml`` becomes a pytest module of sample tests.

The suite file is a :class:`SuiteFile` (a ``pytest.Module`` whose object is built in
memory) holding ``test_sample``, parametrised by ``pytest_generate_tests`` with one
case per sample (id = sample id), and ``test_latency`` for pytest-benchmark. Only
real ``pytest.Function`` items get fixtures, hence this shape. Collection loads
sample metadata only: no image is decoded and no model is imported, because every
xdist worker collects everything again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_uiground.gate.baseline import Baseline, recorded_ids
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.latency import run_latency_benchmark
from pytest_uiground.run.worker import run_sample
from pytest_uiground.suite.items import SAMPLE_ARG, SuiteModule


def only_new(samples: Sequence[Sample], base: Baseline | None) -> list[Sample]:
    """``--uiground-only-new``: the samples the baseline never recorded (all of them without a usable baseline:
    a new suite's samples are all new)."""
    if base is None or base.damaged:
        return list(samples)
    recorded = recorded_ids(base)
    return [s for s in samples if s.id not in recorded]


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
