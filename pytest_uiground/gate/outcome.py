"""A suite's outcome: its records, metrics, checks, the baseline they meet, and the verdict.

One record from the end of the run to every output: :func:`assemble` builds it from the
suite's per-sample records (what the controller gathered), :func:`write_baseline` records it on
``--snapshot-update``, and :func:`conclude` fixes the baseline's fate and the verdict
(:mod:`.verdict`). The writers (:mod:`pytest_uiground.report.writers`) and the aggregate test items
(:mod:`.aggregate`) are handed the finished record through the plugin's hooks
(:mod:`pytest_uiground.hookspecs`); none of them decides anything again. Kept apart from the
controller, whose hooks only sequence these steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate.against import Against
from pytest_uiground.gate.checks import Check, LatencyCheck, attach, build_checks, latency_check
from pytest_uiground.gate.flips import FlipTest, judge_flips, slice_keys, split_test
from pytest_uiground.gate.metrics import LATENCY, MetricResult, compute_all
from pytest_uiground.gate.noise import Noise, confirmation, measure
from pytest_uiground.gate.rules import (
    dataset_provenance,
    provenance,
    refusal_metrics,
    refusal_policy,
    regression_rule,
    update_refusal,
)
from pytest_uiground.gate.snapshot import file_name as snapshot_file
from pytest_uiground.gate.verdict import SIGNIFICANT, BaselineFate, Verdict, baseline_fate, decide
from pytest_uiground.judges.base import incomparable
from pytest_uiground.options import RunOptions
from pytest_uiground.record.result import SampleResult

if TYPE_CHECKING:  # types only: the outcome holds a loaded suite, it never loads one
    from pytest_uiground.suite.loading import LoadedSuite


@dataclass
class SuiteOutcome:
    """One suite's result after the run: its records, metrics and checks, the baseline they meet, the
    run's provenance (computed once: the baseline and the summary carry the same one) and the verdict."""

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
    updating: bool = False
    write_error: str | None = None  # --snapshot-update could not write the baseline (the previous pair is kept)
    provenance: dict[str, Any] = field(default_factory=dict)
    flips: FlipTest | None = None  # the per-sample flips and how they are judged (gate/flips.py)
    noise: Noise | None = None  # --uiground-repeat: the model's run-to-run flip rate (gate/noise.py)
    # A suite that grew or shrank since its baseline (issue 30): new samples run, listed, not gated; removed
    # ones drop out. ``only_new``: this run ran only the new ones (--uiground-only-new).
    new_ids: tuple[str, ...] = ()
    removed_ids: tuple[str, ...] = ()
    only_new: bool = False
    # No baseline to meet (issue 38): the run gates nothing, so it fails, saying how to record one.
    missing: str | None = None
    verdict: Verdict | None = None
    against: Against | None = None  # --uiground-against: a published run beside this one (a report, never a check)

    @property
    def name(self) -> str:
        return self.loaded.config.name

    @property
    def model_name(self) -> str | None:
        return (self.model or {}).get("name")


def assemble(loaded: LoadedSuite, path: Path, results: list[SampleResult], options: RunOptions, *, rel: str,
             parallel: bool, model: dict[str, Any] | None, judge: dict[str, Any] | None) -> SuiteOutcome:
    """The suite's records, metrics and checks (not yet run), with the baseline compared.

    ``rel`` is the suite file as the user named it (for messages), ``parallel`` whether xdist ran
    the samples (latency is then inflated, and says so).
    """
    results = sorted(results, key=lambda r: r.id)
    base = baseline_mod.load(options.baselines_dir, loaded.config.name)
    ran = {r.id for r in results}
    policy = refusal_policy(options, loaded.config)
    usable = base is not None and base.damaged is None
    new_ids, removed_ids = baseline_mod.growth(base, {s.id for s in loaded.samples})
    only_new = options.only_new and usable
    partial = ran != (set(new_ids) if only_new else {s.id for s in loaded.samples})
    # --uiground-only-new: the numbers are the whole suite's, the samples not run read from their stored
    # entries, so the snapshots an update writes agree with samples.json (recomputed, never carried over).
    scored = sorted(results + stored_records(loaded, base, ran), key=lambda r: r.id) if only_new and base \
        else results
    metric_results = compute_all(refusal_metrics(loaded.config, policy), scored)
    why = incomparable(base.provenance.get("judge"), judge) if usable and base is not None and judge else None
    ids = {s.id for s in loaded.samples}
    mismatch = (baseline_mod.provenance_mismatch(base, dataset_provenance(loaded, policy), ids)
                if usable and base is not None and not options.updating else None)
    snapshot_dir = baseline_mod.suite_dir(options.baselines_dir, loaded.config.name) / baseline_mod.SNAPSHOT_DIR
    rule, level = regression_rule(options, loaded.config)
    whole = options.shard is None  # a shard's aggregates would judge part of the suite: the merge checks them
    out = SuiteOutcome(
        loaded=loaded, path=path, results=results, metric_results=metric_results, partial=partial,
        baseline=base, model=model, judge=judge, incomparable=why, mismatch=mismatch,
        checks=build_checks(loaded.config, metric_results, scored, None if why else base, partial=partial,
                            updating=options.updating, suite_file=rel, incomparable=why, mismatch=mismatch,
                            snapshot_dir=str(snapshot_dir), significance=level if rule == SIGNIFICANT else None)
        if whole else [],
        latency=latency_check(loaded.config, results, parallel=parallel, suite_file=rel) if whole else None,
        updating=options.updating,
        flips=judge_flips(results, slice_keys(loaded.config), rule, level,
                          {k: e.stability for k, e in base.entries.items()} if usable and base is not None else None),
        noise=measure(results, slice_keys(loaded.config), seed=options.seed, bound=options.max_flip_rate),
        new_ids=new_ids, removed_ids=removed_ids, only_new=only_new,
    )
    if out.checks:
        stabilities = {k: e.stability for k, e in base.entries.items()} if usable and base is not None else None
        out.checks = attach(out.checks, results, stabilities, rule, level, slice_keys(loaded.config),
                            require=options.require_power or loaded.config.require_power,
                            flip_test=(lambda rs: split_test(rs, stabilities or {}).p_value)
                            if rule == SIGNIFICANT else None)
    out.provenance = provenance(loaded, results, options, model=model, judge=judge)
    if base is None and not options.updating:
        out.missing = missing_text(loaded.config.name, rel, options)
    if options.updating:
        out.refusal = update_refusal(loaded.config.name, results, out.checks, options)
    return out


def missing_text(suite: str, rel: str, options: RunOptions) -> str:
    """The one line every output prints for a suite without a baseline (issue 38: syrupy and
    pytest-regressions fail a test whose snapshot is missing; a gate that passes here gates nothing)."""
    where = baseline_mod.suite_dir(options.baselines_dir, suite)
    return (f"no baseline for {suite!r} at {where}: nothing to gate against; record one with "
            f"`pytest {rel} --snapshot-update` and commit it")


def write_baseline(out: SuiteOutcome, options: RunOptions) -> None:
    """``--snapshot-update``: both halves of the suite's baseline, or (on a write failure) neither,
    the reason kept on the outcome record that the verdict reads."""
    if not options.updating or out.partial or out.refusal:
        return
    previous = out.baseline if options.keep_errored and out.baseline is not None and not \
        out.baseline.damaged else None
    kept = previous.entries if previous is not None else {}
    unrecorded = sorted(r.id for r in out.results if r.error is not None and r.id not in kept)
    prov = dict(out.provenance)
    if unrecorded:
        prov["unrecorded"] = unrecorded
    snapshots = {c.label: c.snapshot_data() for c in out.checks}
    stored_kept: dict[str, Any] | None = None
    if out.only_new and out.baseline is not None:
        # The entries of the samples not run, byte for byte; removed samples drop out. Timings have no stored
        # per-sample values: a latency metric keeps its stored snapshot.
        ids, ran = {s.id for s in out.loaded.samples}, {r.id for r in out.results}
        stored_kept = {k: v for k, v in baseline_mod.stored_entries(options.baselines_dir, out.name).items()
                       if k in ids and k not in ran}
        timed = {m.name for m in out.loaded.config.metrics if m.score == LATENCY}
        stored = out.baseline.snapshots or {}
        for c in out.checks:
            if c.metric in timed and c.stored is not None:
                snapshots[c.label] = dict(stored.get(snapshot_file(c.label), c.stored))
        earlier = out.baseline.provenance.get("unrecorded")
        unrecorded = sorted({*unrecorded, *(str(i) for i in earlier if str(i) in ids and str(i) not in ran)}
                            if isinstance(earlier, list) else set(unrecorded))
        prov = {**prov, "n_samples": len(stored_kept) + len(out.results)}
        prov.pop("unrecorded", None)
        if unrecorded:
            prov["unrecorded"] = unrecorded
    try:
        baseline_mod.write(options.baselines_dir, out.name, out.results, prov, previous, snapshots, kept=stored_kept)
    except OSError as exc:
        where = getattr(exc, "filename", None) or baseline_mod.suite_dir(options.baselines_dir, out.name)
        out.write_error = f"could not write {where}: {exc.strerror or exc}; the previous baseline is untouched"


def stored_records(loaded: LoadedSuite, base: baseline_mod.Baseline | None, ran: set[str]) -> list[SampleResult]:
    """The baseline's stored scores as records of the suite's samples this run did not run (the metrics read
    them like this run's records: :func:`pytest_uiground.gate.checks.baseline_records` does the same for
    the paired comparison)."""
    if base is None:
        return []
    return [SampleResult(suite=loaded.config.name, id=s.id, task=s.task, meta=dict(s.meta),
                         score=base.entries[s.id].as_score(binary=s.task != "vqa"))
            for s in loaded.samples if s.id not in ran and s.id in base.entries]


def conclude(out: SuiteOutcome, *, interrupted: bool = False) -> Verdict:
    """Fix the baseline's fate and decide the verdict (:func:`.verdict.decide`), once, on the record."""
    fate, text = baseline_fate(out.name, updating=out.updating, partial=out.partial, refusal=out.refusal,
                               write_error=out.write_error, interrupted=interrupted)
    if interrupted and out.updating and out.verdict is not None and out.verdict.fate is BaselineFate.UPDATED:
        fate, text = out.verdict.fate, out.verdict.fate_text  # written before the interruption: it stands
    out.verdict = decide(out.checks, out.latency, out.results, fate=fate, fate_text=text, interrupted=interrupted,
                         flips=out.flips, noise=out.noise, missing=out.missing, confirmed=confirmation(out.results))
    return out.verdict
