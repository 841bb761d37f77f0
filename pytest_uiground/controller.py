"""Controller side: gather per-sample records, conclude each suite, hand the outcomes to the hooks.

Registered only on the xdist controller (or the single process). Its hooks only sequence the
work: each sample's record, as it arrives, goes to ``pytest_uiground_sample_result``; after all
workers are done each suite's outcome is assembled, its baseline written on
``--snapshot-update`` and its verdict decided (:mod:`.gate.outcome`), then announced
(``pytest_uiground_suite_outcome``) and its aggregate checks run as real test items
(:mod:`.gate.aggregate`), so they show in the summary, JUnit XML and the exit status; at the end of
the session every outcome goes to ``pytest_uiground_run_outcome``. The outputs are written by the
hooks' implementations (:mod:`.report.writers`), never here.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate.aggregate import aggregate_items
from pytest_uiground.gate.outcome import SuiteOutcome, assemble, conclude, write_baseline
from pytest_uiground.gate.rules import check_start
from pytest_uiground.options import RunOptions
from pytest_uiground.record.result import SampleResult, records_in
from pytest_uiground.run.variants import with_variants
from pytest_uiground.suite.loading import load_suite


class Controller:
    def __init__(self, config: pytest.Config, options: RunOptions) -> None:
        self.config = config
        self.options = options
        self.records: dict[Path, dict[str, SampleResult]] = {}
        self.models: dict[Path, dict[str, Any]] = {}
        self.judges: dict[Path, dict[str, Any]] = {}
        self.outcomes: list[SuiteOutcome] = []
        self.parallel = bool(getattr(config.option, "numprocesses", None))
        self.lock: baseline_mod.UpdateLock | None = None
        check_start(config, options)
        if options.against is not None:  # the published run's file, read once before any test
            from pytest_uiground.run.against import check

            check(options)
        if options.updating:
            self.lock = baseline_mod.UpdateLock(options.baselines_dir)
            busy = self.lock.acquire()
            if busy:
                self.lock = None
                raise pytest.UsageError(busy)

    def pytest_unconfigure(self) -> None:
        if self.lock is not None:
            self.lock.release()

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
            self.config.hook.pytest_uiground_sample_result(config=self.config, result=result)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield  # a KeyboardInterrupt passes through: sessionfinish concludes what finished
        self.outcomes = [self._assemble(path) for path in sorted(self.records)]
        items = []
        for out in self.outcomes:
            write_baseline(out, self.options)  # before the verdict: a failed write fails the suite
            conclude(out)
            if self.options.against is not None:  # a report beside the verdict, never part of it
                from pytest_uiground.run.against import compute

                out.against = compute(out, self.options)
            self.config.hook.pytest_uiground_suite_outcome(config=self.config, outcome=out)
            items += aggregate_items(session, out)
        session.testscollected += len(items)
        for item in items:
            item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
            if session.shouldstop:
                raise session.Interrupted(str(session.shouldstop))
        return result

    def _assemble(self, path: Path) -> SuiteOutcome:
        rel = str(path.relative_to(self.config.rootpath)) if path.is_relative_to(self.config.rootpath) else str(path)
        loaded = with_variants(load_suite(path, self.options.data_path), self.options)
        out = assemble(loaded, path, list(self.records[path].values()), self.options, rel=rel,
                       parallel=self.parallel, model=self.models.get(path), judge=self.judges.get(path))
        self.config.hook.pytest_uiground_provenance(config=self.config, outcome=out, provenance=out.provenance)
        return out

    @pytest.hookimpl(tryfirst=True)  # before syrupy's, so that the filter below applies to its warning
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        if interrupted:
            # After Ctrl-C under xdist the workers never send syrupy their reports and syrupy says
            # so with a UserWarning, which ``filterwarnings = error`` would turn into exit 1 and
            # no summary. The run is already reported as interrupted (exit 2).
            warnings.filterwarnings("ignore", message=r"syrupy: received \d+ of \d+ xdist worker",
                                    category=UserWarning)
            if not self.outcomes:  # what finished, for the report; no baseline is written
                self.outcomes = [self._assemble(path) for path in sorted(self.records)]
            for out in self.outcomes:
                conclude(out, interrupted=True)
                self.config.hook.pytest_uiground_suite_outcome(config=self.config, outcome=out)
        if not self.outcomes:
            return
        self.config.hook.pytest_uiground_run_outcome(config=self.config, outcomes=self.outcomes,
                                                     interrupted=interrupted)
        if session.exitstatus == pytest.ExitCode.OK and any(o.verdict and not o.verdict.passed for o in self.outcomes):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # the exit status reads the verdict too
