"""Controller side: gather per-sample records, run the aggregate checks, write outputs.

Registered only on the xdist controller (or the single process): it sees every
sample's record in ``pytest_runtest_logreport``, runs the aggregate checks as real
test items after all workers are done (so they show in the summary, JUnit XML and
the exit status), writes baselines on ``--snapshot-update`` and the reports.
The hooks here only sequence the work: the items are built in :mod:`.gate.aggregate`, the
gate's rules live in :mod:`.gate.rules`, the terminal section in :mod:`.report.terminal_summary`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate.aggregate import aggregate_items
from pytest_uiground.gate.checks import build_checks, latency_check
from pytest_uiground.gate.metrics import compute_all
from pytest_uiground.gate.rules import SuiteOutcome, check_start, dataset_provenance, provenance, update_refusal
from pytest_uiground.judges.base import incomparable
from pytest_uiground.options import RunOptions
from pytest_uiground.probe.plugin import stamp
from pytest_uiground.record.result import SampleResult, records_in
from pytest_uiground.report import details, junit
from pytest_uiground.report import summary as summary_mod
from pytest_uiground.report.samples_log import SampleLog
from pytest_uiground.report.terminal_summary import write_suite
from pytest_uiground.suite.loading import load_suite


class Controller:
    def __init__(self, config: pytest.Config, options: RunOptions) -> None:
        self.config = config
        self.options = options
        self.records: dict[Path, dict[str, SampleResult]] = {}
        self.models: dict[Path, dict[str, Any]] = {}
        self.judges: dict[Path, dict[str, Any]] = {}
        self.outcomes: list[SuiteOutcome] = []
        # Opened on the first record: a run of nothing keeps the previous report untouched.
        self.log: SampleLog | None = None
        self.parallel = bool(getattr(config.option, "numprocesses", None))
        self.markdown_written: list[Path] = []
        self.interrupted = False
        self.lock: baseline_mod.UpdateLock | None = None
        self.report_lock: baseline_mod.ReportLock | None = None
        self.write_failures: list[str] = []  # one line per output that could not be written
        self._log_failed = False
        check_start(config, options)
        if options.updating:
            self.lock = baseline_mod.UpdateLock(options.baselines_dir)
            busy = self.lock.acquire()
            if busy:
                self.lock = None
                raise pytest.UsageError(busy)
        if options.report_dir is not None:
            self._lock_report(options.report_dir)
        self._previous_sigterm: Any = None
        if not hasattr(config, "workerinput"):
            with contextlib.suppress(ValueError):  # pytest.main() run from another thread: no handler there
                self._previous_sigterm = signal.signal(signal.SIGTERM, _sigterm)

    def _lock_report(self, root: Path) -> None:
        """Two runs writing one report folder would interleave ``samples.jsonl``: the second is refused.
        A folder that cannot be written is noted once, and the run goes on (its verdict does not change)."""
        lock = baseline_mod.ReportLock(root)
        try:
            busy = lock.acquire()
        except OSError as exc:
            self.write_failures.append(write_failure(root, exc, "the report"))
            self._log_failed = True  # nothing is written there; the run goes on
            return
        if busy:
            if self.lock is not None:
                self.lock.release()
            raise pytest.UsageError(busy)
        self.report_lock = lock

    def pytest_unconfigure(self) -> None:
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None
        if self.lock is not None:
            self.lock.release()
        if self.report_lock is not None:
            self.report_lock.release()

    def _write_record(self, value: dict[str, Any]) -> None:
        if self.options.report_dir is None or self._log_failed:
            return
        path = self.options.report_dir / "samples.jsonl"
        try:
            if self.log is None:
                self.log = SampleLog(path)
            self.log.write(value)
        except OSError as exc:  # the run goes on; samples.jsonl keeps the whole lines written so far
            self._log_failed = True
            self.write_failures.append(write_failure(path, exc, "samples.jsonl"))

    # -- records -----------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":  # teardown reports repeat the same user_properties
            return
        for value in records_in(report.user_properties):
            result = SampleResult.from_json(value)
            path = self.config.rootpath / report.nodeid.split("::", 1)[0]
            self.records.setdefault(path, {})[result.id] = result
            if result.model:
                self.models.setdefault(path, result.model)
            if result.judge:
                self.judges.setdefault(path, result.judge)
            self._write_record(value)

    # -- aggregate items ---------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            result = yield
        except KeyboardInterrupt:
            self.interrupted = True  # sessionfinish writes what finished, marked interrupted
            raise
        outcomes = [self._outcome(path) for path in sorted(self.records)]
        for out in outcomes:
            self._write_baseline(out)  # before the checks run: a failed write fails them, so the verdict says so
        items = []
        for out in outcomes:
            suite_items = aggregate_items(session, self.config, self.options, out)
            for item, check in zip(suite_items, out.checks, strict=False):  # the latency item comes last
                item.user_properties += junit.check_properties(check)
            junit.add_suite_properties(self.config, junit.suite_properties(
                out.loaded.config.name, out.model, out.baseline.provenance if out.baseline is not None else None))
            items += suite_items
        session.testscollected += len(items)
        for item in items:
            item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
            if session.shouldstop:
                break
        return result

    def _outcome(self, path: Path) -> SuiteOutcome:
        """The suite's records, metrics and checks (not yet run), with the baseline compared."""
        loaded = load_suite(path, self.options.data_path)
        results = sorted(self.records[path].values(), key=lambda r: r.id)
        base = baseline_mod.load(self.options.baselines_dir, loaded.config.name)
        ran = {r.id for r in results}
        partial = ran != {s.id for s in loaded.samples}
        rel = str(path.relative_to(self.config.rootpath)) if path.is_relative_to(self.config.rootpath) else str(path)
        metric_results = compute_all(loaded.config.metrics, results)
        judge = self.judges.get(path)
        usable = base is not None and base.damaged is None
        why = incomparable(base.provenance.get("judge"), judge) if usable and base is not None and judge else None
        compare_with = None if why else base
        mismatch = (baseline_mod.provenance_mismatch(base, dataset_provenance(loaded),
                                                      {s.id for s in loaded.samples})
                    if usable and base is not None and not self.options.updating else None)
        out = SuiteOutcome(
            loaded=loaded, path=path, results=results, metric_results=metric_results, partial=partial,
            baseline=base, model=self.models.get(path), judge=judge, incomparable=why, mismatch=mismatch,
            checks=build_checks(loaded.config, metric_results, results, compare_with, partial=partial,
                                updating=self.options.updating, suite_file=rel, incomparable=why,
                                mismatch=mismatch, snapshot_dir=str(baseline_mod.suite_dir(
                                    self.options.baselines_dir, loaded.config.name) / baseline_mod.SNAPSHOT_DIR)),
            latency=latency_check(loaded.config, results, parallel=self.parallel, suite_file=rel),
            updating=self.options.updating,
        )
        if self.options.updating:
            out.refusal = update_refusal(out, self.options)
        self.outcomes.append(out)
        return out

    # -- outputs -----------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)  # before syrupy's, so that the filter below applies to its warning
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.log:
            self.log.close()
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            # After Ctrl-C under xdist the workers never send syrupy their reports and syrupy says
            # so with a UserWarning, which ``filterwarnings = error`` would turn into exit 1 and
            # no summary. The run is already reported as interrupted (exit 2).
            warnings.filterwarnings("ignore", message=r"syrupy: received \d+ of \d+ xdist worker",
                                    category=UserWarning)
        if exitstatus == pytest.ExitCode.INTERRUPTED and self.records and not self.outcomes:
            self.interrupted = True
            for path in sorted(self.records):  # what finished, for the report; no baseline is written
                self._outcome(path)
        if self.options.report_dir and self.outcomes and (self.report_lock is not None or self.log is not None):
            try:  # a run of nothing keeps the previous report
                self._write_summaries()
            except OSError as exc:
                self.write_failures.append(write_failure(getattr(exc, "filename", None) or self.options.report_dir,
                                                         exc, "the report"))
        self._write_markdown()

    def _write_baseline(self, out: SuiteOutcome) -> None:
        """``--snapshot-update``: both halves of the suite's baseline, or (on a write failure) neither,
        the reason kept on the outcome record that the checks and every summary read."""
        if not self.options.updating or out.partial or out.refusal:
            return
        previous = out.baseline if self.options.keep_errored and out.baseline is not None and not \
            out.baseline.damaged else None
        kept = previous.entries if previous is not None else {}
        unrecorded = sorted(r.id for r in out.results if r.error is not None and r.id not in kept)
        _, prov = stamp(out.model, provenance(out, self.options), self.config)
        if unrecorded:
            prov["unrecorded"] = unrecorded
        snapshots = {c.label: c.snapshot_data() for c in out.checks}
        try:
            baseline_mod.write(self.options.baselines_dir, out.loaded.config.name, out.results, prov, previous,
                               snapshots)
        except OSError as exc:
            where = getattr(exc, "filename", None) or baseline_mod.suite_dir(self.options.baselines_dir,
                                                                            out.loaded.config.name)
            out.write_error = (f"could not write {where}: {exc.strerror or exc}; the previous baseline is "
                               "untouched")

    def _write_summaries(self) -> None:
        root = self.options.report_dir
        assert root is not None
        stamped = {o.loaded.config.name: stamp(o.model, provenance(o, self.options), self.config)
                   for o in self.outcomes}  # the probe's verdict (--uiground-probe), where it ran
        docs = {
            o.loaded.config.name: details.complete(
                summary_mod.build(o.loaded.config.name, stamped[o.loaded.config.name][0], o.results, o.metric_results,
                        o.checks, o.latency, stamped[o.loaded.config.name][1]),
                o.loaded.config.metrics, o.results, o.baseline.provenance if o.baseline is not None else None,
                baseline_mod.suite_dir(self.options.baselines_dir, o.loaded.config.name) / baseline_mod.SNAPSHOT_DIR)
            for o in self.outcomes
        }
        mark = {"interrupted": True} if self.interrupted else {}
        if len(docs) == 1:
            (doc,) = docs.values()
            baseline_mod.atomic_write_text(root / "summary.json", summary_mod.dumps({**doc.to_json(), **mark}))
        else:
            for name, doc in docs.items():
                baseline_mod.atomic_write_text(root / name / "summary.json",
                                               summary_mod.dumps({**doc.to_json(), **mark}))
            baseline_mod.atomic_write_text(root / "summary.json",
                                           summary_mod.dumps({**summary_mod.run_doc(docs), **mark}))
        # The HTML comes last and cannot fail the session: a render error becomes a page saying so.
        from pytest_uiground.report import html as htmlreport

        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        htmlreport.write_reports(root, [
            htmlreport.SuitePage(docs[o.loaded.config.name], o.results, {s.id: s for s in o.loaded.samples}.get)
            for o in self.outcomes
        ], warn=tr.write_line if tr is not None else None, progress=tr.write_line if tr is not None else None)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, None, None]:
        """The uiground section comes last, after pytest's short summary, so a CI log read from the
        bottom shows the table and the verdict; per-sample lines are one each, in id order, capped."""
        yield
        tr = terminalreporter
        for line in self.write_failures:
            tr.write_line(line, yellow=True)
        progress = self.config.pluginmanager.get_plugin("uiground-progress")
        for o in self.outcomes:
            load = progress.load_text() if progress is not None else ""
            write_suite(tr, o, self.options, load, self._artifact_lines(o))

    def _artifacts(self, o: SuiteOutcome) -> list[Path]:
        """samples.jsonl, summary.json and report.html of a suite, when --uiground-report is given."""
        root = self.options.report_dir
        if root is None:
            return []
        suite_root = root / o.loaded.config.name if len(self.outcomes) > 1 else root
        return [root / "samples.jsonl", suite_root / "summary.json", suite_root / "report.html"]

    def _artifact_lines(self, o: SuiteOutcome) -> list[str]:
        out = []
        if self.options.report_dir is not None:
            out.append("report: " + ", ".join(str(p) for p in self._artifacts(o)))
        if self.markdown_written:
            out.append("markdown summary: " + ", ".join(str(p) for p in self.markdown_written))
        return out

    def _write_markdown(self) -> None:
        """``--uiground-markdown FILE`` and ``$GITHUB_STEP_SUMMARY``: the CI gate's summary."""
        if self.options.markdown is None and not os.environ.get("GITHUB_STEP_SUMMARY"):
            return
        from pytest_uiground.report import markdown

        sections = [markdown.SuiteSection(
            suite=o.loaded.config.name, model=(o.model or {}).get("name", self.options.model.name),
            baseline=o.baseline.provenance if o.baseline is not None else None, checks=o.checks,
            latency=o.latency, results=o.results, artifacts=self._artifacts(o), blockers=o.blockers())
            for o in self.outcomes]
        if sections:
            self.markdown_written = markdown.write(markdown.render(sections), self.options.markdown,
                                                   failed=self.write_failures.append)


def write_failure(path: Any, exc: OSError, what: str) -> str:
    """The one line a failed output write gets (no traceback; the run's verdict and exit status stand)."""
    return f"uiground: could not write {what} at {path}: {exc.strerror or exc} (errno {exc.errno})"


def _sigterm(signum: int, frame: Any) -> None:
    """SIGTERM (``timeout``, ``docker stop``, a cancelled CI job) ends the run like Ctrl-C: pytest then
    writes what finished, marked interrupted, the JUnit XML, and exits 2."""
    raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")
