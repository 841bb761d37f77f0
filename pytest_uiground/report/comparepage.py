"""The HTML page of ``compare``: what changed from the first run, metric by metric.

One section per suite: the runs (model, fingerprint, date, latency), then per metric
a table (each run's value and interval; each later run's delta, the paired
bootstrap interval of the delta with its sample count, McNemar's p and the fixed /
regressed counts) and one chart with a bar per run, slices grouped; then accuracy
against latency; then the samples that flipped, with each run's zoomed crop side by
side (read from the runs' ``report_files/crops/``, embedded so the page stays one
file). The numbers come from :mod:`~pytest_uiground.report.compare`.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence
from pathlib import Path

from pytest_uiground.report import assets, units
from pytest_uiground.report import plots as pl
from pytest_uiground.report.browse import page_data
from pytest_uiground.report.gallery import FILES_DIR, safe_name
from pytest_uiground.report.html import short, split_slice
from pytest_uiground.report.markup import esc, fmt, page
from pytest_uiground.report.runs import Line, Run, flip_lines, flips, headline, latency, lines, metric_names

FLIP_LIMIT = 40  # cards per list; the rest are listed by id

COMPARE_CSS = assets.COMPARE_CSS  # report/static/compare.css (the matrix page reads it too)


def suite_dir(run: Run, suite: str) -> Path:
    """Where a run's page for ``suite`` lives (a multi-suite run has one folder per suite)."""
    nested = run.path / suite
    return nested if len(run.suites) > 1 or (nested / FILES_DIR).is_dir() else run.path


def crop_uri(run: Run, suite: str, sample_id: str) -> str | None:
    folder = suite_dir(run, suite) / FILES_DIR / "crops"
    for ext, mime in (("png", "image/png"), ("jpg", "image/jpeg")):
        path = folder / f"{safe_name(sample_id)}.{ext}"
        if path.is_file():
            return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")
    return None




@functools.cache
def _instructions(page: Path) -> dict[str, str]:
    try:
        samples = page_data(page).get("samples") or []
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {str(s["id"]): str(s["instruction"]) for s in samples if isinstance(s, dict) and s.get("instruction")}


def instructions(run: Run, suite: str) -> dict[str, str]:
    """Each sample's instruction, as the run's report.html shows it (samples.jsonl does not carry it)."""
    return _instructions(suite_dir(run, suite) / "report.html")


def runs_table(suite: str, runs: Sequence[Run]) -> str:
    head = ('<tr><th class="l">run</th><th class="l">model</th><th class="l">fingerprint</th><th class="l">date</th>'
            '<th class="l">report</th><th>samples</th><th>p50 (ms)</th><th>p95 (ms)</th></tr>')
    body = []
    for i, r in enumerate(runs):
        s = r.suites[suite]
        p50, p95 = latency(r, suite)
        colour = pl.PALETTE[i % len(pl.PALETTE)]
        body.append(f'<tr><td class="l"><span class="sw" style="background:{colour}"></span>{esc(r.label)}'
                    f'{" (reference)" if i == 0 else ""}</td><td class="l">{esc(s.model or "-")}</td>'
                    f'<td class="l wrap">{esc(short(s.model_fingerprint, 160))}</td>'
                    f'<td class="l">{esc(s.provenance.get("date") or "-")}</td><td class="l">{esc(r.path)}</td>'
                    f"<td>{s.n_samples}</td><td>{fmt(p50, digits=1)}</td><td>{fmt(p95, digits=1)}</td></tr>")
    return "<table class=\"sortable\">" + head + "".join(body) + "</table>"


def metric_table(metric_lines: Sequence[Line], runs: Sequence[Run], unit: units.Unit) -> str:
    head = '<tr><th class="l">slice</th>' + "".join(f"<th>{esc(r.label)}</th>" for r in runs)
    for r in runs[1:]:
        head += (f"<th>\u0394 {esc(r.label)}</th><th>paired \u0394 95% interval (n)</th><th>McNemar p</th>"
                 "<th>fixed / regressed</th>")
    rows = [head + "</tr>"]
    for ln in metric_lines:
        cls = "all" if ln.label is None else "slice"
        cells = [f'<td class="l">{esc(ln.label or "(all)")}</td>']
        for v, iv in zip(ln.values, ln.intervals, strict=True):
            sub = f' <span class="note">[{unit.fmt(iv[0])}, {unit.fmt(iv[1])}]</span>' if iv is not None else ""
            cells.append(f'<td class="num">{esc(unit.fmt(v))}{sub}</td>')
        for k in range(1, len(runs)):
            p = ln.paired[k]
            cells.append(f'<td class="num">{esc(unit.fmt(ln.deltas[k], signed=True))}</td>')
            if p is None:
                cells += ["<td>-</td>", "<td>-</td>", "<td>-</td>"]
                continue
            pv = "-" if p.p_value is None else f"{p.p_value:.3g}"
            low, high = unit.fmt(p.delta_low, signed=True), unit.fmt(p.delta_high, signed=True)
            flipped = "-" if p.fixed is None or p.regressed is None else f"{p.fixed} / {p.regressed}"
            cells += [f'<td class="num">{esc(unit.fmt(p.delta, signed=True))} [{esc(low)}, {esc(high)}] ({p.n})</td>',
                      f'<td class="num">{pv}</td>', f'<td class="num">{flipped}</td>']
        rows.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>")
    return "<table class=\"sortable\">" + "".join(rows) + "</table>"


def metric_chart(suite: str, metric: str, metric_lines: Sequence[Line], runs: Sequence[Run]) -> str:
    first = next(e for r in runs if (e := r.suites[suite].metrics.get(metric)) is not None)
    unit = units.unit_of(metric, first.unit)
    rows = []
    for ln in metric_lines:
        group, value = ("", "(all)") if ln.label is None else split_slice(ln.label)
        rows.append(pl.Row(group, value, ln.values, ln.intervals))
    chart = pl.Chart(metric, f"{metric} by run", unit, first.higher_is_better, [r.label for r in runs], rows)
    return pl.bar_chart(chart)


def scatter_plot(suite: str, runs: Sequence[Run]) -> str | None:
    """The headline metric against p50 latency, one labelled point per run."""
    points = [(latency(r, suite)[0], headline(r.suites[suite])[1], r.label) for r in runs]
    name = headline(runs[0].suites[suite])[0]
    if name is None:
        return None
    entry = runs[0].suites[suite].metrics[name]
    return pl.scatter(f"{suite}: {name} vs p50 latency", units.unit_of(name, entry.unit), entry.higher_is_better,
                      points)


def flip_cards(suite: str, a: Run, b: Run, ids: Sequence[str], title: str) -> str:
    if not ids:
        return f'<p class="note">{esc(title)}: none</p>'
    a_by = {r.id: r for r in a.suite_records(suite)}
    b_by = {r.id: r for r in b.suite_records(suite)}
    cards = []
    for sid in ids[:FLIP_LIMIT]:
        pics = []
        for run, rec in ((a, a_by[sid]), (b, b_by[sid])):
            uri = crop_uri(run, suite, sid)
            img = (f'<img class="thumb" alt="{esc(run.label)}: {esc(sid)}" src="{uri}">' if uri
                   else '<span class="note">no crop (run without report.html)</span>')
            pics.append(f"<div>{img}<div>{esc(run.label)}: {esc(fmt(rec.value, digits=1))}</div></div>")
        meta = ", ".join(f"{k}={v}" for k, v in a_by[sid].meta.items())
        said = instructions(a, suite).get(sid) or instructions(b, suite).get(sid)
        instr = f'<div class="instr">{esc(said)}</div>' if said else ""
        cards.append(f'<figure class="flip" id="flip-{esc(sid)}"><b>{esc(sid)}</b>{instr}'
                     f'<div class="note">{esc(meta)}</div>'
                     f'<div class="pair">{"".join(pics)}</div></figure>')
    more = ids[FLIP_LIMIT:]
    tail = f'<p class="note">and {len(more)} more: {esc(", ".join(more))}</p>' if more else ""
    return f"<h4>{esc(title)} ({len(ids)})</h4><div class=\"flips\">{''.join(cards)}</div>{tail}"


def suite_section(suite: str, runs: Sequence[Run]) -> str:
    parts = [f"<h2>{esc(suite)}</h2>", runs_table(suite, runs)]
    for metric in metric_names(suite, runs):
        first = next(e for r in runs if (e := r.suites[suite].metrics.get(metric)) is not None)
        unit = units.unit_of(metric, first.unit)
        metric_lines = lines(suite, metric, runs)
        parts += [f'<h3>{esc(metric)} <span class="note">{esc(unit.axis)}, '
                  f"{units.direction(first.higher_is_better)}</span></h3>",
                  metric_table(metric_lines, runs, unit),
                  f'<figure class="chart">{metric_chart(suite, metric, metric_lines, runs)}</figure>']
    scatter = scatter_plot(suite, runs)
    if scatter:
        parts += ["<h3>accuracy vs latency</h3>", f'<figure class="chart">{scatter}</figure>']
    for r in runs[1:]:
        fixed, regressed = flips(suite, runs[0], r)
        parts.append(f"<h3>samples that flipped: {esc(r.label)} vs {esc(runs[0].label)}</h3>")
        if not r.suite_records(suite) or not runs[0].suite_records(suite):
            parts.append('<p class="note">no samples.jsonl in one of the runs: flips unknown</p>')
            continue
        summary = flip_lines(suite, runs[0], r, limit=0)
        parts.append(f'<p class="note">{esc(summary[0])}</p>'
                     + "".join(f'<p class="note">{esc(line.strip())}</p>' for line in summary[1:]
                               if line.startswith("  flip rate by slice")))
        parts += [flip_cards(suite, runs[0], r, fixed, "fixed (wrong before, right now)"),
                  flip_cards(suite, runs[0], r, regressed, "regressed (right before, wrong now)")]
    return "\n".join(parts)


def render_html(runs: Sequence[Run]) -> str:
    suites = sorted(runs[0].suites)
    intro = (f'<p>Deltas, paired intervals and McNemar p-values are against the first run, '
             f"<b>{esc(runs[0].label)}</b>, on the samples both runs scored.</p>")
    body = "<h1>uiground comparison</h1>" + intro + "\n".join(suite_section(s, runs) for s in suites)
    return page("uiground comparison: " + ", ".join(suites), body, script=assets.SORT_JS,
                css=COMPARE_CSS + assets.SORT_CSS)
