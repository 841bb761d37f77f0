"""``python -m pytest_uiground compare``: what changed from the first run, and refusals that name the culprit."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

# numpy is imported here, not first inside a test: pytester restores sys.modules after each test, and
# numpy cannot be loaded twice in one process.
import numpy  # noqa: F401
import pytest
from conftest import Project, write_json
from test_htmlreport import Page, check_self_contained, read_page

from pytest_uiground.__main__ import main as cli
from pytest_uiground.gate import stats
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.score import Score
from pytest_uiground.report import compare
from pytest_uiground.report.comparepage import render_html
from pytest_uiground.report.summary import Latency, MetricSummary, SuiteSummary, run_doc


def size_sliced(project: Project) -> None:
    path = project.root / "suites" / "mini" / "suite.toml"
    path.write_text(path.read_text().replace('slices = ["difficulty"]', 'slices = ["difficulty", "size"]'))


def rows(stdout: str, name: str) -> list[list[str]]:
    """The cells after ``name`` in each table line that starts with it (one per suite)."""
    return [ln.strip()[len(name):].split() for ln in stdout.splitlines() if ln.strip().startswith(name + "  ")]


def row(stdout: str, name: str) -> list[str]:
    (cells,) = rows(stdout, name)
    return cells


@pytest.mark.slow
def test_two_runs_of_one_suite_what_changed(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    size_sliced(project)
    ids = project.ids()
    project.record(wrong=ids[:7])  # wrong where either run is: neither regresses against it
    assert project.run("--uiground-report", "good", wrong=ids[:1]).ret == 0
    assert project.run("--uiground-report", "bad", wrong=ids[1:6], garbled=ids[6:7]).ret == 0
    good, bad = project.summary("good"), project.summary("bad")
    capsys.readouterr()

    out_html = project.root / "cmp.html"
    rc = cli(["compare", str(project.root / "good"), str(project.root / "bad"), "--html", str(out_html),
              "--labels", "first,second"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.splitlines()[0].split() == ["suite", "mini", "first", "second", "delta", "second", "p"]
    a, b = (s["metrics"]["grounding_accuracy"]["value"] for s in (good, bad))
    # 1 fixed (ids[0]), 6 regressed (ids[1:7]) on the same samples: McNemar from the discordant counts
    assert row(out, "grounding_accuracy") == [f"{a:.2f}", f"{b:.2f}", f"{b - a:+.2f}",
                                              f"{stats.mcnemar_exact(6, 1):.3g}"]
    n = len(ids)
    assert (f"second vs first: 1 fixed, 6 regressed of {n} shared samples (flip rate {100 * 7 / n:.2f} %); "
            f"one-sided McNemar p = {stats.mcnemar_one_sided(6, 1):.3g}") in out
    assert "  flip rate by slice: " in out, "the slices that flip most, for choosing a rule"
    # Every flipped sample with both runs' answers (the mini suite's scripted model clicks a corner when wrong).
    assert f"  fixed {ids[0]}: first (" in out and f"  regressed {ids[1]}: first (" in out
    assert f"  regressed {ids[6]}: first (" in out and "-> second '<<garbage>>'" in out
    assert row(out, "format errors") == ["0", "1"]

    page = read_page(out_html)
    check_self_contained(page)
    assert [a["aria-label"] for a in page.svgs] == ["grounding_accuracy by run", "accuracy vs latency"]
    flips = [a["alt"] for a in page.images("thumb")]
    assert flips[:2] == [f"first: {ids[0]}", f"second: {ids[0]}"]  # the fixed sample, both runs' crops
    assert len(flips) == 2 * 7
    assert "fixed (wrong before, right now) (1)" in page.text and "regressed (right before, wrong now) (6)" in page.text

    proc = subprocess.run([sys.executable, "-m", "pytest_uiground", "compare", "good", "bad"],
                          cwd=project.root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split()[:4] == ["suite", "mini", "good", "bad"]  # same model: dir names


def point_record(suite: str, sid: str, right: bool, latency: float, size: str) -> SampleResult:
    return SampleResult(suite=suite, id=sid, task="point", meta={"size": size}, score=Score(100.0 * right, right),
                        latency_ms=latency)


def write_run(root: Path, name: str, model: str, rights: list[bool], latency: float) -> list[SampleResult]:
    records = [point_record("mini", f"s{i}", r, latency + i, "lt32" if i % 2 else "gt100")
               for i, r in enumerate(rights)]
    value = 100.0 * sum(rights) / len(rights)
    slices = {f"size={k}": 100.0 * sum(r.right for r in records if r.meta["size"] == k)
              / sum(r.meta["size"] == k for r in records) for k in ("gt100", "lt32")}
    doc = SuiteSummary(suite="mini", model=model, model_fingerprint={"model": model}, n_samples=len(records),
                       format_errors=0, errors=(), regressed=(), fixed=(), provenance={"date": "2026-01-01"},
                       baseline_comparison={}, latency_ms=None,
                       metrics={"acc": MetricSummary(value=value, n=len(records), unit="accuracy", slices=slices,
                                                     slice_n={k: len(records) // 2 for k in slices},
                                                     selection={"tasks": ["point"]}),
                                "latency_ms": MetricSummary(value=latency, n=len(records), unit="ms",
                                                            higher_is_better=False,
                                                            selection={"score": "latency_ms"})})
    write_json(root / name / "summary.json", doc.to_json())
    (root / name / "samples.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in records))
    return records


def test_deltas_paired_statistics_and_flips_against_the_first_run(tmp_path: Path) -> None:
    a_right = [True] * 30 + [False] * 10
    b_right = [True] * 20 + [False] * 10 + [True] * 4 + [False] * 6  # 10 regressed (s20..s29), 4 fixed (s30..s33)
    a = write_run(tmp_path, "ocr", "ocr", a_right, 50.0)
    b = write_run(tmp_path, "ocr-fixed", "ocr", b_right, 80.0)
    runs = compare.load_runs([tmp_path / "ocr", tmp_path / "ocr-fixed"], None)
    assert [r.label for r in runs] == ["ocr", "ocr-fixed"]  # the same model: the folders tell them apart
    docs = [r.suites for r in runs]
    assert compare.default_labels([Path("x/run"), Path("y/run")], docs) == ["ocr \u00b7 run", "ocr \u00b7 run"]
    other = [docs[0], {"mini": replace(docs[1]["mini"], model="qwen")}]
    assert compare.default_labels([Path("x/run"), Path("y/run")], other) == ["ocr", "qwen"]
    overall, *slices = compare.lines("mini", "acc", runs)
    assert overall.values == [75.0, 60.0] and overall.deltas[1] == pytest.approx(-15.0)
    p = overall.paired[1]
    assert p is not None and (p.regressed, p.fixed, p.n) == (10, 4, 40)
    assert p.p_value == stats.mcnemar_exact(10, 4)
    a, b = sorted(a, key=lambda r: r.id), sorted(b, key=lambda r: r.id)  # the order the metric reads them in
    delta, low, high = stats.paired_bootstrap_delta([r.value for r in b], [r.value for r in a])
    assert (p.delta, p.delta_low, p.delta_high) == pytest.approx((delta, low, high))
    assert [s.label for s in slices] == ["size=gt100", "size=lt32"]
    lt = [i for i in range(40) if i % 2]
    sp = slices[1].paired[1]
    assert sp is not None and (sp.regressed, sp.fixed) == (sum(1 for i in lt if 20 <= i < 30),
                                                             sum(1 for i in lt if 30 <= i < 34))
    (lat,) = compare.lines("mini", "latency_ms", runs)
    assert lat.paired[1] is not None and lat.paired[1].p_value is None  # no McNemar for milliseconds
    assert lat.paired[1].delta == pytest.approx(30.0)
    assert compare.flips("mini", runs[0], runs[1]) == ([f"s{i}" for i in range(30, 34)],
                                                        sorted(f"s{i}" for i in range(20, 30)))
    page = Page(render_html(runs))
    check_self_contained(page)
    assert [s["aria-label"] for s in page.svgs] == ["acc by run", "latency_ms by run", "accuracy vs latency"]
    assert "no crop (run without report.html)" in page.text and page.text.count('class="flip"') == 14
    assert "milliseconds per sample, lower is better" in page.text


def suite_summary(suite: str, value: float, *, p50: float | None = 10.0, slices: dict[str, float] | None = None
                  ) -> SuiteSummary:
    return SuiteSummary(suite=suite, model="m", model_fingerprint=None, n_samples=4, format_errors=0, errors=(),
                        regressed=(), fixed=(), provenance={}, baseline_comparison={},
                        latency_ms=Latency(p50, 2 * p50, 4) if p50 is not None else None,
                        metrics={"acc": MetricSummary(value=value, n=4, slices=slices or {}),
                                 "other": MetricSummary(value=1.0, n=4)})


def summary(suite: str, value: float, **kwargs: Any) -> dict[str, Any]:
    """A single-suite ``summary.json`` as a run writes it."""
    return suite_summary(suite, value, **kwargs).to_json()


def sample_line(suite: str, sid: str, latency_ms: float) -> str:
    return json.dumps(SampleResult(suite=suite, id=sid, task="point", meta={}, latency_ms=latency_ms).to_json()) + "\n"


def test_runs_of_different_suites_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(tmp_path / "a" / "summary.json", summary("mini", 50.0))
    write_json(tmp_path / "b" / "summary.json", summary("other", 60.0))
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "different suites" in err
    assert f"{tmp_path / 'a'}: suite 'mini'" in err and f"{tmp_path / 'b'}: suite 'other'" in err

    both = run_doc({"mini": suite_summary("mini", 50.0), "other": suite_summary("other", 1.0)})
    write_json(tmp_path / "c" / "summary.json", both)
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "c")]) == 2
    assert f"{tmp_path / 'c'}: suites 'mini', 'other'" in capsys.readouterr().err


def test_a_dir_without_summary_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(tmp_path / "a" / "summary.json", summary("mini", 50.0))
    (tmp_path / "empty").mkdir()
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'empty'}: no summary.json" in err and f"--uiground-report {tmp_path / 'empty'}" in err
    assert compare.main([str(tmp_path / "a"), "--labels", "x,y"]) == 2
    assert "--labels has 2 label(s) for 1 run(s)" in capsys.readouterr().err


def test_multi_suite_runs_and_summaries_without_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in (("r1", 25.0), ("r2", 75.0)):
        docs = {"mini": suite_summary("mini", value, slices={"theme=dark": value, "theme=light": 100.0 - value}),
                "other": suite_summary("other", value / 2, p50=None)}
        write_json(tmp_path / name / "summary.json", run_doc(docs))
        (tmp_path / name / "samples.jsonl").write_text("".join(sample_line("other", f"s{i}", float(i))
                                                               for i in range(1, 6)))
    out_html = tmp_path / "cmp.html"
    assert compare.main([str(tmp_path / "r1"), str(tmp_path / "r2"), "--html", str(out_html)]) == 0
    out = capsys.readouterr().out
    assert out.count("suite mini") == 1 and out.count("suite other") == 1
    assert out.splitlines()[0].split() == ["suite", "mini", "r1", "r2", "delta", "r2", "p"]  # same model: dirs
    assert row(out.split("suite other")[0], "acc") == ["25.00", "75.00", "+50.00", "-"]  # no selection: no test
    assert rows(out, "latency p50 (ms)") == [["10.0", "10.0", "+0.0"], ["3.0", "3.0", "+0.0"]]  # from samples
    page = read_page(out_html)
    check_self_contained(page)
    alts = [a["aria-label"] for a in page.svgs]
    assert alts == ["acc by run", "other by run", "accuracy vs latency"] * 2


@pytest.mark.parametrize(("bad", "why"), [("{torn", "JSONDecodeError"),
                                          ('{"suite": "mini", "id": "x"}', "no 'task' field"),
                                          ("[1, 2]", "expected a JSON object")])
def test_a_malformed_sample_line_is_refused_by_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str, why: str) -> None:
    for name in ("a", "b"):
        write_json(tmp_path / name / "summary.json", summary("mini", 50.0, p50=None))
        (tmp_path / name / "samples.jsonl").write_text(sample_line("mini", "s1", 1.0) + sample_line("mini", "s2", 2.0))
    with (tmp_path / "b" / "samples.jsonl").open("a") as fh:
        fh.write(bad + "\n" + sample_line("mini", "s3", 3.0))
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{tmp_path / 'b' / 'samples.jsonl'}, line 3: not a sample record" in captured.err and why in captured.err
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "a")]) == 0  # the well-formed run still compares
    assert rows(capsys.readouterr().out, "latency p50 (ms)") == [["1.5", "1.5", "+0.0"]]
