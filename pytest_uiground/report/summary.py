"""The summary record: ``summary.json``, written at the end of a run and read back by
``report.html`` and ``compare`` through these types (never as loose dicts).

One :class:`SuiteSummary` per suite, versioned (:data:`VERSION`); a run of several
suites writes ``{"version": ..., "suites": {name: suite}}``. Floats that are not
numbers (an empty slice) are written as ``null``: JSON has no NaN.

Version 3 added what the pages need to be read on their own: each metric's ``unit``
(how to draw and label it) and ``selection`` (which samples and which score
component it averages, so ``compare`` can recompute it on the samples two runs
share), and the suite's ``baseline`` (whose numbers the comparison is against).
Older files read with those empty.

Version 4 stores the suite's verdict (``verdict``: status PASS or FAIL, its wording and reasons,
the failed checks, the baseline's fate), decided once by the gate
(:mod:`pytest_uiground.gate.verdict`); the pages print it and never decide it again. A file
without one (version 3 or older) reads with ``verdict`` None, and the page says the verdict was
not recorded rather than guess it from the numbers.

Both directions go through the records' one codec (:mod:`pytest_uiground.record.codec`), read from
the fields and their type hints: ``compare`` and the report read summary files written by other
versions, copied between machines or damaged, so they are read with ``tolerant=True`` (a NaN, a bool
or a string where a number belongs reads as "no value", a malformed list as empty, an unreadable
metric is left out); the written form leaves out what older readers would misread
(``higher_is_better`` only when false, the judge block only for judged suites) by each field's
``json_field(omit=...)``. (Until issue 42 these classes kept a hand-written pair of their own.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_uiground.gate import stats
from pytest_uiground.gate.verdict import Verdict
from pytest_uiground.record import codec
from pytest_uiground.record.codec import json_field
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.score import refusals

if TYPE_CHECKING:  # types only: the summary reads metric results and checks it is handed
    from pytest_uiground.gate.checks import Check, LatencyCheck
    from pytest_uiground.gate.metrics import Aggregate, MetricResult
    from pytest_uiground.record.result import SampleResult


VERSION = 4


@dataclass(frozen=True)
class MetricSummary:
    """One metric: its value over the suite and per slice, with the interval and counts."""

    value: float | None
    n: int
    average: str = "micro"
    higher_is_better: bool = field(default=True, metadata=json_field(omit="default"))
    interval: tuple[float, float] | None = None
    format_errors: int = 0
    errors: int = 0
    slices: Mapping[str, float | None] = field(default_factory=dict)
    slice_n: Mapping[str, int] = field(default_factory=dict)
    slice_intervals: Mapping[str, tuple[float, float] | None] = field(default_factory=dict)
    slice_format_errors: Mapping[str, int] = field(default_factory=dict)
    #: accuracy, rate, iou, count or ms (:mod:`pytest_uiground.report.units`); "" when unknown.
    unit: str = field(default="", metadata=json_field(omit="empty"))
    #: How the metric picks and scores samples: score (component), given, tasks, where, macro_over, mean_of.
    selection: Mapping[str, Any] = field(default_factory=dict, metadata=json_field(omit="empty"))

    def to_json(self) -> dict[str, Any]:
        return codec.to_json(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> MetricSummary:
        return codec.from_json(cls, d, tolerant=True)


@dataclass(frozen=True)
class Comparison:
    """One aggregate check: current value vs the baseline on the paired samples.

    ``value``, ``baseline`` and ``delta`` are on the same samples, the ones the baseline has. A suite grown
    since (new samples) has ``left_out`` > 0 and ``value_with_new``, the value on every sample (the metric's
    value in ``metrics``, the one floors hold), so the delta is never the difference of two numbers counted
    over different samples (issue 39)."""

    value: float | None
    baseline: float | None = None
    delta: float | None = None
    delta_interval: tuple[float, float] | None = None
    regressed: int | None = None
    fixed: int | None = None
    mcnemar_p: float | None = None
    floor: float | None = None
    verdict: str = "ok"
    tolerance: float | None = field(default=None, metadata=json_field(omit="none"))
    #: gate.power.Detectable.to_json(): the smallest drop it sees
    detectable: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    #: samples counted in the metric that the baseline lacks (new ones), not compared
    left_out: int = field(default=0, metadata=json_field(omit="default"))
    #: the value on every sample, given where left_out > 0
    value_with_new: float | None = field(default=None, metadata=json_field(omit="none"))

    def to_json(self) -> dict[str, Any]:
        return codec.to_json(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Comparison:
        return codec.from_json(cls, d, tolerant=True)


def latency_text(p50: float | None, p95: float | None, timed: int, cached: int, parallel: bool = False) -> str:
    """The latency line of the terminal, Markdown and report.html. A prediction from the cache keeps the time
    of the run that made it, so it is not this run's: when every answer came from the cache the line says
    ``cached`` (it read "p50 - ms"), and when some did, over how many the percentiles are."""
    if not timed or p50 is None or p95 is None or not (math.isfinite(p50) and math.isfinite(p95)):
        if cached:
            return (f"latency per sample: cached (all {cached} predictions came from the prediction cache; none "
                    "was timed in this run)")
        return "latency per sample: not measured (no sample was predicted without an error)"
    note = " (under xdist: parallel workers inflate per-sample times)" if parallel else ""
    if cached:
        note += f" (over the {timed} predicted in this run, not the {cached} from the cache)"
    return f"latency per sample: p50 {p50:.1f} ms, p95 {p95:.1f} ms{note}"


@dataclass(frozen=True)
class Latency:
    p50: float
    p95: float
    n: int


@dataclass(frozen=True)
class SuiteSummary:
    """Everything the reports need about one suite's run."""

    suite: str
    model: str | None
    model_fingerprint: Any
    n_samples: int
    metrics: Mapping[str, MetricSummary]
    baseline_comparison: Mapping[str, Comparison]
    latency_ms: Latency | None
    regressed: tuple[str, ...]
    fixed: tuple[str, ...]
    errors: tuple[str, ...]
    format_errors: int
    provenance: Mapping[str, Any]
    judge: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    judge_parse_errors: tuple[str, ...] | None = field(default=None, metadata=json_field(omit="none"))
    judge_stability: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    #: The stored baseline compared against: its provenance (model, model_fingerprint, date, ...); None without one.
    baseline: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    #: Explicit refusals ("the element is not there"); None where the suite asks for none and none came.
    refusals: int | None = field(default=None, metadata=json_field(omit="none"))
    #: The suite's verdict as the gate decided it; None in files written before verdicts were stored.
    verdict: Verdict | None = field(default=None, metadata=json_field(
        omit="none", write=Verdict.to_json, read=Verdict.from_json))
    #: Right in the baseline, wrong now, shown to be noise (--uiground-repeat / --uiground-confirm).
    unstable: tuple[str, ...] = field(default=(), metadata=json_field(omit="empty"))
    #: --uiground-repeat: the run-to-run flip rate, overall and by slice (gate/noise.py); None when not repeated.
    noise: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    #: A suite that grew or shrank since its baseline: the samples it has no entry for (run, not gated) and
    #: the entries of samples the suite no longer has (dropped out).
    new: tuple[str, ...] = field(default=(), metadata=json_field(omit="empty"))
    removed: tuple[str, ...] = field(default=(), metadata=json_field(omit="empty"))
    #: Several --uiground-api-base: per endpoint, from the records (:func:`endpoint_table`); None otherwise.
    endpoints: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    #: Records scored as the reference scores them although they look wrong (suite/loading.py: quirk).
    quirks: tuple[str, ...] = field(default=(), metadata=json_field(omit="empty"))
    #: --uiground-against: this run beside a published run, sample by sample (gate/against.py); None otherwise.
    against: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="none"))
    #: --uiground-perturb / [perturb]: per perturbation, this model before and after (report/robustness.py).
    robustness: Mapping[str, Any] | None = field(default=None, metadata=json_field(omit="empty"))
    #: A file without one is from before versions were written (version 1).
    version: int = field(default=VERSION, metadata=json_field(absent=1))

    def comparison(self, metric: str, label: str | None = None) -> Comparison | None:
        return self.baseline_comparison.get(metric if label is None else f"{metric}.{label}")

    def to_json(self) -> dict[str, Any]:
        out = codec.to_json(self)
        return {"version": out.pop("version"), **out}  # first, where a reader looks for it

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SuiteSummary:
        return codec.from_json(cls, d, tolerant=True)


def dumps(doc: Mapping[str, Any]) -> str:
    """JSON text, refusing NaN (the types above never hold one)."""
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def run_doc(suites: Mapping[str, SuiteSummary]) -> dict[str, Any]:
    return {"version": VERSION, "suites": {k: s.to_json() for k, s in suites.items()}}


def read(path: Path) -> dict[str, SuiteSummary]:
    """A ``summary.json`` (one suite, or several under ``suites``) as suite name → summary."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: expected a JSON object")
    if "suites" in data and isinstance(data["suites"], Mapping):
        return {str(k): SuiteSummary.from_json(v) for k, v in data["suites"].items()}
    s = SuiteSummary.from_json(data)
    return {s.suite: s}


def summary_entry(result: MetricResult) -> MetricSummary:
    """The metric as the summary record holds it (rounded; NaN becomes None)."""
    def r4(v: float | None) -> float | None:
        return round(v, 4) if v is not None and math.isfinite(v) else None

    def iv(a: Aggregate) -> tuple[float, float] | None:
        return (round(a.low, 4), round(a.high, 4)) if a.low is not None and a.high is not None else None

    o = result.overall
    return MetricSummary(
        value=r4(o.value), n=o.n, average=result.spec.average, higher_is_better=result.spec.higher_is_better,
        interval=iv(o), format_errors=o.format_errors, errors=o.errors,
        slices={k: r4(a.value) for k, a in result.slices.items()},
        slice_n={k: a.n for k, a in result.slices.items()},
        slice_intervals={k: iv(a) for k, a in result.slices.items()},
        slice_format_errors={k: a.format_errors for k, a in result.slices.items()},
    )


def build(
    suite: str,
    model: dict[str, Any] | None,
    results: Sequence[SampleResult],
    metric_results: Sequence[MetricResult],
    checks: Sequence[Check],
    latency: LatencyCheck | None,
    provenance: dict[str, Any],
    verdict: Verdict | None = None,
    noise: Mapping[str, Any] | None = None,
    new: Sequence[str] = (),
    removed: Sequence[str] = (),
    quirks: Sequence[str] = (),
    against: Mapping[str, Any] | None = None,
) -> SuiteSummary:
    """The suite's summary record (``summary.json``) from its records, metrics, checks and provenance."""
    def r4(v: float) -> float | None:
        return round(v, 4) if math.isfinite(v) else None

    comparisons: dict[str, Comparison] = {}
    for c in checks:
        p = c.paired
        comparisons[c.label] = Comparison(
            value=r4(c.compared_value),
            baseline=r4(p.baseline_value) if p else None,
            delta=r4(p.delta) if p else None,
            delta_interval=((round(p.delta_low, 4), round(p.delta_high, 4))
                            if p and p.delta_low is not None and p.delta_high is not None else None),
            regressed=p.regressed if p else None,
            fixed=p.fixed if p else None,
            mcnemar_p=p.p_value if p else None,
            floor=c.floor,
            verdict=c.verdict,
            tolerance=c.tolerance,
            detectable=c.detectable.to_json() if c.detectable is not None else None,
            left_out=c.left_out,
            value_with_new=r4(c.current.value) if c.left_out else None,
        )
    judged = "judge" in provenance
    return SuiteSummary(
        suite=suite,
        model=(model or {}).get("name"),
        model_fingerprint=(model or {}).get("fingerprint"),
        n_samples=len(results),
        metrics={m.spec.name: summary_entry(m) for m in metric_results},
        baseline_comparison=comparisons,
        latency_ms=Latency(latency.p50_ms, latency.p95_ms, latency.n) if latency else None,
        regressed=tuple(sorted(r.id for r in results if r.outcome == Outcome.REGRESSION)),
        fixed=tuple(sorted(r.id for r in results if r.outcome == Outcome.FIXED)),
        errors=tuple(sorted(r.id for r in results if r.error is not None)),
        format_errors=sum(r.format_error for r in results),
        provenance=provenance,
        judge=provenance["judge"] if judged else None,
        judge_parse_errors=tuple(sorted(r.id for r in results if r.score.notes.get("judge_parse_error")))
        if judged else None,
        judge_stability=stats.judge_stability(results) if judged else None,
        refusals=refusals(r.score for r in results),
        verdict=verdict,
        unstable=tuple(sorted(r.id for r in results if r.outcome == Outcome.UNSTABLE)),
        noise=noise,
        endpoints=endpoint_table(results),
        new=tuple(sorted(new)), removed=tuple(sorted(removed)), quirks=tuple(quirks), against=against,
    )


def endpoint_table(results: Sequence[SampleResult]) -> dict[str, dict[str, Any]] | None:
    """Per endpoint of a run with several ``--uiground-api-base`` (read from each record's
    ``prediction.route``): the samples it answered, their errors, its latency p50/p95 (predictions
    from the cache left out: not this run's time), the names it answered as, and how many requests
    left it after a connection failure (``went_down``: it stopped answering during the run). None
    when no record has a route (one endpoint, or another model)."""
    rows: dict[str, dict[str, Any]] = {}
    times: dict[str, list[float]] = {}

    def row(url: str) -> dict[str, Any]:
        return rows.setdefault(url, {"samples": 0, "errors": 0, "answered_as": [], "left": 0})

    for r in results:
        route = r.prediction.route if r.prediction is not None else {}
        if not route:
            continue
        for url in route.get("left", ()):
            row(str(url))["left"] += 1
        url = str(route.get("endpoint", ""))
        entry = row(url)
        entry["samples"] += 1
        entry["errors"] += r.error is not None
        name = route.get("answered_as")
        if name and name not in entry["answered_as"]:
            entry["answered_as"] = sorted([*entry["answered_as"], str(name)])
        if (t := r.counted_latency_ms) is not None:
            times.setdefault(url, []).append(t)
    if not rows:
        return None
    for url, entry in rows.items():
        lat = times.get(url)
        entry["p50_ms"] = round(stats.percentile(lat, 50), 3) if lat else None
        entry["p95_ms"] = round(stats.percentile(lat, 95), 3) if lat else None
        entry["went_down"] = entry["left"] > 0
    return dict(sorted(rows.items()))
