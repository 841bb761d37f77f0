"""The built-in outputs, as implementations of the plugin's own hooks (:mod:`pytest_uiground.hookspecs`).

Each writer is a small plugin registered by :mod:`pytest_uiground.plugin` on the controlling
process: the report folder (``samples.jsonl`` as records arrive; ``summary.json`` and
``report.html`` at the end), the Markdown summary (``--uiground-markdown``,
``$GITHUB_STEP_SUMMARY``), the JUnit suite properties and the terminal section. They receive
the same records a third-party plugin receives, and read the verdict the gate decided
(:mod:`pytest_uiground.gate.verdict`); none decides anything. A write that fails is one line in
the terminal (:class:`Failures`), never a traceback, and never changes the verdict or the exit
status.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate.aggregate import CHECK
from pytest_uiground.options import RunOptions
from pytest_uiground.perturb.robustness import of_outcome
from pytest_uiground.record.files import atomic_write_text as write
from pytest_uiground.record.result import SampleResult
from pytest_uiground.report import details, junit, robustness
from pytest_uiground.report import summary as summary_mod
from pytest_uiground.report.samples_log import SampleLog
from pytest_uiground.suite.config import SAFE_NAME

if TYPE_CHECKING:  # types only: the writers are handed outcomes, they never build them
    from pytest_uiground.gate.outcome import SuiteOutcome


class Failures(list[str]):
    """One line per output that could not be written, shown in the terminal section."""

    def add(self, path: Any, exc: OSError, what: str) -> None:
        self.append(f"uiground: could not write {what} at {path}: {exc.strerror or exc} (errno {exc.errno})")


def artifacts(root: Path | None, suite: str, n_suites: int) -> list[Path]:
    """samples.jsonl, summary.json and report.html of a suite, when --uiground-report is given."""
    if root is None:
        return []
    suite_root = root / suite if n_suites > 1 else root
    return [root / "samples.jsonl", suite_root / "summary.json", suite_root / "report.html"]


def summary_doc(out: SuiteOutcome) -> summary_mod.SuiteSummary:
    """The suite's ``summary.json`` record, with its verdict, from the one outcome record."""
    doc = summary_mod.build(out.name, out.model, out.results, out.metric_results, out.checks, out.latency,
                            out.provenance, out.verdict, out.noise.to_json() if out.noise is not None else None,
                            out.new_ids, out.removed_ids, out.loaded.quirks,
                            out.against.to_json() if out.against is not None else None)
    doc = dataclasses.replace(doc, robustness=robustness.to_json(of_outcome(out)))
    return details.complete(doc, [m.spec for m in out.metric_results], out.results,
                            out.baseline.provenance if out.baseline is not None else None)


class ReportFolder:
    """``--uiground-report DIR``: ``samples.jsonl`` line by line (a crash keeps what finished), then
    ``summary.json`` and ``report.html``. Two runs writing one folder would interleave
    ``samples.jsonl``: the second is refused at start-up. A folder that cannot be written is noted
    once, and the run goes on. A run of nothing keeps the previous report untouched."""

    def __init__(self, root: Path, failures: Failures) -> None:
        self.root, self.failures = root, failures
        self.log: SampleLog | None = None  # opened on the first record
        self.lock: baseline_mod.ReportLock | None = None
        self.broken = False
        lock = baseline_mod.ReportLock(root)
        try:
            busy = lock.acquire()
        except OSError as exc:
            failures.add(root, exc, "the report")
            self.broken = True
            return
        if busy:
            raise pytest.UsageError(busy)
        self.lock = lock

    def pytest_uiground_sample_result(self, config: pytest.Config, result: SampleResult) -> None:
        if self.broken:
            return
        path = self.root / "samples.jsonl"
        try:
            if self.log is None:
                self._invalidate()
                self.log = SampleLog(path)
            self.log.write(result.to_json())
        except OSError as exc:  # the run goes on; samples.jsonl keeps the whole lines written so far
            self.broken = True
            self.failures.add(path, exc, "samples.jsonl")

    def pytest_uiground_run_outcome(self, config: pytest.Config, outcomes: Sequence[SuiteOutcome],
                                    interrupted: bool) -> None:
        self._close()
        if self.lock is None and self.log is None:
            return
        try:
            self._write(config, outcomes, interrupted)
        except OSError as exc:
            self.failures.add(getattr(exc, "filename", None) or self.root, exc, "the report")

    def _write(self, config: pytest.Config, outcomes: Sequence[SuiteOutcome], interrupted: bool) -> None:
        docs = {o.name: summary_doc(o) for o in outcomes}
        mark = {"interrupted": True} if interrupted else {}
        if len(docs) == 1:
            (doc,) = docs.values()
            write(self.root / "summary.json", summary_mod.dumps({**doc.to_json(), **mark}))
        else:
            for name, doc in docs.items():
                write(self.root / name / "summary.json", summary_mod.dumps({**doc.to_json(), **mark}))
            write(self.root / "summary.json", summary_mod.dumps({**summary_mod.run_doc(docs), **mark}))
        # The HTML comes last and cannot fail the session: a render error becomes a page saying so.
        from pytest_uiground.report import html as htmlreport

        tr = config.pluginmanager.get_plugin("terminalreporter")
        say = tr.write_line if tr is not None else None
        htmlreport.write_reports(self.root, [
            htmlreport.SuitePage(docs[o.name], o.results, {s.id: s for s in o.loaded.samples}.get) for o in outcomes
        ], warn=say, progress=say)

    def _invalidate(self) -> None:
        """Remove the previous run's summaries and pages before this run's records replace its
        ``samples.jsonl``: a run stopped at any moment (``kill -9`` included) then leaves its own
        records and no summary, never its records beside another run's summary."""
        suites: list[str] = []
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):  # a damaged one names none
            previous = json.loads((self.root / "summary.json").read_text(encoding="utf-8"))
            suites = [str(name) for name in previous.get("suites", {})]
        named = [self.root / name for name in suites if SAFE_NAME.fullmatch(name) and ".." not in name]
        for folder in (self.root, *named):
            for name in ("summary.json", "report.html"):
                (folder / name).unlink(missing_ok=True)

    def _close(self) -> None:
        if self.log is not None:
            self.log.close()

    def pytest_unconfigure(self) -> None:
        self._close()
        if self.lock is not None:
            self.lock.release()
            self.lock = None


class MarkdownSummary:
    """``--uiground-markdown FILE`` and ``$GITHUB_STEP_SUMMARY``: the CI gate's summary (and PR comment)."""

    def __init__(self, options: RunOptions, failures: Failures) -> None:
        self.options, self.failures = options, failures
        self.written: list[Path] = []

    def pytest_uiground_run_outcome(self, config: pytest.Config, outcomes: Sequence[SuiteOutcome],
                                    interrupted: bool) -> None:
        if self.options.markdown is None and not os.environ.get("GITHUB_STEP_SUMMARY"):
            return
        from pytest_uiground.report import markdown

        sections = [markdown.SuiteSection(
            suite=o.name, model=o.model_name or self.options.model.name,
            baseline=o.baseline.provenance if o.baseline is not None else None, checks=o.checks,
            latency=o.latency, results=o.results, artifacts=artifacts(self.options.report_dir, o.name, len(outcomes)),
            verdict=o.verdict, samples={smp.id: smp for smp in o.loaded.samples},
            robustness=robustness.markdown_lines(of_outcome(o))) for o in outcomes]
        if sections:
            self.written = markdown.write(markdown.render(sections), self.options.markdown, failed=self.failures.append)


class JUnitProperties:
    """The suite-level JUnit properties (model, baseline, verdict), as ``record_testsuite_property``
    writes them; the per-check properties ride on the aggregate items (:mod:`pytest_uiground.gate.aggregate`)."""

    def __init__(self) -> None:
        self.done: set[str] = set()

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        check = item.stash.get(CHECK, None)
        if check is not None:
            item.user_properties += junit.check_properties(check)

    def pytest_uiground_suite_outcome(self, config: pytest.Config, outcome: SuiteOutcome) -> None:
        if outcome.name in self.done:
            return  # JUnit keeps every property written: a re-decided verdict (interrupted) is not repeated
        self.done.add(outcome.name)
        junit.add_suite_properties(config, junit.suite_properties(
            outcome.name, outcome.model, outcome.baseline.provenance if outcome.baseline is not None else None,
            outcome.verdict))


class TerminalSection:
    """The uiground section of the terminal summary, one block per suite, after pytest's own summary,
    so a CI log read from the bottom shows the table and the verdict."""

    def __init__(self, options: RunOptions, failures: Failures, markdown: MarkdownSummary) -> None:
        self.options, self.failures, self.markdown = options, failures, markdown
        self.outcomes: dict[str, SuiteOutcome] = {}

    def pytest_uiground_suite_outcome(self, config: pytest.Config, outcome: SuiteOutcome) -> None:
        self.outcomes[outcome.name] = outcome

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, None, None]:
        from pytest_uiground.report.terminal_summary import write_suite

        yield
        tr = terminalreporter
        for line in self.failures:
            tr.write_line(line, yellow=True)
        progress = tr.config.pluginmanager.get_plugin("uiground-progress")
        for o in self.outcomes.values():
            lines = []
            if self.options.report_dir is not None:
                lines.append("report: " + ", ".join(str(p) for p in artifacts(self.options.report_dir, o.name,
                                                                                len(self.outcomes))))
            if self.markdown.written:
                lines.append("markdown summary: " + ", ".join(str(p) for p in self.markdown.written))
            write_suite(tr, o, self.options, progress.load_text() if progress is not None else "", lines)
