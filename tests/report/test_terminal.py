"""What a person reads in the terminal: a failing run ends with the table and the verdict, per-sample
lines stay bounded, progress shows under xdist, the latency benchmark runs only when asked for."""

from __future__ import annotations

import re

import pytest
from conftest import Project

from pytest_uiground.report.terminal_summary import SAMPLE_LINES

pytestmark = pytest.mark.slow


def _after_progress(lines: list[str]) -> list[str]:
    """The lines after pytest's progress characters (classic style: lines of status letters only)."""
    end = max(i for i, line in enumerate(lines) if re.fullmatch(r"[.RFxsEX]+", line.strip()))
    return lines[end + 1:]


def test_failing_run_output_does_not_grow_with_the_regressions(project: Project) -> None:
    ids = project.ids()
    assert project.run("--snapshot-update").ret == 0
    few = project.run(wrong=ids[:2], xdist=["-n", "2"])
    many = project.run(wrong=ids, xdist=["-n", "2"])
    assert few.ret == many.ret == 1
    tail_few, tail_many = _after_progress(few.stdout.lines), _after_progress(many.stdout.lines)
    # All samples regressed vs two: the difference is only the capped per-sample lines, "... and N more", and
    # the floor the all-wrong run also breaks (one line naming the suite file).
    assert "is below its floor" in many.stdout.str() and "is below its floor" not in few.stdout.str()
    assert len(tail_many) - len(tail_few) == (SAMPLE_LINES - 2) + 1 + 1
    assert tail_many[-2].startswith("uiground verdict for mini: FAIL") and "regressed" in tail_many[-1]
    listed = [m.group(1) for line in tail_many if (m := re.match(r"  (\S+): .* expected ", line))]
    assert listed == ids[:SAMPLE_LINES]  # id order, capped
    many.stdout.fnmatch_lines([f"  ... and {len(ids) - SAMPLE_LINES} more (all of them: rerun with "
                               "--uiground-report DIR)"])
    assert "R" in "".join(many.stdout.lines)  # the progress letter of a regression


def test_paths_cache_hits_and_progress_under_xdist(project: Project, xdist: list[str]) -> None:
    project.record(xdist=xdist)
    n = len(project.ids())
    project.run("--model", "fakemodels:create_cached", "--uiground-cache", "cache")
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "fakemodels:create_cached", "--uiground-cache", "cache", "-p", "no:cacheprovider",
        "--uiground-report", "out", "--uiground-progress", "0.000001", *xdist)
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    root = project.root / "out"
    assert f"report: {root / 'samples.jsonl'}, {root / 'summary.json'}, {root / 'report.html'}" in out
    assert all((root / name).is_file() for name in ("samples.jsonl", "summary.json", "report.html"))
    result.stdout.fnmatch_lines([f"*{n} predictions from the cache*model loaded in * s (*)*"])
    progress = [line for line in result.stdout.lines if line.startswith("uiground: ") and "samples," in line]
    assert progress, out
    assert re.fullmatch(rf"uiground: {n}/{n} samples, [\d.]+/s, ETA 0:00:00, {n} from the cache; model loaded "
                        r"in .*", progress[-1])


def test_latency_benchmark_only_when_asked(project: Project) -> None:
    project.record()
    plain = project.run("-rs")
    assert plain.ret == 0
    plain.stdout.fnmatch_lines(["SKIPPED*the serial latency benchmark runs only when asked for*"])
    assert "benchmark: 1 tests" not in plain.stdout.str()
    asked = project.run("--uiground-latency-benchmark")
    assert asked.ret == 0
    asked.stdout.fnmatch_lines(["*benchmark: 1 tests*", "*test_latency*"])



def test_report_html_renders_without_matplotlib(project: Project) -> None:
    """report.html draws its charts as inline SVG: without matplotlib it renders them all."""
    project.record()
    project.pytester.makeconftest("import sys\nsys.modules['matplotlib'] = None  # as if not installed\n")
    result = project.run("--uiground-report", "out")
    assert result.ret == 0, result.stdout.str()
    page = (project.root / "out" / "report.html").read_text()
    assert '<svg class="plot"' in page
    assert "grounding_accuracy" in page and "could not be rendered" not in page
