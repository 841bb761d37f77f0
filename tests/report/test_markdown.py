"""The CI gate's Markdown summary: --uiground-markdown FILE and $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

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
