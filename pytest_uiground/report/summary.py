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

These classes keep their own ``to_json``/``from_json`` rather than :mod:`pytest_uiground.record.codec`:
``compare`` and the report read summary files written by other versions, copied between
machines or damaged, so every field is read defensively (a NaN, a bool or a string where a
number belongs reads as "no value", a malformed list as empty) where the codec converts by
type and raises; and the written form leaves out what older readers would misread
(``higher_is_better`` only when false, the judge block only for judged suites).
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
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.score import refusals

if TYPE_CHECKING:  # types only: the summary reads metric results and checks it is handed
    from pytest_uiground.gate.checks import Check, LatencyCheck
    from pytest_uiground.gate.metrics import Aggregate, MetricResult
    from pytest_uiground.record.result import SampleResult


VERSION = 4


def _num(v: Any) -> float | None:
    """A finite float, or None (NaN, infinities and non-numbers are not JSON numbers)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _pair(v: Any) -> tuple[float, float] | None:
    if isinstance(v, (list, tuple)) and len(v) == 2:
        a, b = _num(v[0]), _num(v[1])
        if a is not None and b is not None:
            return (a, b)
    return None


def _ids(v: Any) -> tuple[str, ...]:
    return tuple(str(i) for i in v) if isinstance(v, (list, tuple)) else ()


@dataclass(frozen=True)
class MetricSummary:
    """One metric: its value over the suite and per slice, with the interval and counts."""

    value: float | None
    n: int
    average: str = "micro"
    higher_is_better: bool = True
    interval: tuple[float, float] | None = None
    format_errors: int = 0
    errors: int = 0
    slices: Mapping[str, float | None] = field(default_factory=dict)
    slice_n: Mapping[str, int] = field(default_factory=dict)
    slice_intervals: Mapping[str, tuple[float, float] | None] = field(default_factory=dict)
    slice_format_errors: Mapping[str, int] = field(default_factory=dict)
    #: accuracy, rate, iou, count or ms (:mod:`pytest_uiground.report.units`); "" when unknown.
    unit: str = ""
    #: How the metric picks and scores samples: score (component), given, tasks, where, macro_over, mean_of.
    selection: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "n": self.n, "average": self.average}
        if not self.higher_is_better:
            out["higher_is_better"] = False
        out.update(interval=list(self.interval) if self.interval else None, format_errors=self.format_errors,
                   errors=self.errors, slices=dict(self.slices), slice_n=dict(self.slice_n),
                   slice_intervals={k: list(v) if v else None for k, v in self.slice_intervals.items()},
                   slice_format_errors=dict(self.slice_format_errors))
        if self.unit:
            out["unit"] = self.unit
        if self.selection:
            out["selection"] = dict(self.selection)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> MetricSummary:
        return cls(
            value=_num(d.get("value")), n=int(d.get("n") or 0), average=str(d.get("average") or "micro"),
            higher_is_better=d.get("higher_is_better", True) is not False, interval=_pair(d.get("interval")),
            format_errors=int(d.get("format_errors") or 0), errors=int(d.get("errors") or 0),
            slices={str(k): _num(v) for k, v in (d.get("slices") or {}).items()},
            slice_n={str(k): int(v) for k, v in (d.get("slice_n") or {}).items()},
            slice_intervals={str(k): _pair(v) for k, v in (d.get("slice_intervals") or {}).items()},
            slice_format_errors={str(k): int(v) for k, v in (d.get("slice_format_errors") or {}).items()},
            unit=str(d.get("unit") or ""),
            selection=dict(sel) if isinstance(sel := d.get("selection"), Mapping) else {},
        )


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
    tolerance: float | None = None
    detectable: Mapping[str, Any] | None = None  # gate.power.Detectable.to_json(): the smallest drop it sees
    left_out: int = 0  # samples counted in the metric that the baseline lacks (new ones), not compared
    value_with_new: float | None = None  # the value on every sample, given where left_out > 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "baseline": self.baseline, "delta": self.delta,
               "delta_interval": list(self.delta_interval) if self.delta_interval else None,
               "regressed": self.regressed, "fixed": self.fixed, "mcnemar_p": self.mcnemar_p, "floor": self.floor,
               "verdict": self.verdict}
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        if self.detectable is not None:
            out["detectable"] = dict(self.detectable)
        if self.left_out:
            out["left_out"] = self.left_out
            out["value_with_new"] = self.value_with_new
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Comparison:
        def count(k: str) -> int | None:
            v = d.get(k)
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        return cls(value=_num(d.get("value")), baseline=_num(d.get("baseline")), delta=_num(d.get("delta")),
                   delta_interval=_pair(d.get("delta_interval")), regressed=count("regressed"), fixed=count("fixed"),
                   mcnemar_p=_num(d.get("mcnemar_p")), floor=_num(d.get("floor")),
                   verdict=str(d.get("verdict") or "ok"), tolerance=_num(d.get("tolerance")),
                   detectable=det if isinstance(det := d.get("detectable"), Mapping) else None,
                   left_out=count("left_out") or 0, value_with_new=_num(d.get("value_with_new")))


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
    judge: Mapping[str, Any] | None = None
    judge_parse_errors: tuple[str, ...] | None = None
    judge_stability: Mapping[str, Any] | None = None
    #: The stored baseline compared against: its provenance (model, model_fingerprint, date, ...); None without one.
    baseline: Mapping[str, Any] | None = None
    #: Explicit refusals ("the element is not there"); None where the suite asks for none and none came.
    refusals: int | None = None
    #: The suite's verdict as the gate decided it; None in files written before verdicts were stored.
    verdict: Verdict | None = None
    #: Right in the baseline, wrong now, shown to be noise (--uiground-repeat / --uiground-confirm).
    unstable: tuple[str, ...] = ()
    #: --uiground-repeat: the run-to-run flip rate, overall and by slice (gate/noise.py); None when not repeated.
    noise: Mapping[str, Any] | None = None
    #: A suite that grew or shrank since its baseline: the samples it has no entry for (run, not gated) and
    #: the entries of samples the suite no longer has (dropped out).
    new: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: Several --uiground-api-base: per endpoint, from the records (:func:`endpoint_table`); None otherwise.
    endpoints: Mapping[str, Any] | None = None
    #: Records scored as the reference scores them although they look wrong (suite/loading.py: quirk).
    quirks: tuple[str, ...] = ()
    #: --uiground-against: this run beside a published run, sample by sample (gate/against.py); None otherwise.
    against: Mapping[str, Any] | None = None
    #: --uiground-perturb / [perturb]: per perturbation, this model before and after (report/robustness.py).
    robustness: Mapping[str, Any] | None = None
    version: int = VERSION

    def comparison(self, metric: str, label: str | None = None) -> Comparison | None:
        return self.baseline_comparison.get(metric if label is None else f"{metric}.{label}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version, "suite": self.suite, "model": self.model,
            "model_fingerprint": self.model_fingerprint, "n_samples": self.n_samples,
            "metrics": {k: m.to_json() for k, m in self.metrics.items()},
            "baseline_comparison": {k: c.to_json() for k, c in self.baseline_comparison.items()},
            "latency_ms": ({"p50": self.latency_ms.p50, "p95": self.latency_ms.p95, "n": self.latency_ms.n}
                           if self.latency_ms else None),
            "regressed": list(self.regressed), "fixed": list(self.fixed), "errors": list(self.errors),
            "format_errors": self.format_errors, "provenance": dict(self.provenance),
        }
        if self.judge is not None:
            out.update(judge=dict(self.judge), judge_parse_errors=list(self.judge_parse_errors or ()),
                       judge_stability=self.judge_stability)
        if self.baseline is not None:
            out["baseline"] = dict(self.baseline)
        if self.refusals is not None:
            out["refusals"] = self.refusals
        if self.verdict is not None:
            out["verdict"] = self.verdict.to_json()
        if self.unstable:
            out["unstable"] = list(self.unstable)
        if self.noise is not None:
            out["noise"] = dict(self.noise)
        if self.new:
            out["new"] = list(self.new)
        if self.removed:
            out["removed"] = list(self.removed)
        if self.endpoints is not None:
            out["endpoints"] = {k: dict(v) for k, v in self.endpoints.items()}
        if self.quirks:
            out["quirks"] = list(self.quirks)
        if self.against is not None:
            out["against"] = dict(self.against)
        if self.robustness:
            out["robustness"] = dict(self.robustness)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SuiteSummary:
        lat = d.get("latency_ms")
        latency = None
        if isinstance(lat, Mapping) and _num(lat.get("p50")) is not None and _num(lat.get("p95")) is not None:
            latency = Latency(float(lat["p50"]), float(lat["p95"]), int(lat.get("n") or 0))
        judge = d.get("judge")
        return cls(
            suite=str(d.get("suite") or ""), model=d.get("model"), model_fingerprint=d.get("model_fingerprint"),
            n_samples=int(d.get("n_samples") or 0),
            metrics={str(k): MetricSummary.from_json(v) for k, v in (d.get("metrics") or {}).items()},
            baseline_comparison={str(k): Comparison.from_json(v)
                                 for k, v in (d.get("baseline_comparison") or {}).items()},
            latency_ms=latency, regressed=_ids(d.get("regressed")), fixed=_ids(d.get("fixed")),
            errors=_ids(d.get("errors")), format_errors=int(d.get("format_errors") or 0),
            provenance=dict(d.get("provenance") or {}),
            judge=dict(judge) if isinstance(judge, Mapping) else None,
            judge_parse_errors=_ids(d.get("judge_parse_errors")) if judge is not None else None,
            judge_stability=d.get("judge_stability"),
            baseline=dict(base) if isinstance(base := d.get("baseline"), Mapping) else None,
            refusals=int(d["refusals"]) if isinstance(d.get("refusals"), int) else None,
            verdict=Verdict.from_json(d.get("verdict")),
            unstable=_ids(d.get("unstable")),
            noise=dict(n) if isinstance(n := d.get("noise"), Mapping) else None,
            new=_ids(d.get("new")), removed=_ids(d.get("removed")),
            endpoints=dict(ep) if isinstance(ep := d.get("endpoints"), Mapping) else None,
            quirks=tuple(str(q) for q in qs) if isinstance(qs := d.get("quirks"), list) else (),
            against=dict(ag) if isinstance(ag := d.get("against"), Mapping) else None,
            robustness=dict(rb) if isinstance(rb := d.get("robustness"), Mapping) else None,
            version=int(d.get("version") or 1),
        )


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
