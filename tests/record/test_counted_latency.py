"""One rule for the latency that counts (issue 42): the latency check, the report's percentiles and the
per-endpoint table read the same samples' times, leaving out errored samples, cached predictions and
non-finite times (before, the endpoint table kept errored samples while the other two left them out)."""

from __future__ import annotations

import math
from pathlib import Path

from pytest_uiground.gate.checks import latency_check
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.report.html import latencies
from pytest_uiground.report.summary import endpoint_table
from pytest_uiground.suite.config import load_suite_config


def _record(i: int, ms: float | None, *, error: str | None = None, cache: str | None = None) -> SampleResult:
    pred = Prediction(raw="x", route={"endpoint": "http://a"})
    return SampleResult(suite="s", id=f"s{i}", task="point", prediction=pred, latency_ms=ms, error=error, cache=cache)


def test_the_three_readers_count_the_same_samples(tmp_path: Path) -> None:
    records = [_record(0, 10.0), _record(1, 30.0), _record(2, 900.0, error="server died"),
               _record(3, 5.0, cache="hit"), _record(4, math.nan), _record(5, None), _record(6, 20.0)]
    counted = [r.counted_latency_ms for r in records]
    assert counted == [10.0, 30.0, None, None, None, None, 20.0]
    assert latencies(records) == [10.0, 30.0, 20.0]
    (tmp_path / "suite.toml").write_text('[suite]\nname = "s"\nversion = "1"\n\n[loader]\nname = "synthetic"\n\n'
                                         '[[metrics]]\nname = "acc"\ntasks = ["point"]\n')
    config = load_suite_config(tmp_path / "suite.toml")
    check = latency_check(config, records, parallel=False, suite_file="t")
    assert check is not None and check.n == 3 and check.p50_ms == 20.0
    table = endpoint_table(records)
    assert table is not None and table["http://a"]["p50_ms"] == 20.0
