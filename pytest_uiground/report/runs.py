"""The runs compared by ``python -m pytest_uiground compare``: loading, pairing, flipped samples.

Kept apart from the command (:mod:`.compare`) so the HTML page (:mod:`.comparepage`) and the
command both read it without importing each other.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_uiground.gate import checks, stats
from pytest_uiground.gate.checks import Paired
from pytest_uiground.gate.flips import slice_counts
from pytest_uiground.record import jsontext
from pytest_uiground.record.result import SampleResult
from pytest_uiground.report import summary as summary_mod
from pytest_uiground.report import units
from pytest_uiground.report.html import latency_percentiles, split_slice
from pytest_uiground.report.markup import is_number
from pytest_uiground.report.summary import MetricSummary, SuiteSummary
from pytest_uiground.suite.config import MetricSpec


class CompareError(Exception):
    """The runs cannot be compared; the message says which and why."""


@dataclass(frozen=True)
class Run:
    path: Path
    label: str
    suites: Mapping[str, SuiteSummary]  # suite name → its summary
    records: Sequence[SampleResult] = field(default_factory=tuple)

    def suite_records(self, suite: str) -> list[SampleResult]:
        return [r for r in self.records if r.suite == suite]


# -- loading ------------------------------------------------------------------------

def read_summary(path: Path) -> dict[str, SuiteSummary]:
    """Suite name → summary, from either the single-suite or the ``{"suites": ...}`` form."""
    file = path / "summary.json"
    if not file.is_file():
        raise CompareError(f"{path}: no summary.json (expected {file}); run pytest with --uiground-report {path} "
                           "to produce one")
    try:
        suites = summary_mod.read(file)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CompareError(f"{file}: not readable JSON ({exc})") from exc
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        why = str(exc).removeprefix(f"{file}: ")  # summary.read names the file itself
        raise CompareError(f"{file}: not a uiground summary ({why})") from exc
    if not suites or "" in suites:
        raise CompareError(f"{file}: not a uiground summary (no 'suite' or 'suites' field)")
    return suites


def read_records(path: Path) -> list[SampleResult]:
    """The run's per-sample records, if it kept them (``samples.jsonl``).

    Every line must be a record: a line that is not (a torn write, a hand edit) is an
    error naming the file and the line, never silently left out of the latencies.
    """
    file = path / "samples.jsonl"
    if not file.is_file():
        return []
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareError(f"{file}: not readable ({exc})") from exc
    out = []
    for number, line in enumerate(jsontext.split_lines(text), start=1):  # "\n" only: never inside a record
        if not line.strip():
            continue
        try:
            data = jsontext.loads(line)
            if not isinstance(data, Mapping):
                raise TypeError(f"expected a JSON object, got {type(data).__name__}")
            out.append(SampleResult.from_json(data))
        except KeyError as exc:
            raise CompareError(f"{file}, line {number}: not a sample record (no {exc} field)") from exc
        except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # RecursionError: jsontext.TooDeep
            raise CompareError(f"{file}, line {number}: not a sample record ({type(exc).__name__}: {exc})") from None
    return out


def _models(suites: Mapping[str, SuiteSummary]) -> str:
    return "+".join(sorted({s.model for s in suites.values() if s.model}))


def _zoom(suites: Mapping[str, SuiteSummary]) -> str:
    """`` zoom-in (fixed, depth 3)`` for a run with a cropping strategy, so native and zoom-in sit side by
    side under their own names (summaries written before the setting was recorded read as native)."""
    shown = {str(s.provenance.get("setting", "native")) for s in suites.values()}
    return "" if shown <= {"native"} else " " + "/".join(sorted(shown - {"native"}))


def default_labels(dirs: Sequence[Path], suites: Sequence[Mapping[str, SuiteSummary]]) -> list[str]:
    """One short label per run: the model name when that tells the runs apart, else the
    report folder's name, else both ("ocr · ocr-fixed"); never "ocr (ocr)"."""
    models = [_models(s) + _zoom(s) if _models(s) else "" for s in suites]
    names = [d.resolve().name or str(d) for d in dirs]
    both = [n if not m or m == n else f"{m} \u00b7 {n}" for m, n in zip(models, names, strict=True)]
    for candidate in (models, names, both):
        if all(candidate) and len(set(candidate)) == len(candidate):
            return list(candidate)
    return both


def load_runs(dirs: Sequence[Path], labels: Sequence[str] | None) -> list[Run]:
    if labels is not None and len(labels) != len(dirs):
        raise CompareError(f"--labels has {len(labels)} label(s) for {len(dirs)} run(s); give one per run")
    suites = [read_summary(d) for d in dirs]
    names = list(labels) if labels is not None else default_labels(dirs, suites)
    runs = [Run(d, name, s, read_records(d)) for d, name, s in zip(dirs, names, suites, strict=True)]
    return _unique_labels(runs)


def _unique_labels(runs: list[Run]) -> list[Run]:
    seen: dict[str, int] = {}
    out = []
    for r in runs:
        seen[r.label] = seen.get(r.label, 0) + 1
        out.append(r if seen[r.label] == 1 else Run(r.path, f"{r.label} #{seen[r.label]}", r.suites, r.records))
    return out


def check_same_suites(runs: Sequence[Run]) -> None:
    if len({frozenset(r.suites) for r in runs}) <= 1:
        return
    lines = [f"  {r.path}: suite{'s' if len(r.suites) != 1 else ''} {', '.join(map(repr, sorted(r.suites)))}"
             for r in runs]
    raise CompareError("cannot compare runs of different suites:\n" + "\n".join(lines)
                       + "\ncompare runs of the same suite (or, for multi-suite runs, the same set of suites)")


# -- numbers ------------------------------------------------------------------------

def headline(summary: SuiteSummary) -> tuple[str | None, float]:
    """The first metric and its value: the suite's headline number."""
    name = next(iter(summary.metrics), None)
    value = summary.metrics[name].value if name is not None else None
    return name, value if value is not None and is_number(value) else math.nan


def latency(run: Run, suite: str) -> tuple[float, float]:
    return latency_percentiles(run.suites[suite], run.suite_records(suite))


def _ordered(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def metric_names(suite: str, runs: Sequence[Run]) -> list[str]:
    return _ordered(name for r in runs for name in r.suites[suite].metrics)


def slice_labels(suite: str, metric: str, runs: Sequence[Run]) -> list[str]:
    labels = _ordered(lab for r in runs if (e := r.suites[suite].metrics.get(metric)) is not None
                      for lab in e.slices)
    return sorted(labels, key=lambda lab: split_slice(lab)[0])


def spec_of(name: str, entry: MetricSummary) -> MetricSpec | None:
    """The metric as the run defined it, from the summary's ``selection``; None for older summaries."""
    sel = entry.selection
    if not sel:
        return None
    keys = tuple(_ordered(split_slice(lab)[0] for lab in entry.slices))
    return MetricSpec(name=name, score=sel.get("score"), tasks=tuple(sel.get("tasks") or ()),
                      where=dict(sel.get("where") or {}), average=entry.average, macro_over=sel.get("macro_over"),
                      slices=keys, given=sel.get("given"), higher_is_better=entry.higher_is_better,
                      mean_of=tuple(sel.get("mean_of") or ()))


def paired(spec: MetricSpec, label: str | None, a: Sequence[SampleResult], b: Sequence[SampleResult],
           unit: str) -> Paired | None:
    """Run B against run A on the samples both scored: the gate's own paired comparison
    (:func:`pytest_uiground.gate.checks.paired`), with the unit the runs' summary recorded."""
    return checks.paired(spec, label, b, a, unit)


@dataclass(frozen=True)
class Line:
    """One metric (or slice) across runs: each run's value, and each later run against the first."""

    metric: str
    label: str | None
    values: list[float | None]
    intervals: list[tuple[float, float] | None]
    deltas: list[float | None]  # run k minus run 0, from the summaries (None for run 0)
    paired: list[Paired | None]  # run k against run 0 on shared samples (None for run 0)


def lines(suite: str, metric: str, runs: Sequence[Run]) -> list[Line]:
    entries = [r.suites[suite].metrics.get(metric) for r in runs]
    first = next(e for e in entries if e is not None)
    spec = spec_of(metric, first)
    unit = units.unit_of(metric, first.unit).key
    out = []
    for label in [None, *slice_labels(suite, metric, runs)]:
        values = [None if e is None else (e.value if label is None else e.slices.get(label)) for e in entries]
        intervals = [None if e is None else (e.interval if label is None else e.slice_intervals.get(label))
                     for e in entries]
        base = values[0]
        deltas = [None if k == 0 or v is None or base is None else v - base for k, v in enumerate(values)]
        pairs: list[Paired | None] = [None]
        for r in runs[1:]:
            recs_a, recs_b = runs[0].suite_records(suite), r.suite_records(suite)
            pairs.append(paired(spec, label, recs_a, recs_b, unit) if spec is not None and recs_a and recs_b
                         else None)
        out.append(Line(metric, label, values, intervals, deltas, pairs))
    return out


def flips(suite: str, a: Run, b: Run) -> tuple[list[str], list[str]]:
    """(fixed, regressed): shared samples whose main outcome went wrong → right, and right → wrong."""
    a_by = {r.id: r for r in a.suite_records(suite)}
    fixed, regressed = [], []
    for r in b.suite_records(suite):
        old = a_by.get(r.id)
        if old is None:
            continue
        if r.right and not old.right:
            fixed.append(r.id)
        elif old.right and not r.right:
            regressed.append(r.id)
    return sorted(fixed), sorted(regressed)


@dataclass(frozen=True)
class FlipSummary:
    """Run B against run A on the samples both scored: how many flipped each way, the rate, the exact
    one-sided McNemar test that B's regressions outnumber its fixes, and the same per slice. Two runs of
    one model (two backends, two batch sizes) measure its noise with this before a rule is chosen
    (docs/baselines.md)."""

    shared: int
    fixed: list[str]
    regressed: list[str]
    p_value: float
    by_slice: list[tuple[str, int, int, int]]  # (key=value, samples shared, regressed, fixed)

    @property
    def rate(self) -> float:
        return 100.0 * (len(self.fixed) + len(self.regressed)) / self.shared if self.shared else 0.0


def flip_summary(suite: str, a: Run, b: Run) -> FlipSummary | None:
    """None when either run kept no ``samples.jsonl``."""
    a_by = {r.id: r for r in a.suite_records(suite)}
    shared = [(a_by[r.id], r) for r in b.suite_records(suite) if r.id in a_by]
    if not shared:
        return None
    fixed, regressed = flips(suite, a, b)
    keys = list(dict.fromkeys(split_slice(lab)[0] for m in a.suites[suite].metrics.values() for lab in m.slices))
    counts = slice_counts(((new.meta, old.right and not new.right, new.right and not old.right)
                           for old, new in shared), keys)
    by_slice = sorted(((k, n, r, f) for k, (n, r, f) in counts.items()), key=lambda t: (-(t[2] + t[3]) / t[1], t[0]))
    return FlipSummary(len(shared), fixed, regressed, stats.mcnemar_one_sided(len(regressed), len(fixed)), by_slice)


def answer_text(record: SampleResult) -> str:
    """What a run answered, in the records' 0..1 frame (compare has no screenshots to measure pixels on)."""
    p = record.prediction
    if record.error is not None:
        return "error"
    if p is None:
        return "-"
    if p.point is not None:
        return f"({p.point.x:.3f}, {p.point.y:.3f})"
    if p.box is not None:
        return "[" + ", ".join(f"{v:.3f}" for v in p.box) + "]"
    if p.refused:
        return "a refusal"
    text = p.verdict or p.option or p.answer or p.raw
    return repr(text[:40] + ("…" if len(text) > 40 else "")) if text else "no answer"


def flip_lines(suite: str, a: Run, b: Run, limit: int = 10) -> list[str]:
    """The terminal's account of the flips between two runs: counts, rate, test, the slices that flip
    most, and the flipped samples with both answers."""
    fs = flip_summary(suite, a, b)
    if fs is None:
        return [f"{b.label} vs {a.label}: no samples.jsonl in one of the runs: flips unknown"]
    out = [f"{b.label} vs {a.label}: {len(fs.fixed)} fixed, {len(fs.regressed)} regressed of {fs.shared} shared "
           f"samples (flip rate {fs.rate:.2f} %); one-sided McNemar p = {fs.p_value:.3g} that the regressions "
           "outnumber the fixes"]
    flipped = [t for t in fs.by_slice if t[2] + t[3]]
    if flipped:
        out.append("  flip rate by slice: " + ", ".join(f"{k} {100 * (r + f) / n:.1f} % ({r} regressed, {f} fixed "
                                                         f"of {n})" for k, n, r, f in flipped[:8])
                   + (f" and {len(flipped) - 8} more slices" if len(flipped) > 8 else ""))
    a_by = {r.id: r for r in a.suite_records(suite)}
    b_by = {r.id: r for r in b.suite_records(suite)}
    for title, ids in (("regressed", fs.regressed), ("fixed", fs.fixed)):
        for sid in ids[:limit]:
            out.append(f"  {title} {sid}: {a.label} {answer_text(a_by[sid])} -> {b.label} {answer_text(b_by[sid])}")
        if len(ids) > limit:
            out.append(f"  ... and {len(ids) - limit} more {title} (samples.jsonl of each run)")
    return out


# -- terminal -----------------------------------------------------------------------
