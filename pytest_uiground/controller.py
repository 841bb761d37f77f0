"""Controller side: gather per-sample records, run the aggregate checks, write outputs.

Registered only on the xdist controller (or the single process): it sees every
sample's record in ``pytest_runtest_logreport``, runs the aggregate checks as real
test items after all workers are done (so they show in the summary, JUnit XML and
the exit status), writes baselines on ``--snapshot-update`` and the reports.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import warnings
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.judges.base import incomparable
from pytest_uiground.judges.pool import stability
from pytest_uiground.report.terminal import (
    SampleLog,
    id_list,
    limit_problems,
    sample_lines,
    summary,
    table,
    verdict_line,
    verdict_reasons,
)

from . import baseline as baseline_mod
from .checks import Check, LatencyCheck, build_checks, latency_check
from .collect import SuiteFile
from .loading import LoadedSuite, load_suite
from .metrics import MetricResult, compute_all
from .options import RunOptions
from .report import details, junit
from .report import summary as summary_mod
from .results import SampleResult, records_in
from .snapshot import extension_for


@dataclass
class SuiteOutcome:
    loaded: LoadedSuite
    path: Path
    results: list[SampleResult]
    metric_results: list[MetricResult] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    latency: LatencyCheck | None = None
    partial: bool = False
    baseline: baseline_mod.Baseline | None = None
    model: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    incomparable: str | None = None
    mismatch: str | None = None  # the baseline was recorded on another dataset / suite version
    refusal: str | None = None  # why --snapshot-update will not write this suite's baseline


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("pytest-uiground", "pytest", "syrupy", "numpy", "pillow", "rapidocr-onnxruntime", "torch",
                 "transformers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


SAMPLE_LINES = 10
"""Per-sample lines in the terminal; the rest are counted, and all are in the report."""


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
        check_start(config, options)
        if options.updating:
            self.lock = baseline_mod.UpdateLock(options.baselines_dir)
            busy = self.lock.acquire()
            if busy:
                self.lock = None
                raise pytest.UsageError(busy)

    def pytest_unconfigure(self) -> None:
        if self.lock is not None:
            self.lock.release()

    def _write_record(self, value: dict[str, Any]) -> None:
        if self.options.report_dir is None:
            return
        if self.log is None:
            self.log = SampleLog(self.options.report_dir / "samples.jsonl")
        self.log.write(value)

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
        items = []
        for path in sorted(self.records):
            items += self._aggregate_items(session, path)
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
        why = incomparable(base.provenance.get("judge"), judge) if base is not None and judge else None
        compare_with = None if why else base
        mismatch = (baseline_mod.provenance_mismatch(base, dataset_provenance(loaded),
                                                      {s.id for s in loaded.samples})
                    if base is not None and not self.options.updating else None)
        out = SuiteOutcome(
            loaded=loaded, path=path, results=results, metric_results=metric_results, partial=partial,
            baseline=base, model=self.models.get(path), judge=judge, incomparable=why, mismatch=mismatch,
            checks=build_checks(loaded.config, metric_results, results, compare_with, partial=partial,
                                updating=self.options.updating, suite_file=rel, incomparable=why,
                                mismatch=mismatch),
            latency=latency_check(loaded.config, results, parallel=self.parallel, suite_file=rel),
        )
        if self.options.updating:
            out.refusal = update_refusal(out, self.options)
        self.outcomes.append(out)
        return out

    def _aggregate_items(self, session: pytest.Session, path: Path) -> list[pytest.Function]:
        out = self._outcome(path)
        loaded = out.loaded
        module = SuiteFile.from_parent(session, path=path)
        snapshot_dir = baseline_mod.suite_dir(self.options.baselines_dir, loaded.config.name)
        snapshots = snapshot_dir / baseline_mod.SNAPSHOT_DIR
        items = [
            pytest.Function.from_parent(
                module, name=f"test_aggregate[{c.label}]",
                # Each check's own tolerance (the suite's, or the metric's override) decides the snapshot match.
                callobj=_metric_check(c, extension_for(snapshots, c.tolerance, self.options.updating),
                                      self.options.updating,
                                      out.baseline is not None and out.incomparable is None, out.refusal),
            )
            for c in out.checks
        ]
        for item, check in zip(items, out.checks, strict=True):
            item.user_properties += junit.check_properties(check)
        if out.latency is not None:
            items.append(pytest.Function.from_parent(
                module, name="test_aggregate[latency]",
                callobj=_latency_check(out.latency),
            ))
        junit.add_suite_properties(self.config, junit.suite_properties(
            loaded.config.name, out.model, out.baseline.provenance if out.baseline is not None else None))
        return items

    # -- outputs -----------------------------------------------------------
    def provenance(self, out: SuiteOutcome) -> dict[str, Any]:
        model = out.model or {}
        return {
            "model": model.get("name", self.options.model.name),
            "model_path": self.options.model.path,
            "model_fingerprint": model.get("fingerprint"),
            "model_revision": self.options.model.revision,
            **dataset_provenance(out.loaded),
            **({"judge": out.judge} if out.judge else {}),
            "n_samples": len(out.results),
            "packages": _versions(),
            "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        }

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
        if not self.interrupted:
            self._write_baselines()
        if self.options.report_dir and self.outcomes:  # a run of nothing keeps the previous report
            self._write_summaries()
        self._write_markdown()

    def _write_baselines(self) -> None:
        for out in self.outcomes:
            if not self.options.updating or out.partial or out.refusal:
                continue
            previous = out.baseline if self.options.keep_errored else None
            kept = previous.entries if previous is not None else {}
            unrecorded = sorted(r.id for r in out.results if r.error is not None and r.id not in kept)
            prov = self.provenance(out)
            if unrecorded:
                prov["unrecorded"] = unrecorded
            baseline_mod.write(self.options.baselines_dir, out.loaded.config.name, out.results, prov, previous)

    def _write_summaries(self) -> None:
        root = self.options.report_dir
        assert root is not None
        docs = {
            o.loaded.config.name: details.complete(
                summary(o.loaded.config.name, o.model, o.results, o.metric_results, o.checks, o.latency,
                        self.provenance(o)),
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
        from .report import html as htmlreport

        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        htmlreport.write_reports(root, [
            htmlreport.SuitePage(docs[o.loaded.config.name], o.results, {s.id: s for s in o.loaded.samples}.get)
            for o in self.outcomes
        ], warn=tr.write_line if tr is not None else None)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, None, None]:
        """The uiground section comes last, after pytest's short summary, so a CI log read from the
        bottom shows the table and the verdict; per-sample lines are one each, in id order, capped."""
        yield
        tr = terminalreporter
        progress = self.config.pluginmanager.get_plugin("uiground-progress")
        for o in self.outcomes:
            model = (o.model or {}).get("name", self.options.model.name)
            tr.write_sep("=", f"uiground: {o.loaded.config.name} (model {model}, {len(o.results)} samples)")
            if o.baseline is None:
                tr.write_line("no baseline yet: run with --snapshot-update to record one")
            else:
                prov = o.baseline.provenance
                tr.write_line(f"baseline: model {prov.get('model')!r}, {prov.get('date', '?')}"
                              + (" (partial run: compared on the same samples)" if o.partial else ""))
            for line in table(o.checks) + limit_problems(o.checks):
                tr.write_line(line)
            if o.latency is not None:
                lat = o.latency
                note = " (under xdist: parallel workers inflate per-sample times)" if lat.parallel else ""
                tr.write_line(f"latency per sample: p50 {lat.p50_ms:.1f} ms, p95 {lat.p95_ms:.1f} ms{note}")
            if o.incomparable:
                tr.write_line(f"baseline NOT comparable: {o.incomparable}")
            if o.judge:
                tr.write_line(judge_line(o.judge, o.results))
            fmt = sum(r.format_error for r in o.results)
            errs = sorted(r.id for r in o.results if r.error is not None)
            hits = sum(r.cache == "hit" for r in o.results)
            load = progress.load_text() if progress is not None else ""
            tr.write_line(f"format errors: {fmt}; sample errors: {len(errs)}; "
                          f"{hits} prediction{'s' * (hits != 1)} from the cache" + (f"; {load}" if load else ""))
            lookup = {s.id: s for s in o.loaded.samples}.get
            where = ("all of them: samples.jsonl and report.html" if self.options.report_dir
                     else "all of them: rerun with --uiground-report DIR")
            regressed = [r for r in o.results if r.outcome == "regression"]
            if regressed:
                for line in sample_lines("regressed (right in the baseline, wrong now)", regressed, lookup,
                                         SAMPLE_LINES, where):
                    tr.write_line(line)
            fixed = sorted(r.id for r in o.results if r.outcome == "fixed")
            if fixed:
                tr.write_line(id_list("fixed", fixed))
            if errs:
                tr.write_line(id_list("errors", errs))
            if self.options.updating and o.partial:
                tr.write_line("baseline NOT updated: refusing to update the baseline from a partial run (-k, --lf, "
                              "--uiground-limit or deselection); rerun the whole suite with --snapshot-update")
            elif self.options.updating and o.refusal:
                tr.write_line(f"baseline NOT updated: {o.refusal}")
            elif self.options.updating:
                where = str(baseline_mod.suite_dir(self.options.baselines_dir, o.loaded.config.name))
                tr.write_line(f"baseline updated: {where}")
            for line in self._artifact_lines(o):
                tr.write_line(line)
            failed = bool(verdict_reasons(o.checks, o.latency, o.results))
            tr.write_line(verdict_line(o.loaded.config.name, o.checks, o.latency, o.results),
                          **({"red": True} if failed else {"green": True}))

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
        from .report import markdown

        sections = [markdown.SuiteSection(
            suite=o.loaded.config.name, model=(o.model or {}).get("name", self.options.model.name),
            baseline=o.baseline.provenance if o.baseline is not None else None, checks=o.checks,
            latency=o.latency, results=o.results, artifacts=self._artifacts(o)) for o in self.outcomes]
        if sections:
            self.markdown_written = markdown.write(markdown.render(sections), self.options.markdown)


def judge_line(judge: dict[str, Any], results: list[SampleResult]) -> str:
    """One terminal line: who judged, how many replies were unparseable, how stable it was."""
    parse = sum(1 for r in results if r.score.notes.get("judge_parse_error"))
    who = " ".join(str(v) for v in (judge.get("judge"), judge.get("served_model") or judge.get("model")) if v)
    line = (f"judge: {who}, settings {judge.get('settings')} "
            f"prompts {judge.get('prompt_hash')}; unparseable replies: {parse}")
    st = stability(results)
    if st:
        line += (f"; stability over {st['samples']} samples x {st['repeats']}: mean range {st['mean_range']:.2f}, "
                 f"max range {st['max_range']:.2f}, {len(st['unstable'])} unstable")
    return line


def _metric_check(check: Check, ext: type, updating: bool, has_baseline: bool,
                  refusal: str | None = None) -> Callable[..., None]:
    def test_aggregate(snapshot: Any) -> None:
        if updating and check.partial:
            pytest.fail(
                f"refusing to update the baseline of {check.suite!r} from a partial run (-k, --lf, "
                "--uiground-limit or deselection); rerun the whole suite with --snapshot-update",
                pytrace=False,
            )
        if updating and refusal:  # before the snapshot is touched: syrupy must not write it either
            pytest.fail(refusal, pytrace=False)
        problems = check.problems()
        # Without a baseline there is nothing to compare with; the snapshot is
        # written only on --snapshot-update, never as a side effect of a plain run.
        matched = snapshot.use_extension(ext) == check.snapshot_data() if has_baseline or updating else True
        if not matched and not updating and not problems:
            worse = "fell below" if check.higher_is_better else "rose above"
            problems.append(f"{check.label} {worse} its stored snapshot by more than the tolerance "
                            f"{check.tolerance:.2f}")
        if problems:
            pytest.fail("\n".join(problems) + "\n" + check.explain(), pytrace=False)

    return test_aggregate


def _latency_check(check: LatencyCheck) -> Callable[[], None]:
    def test_aggregate() -> None:
        problems = check.problems()
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

    return test_aggregate




# -- the gate's own rules (baseline integrity, start-up checks) --------------------------------------
def dataset_provenance(loaded: LoadedSuite) -> dict[str, Any]:
    """What identifies the data a baseline was recorded on; compared on every later run."""
    revision = loaded.config.loader_options.get("revision")
    return {
        "suite_version": loaded.config.version,
        "dataset_fingerprint": loaded.fingerprint,
        "dataset_revision": str(revision) if revision is not None else None,
    }


def update_refusal(out: SuiteOutcome, options: RunOptions) -> str | None:
    """Why ``--snapshot-update`` must not write this suite's baseline, or None.

    A sample error (a dead server, a missing image) is not a wrong answer: recording it as
    one would turn every later wrong answer on that sample into a "known failure". An
    update whose absolute floors fail would record a model the suite itself rejects.
    """
    name = out.loaded.config.name
    reasons: list[str] = []
    errored = sorted(r.id for r in out.results if r.error is not None)
    if errored and not options.keep_errored:
        reasons.append(
            f"{len(errored)} sample(s) errored in this run ({id_list('errors', errored, 20)}); an error is not a "
            "wrong answer. Fix the cause and rerun, or pass --uiground-keep-errored to keep their previous "
            "baseline entries")
    floors = [p for c in out.checks for p in c.problems()]
    if floors and not options.force_update:
        reasons.append("its absolute floors fail (" + "; ".join(floors)
                       + "); pass --uiground-force-update to record it anyway")
    if not reasons:
        return None
    return f"refusing to update the baseline of {name!r}: " + " Also, ".join(reasons)


def check_start(config: pytest.Config, options: RunOptions) -> None:
    """Settings that cannot work fail once, at start-up, before any sample runs."""
    from .models.device import device_problem

    report = options.report_dir
    if report is not None and report.exists() and not report.is_dir():
        raise pytest.UsageError(f"--uiground-report {str(report)!r} is an existing file; the report is a folder "
                                "(samples.jsonl, summary.json, report.html): name a folder")
    base = options.baselines_dir
    if options.baselines_explicit and not options.updating and not base.is_dir():
        raise pytest.UsageError(
            f"--uiground-baselines {str(base)!r} does not exist; check the path (a mistyped folder would compare "
            "against nothing), or create it with --snapshot-update")
    problem = device_problem(options.model.device)
    if problem:
        raise pytest.UsageError(problem)
