"""Writing the report (samples.jsonl, summary.json, report.html) under faults: a full disk or an
unwritable folder costs the report only, never the verdict, the samples or the JUnit XML; a folder
another run is writing is refused at start-up.
"""

from __future__ import annotations

import os

import pytest
from conftest import FAULTS_CONFTEST, Project, no_crash, strict_json, verdict

from pytest_uiground.gate import baseline as baseline_mod

pytestmark = pytest.mark.slow


def test_disk_full_on_the_report_keeps_the_verdict_and_the_junit_xml(project: Project, xdist: list[str]) -> None:
    """A disk that fills up while the report is written costs the report only: the verdict and exit code
    stay those of the checks, the JUnit XML is written, samples.jsonl holds whole lines, one line says why."""
    project.record(xdist=xdist)
    project.pytester.makeconftest(FAULTS_CONFTEST)
    project.monkeypatch.setenv("UIGROUND_FSYNC_OK", "3")
    result = project.run("--uiground-report", "out", "--junitxml", "junit.xml", xdist=xdist)
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 0, out
    # each output that could not be written is one line (samples.jsonl stops; the summary fails)
    assert out.count("uiground: could not write samples.jsonl") == 1 and "No space left on device" in out
    assert "Traceback" not in out
    assert "PASS" in verdict(out)
    assert (project.root / "junit.xml").is_file()
    lines = (project.root / "out" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(strict_json(line)["id"] for line in lines)  # whole lines only


def test_unwritable_report_folder_is_one_line_and_every_sample_runs(project: Project, xdist: list[str]) -> None:
    """A report folder that cannot be written is one line per output, and every sample still runs (no
    INTERNALERROR after the first). Simulated with folders where samples.jsonl and summary.json should be
    (chmod does not stop root)."""
    project.record(xdist=xdist)
    ids = project.ids()
    (project.root / "out" / "samples.jsonl").mkdir(parents=True)
    (project.root / "out" / "summary.json").mkdir()
    result = project.run("--uiground-report", "out", "--junitxml", "junit.xml", xdist=xdist)
    out = result.stdout.str()
    no_crash(out)
    assert result.ret == 0, out
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] > len(ids) and "failed" not in outcomes  # every sample ran, and the checks
    assert out.count("uiground: could not write samples.jsonl") == 1
    assert out.count("uiground: could not write the report") == 1
    assert (project.root / "junit.xml").is_file()


def test_report_folder_in_use_is_refused_at_start_up(project: Project) -> None:
    """A report folder another pytest run is writing (its lock held) is a usage error at start-up naming
    that run's pid; the lock file is gone after a normal run."""
    project.record()
    lock = baseline_mod.ReportLock(project.root / "out")
    assert lock.acquire() is None
    try:
        second = project.run("--uiground-report", "out")
        err = second.stderr.str()
        assert second.ret == pytest.ExitCode.USAGE_ERROR
        assert "another pytest run is writing the report folder" in err and str(os.getpid()) in err
        assert not (project.root / "out" / "samples.jsonl").exists()
    finally:
        lock.release()
    assert project.run("--uiground-report", "out").ret == 0
    assert not (project.root / "out" / baseline_mod.ReportLock.NAME).exists()
