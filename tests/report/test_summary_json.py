"""``summary.json`` through the records' one codec (record/codec.py): both directions, and damaged files read."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from pytest_uiground.gate.verdict import BaselineFate, Verdict
from pytest_uiground.record import codec
from pytest_uiground.report import summary as summary_mod
from pytest_uiground.report.summary import Comparison, Latency, MetricSummary, SuiteSummary

METRIC = MetricSummary(value=50.0, n=3, average="macro", higher_is_better=False, interval=(40.0, 60.0), format_errors=1,
                       errors=2, slices={"a=1": 10.0, "a=2": None}, slice_n={"a=1": 2, "a=2": 0},
                       slice_intervals={"a=1": (1.0, 2.0), "a=2": None}, slice_format_errors={"a=1": 1},
                       unit="accuracy", selection={"score": "point_hit", "where": {"a": "1"}})
COMPARISON = Comparison(value=50.0, baseline=60.0, delta=-10.0, delta_interval=(-20.0, 0.0), regressed=2, fixed=1,
                        mcnemar_p=0.3, floor=10.0, verdict="regressed", tolerance=2.0, detectable={"drop": 3.5},
                        left_out=4, value_with_new=47.5)
FULL = SuiteSummary(
    suite="s", model="m", model_fingerprint={"sha": "x"}, n_samples=3, metrics={"acc": METRIC},
    baseline_comparison={"acc": COMPARISON}, latency_ms=Latency(1.5, 2.5, 3), regressed=("x",), fixed=("y",),
    errors=("z",), format_errors=1, provenance={"date": "d"}, judge={"name": "j"}, judge_parse_errors=("q",),
    judge_stability={"agree": 0.9}, baseline={"model": "old"}, refusals=2,
    verdict=Verdict(passed=False, reasons=("r",), n_checks=3, failed_checks=("acc",), regressed=1,
                    fate=BaselineFate.REFUSED, flips_p=0.2),
    unstable=("u",), noise={"rate": 0.1}, new=("n",), removed=("rm",), endpoints={"http://a": {"samples": 1}},
    quirks=("qq",), against={"x": 1}, robustness={"scale:0.5": {"acc": 40.0}}, version=summary_mod.VERSION)


def non_default(record: Any) -> list[str]:
    """The fields of ``record`` that still hold their default (a round trip of those proves nothing)."""
    out = []
    for f in dataclasses.fields(record):
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
        if getattr(record, f.name) == default and f.name != "version":
            out.append(f.name)
    return out


def test_every_field_of_a_summary_reads_back_equal_through_json_text(tmp_path: Path) -> None:
    """Every field is set (so a field the codec forgot would differ), written as the run writes it, and read
    back by the same reader ``compare`` and the report use."""
    assert non_default(FULL) == [] and non_default(METRIC) == [] and non_default(COMPARISON) == []
    path = tmp_path / "summary.json"
    path.write_text(summary_mod.dumps(FULL.to_json()))
    assert summary_mod.read(path) == {"s": FULL}
    path.write_text(summary_mod.dumps(summary_mod.run_doc({"s": FULL, "t": dataclasses.replace(FULL, suite="t")})))
    assert summary_mod.read(path)["t"] == dataclasses.replace(FULL, suite="t")


def test_the_written_form_leaves_out_what_older_readers_misread() -> None:
    plain = SuiteSummary(suite="p", model=None, model_fingerprint=None, n_samples=0,
                         metrics={"m": MetricSummary(value=1.0, n=1)}, baseline_comparison={"m": Comparison(1.0)},
                         latency_ms=None, regressed=(), fixed=(), errors=(), format_errors=0, provenance={})
    doc = plain.to_json()
    assert next(iter(doc)) == "version" and doc["version"] == summary_mod.VERSION
    assert "judge" not in doc and "verdict" not in doc and "unstable" not in doc and "robustness" not in doc
    assert "higher_is_better" not in doc["metrics"]["m"] and "unit" not in doc["metrics"]["m"]
    assert "tolerance" not in doc["baseline_comparison"]["m"] and doc["baseline_comparison"]["m"]["baseline"] is None
    assert FULL.to_json()["metrics"]["acc"]["higher_is_better"] is False
    assert FULL.to_json()["verdict"]["status"] == "FAIL"  # the verdict's own JSON, with its wording


def test_a_damaged_summary_reads_as_no_value_where_a_field_is_damaged() -> None:
    """Files from other versions or damaged on the way: a NaN, a bool or a string where a number belongs is no
    value, a malformed list is empty, a metric that is not an object is left out; nothing raises."""
    doc = {"suite": 3, "n_samples": "7", "format_errors": True, "regressed": "abc", "fixed": [1, "a"],
           "provenance": [], "refusals": True, "model": 5, "quirks": {"a": 1},
           "metrics": {"a": {"value": math.nan, "n": True, "interval": [1, "x"], "slices": {"k": "v", "j": 3},
                             "higher_is_better": "no"}, "b": 3},
           "baseline_comparison": {"a": {"value": "1", "regressed": False, "delta_interval": [1, 2, 3]}},
           "latency_ms": {"p50": 1, "p95": None, "n": 1}, "verdict": {"status": "maybe"}}
    s = SuiteSummary.from_json(json.loads(json.dumps(doc)))
    assert (s.suite, s.n_samples, s.format_errors, s.regressed, s.fixed) == ("", 0, 0, (), ("a",))
    assert (s.provenance, s.refusals, s.model, s.quirks, s.latency_ms, s.verdict) == ({}, None, None, (), None, None)
    assert list(s.metrics) == ["a"]
    m = s.metrics["a"]
    assert (m.value, m.n, m.interval, m.slices, m.higher_is_better) == (None, 0, None, {"k": None, "j": 3.0}, True)
    c = s.baseline_comparison["a"]
    assert (c.value, c.regressed, c.delta_interval) == (None, None, None)
    assert s.version == 1  # no version written: a file from before versions were
    assert SuiteSummary.from_json({"latency_ms": {"p50": 1, "p95": 2.5}}).latency_ms == Latency(1.0, 2.5, 0)


def test_tolerant_reading_is_the_codec_not_a_second_reader() -> None:
    """The summary classes hold no reader of their own: their ``from_json`` is the codec's tolerant reading."""
    data = FULL.to_json()
    assert codec.from_json(SuiteSummary, data, tolerant=True) == SuiteSummary.from_json(data) == FULL
    assert codec.to_json(METRIC) == METRIC.to_json()
