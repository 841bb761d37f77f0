"""The CI gate's Markdown summary: --uiground-markdown FILE and $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Project

pytestmark = pytest.mark.slow


def test_markdown_summary_of_a_failing_upgrade(project: Project, xdist: list[str]) -> None:
    ids = project.ids()
    assert project.run("--snapshot-update", wrong=ids[:1]).ret == 0
    step = project.root / "step-summary.md"
    step.write_text("earlier step\n")
    project.monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    for name, value in (("GITHUB_SERVER_URL", "https://github.com"), ("GITHUB_REPOSITORY", "acme/ui"),
                        ("GITHUB_RUN_ID", "42")):
        project.monkeypatch.setenv(name, value)
    result = project.run("--uiground-markdown", "gate.md", "--uiground-report", "out", wrong=[ids[0], *ids[2:5]],
                         xdist=xdist)
    assert result.ret == 1
    text = (project.root / "gate.md").read_text()
    lines = text.splitlines()
    assert lines[0] == "## ❌ uiground: mini — FAIL"
    assert "3 samples regressed" in text and "model `scripted`" in text and "baseline `scripted`" in text
    row = next(line for line in lines if line.startswith("| grounding_accuracy |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    n = len(ids)
    assert float(cells[1]) == pytest.approx(100 * (n - 4) / n, abs=0.01)  # value
    assert float(cells[2]) == pytest.approx(100 * (n - 1) / n, abs=0.01)  # baseline
    assert float(cells[3]) == pytest.approx(-300 / n, abs=0.01)  # delta
    assert cells[4].startswith("[") and cells[6] == "3 / 0" and cells[8].startswith("**FAIL")
    assert "<details><summary>3 slices" in text  # the slice rows are folded
    assert f"**Regressed (3):** `{ids[2]}`, `{ids[3]}`, `{ids[4]}`" in text
    assert "**Fixed (0)**" in text
    assert str(project.root / "out" / "report.html") in text
    assert "[workflow run artifacts](https://github.com/acme/ui/actions/runs/42#artifacts)" in text
    # The job summary gets the same text, appended after what earlier steps wrote.
    assert step.read_text() == "earlier step\n" + text
    result.stdout.fnmatch_lines([f"markdown summary: {project.root / 'gate.md'}, {step}"])


def test_markdown_summary_of_a_passing_run_with_fixes(project: Project) -> None:
    ids = project.ids()
    assert project.run("--snapshot-update", wrong=ids[:2]).ret == 0
    project.monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert project.run("--uiground-markdown", "gate.md").ret == 0
    text = (project.root / "gate.md").read_text()
    assert text.startswith("## ✅ uiground: mini — PASS")
    assert f"**Fixed (2):** `{ids[0]}`, `{ids[1]}`" in text and "**Regressed (0)**" in text


def test_markdown_cells_are_escaped(tmp_path: Path) -> None:
    """Text from metadata put in a Markdown table cell is escaped: a '|' cannot add a column, and images or
    HTML cannot reach the CI job summary."""
    from pytest_uiground.report.markdown import cell, code

    hostile = "a|b ![t](https://x/y.png) <img src=x onerror=alert(1)> `tick`"
    escaped = cell(hostile)
    assert "|" not in escaped.replace("\\|", "")
    assert "![" not in escaped and "<img" not in escaped and "&lt;img" in escaped
    assert code("id`with`ticks").count("`") == 2
    row = f"| {cell('grounding_accuracy · os=a|b')} | 1 | FAIL |"
    assert row.replace("\\|", "").count("|") == 4  # the FAIL cell stays in its column


def test_markdown_summary_of_a_hostile_slice_keeps_its_columns(tmp_path: Path) -> None:
    """A rendered check whose slice value holds '|' and HTML keeps its row at nine columns."""
    from pytest_uiground.gate.checks import Check
    from pytest_uiground.gate.metrics import Aggregate
    from pytest_uiground.gate.verdict import decide
    from pytest_uiground.report.markdown import SuiteSection, render

    agg = Aggregate(value=40.0, n=10, ids=tuple(f"s{i}" for i in range(10)))
    checks = [Check("mini", "grounding_accuracy", "os=a|b<img src=x>", agg, 50.0, 2.0, None, False, False, "s.toml")]
    text = render([SuiteSection("mini", "m![x](y)", None, checks, None, [], [], decide(checks, None, []))], env={})
    rows = [line for line in text.splitlines() if line.startswith("| grounding_accuracy")]
    assert len(rows) == 1 and rows[0].replace("\\|", "").count("|") == 10
    assert "**FAIL" in rows[0].split("|")[-2] and "<img" not in text
    assert "model `m![x](y)`" in text  # inside a code span: shown as text, never rendered as an image
