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
from pytest_uiground.gate.checks import Check, LatencyCheck, build_checks, latency_check
from pytest_uiground.gate.flips import FlipTest, judge_flips, slice_keys
from pytest_uiground.gate.metrics import MetricResult, compute_all
from pytest_uiground.gate.noise import Noise, measure
from pytest_uiground.gate.rules import (
    dataset_provenance,
    provenance,
    refusal_metrics,
    refusal_policy,
    regression_rule,
    update_refusal,
)
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
    verdict: Verdict | None = None

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
    partial = ran != {s.id for s in loaded.samples}
    policy = refusal_policy(options, loaded.config)
    metric_results = compute_all(refusal_metrics(loaded.config, policy), results)
    usable = base is not None and base.damaged is None
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
        checks=build_checks(loaded.config, metric_results, results, None if why else base, partial=partial,
                            updating=options.updating, suite_file=rel, incomparable=why, mismatch=mismatch,
                            snapshot_dir=str(snapshot_dir), significance=level if rule == SIGNIFICANT else None)
        if whole else [],
        latency=latency_check(loaded.config, results, parallel=parallel, suite_file=rel) if whole else None,
        updating=options.updating,
        flips=judge_flips(results, slice_keys(loaded.config), rule, level),
        noise=measure(results, slice_keys(loaded.config), seed=options.seed, bound=options.max_flip_rate),
    )
    out.provenance = provenance(out, options)
    if options.updating:
        out.refusal = update_refusal(out, options)
    return out


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
    try:
        baseline_mod.write(options.baselines_dir, out.name, out.results, prov, previous, snapshots)
    except OSError as exc:
        where = getattr(exc, "filename", None) or baseline_mod.suite_dir(options.baselines_dir, out.name)
        out.write_error = f"could not write {where}: {exc.strerror or exc}; the previous baseline is untouched"


def conclude(out: SuiteOutcome, *, interrupted: bool = False) -> Verdict:
    """Fix the baseline's fate and decide the verdict (:func:`.verdict.decide`), once, on the record."""
    fate, text = baseline_fate(out.name, updating=out.updating, partial=out.partial, refusal=out.refusal,
                               write_error=out.write_error, interrupted=interrupted)
    if interrupted and out.updating and out.verdict is not None and out.verdict.fate is BaselineFate.UPDATED:
        fate, text = out.verdict.fate, out.verdict.fate_text  # written before the interruption: it stands
    out.verdict = decide(out.checks, out.latency, out.results, fate=fate, fate_text=text, interrupted=interrupted,
                         flips=out.flips, noise=out.noise)
    return out.verdict
