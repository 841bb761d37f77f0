"""``python -m pytest_uiground compare``: runs side by side, and refusals that name the culprit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

# matplotlib's modules are imported here, not first inside a test: pytester restores sys.modules after
# each test, and a second copy of matplotlib's classes breaks the next figure.
import pytest

pytest.importorskip("matplotlib", reason="the plots need the [report] extra (pip install 'pytest-uiground[report]')")
import matplotlib.backends.backend_agg
import matplotlib.figure  # noqa: F401
from conftest import Project, write_json
from test_htmlreport import Page, check_self_contained, read_page

from pytest_uiground.__main__ import main as cli
from pytest_uiground.report import compare
from pytest_uiground.report.summary import Latency, MetricSummary, SuiteSummary, run_doc
from pytest_uiground.results import SampleResult


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
def test_two_runs_of_one_suite_side_by_side(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    size_sliced(project)
    ids = project.ids()
    assert project.run("--uiground-report", "good", wrong=ids[:1]).ret == 0
    assert project.run("--uiground-report", "bad", wrong=ids[:6], garbled=ids[6:7]).ret == 0
    good, bad = project.summary("good"), project.summary("bad")
    capsys.readouterr()

    out_html = project.root / "cmp.html"
    rc = cli(["compare", str(project.root / "good"), str(project.root / "bad"), "--html", str(out_html),
              "--labels", "first,second"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.splitlines()[0].split() == ["suite", "mini", "first", "second"]
    metrics = [s["metrics"]["grounding_accuracy"] for s in (good, bad)]
    assert row(out, "grounding_accuracy") == [f"{m['value']:.2f}" for m in metrics]
    for label in metrics[0]["slices"]:
        assert row(out, label) == [f"{m['slices'].get(label, float('nan')):.2f}".replace("nan", "-")
                                   for m in metrics]
    assert row(out, "format errors") == ["0", "1"]
    assert row(out, "latency p50 (ms)") == [f"{s['latency_ms']['p50']:.1f}" for s in (good, bad)]

    page = read_page(out_html)
    assert len(check_self_contained(page)) >= 2
    assert [a["alt"] for a in page.images("plot")] == ["grounding_accuracy by element size", "accuracy vs latency"]
    assert "first" in page.text and "second" in page.text

    proc = subprocess.run([sys.executable, "-m", "pytest_uiground", "compare", "good", "bad"],
                          cwd=project.root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split() == ["suite", "mini", "scripted", "(good)", "scripted", "(bad)"]


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


def test_multi_suite_runs_fall_back_to_a_common_slice_key_and_sample_latencies(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
    assert "m (r1)" in out and "m (r2)" in out
    assert rows(out, "latency p50 (ms)") == [["10.0", "10.0"], ["3.0", "3.0"]]  # other: from samples.jsonl
    page: Page = read_page(out_html)
    check_self_contained(page)
    alts = [a["alt"] for a in page.images("plot")]
    assert alts == ["acc by theme", "accuracy vs latency", "accuracy vs latency"]


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
    assert rows(capsys.readouterr().out, "latency p50 (ms)") == [["1.5", "1.5"]]
