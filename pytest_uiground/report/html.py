"""``report.html``: one self-contained page per suite run, for people.

``summary.json`` is for machines and the terminal table scrolls out of the CI log;
a reviewer deciding whether a drop is real wants the numbers with their intervals,
a picture of where accuracy sits by slice, and above all to *see* the samples that
regressed: the screenshot, the ground-truth box and where the model clicked.

The page is a single file (inline CSS, every image a ``data:`` URI, no script,
nothing fetched), so it can be attached to a CI run, mailed, or opened from disk
with no network. It is built from the typed records only: the suite's
:class:`~pytest_uiground.report.summary.SuiteSummary` and its
:class:`~pytest_uiground.results.SampleResult` list. This module says what the page
shows; :mod:`~pytest_uiground.report.plots` draws the figures and
:mod:`~pytest_uiground.report.gallery` the sample cards (both import matplotlib or
PIL only when they draw, so importing this module, and the plugin, stays cheap).
Everything taken from the summary or the model output is HTML-escaped: raw model
output is untrusted text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_uiground import stats
from pytest_uiground.baseline import atomic_write_text
from pytest_uiground.results import SampleResult

from . import plots as pl
from .gallery import Lookup, gallery
from .markup import esc, fmt, fmt_interval, is_number, page
from .summary import Comparison, MetricSummary, SuiteSummary

Interval = tuple[float, float]


# -- numbers ------------------------------------------------------------------------

def split_slice(label: str) -> tuple[str, str]:
    key, _, value = label.partition("=")
    return key, value


def slice_interval(value: float, n: int, records: Sequence[SampleResult]) -> Interval | None:
    """95% Wilson interval of one slice, for a summary that gives the slice only as a value.

    Counted from the slice's own samples when they account for exactly the slice's
    value (the metric scores the samples' main outcome); otherwise from the value,
    when that is a whole number of successes (a binary component). A graded slice
    with no matching samples gets no interval rather than a wrong one.
    """
    if n <= 0 or not is_number(value):
        return None
    if len(records) == n and all(r.correct is not None for r in records):
        mean = sum(r.value for r in records) / n
        if abs(mean - value) < 1e-3:
            return stats.wilson_interval(sum(bool(r.correct) for r in records), n)
    successes = value * n / 100.0
    if abs(successes - round(successes)) <= 1e-6 * n + 1e-9:
        return stats.wilson_interval(round(successes), n)
    return None


def metric_slice_interval(entry: MetricSummary, label: str, records: Sequence[SampleResult]) -> Interval | None:
    """The slice's interval as the metric computed it (``slice_intervals``), else a Wilson one from the records."""
    given = entry.slice_intervals.get(label)
    if given is not None:
        return given
    value = entry.slices.get(label)
    if value is None:
        return None
    return slice_interval(value, entry.slice_n.get(label, 0), slice_records(records, label))


def slice_records(records: Iterable[SampleResult], label: str) -> list[SampleResult]:
    key, value = split_slice(label)
    return [r for r in records if r.meta.get(key) == value]


def latencies(records: Iterable[SampleResult]) -> list[float]:
    """Per-sample latencies of samples that ran without error (as the summary's p50/p95)."""
    return [float(r.latency_ms) for r in records
            if r.latency_ms is not None and is_number(r.latency_ms) and r.error is None]


def latency_percentiles(summary: SuiteSummary, records: Sequence[SampleResult]) -> tuple[float, float]:
    lat = summary.latency_ms
    if lat is not None and is_number(lat.p50) and is_number(lat.p95):
        return lat.p50, lat.p95
    values = latencies(records)
    return stats.percentile(values, 50), stats.percentile(values, 95)


# -- header and tables ---------------------------------------------------------------

def header(summary: SuiteSummary) -> str:
    prov = summary.provenance
    rows: list[tuple[str, object]] = [
        ("model", summary.model),
        ("model fingerprint", _plain(summary.model_fingerprint)),
        ("samples", summary.n_samples),
        ("format errors", summary.format_errors),
        ("sample errors", len(summary.errors)),
        ("regressed", len(summary.regressed)),
        ("fixed", len(summary.fixed)),
    ]
    rows += judge_rows(summary)
    shown = {"model": summary.model, "model_fingerprint": summary.model_fingerprint,
             "n_samples": summary.n_samples, "judge": summary.judge}
    rows += [(f"provenance: {k}", _plain(v)) for k, v in prov.items()
             if k != "packages" and v is not None and v != "" and not (k in shown and shown[k] == v)]
    packages = prov.get("packages")
    if isinstance(packages, Mapping):
        rows.append(("packages", ", ".join(f"{k} {v}" for k, v in packages.items())))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows)
    return f"<h1>uiground report: {esc(summary.suite)}</h1>\n<dl class=\"meta\">{items}</dl>"


def judge_rows(summary: SuiteSummary) -> list[tuple[str, object]]:
    """For judged suites: who judged, unparseable replies and how stable the judge was."""
    judge = summary.judge or summary.provenance.get("judge")
    if judge is None:
        return []
    rows: list[tuple[str, object]] = [("judge", _plain(judge))]
    if summary.judge_parse_errors is not None:
        rows.append(("judge parse errors", len(summary.judge_parse_errors)))
    st = summary.judge_stability
    if isinstance(st, Mapping) and st:
        brief = {k: (len(v) if isinstance(v, (list, tuple)) else v) for k, v in st.items()}
        rows.append(("judge stability", _plain(brief)))
    return rows


def _plain(value: object) -> object:
    return json.dumps(value, sort_keys=True) if isinstance(value, (Mapping, list)) else value


def metric_rows(summary: SuiteSummary, records: Sequence[SampleResult]) -> list[list[str]]:
    """Rows of (metric, slice, value, n, interval, baseline, delta, delta interval, verdict)."""
    rows: list[list[str]] = []
    for name, entry in summary.metrics.items():
        rows.append(_metric_row(name, None, entry.value, entry.n, entry.interval, summary.comparison(name)))
        for label, value in entry.slices.items():
            rows.append(_metric_row(name, label, value, entry.slice_n.get(label, 0),
                                    metric_slice_interval(entry, label, records), summary.comparison(name, label)))
    return rows


def _metric_row(name: str, label: str | None, value: float | None, n: int, interval: Interval | None,
                comp: Comparison | None) -> list[str]:
    if comp is None:
        return [name, label or "(all)", fmt(value), str(n), fmt_interval(interval), "-", "-", "-", "-"]
    return [name, label or "(all)", fmt(value), str(n), fmt_interval(interval), fmt(comp.baseline),
            fmt(comp.delta, signed=True), fmt_interval(comp.delta_interval, signed=True), comp.verdict or "-"]


def metrics_table(summary: SuiteSummary, records: Sequence[SampleResult]) -> str:
    head = ("metric", "slice", "value", "n", "95% interval", "baseline", "delta", "delta 95% interval", "verdict")
    out = ["<table><tr>" + "".join(f'<th class="{"l" if i < 2 else ""}">{esc(h)}</th>'
                                   for i, h in enumerate(head)) + "</tr>"]
    for row in metric_rows(summary, records):
        cls = "slice" if row[1] != "(all)" else "all"
        cells = [f'<td class="l">{esc(row[0] if cls == "all" else "")}</td>', f'<td class="l">{esc(row[1])}</td>']
        cells += [f"<td>{esc(c)}</td>" for c in row[2:-1]]
        cells.append(f'<td class="{esc(row[-1])}">{esc(row[-1])}</td>')
        out.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>")
    out.append("</table>")
    p50, p95 = latency_percentiles(summary, records)
    out.append(f'<p>latency per sample: p50 {fmt(p50, digits=1)} ms, p95 {fmt(p95, digits=1)} ms</p>')
    return "\n".join(out)


# -- plots --------------------------------------------------------------------------

def accuracy_plot(name: str, entry: MetricSummary, records: Sequence[SampleResult]) -> str | None:
    """Bars of the metric per slice with 95% intervals; None for a metric without slices."""
    if not entry.slices:
        return None
    labels = list(entry.slices)
    values = [v if (v := entry.slices[k]) is not None and is_number(v) else 0.0 for k in labels]
    intervals = [metric_slice_interval(entry, label, records) for label in labels]
    return pl.slice_bars(name, labels, values, intervals, entry.value)


def latency_plot(summary: SuiteSummary, records: Sequence[SampleResult]) -> str | None:
    values = latencies(records)
    if not values:
        return None
    p50, p95 = latency_percentiles(summary, records)
    return pl.latency_histogram(values, p50, p95)


def baseline_plot(name: str, entry: MetricSummary, summary: SuiteSummary) -> str | None:
    """Grouped bars baseline vs current, overall and per slice; None without baseline values."""
    labels: list[str] = []
    base: list[float] = []
    cur: list[float] = []
    for label in [None, *entry.slices]:
        comp = summary.comparison(name, label)
        if comp is not None and comp.baseline is not None and comp.value is not None \
                and is_number(comp.baseline) and is_number(comp.value):
            labels.append(label or "(all)")
            base.append(comp.baseline)
            cur.append(comp.value)
    if not labels:
        return None
    return pl.baseline_bars(name, labels, base, cur)


def plots(summary: SuiteSummary, records: Sequence[SampleResult]) -> str:
    if not pl.available():
        return pl.MISSING
    parts: list[str | None] = [accuracy_plot(name, entry, records) for name, entry in summary.metrics.items()]
    parts.append(latency_plot(summary, records))
    parts += [baseline_plot(name, entry, summary) for name, entry in summary.metrics.items()]
    shown = [p for p in parts if p]
    return "\n".join(shown) if shown else '<p class="note">nothing to plot</p>'


# -- pages --------------------------------------------------------------------------

def render(summary: SuiteSummary, records: Sequence[SampleResult], lookup: Lookup | None = None) -> str:
    """The whole page for one suite run: header, metrics table, plots and the gallery."""
    body = "\n".join([
        header(summary),
        "<h2>Metrics</h2>", metrics_table(summary, records),
        "<h2>Plots</h2>", plots(summary, records),
        "<h2>Samples to look at</h2>", gallery(records, lookup),
    ])
    return page(f"uiground: {summary.suite}", body)


def write(path: Path, summary: SuiteSummary, records: Sequence[SampleResult], lookup: Lookup | None = None) -> Path:
    atomic_write_text(path, render(summary, records, lookup))
    return path


def render_failure(suite: str, exc: BaseException) -> str:
    body = (f"<h1>uiground report: {esc(suite)}</h1><p class=\"FAIL\">The HTML report could not be rendered: "
            f"{esc(type(exc).__name__)}: {esc(exc)}</p><p>summary.json and samples.jsonl beside this file "
            "are complete; the failure is in the report renderer only.</p>")
    return page(f"uiground: {suite} (report failed)", body)


def render_index(summaries: Mapping[str, SuiteSummary]) -> str:
    """The top page of a run with several suites: one row and link per suite."""
    rows = ["<tr><th class=\"l\">suite</th><th class=\"l\">model</th><th>samples</th>"
            "<th class=\"l\">headline</th><th>value</th><th>regressed</th><th>errors</th></tr>"]
    for name, doc in summaries.items():
        head = next(iter(doc.metrics), None)
        value = doc.metrics[head].value if head is not None else None
        rows.append(f'<tr><td class="l"><a href="{esc(name)}/report.html">{esc(name)}</a></td>'
                    f'<td class="l">{esc(doc.model)}</td><td>{esc(doc.n_samples)}</td>'
                    f'<td class="l">{esc(head or "-")}</td><td>{esc(fmt(value))}</td>'
                    f'<td>{len(doc.regressed)}</td><td>{len(doc.errors)}</td></tr>')
    body = "<h1>uiground report</h1><table>" + "".join(rows) + "</table>"
    return page("uiground report", body)


@dataclass(frozen=True)
class SuitePage:
    """What one suite's page needs; ``lookup`` finds a sample's image and ground truth."""

    summary: SuiteSummary
    records: Sequence[SampleResult]
    lookup: Lookup | None = None


def write_reports(root: Path, pages: Sequence[SuitePage], warn: Callable[[str], None] | None = None) -> list[Path]:
    """Write ``report.html`` beside each suite's ``summary.json``; never raises for a render failure.

    One suite: ``root/report.html``. Several: ``root/<suite>/report.html`` and an
    index at ``root/report.html``. A page that fails to render is replaced by one that
    says what failed, and ``warn`` is told, so the session's outcome and the JSON
    outputs never depend on the renderer.
    """
    if not pages:
        return []
    single = len(pages) == 1
    written: list[Path] = []
    for p in pages:
        name = p.summary.suite
        path = root / "report.html" if single else root / name / "report.html"
        written.append(_write_safely(path, name, functools.partial(render, p.summary, p.records, p.lookup), warn))
    if not single:
        index = {p.summary.suite: p.summary for p in pages}
        written.append(_write_safely(root / "report.html", "index", lambda: render_index(index), warn))
    return written


def _write_safely(path: Path, name: str, build: Callable[[], str], warn: Callable[[str], None] | None) -> Path:
    try:
        text = build()
    except Exception as exc:
        text = render_failure(name, exc)
        if warn is not None:
            warn(f"uiground: {path} could not be rendered ({type(exc).__name__}: {exc}); "
                 "summary.json and samples.jsonl are complete")
    atomic_write_text(path, text)
    return path
