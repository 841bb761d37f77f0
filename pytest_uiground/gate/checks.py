"""Aggregate checks: one per metric and slice, plus the latency budget.

Each check holds the current number, its floor, and the paired comparison with the
per-sample baseline on exactly the same samples (delta, bootstrap interval, exact
McNemar on the flipped samples). The check runs as a real test item on the
controller after every sample has finished; this module only computes and explains.

The paired comparison (:func:`paired`) is the one implementation for the gate (the current run
against its stored baseline) and for ``compare`` (run B against run A,
:mod:`pytest_uiground.report.runs`); the two copies it replaced disagreed on what "right" means for
a count such as ``attempts_to_success`` (the gate's called a sample right when the count was at
least 50, so every report said "0 regressed, 0 fixed, p = 1"). What "right" means is decided by
the metric's unit (:func:`pytest_uiground.gate.units.infer`):

* a share of samples (accuracy, rate): the sample's binary outcome (its ``correct``, or the boolean
  component), negated for a bad event (lower is better); a graded 0..100 score (a judge's) is right
  at 50 or more;
* an IoU (x100): right at 50 or more, the detection convention (IoU >= 0.5);
* a count or milliseconds: no sample is right or wrong, so there are no flips and no McNemar test
  (``regressed``, ``fixed`` and ``p_value`` are None); the delta and its bootstrap interval stand.

:func:`attach` then gives each gated check the smallest drop it detects (:mod:`.power`, which computes
it and knows nothing of checks: the checks read the power, never the other way round).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytest_uiground.gate import snapshot as snapshot_mod
from pytest_uiground.gate import stats
from pytest_uiground.gate.metrics import (
    LATENCY,
    Aggregate,
    MetricResult,
    compute,
    correct_of,
    slice_labels,
    value_of,
)
from pytest_uiground.gate.power import Detectable, detectable, noise_flips, samples_needed
from pytest_uiground.gate.units import infer
from pytest_uiground.record.files import ids_digest
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.result import right_of as score_right

if TYPE_CHECKING:  # types only: the suite's declarations and the baseline are read, never loaded, here
    from pytest_uiground.gate.baseline import Baseline
    from pytest_uiground.suite.config import MetricSpec, SuiteConfig


POWER_SHORT = "too small to see a drop of its tolerance"
"""The problem of a check whose detectable drop is larger than its tolerance (``--uiground-require-power``)."""

NO_FLIPS = ("count", "ms")
"""Units whose samples are neither right nor wrong."""


@dataclass(frozen=True)
class Paired:
    """Current (or run B) against the baseline (or run A) on the samples both have.

    A latency metric has no per-sample baseline (the stored baseline keeps scores, not timings): the
    gate's baseline value is then the stored aggregate snapshot's, with no interval, flips or test.
    """

    n: int
    baseline_value: float
    current_value: float
    delta_low: float | None
    delta_high: float | None
    regressed: int | None  # right in the baseline, wrong now (McNemar's b)
    fixed: int | None  # wrong in the baseline, right now (McNemar's c)
    p_value: float | None

    @property
    def delta(self) -> float:
        return self.current_value - self.baseline_value


def right_of(r: SampleResult, spec: MetricSpec, unit: str) -> bool | None:
    """The sample's right/wrong outcome for the flip counts, as the module docstring says; None where
    the unit has none."""
    if unit in NO_FLIPS:
        return None
    ok = None if unit == "iou" else correct_of(r, spec.score)
    if ok is None:
        return value_of(r, spec.score) >= 50.0
    return ok if spec.higher_is_better else not ok


def unit_of(spec: MetricSpec, records: Sequence[SampleResult]) -> str:
    return infer(spec.name, spec.score, [r.score.components.get(spec.score) for r in records] if spec.score else [])


def paired(spec: MetricSpec, label: str | None, current: Sequence[SampleResult], baseline: Sequence[SampleResult],
           unit: str | None = None) -> Paired | None:
    """The metric (overall, or the slice ``label``) on the samples both record sets have, computed twice
    by the same code, with its paired statistics; None when nothing is shared or the metric is a mean
    of others (its parts carry the statistics). ``unit`` defaults to the one the current records imply."""
    if spec.mean_of:
        return None
    base_by = {r.id: r for r in baseline}
    shared = sorted((r for r in current if r.id in base_by), key=lambda r: r.id)  # the bootstrap's seeded order
    if not shared:
        return None
    cur_m, base_m = compute(spec, shared), compute(spec, [base_by[r.id] for r in shared])
    cur_agg = cur_m.overall if label is None else cur_m.slices.get(label)
    base_agg = base_m.overall if label is None else base_m.slices.get(label)
    if cur_agg is None or base_agg is None or cur_agg.n == 0:
        return None
    cur_by = {r.id: r for r in shared}
    in_base = set(base_agg.ids)
    ids = [i for i in cur_agg.ids if i in in_base]
    if not ids:
        return None
    cur_v = [value_of(cur_by[i], spec.score) for i in ids]
    base_v = [value_of(base_by[i], spec.score) for i in ids]
    _, low, high = stats.paired_bootstrap_delta(cur_v, base_v)
    if spec.average == "macro" and label is None:
        # The bootstrap above is of the micro mean; shift it onto the macro delta.
        shift = (cur_agg.value - base_agg.value) - (sum(cur_v) / len(cur_v) - sum(base_v) / len(base_v))
        low, high = low + shift, high + shift
    unit = unit or unit_of(spec, shared)
    cur_ok = [right_of(cur_by[i], spec, unit) for i in ids]
    base_ok = [right_of(base_by[i], spec, unit) for i in ids]
    if unit in NO_FLIPS:
        regressed = fixed = None
        p = None
    else:
        regressed = sum(1 for b, c in zip(base_ok, cur_ok, strict=True) if b and not c)
        fixed = sum(1 for b, c in zip(base_ok, cur_ok, strict=True) if not b and c)
        p = stats.mcnemar_exact(regressed, fixed)
    return Paired(n=len(ids), baseline_value=base_agg.value, current_value=cur_agg.value, delta_low=low,
                  delta_high=high, regressed=regressed, fixed=fixed, p_value=p)


@dataclass(frozen=True)
class Check:
    suite: str
    metric: str
    slice: str | None
    current: Aggregate
    floor: float | None
    tolerance: float
    paired: Paired | None
    partial: bool
    updating: bool
    suite_file: str
    incomparable: str | None = None  # why the baseline cannot be compared (another judge)
    higher_is_better: bool = True
    ceiling: float | None = None
    mismatch: str | None = None  # the baseline was recorded on another dataset or suite version
    # The stored half of the comparison, read with the baseline (gate.baseline): whether there is a
    # baseline to meet, why it is unusable, and this check's stored snapshot (None when its file is missing).
    compared: bool = False
    damaged: str | None = None
    stored: Mapping[str, Any] | None = None
    snapshot_file: str = ""
    # --uiground-regressions significant: a drop beyond the tolerance fails only when its paired test is
    # significant at this level too (the suite's level; divided by the slice count for a slice); None: each.
    significance: float | None = None
    # Small suites (issue 30): a slice under the suite's ``min_slice`` is reported but its drop does not fail
    # the run alone (``gated`` false; its floor still holds); ``tasks`` names the metric's tasks for a metric
    # that no sample has.
    gated: bool = True
    min_slice: int = 0
    tasks: tuple[str, ...] = ()
    # Issue 40: the smallest drop this check detects 95 times in 100 under its rule (gate.power), and whether a
    # detectable drop larger than the tolerance fails it (--uiground-require-power, [baseline] require_power).
    detectable: Detectable | None = None
    require_power: bool = False
    # Under ``significant``: the flip test on this check's samples (gate.flips.split_test: stable and unstable
    # samples apart, confirmations read), set by gate.power.attach; judges a drop beyond the tolerance in
    # place of the pooled McNemar test, whose noisy samples' flips bury a drop and fake one alike (issue 40).
    flip_p: float | None = None

    @property
    def worse_by(self) -> float:
        """How much worse than the baseline (positive = worse), whichever way is better."""
        if self.paired is None:
            return 0.0
        return -self.paired.delta if self.higher_is_better else self.paired.delta

    @property
    def left_out(self) -> int:
        """Samples in :attr:`current` that the baseline lacks (new ones, grown since it was recorded): the
        paired comparison leaves them out, so the value shown beside the baseline leaves them out too."""
        return self.current.n - self.paired.n if self.paired is not None else 0

    @property
    def compared_value(self) -> float:
        """The value on the samples the baseline has, the one that ``baseline`` and ``delta`` are compared
        with (issue 39: a slice read 31.25 against 35.71 with delta +0.00, the value counting new samples
        and the baseline not); the value on every sample (floors, snapshots) stays :attr:`current`."""
        return self.paired.current_value if self.paired is not None else self.current.value

    @property
    def label(self) -> str:
        return self.metric if self.slice is None else f"{self.metric}.{self.slice}"

    def snapshot_data(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "slice": self.slice,
            "value": round(self.current.value, 2) if math.isfinite(self.current.value) else None,
            "n": self.current.n,
            "samples": ids_digest(self.current.ids),
            **({"lower_is_better": True} if not self.higher_is_better else {}),
        }

    def problems(self) -> list[str]:
        out: list[str] = []
        if self.incomparable and not self.updating:
            out.append(f"{self.label}: baseline not comparable: {self.incomparable}")
        if self.mismatch and not self.updating:
            out.append(f"{self.label}: {self.mismatch}")
        v = self.current.value
        if self.floor is not None and self.current.n == 0 and self.slice is None:
            tasks = ", ".join(self.tasks) or "of the metric"
            out.append(f"{self.label}: no sample has task {tasks}, so its floor {self.floor:.2f} cannot be met "
                       f"(set in {self.suite_file}): give the samples that task, or drop the metric")
        elif self.floor is not None and (math.isnan(v) or v < self.floor):
            out.append(f"{self.label} = {v:.2f} is below its floor {self.floor:.2f} (set in {self.suite_file})")
        if self.ceiling is not None and (math.isnan(v) or v > self.ceiling):
            out.append(f"{self.label} = {v:.2f} is above its ceiling {self.ceiling:.2f} (set in {self.suite_file})")
        p = self.paired
        if not self.gated:
            return out
        d = self.detectable
        if self.require_power and d is not None and d.short and not self.updating:
            out.append(f"{self.label}: {POWER_SHORT}: {d.text()} (required by "
                       f"--uiground-require-power or [baseline] require_power)")
        if p is not None and not self.updating and self.worse_by > self.tolerance and not self.within_noise:
            moved = "dropped" if self.higher_is_better else "rose (lower is better)"
            out.append(
                f"{self.label} {moved} from {p.baseline_value:.2f} to {p.current_value:.2f} "
                f"({p.delta:+.2f}, tolerance {self.tolerance:.2f}) on {p.n} paired samples"
                + (f"; significant: {self.evidence()}" if self.significance is not None else "")
            )
        return out + self._baseline_problems()

    def evidence(self) -> str:
        """The paired test that judges a drop under ``significant``, in words."""
        p = self.paired
        if p is None:
            return "no paired comparison"
        if self.flip_p is not None:
            return (f"{p.regressed} regressed, {p.fixed} fixed, split test p = {self.flip_p:.3g}, "
                    f"level {self.significance:g}")
        if p.regressed is not None and p.fixed is not None:
            return (f"{p.regressed} regressed, {p.fixed} fixed, one-sided McNemar p = "
                    f"{stats.mcnemar_one_sided(p.regressed, p.fixed):.3g}, level {self.significance:g}")
        return f"95% bootstrap interval of the delta [{p.delta_low:+.2f}, {p.delta_high:+.2f}]"

    @property
    def within_noise(self) -> bool:
        """Under ``significant``: the paired test finds no evidence that the metric got worse, so a drop
        beyond the tolerance is noise (a 19-sample slice moving 10 points on flips alone). Flips are
        tested with the exact one-sided McNemar test; a count, which has no flips, by whether its 95%
        bootstrap interval of the delta excludes 0 on the worse side."""
        p = self.paired
        if self.significance is None or p is None:
            return False
        if self.flip_p is not None:
            return not self.flip_p < self.significance
        if p.regressed is not None and p.fixed is not None:
            return not stats.mcnemar_one_sided(p.regressed, p.fixed) < self.significance
        if p.delta_low is None or p.delta_high is None:
            return False  # timings: no per-sample baseline, the tolerance alone decides
        return not (p.delta_high < 0 if self.higher_is_better else p.delta_low > 0)

    def _baseline_problems(self) -> list[str]:
        """The stored baseline against this check: damaged, its snapshot missing, its two halves
        disagreeing, or the number below the stored snapshot by more than the tolerance."""
        if self.updating or not self.compared:
            return []
        fix = "restore it from version control, or record a new baseline with --snapshot-update"
        if self.damaged:
            return [f"{self.label}: {self.damaged}"]
        if self.stored is None and self.paired is None:
            return []  # a check whose samples are all new (a slice value the suite grew): nothing to meet yet
        if self.stored is None:
            return [f"{self.label}: its stored snapshot {self.snapshot_file} is missing (deleted, or the check "
                    f"was added after the baseline was recorded); {fix}"]
        now = self.snapshot_data()
        then = self.stored.get("value")
        p = self.paired
        if (p is not None and isinstance(then, (int, float)) and now["samples"] == self.stored.get("samples")
                and p.n == self.current.n and abs(p.baseline_value - float(then)) > 0.011):
            return [f"{self.label}: the baseline's two halves disagree: {self.snapshot_file} says {then:.2f}, "
                    f"samples.json gives {p.baseline_value:.2f} on the same samples (a hand edit, or files "
                    f"from two runs); {fix}"]
        dropped = p is not None and self.worse_by > self.tolerance  # said once, by the paired comparison
        judged = (self.significance is not None and p is not None and p.n == self.current.n
                  and now["samples"] == self.stored.get("samples"))  # the paired test decides on these samples
        if not dropped and not judged and not snapshot_mod.matches(now, self.stored, self.tolerance):
            worse = "fell below" if self.higher_is_better else "rose above"
            return [f"{self.label} = {self.current.value:.2f} {worse} its stored snapshot {then} by more than the "
                    f"allowed {self.tolerance:.2f} ({self.snapshot_file})"]
        return []

    def explain(self) -> str:
        a = self.current
        lines = [f"{self.label}: {a.value:.2f} over {a.n} samples"]
        if a.low is not None and a.high is not None:
            lines[0] += f", 95% interval [{a.low:.2f}, {a.high:.2f}]"
        if self.paired is not None and (self.paired.delta_low is None or self.paired.delta_high is None):
            p = self.paired
            lines.append(f"vs the stored baseline {p.baseline_value:.2f}: delta {p.delta:+.2f} (no per-sample "
                         "baseline for timings: no paired statistics)")
        elif self.paired is not None and self.paired.p_value is None:
            p = self.paired
            lines.append(f"vs baseline {p.baseline_value:.2f}: delta {p.delta:+.2f}, 95% bootstrap interval "
                         f"[{p.delta_low:+.2f}, {p.delta_high:+.2f}] (a count per sample: no sample is right or "
                         "wrong, so no flips and no McNemar test)")
        elif self.paired is not None:
            p = self.paired
            lines.append(
                f"vs baseline {p.baseline_value:.2f}: delta {p.delta:+.2f}, 95% bootstrap interval "
                f"[{p.delta_low:+.2f}, {p.delta_high:+.2f}]; {p.regressed} regressed, {p.fixed} fixed, "
                f"exact McNemar p = {p.p_value:.4g}"
            )
        if self.detectable is not None:
            lines.append(f"{self.detectable.text()} ({self.detectable.basis()})")
        if a.format_errors or a.errors:
            lines.append(f"format errors: {a.format_errors}, errors: {a.errors}")
        return "\n".join(lines)

    @property
    def verdict(self) -> str:
        if self.problems():
            return "FAIL"
        if not self.gated:
            return f"not gated (n {self.current.n} < min_slice {self.min_slice})"
        if self.paired is not None and not self.updating and self.worse_by > self.tolerance and self.within_noise:
            return "within noise"
        if self.paired is not None and -self.worse_by > self.tolerance:
            return "improved"
        return "ok"


@dataclass(frozen=True)
class LatencyCheck:
    suite: str
    p50_ms: float
    p95_ms: float
    budget_p50_ms: float | None
    budget_p95_ms: float | None
    n: int
    parallel: bool
    suite_file: str

    label = "latency"

    def problems(self) -> list[str]:
        out = []
        for name, got, budget in (("p50", self.p50_ms, self.budget_p50_ms), ("p95", self.p95_ms, self.budget_p95_ms)):
            if budget is not None and got > budget:
                note = " (measured under xdist: parallel workers inflate it)" if self.parallel else ""
                out.append(f"latency {name} {got:.1f} ms exceeds the budget {budget:.1f} ms{note} ({self.suite_file})")
        return out


def baseline_records(results: Sequence[SampleResult], baseline: Baseline) -> list[SampleResult]:
    """The baseline's stored scores as records of the same samples, for the paired comparison
    (:func:`paired`): the samples both runs have, nothing else changed."""
    return [replace(r, score=baseline.entries[r.id].as_score(binary=r.correct is not None))
            for r in results if r.id in baseline.entries]


def build_checks(
    config: SuiteConfig,
    metric_results: Sequence[MetricResult],
    results: Sequence[SampleResult],
    baseline: Baseline | None,
    *,
    partial: bool,
    updating: bool,
    suite_file: str,
    incomparable: str | None = None,
    mismatch: str | None = None,
    snapshot_dir: str = "snapshots",
    significance: float | None = None,
) -> list[Check]:
    """One check per metric and slice; ``baseline`` (None for a new suite) brings both halves:
    the per-sample entries for the paired comparison and the stored snapshots. ``significance``
    (``--uiground-regressions significant``'s level) makes a drop beyond the tolerance fail only when
    its paired test is significant too: at the level for a metric, at the level divided by the
    metric's slice count for each slice (Bonferroni)."""
    checks: list[Check] = []
    # The stored snapshots are compared with when they were read (a baseline built in memory has none).
    compared = baseline is not None and baseline.snapshots is not None and incomparable is None
    base_records = baseline_records(results, baseline) if baseline is not None else []
    for mr in metric_results:
        # the metric's samples: its headline's and its slices' (a perturbed sample counts in its slice only)
        ids = set(mr.overall.ids).union(*(a.ids for a in mr.slices.values()))
        chosen = [r for r in results if r.id in ids]
        tol = mr.spec.tolerance
        entries: list[tuple[str | None, Aggregate, float | None, float]] = [
            (None, mr.overall, mr.spec.floor, sized_tolerance(config.tolerance, config.tolerance_samples,
                                                             mr.overall.n) if tol is None else tol)
        ]
        entries += [(k, a, mr.spec.slice_floors.get(k), sized_tolerance(
            config.slice_tolerance, config.slice_tolerance_samples, a.n) if tol is None else tol)
                    for k, a in mr.slices.items()]
        for label, agg, floor, tolerance in entries:
            name = mr.spec.name if label is None else f"{mr.spec.name}.{label}"
            snapshot = (baseline.snapshots or {}).get(snapshot_mod.file_name(name)) if baseline is not None else None
            if baseline is None:
                pair = None
            elif mr.spec.score == LATENCY:  # no per-sample baseline of timings: the stored aggregate's value
                kept = snapshot.get("value") if snapshot is not None else None
                pair = (Paired(n=agg.n, baseline_value=float(kept), current_value=agg.value, delta_low=None,
                                 delta_high=None, regressed=None, fixed=None, p_value=None)
                          if isinstance(kept, (int, float)) and not isinstance(kept, bool) and agg.n else None)
            else:
                pair = paired(mr.spec, label, chosen, base_records)
            checks.append(Check(config.name, mr.spec.name, label, agg, floor, tolerance, pair, partial, updating,
                                suite_file, incomparable, mr.spec.higher_is_better,
                                mr.spec.ceiling if label is None else None, mismatch, compared=compared,
                                damaged=baseline.damaged if baseline is not None else None,
                                stored=snapshot,
                                snapshot_file=f"{snapshot_dir}/{snapshot_mod.file_name(name)}",
                                significance=None if significance is None else
                                significance if label is None else significance / max(1, len(mr.slices)),
                                gated=label is None or agg.n >= config.min_slice, min_slice=config.min_slice,
                                tasks=tuple(mr.spec.tasks)))
    return checks


def sized_tolerance(points: float, samples: float, n: int) -> float:
    """The allowed drop of a check over ``n`` samples: ``points``, or ``samples`` samples' worth of points
    (one flip moves a share by 100/n), whichever is larger (``[baseline] tolerance = "auto"``)."""
    return max(points, 100.0 * samples / n) if samples and n else points


def latency_check(config: SuiteConfig, results: Sequence[SampleResult], *, parallel: bool, suite_file: str
                  ) -> LatencyCheck | None:
    # A prediction from the cache keeps the time it took when it was made: not this run's.
    lat = [t for r in results if (t := r.counted_latency_ms) is not None]
    if not lat:
        return None
    return LatencyCheck(
        config.name, stats.percentile(lat, 50), stats.percentile(lat, 95), config.latency.p50_ms,
        config.latency.p95_ms, len(lat), parallel, suite_file,
    )


def attach(checks: Sequence[Check], results: Sequence[SampleResult], base: Mapping[str, tuple[int, int] | None] | None,
           rule: str, level: float, keys: Sequence[str], *, require: bool = False,
           flip_test: Callable[[Sequence[SampleResult]], float] | None = None) -> list[Check]:
    """Each gated check of right-or-wrong samples with its detectable drop (and, with ``require``, failing
    when that is larger than its tolerance). ``base``: the baseline's repeats per sample, None without a
    baseline (an update: this run's repeats stand in for the baseline it records). ``flip_test``: the gate's
    flip test (:func:`pytest_uiground.gate.flips.split_test`'s p) on a check's samples, under ``significant``
    with a baseline: it judges the check's drop beyond its tolerance (``Check.flip_p``)."""
    run = {r.id: (r.stability.right, r.stability.of) for r in results
           if r.stability is not None and r.stability.how == "repeat" and r.stability.of > 1}
    by_id = {r.id: r for r in results if r.error is None}
    if base is None:
        base_s: Mapping[str, tuple[int, int] | None] = dict(run)
        was_right = {i: score_right(r.score) for i, r in by_id.items()}
        run = {}
    else:
        base_s = base
        was_right = {i: r.outcome in (Outcome.PASS, Outcome.REGRESSION, Outcome.UNSTABLE)
                     for i, r in by_id.items()}

    def unstable(i: str) -> bool:
        s = base_s.get(i)
        return s is not None and 0 < s[0] < s[1]

    n_stable_all = sum(1 for i in by_id if not unstable(i))
    labels = {label for r in results for label in slice_labels(r.meta, keys)}
    out: list[Check] = []
    for c in checks:
        if c.paired is None or c.paired.regressed is None or not c.gated or not c.current.n:
            out.append(c)
            continue
        ids = [i for i in c.current.ids if i in by_id]
        paired = [i for i in ids if not unstable(i)]
        right = sum(1 for i in paired if was_right.get(i))
        fixed = sum(1 for i in paired if by_id[i].outcome == Outcome.FIXED)
        share = len(paired) / len(ids) if ids else 1.0
        lvl = (level if c.slice is None else level / max(1, len(labels))) * share
        noise, source = noise_flips(paired, base_s, run, fixed, n_stable_all)
        if rule != "significant":
            d = Detectable(c.label, rule, c.current.n, len(paired), right, noise, lvl, source, 1 if right else None,
                           c.tolerance)
        else:
            d = Detectable(c.label, rule, c.current.n, len(paired), right, noise, lvl, source,
                           detectable(right, noise, lvl), c.tolerance)
        if d.short and rule == "significant":
            d = replace(d, needed=samples_needed(len(ids), right, noise, lvl, c.tolerance))
        flip_p = flip_test([by_id[i] for i in ids]) if flip_test is not None and base is not None else None
        out.append(replace(c, detectable=d, require_power=require, flip_p=flip_p))
    return out
