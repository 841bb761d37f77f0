"""``report.html``: one self-contained page per suite run, for people.

``summary.json`` is for machines and the terminal table scrolls out of the CI log;
a reviewer deciding whether a drop is real wants, in this order: the verdict and
what it is measured against (model and baseline, with fingerprints and dates), the
numbers with their intervals and deltas as the terminal has them, one chart per
metric in its own unit (:mod:`~pytest_uiground.report.units`), and every sample to
browse, with the screenshot, the ground truth and prediction drawn and a zoomed
crop (:mod:`~pytest_uiground.report.browse`).

The page is a single file (inline CSS, inline SVG charts, an inline script for the
sample browser, every image a ``data:`` URI; nothing fetched), so it can be
attached to a CI run, mailed, or opened from disk with no network. Runs too large
to inline write their images beside it under ``report_files/`` instead
(:mod:`~pytest_uiground.report.gallery`). It is built from the typed records only:
the suite's :class:`~pytest_uiground.report.summary.SuiteSummary` and its
:class:`~pytest_uiground.record.result.SampleResult` list; PIL is imported only to draw
sample images, and no plotting library is needed. Everything taken from the summary
or the model output is escaped: raw model output is untrusted text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_uiground.gate import stats
from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.record.result import SampleResult
from pytest_uiground.report import assets, browse, robustness, units
from pytest_uiground.report import plots as pl
from pytest_uiground.report.gallery import Images, Lookup
from pytest_uiground.report.markup import esc, fingerprint_table, fmt, is_number, page, plain
from pytest_uiground.report.summary import Comparison, MetricSummary, SuiteSummary, latency_text

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
    """Per-sample latencies of samples predicted in this run without error (as the summary's p50/p95;
    a cached prediction's time is that of the run that made it)."""
    return [t for r in records if (t := r.counted_latency_ms) is not None]


def latency_percentiles(summary: SuiteSummary, records: Sequence[SampleResult]) -> tuple[float, float]:
    lat = summary.latency_ms
    if lat is not None and is_number(lat.p50) and is_number(lat.p95):
        return lat.p50, lat.p95
    values = latencies(records)
    return stats.percentile(values, 50), stats.percentile(values, 95)


# -- banner and tables ---------------------------------------------------------------

def short(value: object, limit: int = 120) -> str:
    """A fingerprint or other mapping on one line (``k=v, ...``), clipped."""
    if value is None or value == "":
        return "-"
    def word(v: object) -> str:  # JSON for nested values: never a Python repr ({'use_cls': False}) on the page
        return v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)

    text = (", ".join(f"{k}={word(v)}" for k, v in sorted(value.items()) if v not in (None, "", {}, []))
            if isinstance(value, Mapping) else word(value))
    return text if len(text) <= limit else text[:limit] + "\u2026"


def verdict(summary: SuiteSummary) -> tuple[str, str]:
    """(css class, headline): the verdict the gate decided and stored in summary.json, word for word.
    A summary written before verdicts were stored says so instead of guessing."""
    v = summary.verdict
    if v is None:
        return "warn", (f"verdict not recorded (summary.json version {summary.version} predates stored verdicts); "
                        "see the run's terminal output or exit status")
    if v.passed:
        return "pass", v.text
    return "fail", v.text


def failed_line(summary: SuiteSummary) -> str:
    """The checks that failed, under the headline (the headline only counts them)."""
    failed = summary.verdict.failed_checks if summary.verdict is not None else ()
    if not failed:
        return ""
    shown = ", ".join(failed[:8]) + (f" and {len(failed) - 8} more" if len(failed) > 8 else "")
    return f'<div class="failed">failed checks: {esc(shown)}</div>'


def banner(summary: SuiteSummary) -> str:
    cls, headline = verdict(summary)
    prov = summary.provenance
    # The fingerprints are one table under these lines (header): printed here as well they read as JSON
    # twice above the table that showed them again (issue 39).
    run = (f"<b>{esc(summary.model or prov.get('model') or '?')}</b> \u00b7 {esc(prov.get('date') or '?')} "
           f"\u00b7 {summary.n_samples} samples")
    base = summary.baseline
    if base is None and summary.verdict is not None and summary.verdict.fate.value == "updated":
        against = "none before this run: it recorded one (<code>--snapshot-update</code>); commit it"
    elif base is None:
        against = ("none: the gate fails until one is recorded with <code>--snapshot-update</code> "
                   "and committed")
    else:
        against = (f"<b>{esc(base.get('model') or '?')}</b> \u00b7 {esc(base.get('date') or '?')} \u00b7 "
                   f"{esc(base.get('n_samples', '?'))} samples")
    extra = []
    if summary.errors:
        extra.append(f"{len(summary.errors)} sample error(s)")
    if summary.format_errors:
        extra.append(f"{summary.format_errors} format error(s)")
    if summary.fixed:
        extra.append(f"{len(summary.fixed)} fixed")
    if summary.verdict is not None and summary.verdict.rule != "each":
        extra.append(f"regressions judged by rule '{summary.verdict.rule}': {summary.verdict.flips_text}")
    if summary.verdict is not None and summary.verdict.noise_text:
        extra.append(summary.verdict.noise_text)
    if summary.verdict is not None and summary.verdict.confirm_text:
        extra.append(summary.verdict.confirm_text)
    if summary.verdict is not None and summary.verdict.power_text:
        extra.append(summary.verdict.power_text)
    tail = f'<div class="extra">{esc("; ".join(extra))}</div>' if extra else ""
    return (f'<div id="verdict" class="banner {cls}"><div class="headline">{esc(headline)}</div>{failed_line(summary)}'
            f'<div>suite <b>{esc(summary.suite)}</b> \u00b7 model {run}</div>'
            f"<div>baseline {against}</div>{tail}</div>")


def header(summary: SuiteSummary) -> str:
    prov = summary.provenance
    rows: list[tuple[str, object]] = [
        ("model", summary.model),
        ("samples", summary.n_samples),
        ("format errors", summary.format_errors),
        *([("refusals", summary.refusals)] if summary.refusals is not None else []),
        ("sample errors", len(summary.errors)),
        ("regressed", len(summary.regressed)),
        ("fixed", len(summary.fixed)),
        *([("unstable (never failing alone)", len(summary.unstable))] if summary.unstable else []),
        *([("new (not in the baseline: run, not gated)", len(summary.new))] if summary.new else []),
        *([("removed (in the baseline, no longer in the suite)", len(summary.removed))] if summary.removed else []),
    ]
    rows += judge_rows(summary)
    shown = {"model": summary.model, "model_fingerprint": summary.model_fingerprint,
             "n_samples": summary.n_samples, "judge": summary.judge}
    rows += [(f"provenance: {k}", plain(v)) for k, v in prov.items()
             if k != "packages" and v is not None and v != "" and not (k in shown and shown[k] == v)]
    packages = prov.get("packages")
    if isinstance(packages, Mapping):
        rows.append(("packages", ", ".join(f"{k} {v}" for k, v in packages.items())))
    base = summary.baseline or {}
    if base:
        rows += [(f"baseline: {k}", plain(v)) for k, v in base.items() if k != "model_fingerprint"]
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows)
    table = fingerprint_table(summary.model_fingerprint, base.get("model_fingerprint") if base else None)
    return (f'<div class="scrollx">{table}</div>'
            f'<details class="prov"><summary>run details</summary><dl class="meta">{items}</dl></details>')


def judge_rows(summary: SuiteSummary) -> list[tuple[str, object]]:
    """For judged suites: who judged, unparseable replies and how stable the judge was."""
    judge = summary.judge or summary.provenance.get("judge")
    if judge is None:
        return []
    rows: list[tuple[str, object]] = [("judge", plain(judge))]
    if summary.judge_parse_errors is not None:
        rows.append(("judge parse errors", len(summary.judge_parse_errors)))
    st = summary.judge_stability
    if isinstance(st, Mapping) and st:
        brief = {k: (len(v) if isinstance(v, (list, tuple)) else v) for k, v in st.items()}
        rows.append(("judge stability", plain(brief)))
    return rows


HEAD = ("metric", "slice", "n", "value", "95% interval", "baseline", "delta", "delta 95% interval", "paired p",
        "check")
WITH_NEW = "with new"
"""The extra column of a suite grown since its baseline: the value on every sample (new ones too)."""


def grown(summary: SuiteSummary) -> bool:
    return any(c.left_out for c in summary.baseline_comparison.values())


def head(summary: SuiteSummary) -> tuple[str, ...]:
    """:data:`HEAD`, with :data:`WITH_NEW` after ``delta`` where the comparison leaves new samples out."""
    if not grown(summary):
        return HEAD
    return (*HEAD[:4], "95% interval (with new)", *HEAD[5:7], WITH_NEW, *HEAD[7:])


def metric_rows(summary: SuiteSummary, records: Sequence[SampleResult]) -> list[list[str]]:
    """Rows of :func:`head`, numbers in the metric's unit, as the terminal table has them."""
    rows: list[list[str]] = []
    extra = grown(summary)
    for name, entry in summary.metrics.items():
        unit = units.unit_of(name, entry.unit)
        rows.append(_metric_row(name, None, entry.value, entry.n, entry.interval, summary.comparison(name), unit,
                                extra))
        for label, value in entry.slices.items():
            rows.append(_metric_row(name, label, value, entry.slice_n.get(label, 0),
                                    metric_slice_interval(entry, label, records), summary.comparison(name, label),
                                    unit, extra))
    return rows


def _metric_row(name: str, label: str | None, value: float | None, n: int, interval: Interval | None,
                comp: Comparison | None, unit: units.Unit, extra: bool = False) -> list[str]:
    """One row. ``n``, ``value``, ``baseline`` and ``delta`` are on the same samples, the ones the baseline has
    (``with new``: the value on every sample, where the suite grew since; the 95% interval is of that one)."""
    def iv(x: Interval | None, signed: bool = False) -> str:
        return "-" if x is None else f"[{unit.fmt(x[0], signed)}, {unit.fmt(x[1], signed)}]"

    left_out = comp.left_out if comp is not None else 0
    shown = comp.value if comp is not None and left_out else value
    first = [name, label or "(all)", f"{n - left_out} of {n}" if left_out else str(n), unit.fmt(shown), iv(interval)]
    with_new = ([f"{unit.fmt(value)} (+{left_out})" if left_out else "-"] if extra else [])
    if comp is None:
        return [*first, "-", "-", *with_new, "-", "-", "-"]
    p = "-" if comp.mcnemar_p is None else f"{comp.mcnemar_p:.3g}"
    return [*first, unit.fmt(comp.baseline), unit.fmt(comp.delta, signed=True), *with_new,
            iv(comp.delta_interval, True), p, comp.verdict or "-"]


def left_out_note(summary: SuiteSummary) -> str:
    """Under a metrics table whose comparison leaves new samples out: how many, as the terminal says it."""
    most = max(summary.baseline_comparison.values(), key=lambda c: c.left_out, default=None)
    if most is None or not most.left_out:
        return ""
    n = most.left_out
    return (f'<p class="note left-out">n, value, baseline and delta are on the samples the baseline has; {n} new '
            f"sample{'s' * (n != 1)} not in it {'are' if n != 1 else 'is'} left out of the comparison "
            f"(\u201c{WITH_NEW}\u201d and the 95% interval count them)</p>")


def _delta_class(comp: Comparison | None, higher_is_better: bool) -> str:
    if comp is None or comp.delta is None or comp.delta == 0:
        return ""
    return "up" if (comp.delta > 0) == higher_is_better else "down"


def metrics_table(summary: SuiteSummary, records: Sequence[SampleResult]) -> str:
    cols = head(summary)
    delta_at = cols.index("delta")
    out = ['<div class="scrollx"><table class="metrics sortable"><tr>'
           + "".join(f'<th class="{"l" if i < 2 else ""}">{esc(h)}</th>' for i, h in enumerate(cols)) + "</tr>"]
    rows = iter(metric_rows(summary, records))
    for name, entry in summary.metrics.items():
        unit = units.unit_of(name, entry.unit)
        for label in [None, *entry.slices]:
            row = next(rows)
            comp = summary.comparison(name, label)
            cls = "all" if label is None else "slice"
            what = (f'{esc(name)}<br><span class="unit">{esc(unit.axis)}, {units.direction(entry.higher_is_better)}'
                    "</span>") if label is None else ""
            cells = [f'<td class="l">{what}</td>', f'<td class="l">{esc(row[1])}</td>']
            cells += [f"<td>{esc(c)}</td>" for c in row[2:delta_at]]
            cells.append(f'<td class="{_delta_class(comp, entry.higher_is_better)}">{esc(row[delta_at])}</td>')
            cells += [f"<td>{esc(c)}</td>" for c in row[delta_at + 1:-1]]
            cells.append(f'<td class="check {esc(row[-1])}">{esc(row[-1])}</td>')
            out.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>")
    out.append("</table></div>")
    out.append(left_out_note(summary))
    out.append(f'<p class="latency">{esc(latency_line(summary, records))}</p>')
    return "\n".join(o for o in out if o)


def latency_line(summary: SuiteSummary, records: Sequence[SampleResult]) -> str:
    """The latency line as the terminal has it: ``cached`` when every answer came from the cache."""
    timed = latencies(records)
    cached = sum(r.cache == "hit" for r in records)
    p50, p95 = latency_percentiles(summary, records) if timed or summary.latency_ms is not None else (None, None)
    n = summary.latency_ms.n if summary.latency_ms is not None and summary.latency_ms.n else len(timed)
    return latency_text(p50 if is_number(p50) else None, p95 if is_number(p95) else None, n, cached)


# -- plots --------------------------------------------------------------------------

def metric_chart(name: str, entry: MetricSummary, summary: SuiteSummary, records: Sequence[SampleResult]) -> str:
    """One chart per metric: overall, then slices grouped by key, with intervals and the baseline."""
    unit = units.unit_of(name, entry.unit)
    def row(key: str, value: str, v: float | None, n: int, interval: Interval | None, comp: Comparison | None
            ) -> pl.Row:
        # A bar beside its baseline mark is on the samples the baseline has, as the table's value is.
        if comp is not None and comp.left_out and comp.value is not None:
            return pl.Row(key, value, [comp.value], [None], _marker(comp), f"n={n - comp.left_out} of {n}")
        return pl.Row(key, value, [v], [interval], _marker(comp), f"n={n}")

    rows = [row("", "(all)", entry.value, entry.n, entry.interval, summary.comparison(name))]
    for label in sorted(entry.slices, key=lambda lab: split_slice(lab)[0]):
        key, value = split_slice(label)
        rows.append(row(key, value, entry.slices[label], entry.slice_n.get(label, 0),
                        metric_slice_interval(entry, label, records), summary.comparison(name, label)))
    chart = pl.Chart(f"{name}", f"{name} by slice", unit, entry.higher_is_better, [summary.model or "this run"],
                     rows, marker_name="baseline")
    return pl.bar_chart(chart)


def _marker(comp: Comparison | None) -> float | None:
    return comp.baseline if comp is not None else None


def latency_plot(summary: SuiteSummary, records: Sequence[SampleResult]) -> str | None:
    values = latencies(records)
    if not values:
        return None
    p50, p95 = latency_percentiles(summary, records)
    return pl.histogram(values, p50, p95)


def plots(summary: SuiteSummary, records: Sequence[SampleResult]) -> str:
    parts: list[str | None] = [metric_chart(name, entry, summary, records) for name, entry in summary.metrics.items()]
    parts.append(latency_plot(summary, records))
    shown = [f'<figure class="chart">{p}</figure>' for p in parts if p]
    return "\n".join(shown) if shown else '<p class="note">nothing to plot</p>'


# -- pages --------------------------------------------------------------------------

def against_section(summary: SuiteSummary, shown: int = 50) -> list[str]:
    """``--uiground-against``: the paired table beside a published run and the ids that flip each way."""
    a = summary.against
    if not a:
        return []
    if a.get("note"):
        return ['<h2 id="against">Beside a published run</h2>',
                f'<p class="note">{esc(a.get("file"))} ({esc(a.get("parser"))}): {esc(a["note"])}</p>']

    def pct(v: object) -> str:
        return f"{v:.2f}" if isinstance(v, (int, float)) else "-"

    def ids(key: str) -> str:
        got = [str(i) for i in a.get(key) or []]
        more = f" \u2026 and {len(got) - shown} more" if len(got) > shown else ""
        return esc(", ".join(got[:shown]) + more) or "none"

    rows = [("paired samples", a.get("n")), ("this run's accuracy on them", pct(a.get("ours_accuracy"))),
            ("theirs", pct(a.get("theirs_accuracy"))), ("both right", a.get("both")),
            ("only this run", len(a.get("ours_only") or [])), ("only theirs", len(a.get("theirs_only") or [])),
            ("neither", a.get("neither")), ("McNemar exact p", f"{a.get('mcnemar_p', 1.0):.4g}"),
            ("without a pair", len(a.get("missing") or []))]
    if a.get("layout", "replay") != "replay":  # a published log: what matched, and where its verdict differs
        rows += [("their records matched to no sample", a.get("unmatched", 0)),
                 ("their verdict differs from this suite's", len(a.get("disagree") or []))]
    table = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return ['<h2 id="against">Beside a published run</h2>',
            f'<p class="note">{esc(a.get("file"))} ({esc(a.get("layout", "replay"))}), read as {esc(a.get("parser"))}; '
            "a report, not part of the verdict: the baseline is not touched.</p>",
            f"<table class=\"against\">{table}</table>",
            f"<p>right here, wrong in theirs: {ids('ours_only')}</p>",
            f"<p>wrong here, right in theirs: {ids('theirs_only')}</p>",
            *([f"<p>their own verdict differs from this suite's: {ids('disagree')}</p>"] if a.get("disagree") else [])]


def render(summary: SuiteSummary, records: Sequence[SampleResult], lookup: Lookup | None = None,
           root: Path | None = None, progress: Callable[[str], None] | None = None) -> str:
    """The whole page for one suite run: verdict, metrics, plots and every sample.

    ``root`` is the page's folder: large runs write their images under ``root/report_files``
    (and every run writes its crops there, for ``compare``); without it every image is inline.
    """
    images = Images(root, inline=browse.inline_images(records), progress=progress)
    body = "\n".join([
        f"<h1>uiground report: {esc(summary.suite)}</h1>",
        banner(summary), header(summary),
        "<h2>Metrics</h2>", metrics_table(summary, records), robustness.html_section(summary.robustness),
        *against_section(summary),
        "<h2>Plots</h2>", plots(summary, records),
        f'<h2 id="samples-h">Samples ({len(records)})</h2>', browse.browser(summary, records, lookup, images),
    ])
    return page(f"uiground: {summary.suite}", body, script=assets.SORT_JS + assets.BROWSER_JS,
                css=assets.BROWSER_CSS + assets.SORT_CSS)


def write(path: Path, summary: SuiteSummary, records: Sequence[SampleResult], lookup: Lookup | None = None) -> Path:
    atomic_write_text(path, render(summary, records, lookup, path.parent))
    return path


def render_failure(suite: str, exc: BaseException) -> str:
    body = (f"<h1>uiground report: {esc(suite)}</h1><p class=\"FAIL\">The HTML report could not be rendered: "
            f"{esc(type(exc).__name__)}: {esc(exc)}</p><p>summary.json and samples.jsonl beside this file "
            "are complete; the failure is in the report renderer only.</p>")
    return page(f"uiground: {suite} (report failed)", body)


def render_index(summaries: Mapping[str, SuiteSummary]) -> str:
    """The top page of a run with several suites: one row and link per suite."""
    rows = ["<tr><th class=\"l\">suite</th><th class=\"l\">verdict</th><th class=\"l\">model</th><th>samples</th>"
            "<th class=\"l\">headline</th><th>value</th><th>regressed</th><th>errors</th></tr>"]
    for name, doc in summaries.items():
        head = next(iter(doc.metrics), None)
        value = doc.metrics[head].value if head is not None else None
        cls, _ = verdict(doc)
        status = doc.verdict.status if doc.verdict is not None else "not recorded"
        why = doc.verdict.text if doc.verdict is not None else ""
        rows.append(f'<tr><td class="l"><a href="{esc(name)}/report.html">{esc(name)}</a></td>'
                    f'<td class="l verdict {cls}" title="{esc(why)}">{esc(status)}</td>'
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


def write_reports(root: Path, pages: Sequence[SuitePage], warn: Callable[[str], None] | None = None,
                  progress: Callable[[str], None] | None = None) -> list[Path]:
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
        written.append(_write_safely(path, name, functools.partial(render, p.summary, p.records, p.lookup,
                                                                   path.parent, progress), warn))
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
