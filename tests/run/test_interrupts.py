"""SIGTERM is an interrupt like Ctrl-C: exit 2, an "interrupted" summary of what finished, the JUnit
XML, whether it reaches the main process only or the whole process group.
"""

from __future__ import annotations

import signal

import pytest
from conftest import Project, interrupted_run, strict_json

pytestmark = pytest.mark.slow


def test_sigterm_is_an_interrupt(project: Project, xdist: list[str]) -> None:
    """SIGTERM (a timeout, docker stop, a cancelled CI job) is an interrupt: exit 2, an "interrupted"
    summary of exactly the samples in samples.jsonl, and the JUnit XML."""
    ids = project.ids()
    proc, out = interrupted_run(project, signal.SIGTERM, "--junitxml", "junit.xml", *xdist)
    log = project.root / "out" / "samples.jsonl"
    assert proc.returncode == 2, out
    assert "INTERNALERROR" not in out
    summary = strict_json((project.root / "out" / "summary.json").read_text())
    assert summary["interrupted"] is True
    done = [strict_json(line)["id"] for line in log.read_text().splitlines()]
    assert 3 <= summary["n_samples"] == len(done) < len(ids)
    assert (project.root / "junit.xml").is_file()


def test_sigterm_to_the_whole_process_group_is_an_interrupt(project: Project, xdist: list[str]) -> None:
    """SIGTERM to the whole process group (a CI runner or a shell stopping a job reaches the xdist workers
    too) is the same interrupt: the workers' deaths are not crashes to replace, and the summary describes
    this run's records only."""
    ids = project.ids()
    proc, out = interrupted_run(project, signal.SIGTERM, "--junitxml", "junit.xml", *xdist, group=True)
    log = project.root / "out" / "samples.jsonl"
    assert proc.returncode == 2, out
    assert "INTERNALERROR" not in out and "replacing crashed worker" not in out
    summary = strict_json((project.root / "out" / "summary.json").read_text())
    assert summary["interrupted"] is True
    done = [strict_json(line)["id"] for line in log.read_text().splitlines()]
    assert 3 <= summary["n_samples"] == len(done) < len(ids)
    assert (project.root / "junit.xml").is_file()
