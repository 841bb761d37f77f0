"""The paired comparison of two runs of one metric on the samples both have: delta, bootstrap interval,
flips both ways and McNemar's exact test.

One implementation for the gate (the current run against its stored baseline, :mod:`.checks`) and for
``compare`` (run B against run A, :mod:`pytest_uiground.report.runs`); the two copies it replaces
disagreed on what "right" means for a count such as ``attempts_to_success`` (the gate's called a
sample right when the count was at least 50, so every report said "0 regressed, 0 fixed, p = 1").

What "right" means is decided by the metric's unit (:func:`pytest_uiground.gate.units.infer`):

* a share of samples (accuracy, rate): the sample's binary outcome (its ``correct``, or the boolean
  component), negated for a bad event (lower is better); a graded 0..100 score (a judge's) is right
  at 50 or more;
* an IoU (x100): right at 50 or more, the detection convention (IoU >= 0.5);
* a count or milliseconds: no sample is right or wrong, so there are no flips and no McNemar test
  (``regressed``, ``fixed`` and ``p_value`` are None); the delta and its bootstrap interval stand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_uiground.gate import stats
from pytest_uiground.gate.metrics import compute, correct_of, value_of
from pytest_uiground.gate.units import infer
from pytest_uiground.record.result import SampleResult

if TYPE_CHECKING:  # types only: the metric's declaration is read, never loaded, here
    from pytest_uiground.suite.config import MetricSpec

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
    shared = [r for r in current if r.id in base_by]
    if not shared:
        return None
    cur_m, base_m = compute(spec, shared), compute(spec, [base_by[r.id] for r in shared])
    cur_agg = cur_m.overall if label is None else cur_m.slices.get(label)
    base_agg = base_m.overall if label is None else base_m.slices.get(label)
    if cur_agg is None or base_agg is None or cur_agg.n == 0:
        return None
    cur_by = {r.id: r for r in shared}
    ids = [i for i in cur_agg.ids if i in set(base_agg.ids)]
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
