"""One verdict, read everywhere (pytest_uiground.gate.verdict): for every kind of run the exit status,
the terminal's verdict line, ``summary.json``, ``report.html``'s headline, the Markdown summary, the
JUnit suite properties and the multi-suite index page say the same thing, with and without ``-n 2``.

Each scenario is a real pytest run of the mini suite (tests/conftest.py) with every output asked for."""

from __future__ import annotations

import json
import re
import signal
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import pytest
from conftest import Project, interrupted_run

pytestmark = pytest.mark.slow

OUTPUTS = ("--uiground-report", "out", "--uiground-markdown", "out/summary.md", "--junitxml", "out/junit.xml")
LATENCY_BUDGET = "\np50_ms = 0.000001\n"  # no model answers in a nanosecond: over budget on every run


@dataclass(frozen=True)
class Said:
    """What each output says of the suite's verdict."""

    exit_status: int
    terminal: str
    summary: str
    summary_status: str
    html_class: str
    html_headline: str
    markdown_status: str
    markdown_text: str
    junit_status: str
    junit_text: str


def read_outputs(root: Path, exit_status: int, stdout: str, suite: str = "mini") -> Said:
    lines = [line for line in stdout.splitlines() if line.startswith(f"uiground verdict for {suite}: ")]
    assert len(lines) == 1, stdout
    summary = json.loads((root / "out" / "summary.json").read_text())
    if "suites" in summary:
        summary = summary["suites"][suite]
        page = (root / "out" / suite / "report.html").read_text()
    else:
        page = (root / "out" / "report.html").read_text()
    banner = re.search(r'<div id="verdict" class="banner (\w+)"><div class="headline">(.*?)</div>', page)
    assert banner is not None, "report.html has no verdict banner"
    markdown = (root / "out" / "summary.md").read_text()
    head = re.search(rf"^## \S+ uiground: {suite} — (\w+)\n\n(.*)$", markdown, re.M)
    assert head is not None, markdown
    props = {p.get("name"): p.get("value") for p in ET.parse(root / "out" / "junit.xml").iter("property")}
    return Said(exit_status, lines[0].removeprefix(f"uiground verdict for {suite}: "), summary["verdict"]["text"],
                summary["verdict"]["status"], banner.group(1), unescape(banner.group(2)), head.group(1),
                head.group(2).replace("\\", ""), props[f"uiground.{suite}.verdict"],
                props[f"uiground.{suite}.verdict_text"])


def assert_agree(said: Said) -> None:
    """Every output carries the one verdict: the same status, the same wording."""
    status = said.summary_status
    assert status in ("PASS", "FAIL")
    assert (said.exit_status == 0) == (status == "PASS"), said
    assert said.terminal == said.summary == said.junit_text == said.markdown_text, said
    assert said.terminal.startswith(status) and said.junit_status == said.markdown_status == status, said
    assert said.html_class == status.lower() and said.html_headline.startswith(said.summary), said


def run(project: Project, *args: str, xdist: list[str], wrong: tuple[str, ...] = ()) -> Said:
    result = project.run(*OUTPUTS, *args, wrong=wrong, xdist=xdist)
    said = read_outputs(project.root, result.ret, result.stdout.str())
    assert_agree(said)
    return said


def record_baseline(project: Project, xdist: list[str]) -> None:
    assert project.run("--snapshot-update", xdist=xdist).ret == 0


def test_pass(project: Project, xdist: list[str]) -> None:
    record_baseline(project, xdist)
    said = run(project, xdist=xdist)
    assert said.terminal.startswith("PASS (4 checks ok")


def test_regressed_samples(project: Project, xdist: list[str]) -> None:
    record_baseline(project, xdist)
    said = run(project, xdist=xdist, wrong=tuple(project.ids()[:1]))
    assert said.exit_status == 1 and "1 sample regressed" in said.terminal


def test_a_sample_error(project: Project, xdist: list[str]) -> None:
    """The fault the issue measured: exit 1 and "FAIL: 1 sample error" while the page said PASS."""
    record_baseline(project, xdist)
    project.monkeypatch.setenv("UIGROUND_RAISE", project.ids()[2])
    said = run(project, xdist=xdist)
    assert said.exit_status == 1 and said.terminal.endswith("; 1 sample error")


def test_latency_over_budget(project: Project, xdist: list[str]) -> None:
    suite = project.root / "suites" / "mini" / "suite.toml"
    suite.write_text(suite.read_text().replace("[latency]\n", "[latency]" + LATENCY_BUDGET))
    record = project.run("--snapshot-update", xdist=xdist)
    assert record.ret == 1, "latency over budget fails the update run too"
    said = run(project, xdist=xdist)
    assert said.exit_status == 1 and said.terminal == "FAIL: latency over budget"


def test_a_refused_update(project: Project, xdist: list[str]) -> None:
    record_baseline(project, xdist)
    project.monkeypatch.setenv("UIGROUND_RAISE", project.ids()[0])
    said = run(project, "--snapshot-update", xdist=xdist)
    assert said.terminal == "FAIL: baseline NOT updated (refused); 1 sample error"


def test_a_partial_update(project: Project, xdist: list[str]) -> None:
    said = run(project, "--snapshot-update", "--uiground-limit", "3", xdist=xdist)
    assert said.terminal.startswith("FAIL: baseline NOT updated (partial run)")
    assert not (project.root / "baselines" / "mini").exists()


def test_checks_failed(project: Project, xdist: list[str]) -> None:
    project.write_suite(floor=99.0)
    said = run(project, xdist=xdist, wrong=tuple(project.ids()[:3]))
    assert said.exit_status == 1 and said.terminal.startswith("FAIL: ") and "checks failed" in said.terminal


def test_interrupted(project: Project, xdist: list[str]) -> None:
    project.record(xdist=xdist)
    proc, out = interrupted_run(project, signal.SIGINT, *OUTPUTS[2:], *xdist, group=True)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    said = read_outputs(project.root, proc.returncode, out)
    assert said.summary.startswith("FAIL: run interrupted after "), said
    assert said.terminal == said.summary == said.markdown_text == said.junit_text
    assert said.html_class == "fail" and said.junit_status == said.markdown_status == "FAIL"
    assert json.loads((project.root / "out" / "summary.json").read_text())["interrupted"] is True


def test_the_index_page_of_several_suites_shows_each_verdict(project: Project, xdist: list[str]) -> None:
    other = project.root / "suites" / "other"
    other.mkdir()
    text = (project.root / "suites" / "mini" / "suite.toml").read_text()
    text = text.replace('name = "mini"', 'name = "other"').replace("[latency]\n", "[latency]" + LATENCY_BUDGET)
    (other / "suite.toml").write_text(text)
    assert 'name = "other"' in (other / "suite.toml").read_text()
    project.record(xdist=xdist)  # mini's baseline; "other" has none (and is over its latency budget)
    result = project.pytester.runpytest_subprocess(
        "suites", "--model", "fakemodels:create", "-p", "no:cacheprovider", *OUTPUTS, *xdist)
    out = result.stdout.str()
    mini, failing = read_outputs(project.root, result.ret, out, "mini"), read_outputs(project.root, result.ret, out,
                                                                                      "other")
    assert mini.summary_status == "PASS" and failing.summary_status == "FAIL" and result.ret == 1
    index = (project.root / "out" / "report.html").read_text()
    cells = dict(re.findall(r'<a href="(\w+)/report.html">.*?<td class="l verdict \w+" title="[^"]*">(\w+)</td>',
                            index))
    assert cells == {"mini": "PASS", "other": "FAIL"}, index
