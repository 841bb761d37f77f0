"""SIGTERM is an interrupt like Ctrl-C: exit 2, an "interrupted" summary of what finished, the JUnit
XML, whether it reaches the main process only or the whole process group.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
from conftest import SLOW_MODEL, Project, interrupted_run, strict_json

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


def _records(project: Project) -> list[str]:
    log = project.root / "out" / "samples.jsonl"
    return [strict_json(line)["id"] for line in log.read_text().splitlines()] if log.is_file() else []


def test_signals_at_random_moments_never_leave_a_mixed_report(project: Project) -> None:
    """SIGTERM at 20 random moments (seeded), half the runs with -n 2, into a report folder that holds a
    previous complete run, and two kill -9s: the folder always holds this run's records with either no
    summary or the summary of exactly those records (the handler only asks pytest to stop, and a run
    removes the previous summary before it replaces samples.jsonl). Before, 5 of 12 such runs ended with
    this run's records beside the previous run's complete summary."""
    project.pytester.makepyfile(slowmodel=SLOW_MODEL)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project.root), *sys.path])}
    args = [sys.executable, "-m", "pytest", "suites/mini", "--model", "slowmodel:create", "-p", "no:cacheprovider",
            "-p", "no:randomly", "--uiground-report", "out", "-W", "error"]
    project.record()
    assert subprocess.run(args, cwd=project.root, env=env, capture_output=True).returncode == 0
    assert strict_json((project.root / "out" / "summary.json").read_text())["n_samples"] == len(project.ids())
    rng = random.Random(20)
    stopped_mid_run = 0
    for k in range(22):
        sig = signal.SIGKILL if k in (7, 15) else signal.SIGTERM
        xdist = ["-n", "2"] if k % 2 else []
        log = project.root / "out" / "samples.jsonl"
        before = (log.stat().st_mtime_ns, log.stat().st_size) if log.is_file() else None
        proc = subprocess.Popen([*args, *xdist], cwd=project.root, env={**env, "UIGROUND_SLEEP": "0.05"},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # Every other signal comes a random moment after this run's first record (so a loaded machine's
        # slow start cannot push them all before the samples), the others at any moment from the start.
        if k % 4 < 2:
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline and before == (
                    (log.stat().st_mtime_ns, log.stat().st_size) if log.is_file() else None):
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.3))
        else:
            time.sleep(rng.uniform(0.0, 3.0))
        proc.send_signal(sig)
        out = proc.communicate(timeout=120)[0].decode()
        done = _records(project)
        summary_file = project.root / "out" / "summary.json"
        assert "Traceback" not in out and "INTERNALERROR" not in out, out
        if sig is signal.SIGKILL:
            assert proc.returncode in (0, 1, -signal.SIGKILL), "killed, or finished before the signal"
            assert not summary_file.exists() or strict_json(summary_file.read_text())["n_samples"] == len(done)
            continue
        # -SIGTERM: the signal came after pytest had finished and restored the default handler.
        assert proc.returncode in (0, 1, 2, -signal.SIGTERM), out
        if not done:
            continue
        summary = strict_json(summary_file.read_text())
        assert summary["n_samples"] == len(done), (k, out)  # the records and the summary of one run
        wrote = before != ((log.stat().st_mtime_ns, log.stat().st_size) if log.is_file() else None)
        if wrote:  # else stopped before its first record: the previous run's pair stands, untouched
            assert summary.get("interrupted", False) is (proc.returncode == 2), (k, out)
            stopped_mid_run += proc.returncode == 2
    assert stopped_mid_run >= 5, "the signals must land inside runs, not only before or after them"


def test_the_first_sigterm_asks_to_stop_and_the_second_insists(pytester: pytest.Pytester) -> None:
    from pytest_uiground.run.stop import StopOnSigterm

    config = pytester.parseconfigure("-p", "no:cacheprovider")
    stop = config.pluginmanager.get_plugin("uiground-sigterm")
    assert isinstance(stop, StopOnSigterm) and signal.getsignal(signal.SIGTERM) is stop
    session = pytest.Session.from_config(config)
    stop.pytest_sessionstart(session)
    stop(signal.SIGTERM, None)
    assert session.shouldstop == f"signal {int(signal.SIGTERM)} (SIGTERM)", "asked, not raised"
    with pytest.raises(KeyboardInterrupt):
        stop(signal.SIGTERM, None)
    config._ensure_unconfigure()
    assert signal.getsignal(signal.SIGTERM) is not stop, "the previous handler is back after the session"
