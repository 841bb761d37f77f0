"""``test_latency``: serial model latency over a few samples, measured by pytest-benchmark.

It runs only when asked for (``--uiground-latency-benchmark``, or any ``--benchmark-*``
option), so a plain run prints no benchmark table; otherwise it skips saying how to ask.
pytest-benchmark turns itself off under xdist, so this test skips there with the
reason; per-sample latencies gathered by the controller still feed the latency budget.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_uiground.gate import stats
from pytest_uiground.models.base import Model
from pytest_uiground.record.image import ImageError
from pytest_uiground.record.sample import Sample
from pytest_uiground.run import STATE
from pytest_uiground.suite.items import suite_path_of


def _loadable(samples: Sequence[Sample], n: int) -> list[Sample]:
    """The first ``n`` samples whose image decodes: broken ones fail their own tests."""
    out: list[Sample] = []
    for s in samples:
        if len(out) >= n:
            break
        if s.invalid is None:
            try:
                s.image.load()
            except ImageError:
                continue
            out.append(s)
    return out


def run_latency_benchmark(item: pytest.Item, benchmark: Any, model: Model) -> None:
    """Time the model serially on the suite's first valid samples."""
    state = item.config.stash[STATE]
    if not state.options.latency_benchmark:
        pytest.skip("the serial latency benchmark runs only when asked for: pass --uiground-latency-benchmark "
                    "(or a --benchmark-* option); per-sample latencies are in the summary either way")
    if getattr(benchmark, "disabled", False):
        pytest.skip(
            "pytest-benchmark is disabled (it turns itself off under xdist -n and with "
            "--benchmark-disable); run without -n to measure latency serially"
        )
    path = suite_path_of(item)
    assert path is not None
    loaded = state.suite(path)
    k = loaded.config.latency.benchmark_samples
    samples = _loadable(sorted(loaded.samples, key=lambda s: s.id), k + 1)
    if len(samples) < 2:
        pytest.skip(f"suite {loaded.config.name!r} has fewer than 2 valid samples to time")
    timings: list[float] = []
    queue = list(samples)

    def setup() -> tuple[tuple[Sample], dict[str, Any]]:
        model.clear_cache()  # measure real work, not a cache hit from the sample tests
        return (queue.pop(0),), {}

    def target(sample: Sample) -> None:
        t0 = time.perf_counter()
        model.predict([sample])
        timings.append((time.perf_counter() - t0) * 1000)

    benchmark.pedantic(target, setup=setup, rounds=len(samples) - 1, warmup_rounds=1)
    measured = timings[1:]
    benchmark.extra_info.update(
        {"suite": loaded.config.name, "model": model.name, "samples": len(measured),
         "p50_ms": stats.percentile(measured, 50), "p95_ms": stats.percentile(measured, 95)}
    )
