"""pytest_uiground.report.runs: loading runs for ``compare``, pairing them, and the flipped samples."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pytest_uiground.gate import stats
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score
from pytest_uiground.report import runs
from pytest_uiground.report.summary import MetricSummary, SuiteSummary, run_doc
from pytest_uiground.suite.config import MetricSpec


def _summary(suite: str = "mini", model: str | None = "m", value: float | None = 50.0,
             **metrics: float) -> SuiteSummary:
    entries = {"acc": MetricSummary(value=value, n=4, slices={"difficulty=easy": 100.0, "difficulty=hard": 0.0},
                                    selection={"tasks": ["point"]})}
    entries.update({k: MetricSummary(value=v, n=4) for k, v in metrics.items()})
    return SuiteSummary(suite=suite, model=model, model_fingerprint=None, n_samples=4, metrics=entries,
                        baseline_comparison={}, latency_ms=None, regressed=(), fixed=(), errors=(), format_errors=0,
                        provenance={})


def _rec(sid: str, right: bool, suite: str = "mini", difficulty: str = "easy") -> SampleResult:
    return SampleResult(suite=suite, id=sid, task="point", meta={"difficulty": difficulty},
                        score=Score(100.0 if right else 0.0, right))


def _write(folder: Path, summaries: list[SuiteSummary], records: list[SampleResult] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").write_text(json.dumps(run_doc({s.suite: s for s in summaries})), encoding="utf-8")
    if records is not None:
        lines = [json.dumps(r.to_json()) for r in records]
        (folder / "samples.jsonl").write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    return folder


def test_read_summary_explains_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(runs.CompareError, match=r"no summary\.json .*--uiground-report"):
        runs.read_summary(tmp_path)
    (tmp_path / "summary.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(runs.CompareError, match="not readable JSON"):
        runs.read_summary(tmp_path)
    (tmp_path / "summary.json").write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(runs.CompareError, match="not a uiground summary"):
        runs.read_summary(tmp_path)
    (tmp_path / "summary.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(runs.CompareError, match="not a uiground summary"):
        runs.read_summary(tmp_path)
    _write(tmp_path, [_summary("a"), _summary("b")])
    assert sorted(runs.read_summary(tmp_path)) == ["a", "b"]


def test_read_records_names_the_line_that_is_not_a_record(tmp_path: Path) -> None:
    assert runs.read_records(tmp_path) == []  # a run that kept no records
    _write(tmp_path, [_summary()], [_rec("s1", True), _rec("s2", False)])
    assert [r.id for r in runs.read_records(tmp_path)] == ["s1", "s2"]  # the blank line is skipped
    good = json.dumps(_rec("s1", True).to_json())
    cases = (('{"id": "x"}', "no 'suite' field"), ("[1]", "expected a JSON object"), ("{torn", "JSONDecodeError"))
    for bad, why in cases:
        (tmp_path / "samples.jsonl").write_text(f"{good}\n{bad}\n", encoding="utf-8")
        with pytest.raises(runs.CompareError, match=r"samples\.jsonl, line 2: not a sample record") as info:
            runs.read_records(tmp_path)
        assert why in str(info.value)


def test_default_labels_use_models_then_folders_then_both(tmp_path: Path) -> None:
    a, b = tmp_path / "run-a", tmp_path / "run-b"
    assert runs.default_labels([a, b], [{"s": _summary(model="x")}, {"s": _summary(model="y")}]) == ["x", "y"]
    assert runs.default_labels([a, b], [{"s": _summary(model="x")}, {"s": _summary(model="x")}]) == ["run-a", "run-b"]
    same = [tmp_path / "one" / "r", tmp_path / "two" / "r"]
    got = runs.default_labels(same, [{"s": _summary(model="x")}, {"s": _summary(model="y")}])
    assert got == ["x", "y"]
    got = runs.default_labels(same, [{"s": _summary(model="x")}, {"s": _summary(model="x")}])
    assert got == ["x \u00b7 r", "x \u00b7 r"]  # nothing tells them apart: both, never "x (x)"
    assert runs.default_labels([tmp_path / "ocr"], [{"s": _summary(model="ocr")}]) == ["ocr"]


def test_load_runs_checks_the_labels_and_makes_them_unique(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", [_summary()])
    b = _write(tmp_path / "b", [_summary()])
    with pytest.raises(runs.CompareError, match=r"--labels has 1 label\(s\) for 2 run\(s\)"):
        runs.load_runs([a, b], ["one"])
    assert [r.label for r in runs.load_runs([a, b, a], ["x", "x", "y"])] == ["x", "x #2", "y"]


def test_runs_of_different_suites_are_not_compared(tmp_path: Path) -> None:
    a = runs.Run(tmp_path / "a", "a", {"mini": _summary()})
    b = runs.Run(tmp_path / "b", "b", {"other": _summary("other")})
    runs.check_same_suites([a, a])
    with pytest.raises(runs.CompareError, match="cannot compare runs of different suites") as info:
        runs.check_same_suites([a, b])
    assert "'mini'" in str(info.value) and "'other'" in str(info.value)


def test_headline_is_the_first_metric() -> None:
    assert runs.headline(_summary(value=62.5, other=10.0)) == ("acc", 62.5)
    name, value = runs.headline(_summary(value=None))
    assert name == "acc" and math.isnan(value)


A = [_rec("s1", True), _rec("s2", True), _rec("s3", False, difficulty="hard"), _rec("s4", False),
     _rec("only-a", True)]
B = [_rec("s1", True), _rec("s2", False), _rec("s3", True, difficulty="hard"), _rec("s4", True),
     _rec("only-b", False)]


def test_flips_are_the_shared_samples_that_changed() -> None:
    a, b = runs.Run(Path("a"), "a", {}, A), runs.Run(Path("b"), "b", {}, B)
    assert runs.flips("mini", a, b) == (["s3", "s4"], ["s2"])
    assert runs.flips("mini", b, a) == (["s2"], ["s3", "s4"])
    assert runs.flips("other", a, b) == ([], [])


def test_paired_compares_the_shared_samples_only() -> None:
    spec = MetricSpec(name="acc", tasks=("point",), slices=("difficulty",))
    got = runs.paired(spec, None, A, B, "accuracy")
    assert got is not None
    assert (got.n, got.regressed, got.fixed) == (4, 1, 2)
    assert got.delta == pytest.approx(25.0)  # 75 % against 50 % on s1..s4
    assert got.delta_low is not None and got.delta_high is not None
    assert got.delta_low <= got.delta <= got.delta_high
    assert got.p_value == stats.mcnemar_exact(1, 2)
    assert runs.paired(spec, None, A, B, "ms").p_value is None  # no McNemar for milliseconds
    hard = runs.paired(spec, "difficulty=hard", A, B, "accuracy")
    assert hard is not None and (hard.n, hard.fixed, hard.regressed) == (1, 1, 0)
    assert runs.paired(spec, None, A[:1], B[1:], "accuracy") is None  # nothing shared
    assert runs.paired(MetricSpec(name="mean", mean_of=("acc",)), None, A, B, "accuracy") is None


def test_spec_of_rebuilds_the_metric_from_the_summary_selection() -> None:
    entry = _summary().metrics["acc"]
    spec = runs.spec_of("acc", entry)
    assert spec is not None and spec.tasks == ("point",) and spec.slices == ("difficulty",)
    assert runs.spec_of("old", MetricSummary(value=1.0, n=1)) is None  # an older summary: no selection


def test_lines_give_each_run_against_the_first() -> None:
    a = runs.Run(Path("a"), "a", {"mini": _summary(value=50.0)}, A)
    b = runs.Run(Path("b"), "b", {"mini": _summary(value=75.0)}, B)
    overall, easy, hard = runs.lines("mini", "acc", [a, b])
    assert (overall.label, easy.label, hard.label) == (None, "difficulty=easy", "difficulty=hard")
    assert overall.values == [50.0, 75.0] and overall.deltas == [None, 25.0]
    assert overall.paired[0] is None and overall.paired[1] is not None and overall.paired[1].fixed == 2
    assert easy.deltas == [None, 0.0]
