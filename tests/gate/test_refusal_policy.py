"""The refusal policy's parts: the suite.toml key, which policy a run uses, the twin metric, the selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_uiground.gate.metrics import compute
from pytest_uiground.gate.rules import refusal_metrics, refusal_policy
from pytest_uiground.models.base import ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config

TOML = """
[suite]
name = "r"
version = "1"
[loader]
name = "synthetic"
[[metrics]]
name = "accuracy"
slices = ["box_type"]
floor = 10.0
{scorer}
"""


def config(tmp_path: Path, scorer: str = "") -> object:
    path = tmp_path / "suite.toml"
    path.write_text(TOML.format(scorer=scorer))
    return load_suite_config(path)


def test_a_bad_policy_names_the_field_the_value_and_the_choices(tmp_path: Path) -> None:
    with pytest.raises(SuiteConfigError, match=r"scorer\.refusals: 'drop' is not one of count, exclude: 'count' keeps"):
        config(tmp_path, '[scorer]\nrefusals = "drop"')


def test_the_command_line_overrides_only_suites_with_a_policy(tmp_path: Path) -> None:
    run = RunOptions(model=ModelOptions(name="ocr"), refusals="exclude")
    assert refusal_policy(run, config(tmp_path, '[scorer]\nrefusals = "count"')) == "exclude"  # type: ignore[arg-type]
    assert refusal_policy(RunOptions(model=ModelOptions(name="ocr")),
                          config(tmp_path, '[scorer]\nrefusals = "count"')) == "count"  # type: ignore[arg-type]
    assert refusal_policy(run, config(tmp_path)) is None  # type: ignore[arg-type]


def _result(i: int, expects: str, correct: bool) -> SampleResult:
    return SampleResult("r", f"s{i}", "point", {"expects": expects, "box_type": "refusal" if expects == "refusal"
                                                 else "bbox"}, Score(100.0 if correct else 0.0, correct))


def test_both_denominators_from_one_run(tmp_path: Path) -> None:
    cfg = config(tmp_path, '[scorer]\nrefusals = "count"')
    results = [_result(0, "element", True), _result(1, "element", False), _result(2, "refusal", True),
               _result(3, "refusal", False)]
    specs = refusal_metrics(cfg, "count")  # type: ignore[arg-type]
    assert [(s.name, s.refusals) for s in specs] == [("accuracy", "count"), ("accuracy_refusals_excluded", "exclude")]
    assert specs[1].slices == () and specs[1].floor is None  # the twin is a figure, not a second gate
    counted, excluded = (compute(s, results) for s in specs)
    assert (counted.overall.value, counted.overall.n) == (50.0, 4)
    assert (excluded.overall.value, excluded.overall.n) == (50.0, 2) and set(excluded.overall.ids) == {"s0", "s1"}
    swapped = refusal_metrics(cfg, "exclude")  # type: ignore[arg-type]
    assert [(s.name, s.refusals) for s in swapped] == [("accuracy", "exclude"), ("accuracy_refusals_counted", "count")]
    assert "box_type=refusal" not in compute(swapped[0], results).slices
    assert refusal_metrics(cfg, None) == cfg.metrics  # type: ignore[union-attr, arg-type]
