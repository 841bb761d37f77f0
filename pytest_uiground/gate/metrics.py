"""Metrics: aggregate per-sample scores into the suite's declared numbers.

Every value is 0..100. ``micro`` is the mean over samples; ``macro`` the mean of
per-group means over the declared key (the choice is always written in suite.toml,
never implied). Each metric is sliced by any metadata key; a value listing several
groups joined by ``|`` puts the sample in each group's slice. Errors and format errors
stay in the denominator as wrong answers and are also counted.

Every function reads scores through a ``score_of`` view: :func:`current` reads each
record's own score; the checks pass the baseline's score for the same record, so the
baseline is computed by exactly the same code on exactly the same samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_uiground.gate import stats, units
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import MULTI_VALUE_SEP, PERTURB_KEY
from pytest_uiground.record.score import Score

if TYPE_CHECKING:  # types only: the suite's declarations are read, never loaded, here
    from pytest_uiground.suite.config import MetricSpec

ScoreOf = Callable[[SampleResult], Score]


def current(r: SampleResult) -> Score:
    """The record's own score (the run being measured)."""
    return r.score


@dataclass(frozen=True)
class Aggregate:
    """One number over a set of samples."""

    value: float
    n: int
    low: float | None = None
    high: float | None = None
    format_errors: int = 0
    errors: int = 0
    ids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "value": round(self.value, 4),
            "n": self.n,
            "interval": (
                [round(self.low, 4), round(self.high, 4)] if self.low is not None and self.high is not None else None
            ),
            "format_errors": self.format_errors,
            "errors": self.errors,
        }


@dataclass(frozen=True)
class MetricResult:
    spec: MetricSpec
    overall: Aggregate
    slices: Mapping[str, Aggregate] = field(default_factory=dict)


def selects(spec: MetricSpec, r: SampleResult, score_of: ScoreOf = current) -> bool:
    """Whether a record belongs to a metric; ``given`` (e.g. IoU over returned boxes) reads
    the viewed score, so a baseline's value is over its own subset."""
    if spec.tasks and r.task not in spec.tasks:
        return False
    if spec.given is not None and not score_of(r).components.get(spec.given):
        return False
    if spec.refusals == "exclude" and r.meta.get("expects") == "refusal":
        return False
    return all(r.meta.get(k) == v for k, v in spec.where.items())


LATENCY = units.LATENCY
"""The pseudo-component that reads each sample's latency (ms) instead of its score (:mod:`.units`)."""


def _numeric(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def value_of(r: SampleResult, component: str | None, score_of: ScoreOf = current) -> float:
    """The sample's 0..100 value, or one component of it.

    A boolean component counts 100 or 0 (missing → 0, i.e. wrong); a numeric one (IoU
    x100, attempts) is taken as it is.
    """
    if component == LATENCY:
        return float(r.latency_ms or 0.0)
    s = score_of(r)
    if component is None:
        return s.value
    v = s.components.get(component)
    if _numeric(v):
        return float(v)  # type: ignore[arg-type]
    return 100.0 if v else 0.0


def correct_of(r: SampleResult, component: str | None, score_of: ScoreOf = current) -> bool | None:
    """The binary outcome behind a value; None for graded values (they get a bootstrap interval)."""
    if component == LATENCY:
        return None
    s = score_of(r)
    if component is None:
        return s.correct
    v = s.components.get(component)
    return None if _numeric(v) else bool(v)


def format_error_of(r: SampleResult, component: str | None, score_of: ScoreOf = current) -> bool:
    return score_of(r).format_error_of(None if component == LATENCY else component)


def micro(results: Sequence[SampleResult], component: str | None = None, score_of: ScoreOf = current) -> Aggregate:
    if not results:
        return Aggregate(value=float("nan"), n=0)
    values = [value_of(r, component, score_of) for r in results]
    low, high = stats.accuracy_interval(values, [correct_of(r, component, score_of) for r in results])
    return Aggregate(
        value=sum(values) / len(values),
        n=len(values),
        low=low,
        high=high,
        format_errors=sum(format_error_of(r, component, score_of) for r in results),
        errors=sum(r.error is not None for r in results),
        ids=tuple(r.id for r in results),
    )


def macro(results: Sequence[SampleResult], key: str, component: str | None = None,
          score_of: ScoreOf = current) -> Aggregate:
    """Unweighted mean over the groups of ``key``; samples without the key are one group."""
    groups: dict[str, list[SampleResult]] = defaultdict(list)
    for r in results:
        groups[r.meta.get(key, "")].append(r)
    base = micro(results, component, score_of)
    if not groups:
        return base
    means = [sum(value_of(x, component, score_of) for x in g) / len(g) for g in groups.values()]
    return Aggregate(
        value=sum(means) / len(means),
        n=base.n,
        format_errors=base.format_errors,
        errors=base.errors,
        ids=base.ids,
    )


def slice_label(key: str, value: str) -> str:
    return f"{key}={value}"


def slice_labels(meta: Mapping[str, str], keys: Iterable[str]) -> list[str]:
    """The slices a sample counts in, for ``keys``: one per key it has, and a sample in several groups
    (``a|b``) in each one's slice. The one rule for metrics, flips and the noise figures. A perturbed
    sample (``perturb`` in its metadata) counts in its ``perturb=<spec>`` slice only."""
    if PERTURB_KEY in meta:
        return [slice_label(PERTURB_KEY, meta[PERTURB_KEY])]
    return [slice_label(key, value) for key in keys if key in meta
            for value in dict.fromkeys(meta[key].split(MULTI_VALUE_SEP))]


def compute(spec: MetricSpec, results: Iterable[SampleResult], score_of: ScoreOf = current) -> MetricResult:
    chosen = [r for r in results if selects(spec, r, score_of)]
    chosen.sort(key=lambda r: r.id)
    c = spec.score
    plain = [r for r in chosen if PERTURB_KEY not in r.meta]  # the headline is the unperturbed suite's
    overall = (macro(plain, spec.macro_over, c, score_of) if spec.average == "macro" and spec.macro_over
               else micro(plain, c, score_of))
    by_slice: dict[str, list[SampleResult]] = defaultdict(list)
    for r in chosen:
        for label in slice_labels(r.meta, spec.slices):
            by_slice[label].append(r)
    slices = {label: micro(rs, c, score_of) for label, rs in sorted(by_slice.items())}
    return MetricResult(spec=spec, overall=overall, slices=slices)


def mean_of(spec: MetricSpec, done: Mapping[str, MetricResult]) -> MetricResult:
    """A headline defined as the unweighted mean of other metrics (e.g. MMBench-GUI's
    average of Basic and Advanced); its samples are the union of theirs. A part with no
    samples (a run of one level only) is left out of the mean rather than making it NaN."""
    parts = [p for p in (done[name].overall for name in spec.mean_of) if p.n > 0]
    ids = tuple(sorted({i for p in parts for i in p.ids}))
    value = sum(p.value for p in parts) / len(parts) if parts else float("nan")
    return MetricResult(spec=spec, overall=Aggregate(
        value=value, n=len(ids), format_errors=sum(p.format_errors for p in parts),
        errors=sum(p.errors for p in parts), ids=ids))


def compute_all(specs: Sequence[MetricSpec], results: Sequence[SampleResult]) -> list[MetricResult]:
    done: dict[str, MetricResult] = {}
    for s in specs:
        done[s.name] = mean_of(s, done) if s.mean_of else compute(s, results)
    return list(done.values())


def restrict(results: Sequence[SampleResult], ids: Mapping[str, Any]) -> list[SampleResult]:
    return [r for r in results if r.id in ids]
