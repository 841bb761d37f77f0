"""The one paired comparison (pytest_uiground.gate.checks.paired): the unit decides what "right" means, the gate's
checks and ``compare`` read the same numbers, and a count has no flips (its copy in the gate once called a
sample right when its count was at least 50, so every report said "0 regressed, 0 fixed, p = 1")."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_uiground.gate import stats
from pytest_uiground.gate.baseline import Baseline, BaselineEntry
from pytest_uiground.gate.checks import build_checks, paired, right_of
from pytest_uiground.gate.metrics import compute_all
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score
from pytest_uiground.report import junit, runs
from pytest_uiground.suite.config import MetricSpec, SuiteConfig


def rec(i: str, right: bool, attempts: float = 1.0, iou: float = 80.0) -> SampleResult:
    score = Score(100.0 if right else 0.0, right, components={"detected": right, "attempts": attempts, "iou": iou})
    return SampleResult("mini", i, "detect", score=score)


BEFORE = [rec("a", True, 1, 80), rec("b", True, 1, 60), rec("c", False, 3, 20), rec("d", False, 3, 10),
          rec("e", True, 1, 90)]
AFTER = [rec("a", True, 1, 80), rec("b", False, 3, 40), rec("c", True, 1, 70), rec("d", True, 2, 55),
         rec("e", True, 1, 90)]
ACCURACY = MetricSpec(name="detection_rate", score="detected")
ATTEMPTS = MetricSpec(name="attempts_to_success", score="attempts", higher_is_better=False)
IOU = MetricSpec(name="mean_iou", score="iou")


def test_a_binary_metric_counts_flips_both_ways_with_mcnemar() -> None:
    p = paired(ACCURACY, None, AFTER, BEFORE)
    assert p is not None and (p.n, p.regressed, p.fixed) == (5, 1, 2)
    assert p.p_value == stats.mcnemar_exact(1, 2) and p.delta == pytest.approx(20.0)


def test_a_count_has_no_flips_and_no_mcnemar_but_keeps_its_interval() -> None:
    p = paired(ATTEMPTS, None, AFTER, BEFORE)
    assert p is not None and p.regressed is None and p.fixed is None and p.p_value is None
    assert p.delta == pytest.approx(-0.2) and p.delta_low is not None and p.delta_high is not None
    assert right_of(AFTER[0], ATTEMPTS, "count") is None


def test_an_iou_is_right_at_half_overlap() -> None:
    p = paired(IOU, None, AFTER, BEFORE)
    assert p is not None and (p.regressed, p.fixed) == (1, 2), "b falls under 50, c and d rise over it"
    assert right_of(rec("x", False, iou=50.0), IOU, "iou") is True


def test_the_gate_and_compare_read_one_comparison() -> None:
    """The gate's checks (current against the stored baseline) and ``compare`` (run B against run A) on the
    same two sets of answers give the same numbers, for every unit."""
    base = Baseline(Path("b"), {r.id: BaselineEntry(r.score.correct is True, r.score.value,
                                                    dict(r.score.components)) for r in BEFORE}, {})
    config = SuiteConfig(name="mini", version="1", path=Path("suite.toml"), loader="x", loader_options={},
                         metrics=(ACCURACY, ATTEMPTS, IOU))
    checks = build_checks(config, compute_all(config.metrics, AFTER), AFTER, base, partial=False, updating=False,
                          suite_file="suite.toml")
    for spec, check in zip(config.metrics, checks, strict=True):
        unit = {"attempts_to_success": "count", "mean_iou": "iou"}.get(spec.name, "rate")
        assert check.paired == runs.paired(spec, None, BEFORE, AFTER, unit), spec.name
    props = dict(junit.check_properties(checks[1]))
    assert props["regressed"] == props["fixed"] == props["p_value"] == "", "JUnit says no flips for a count"
    assert "no McNemar test" in checks[1].explain() and "0 regressed" not in checks[1].explain()


def test_the_unit_is_decided_in_the_gate_and_read_by_the_pages() -> None:
    from pytest_uiground.gate import units as gate_units
    from pytest_uiground.report import units as page_units

    assert gate_units.infer("attempts_to_success", "attempts", [1, 3]) == "count"
    assert gate_units.infer("mean_iou", "iou", [55.0]) == "iou"
    assert gate_units.infer("detection_rate", "detected", [True]) == "rate"
    assert page_units.infer is gate_units.infer and page_units.LATENCY == gate_units.LATENCY == "latency_ms"
