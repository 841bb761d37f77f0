"""The figures of ``report.html`` and ``compare``, drawn as inline SVG.

This module only draws: callers work out what to plot from the typed summary and
records and pass rows of numbers with their :class:`~pytest_uiground.report.units.Unit`.
SVG written by hand rather than matplotlib: the page needs no plotting library
(matplotlib is an optional extra), text stays sharp and searchable at any width,
and a figure costs a few kilobytes instead of a base64 PNG.

Each metric gets one horizontal bar chart: the overall value first, then its
slices grouped by slice key, one bar per series (the current run, or each compared
run), the 95% interval as a whisker and the baseline as a dark tick. The axis
follows the unit: 0–100 for shares and IoU, the data's own range for counts and
milliseconds; lower-is-better metrics say so in the title. Labels sit at the left,
the legend above the bars, so nothing covers a bar.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_uiground.report.markup import esc, is_number
from pytest_uiground.report.units import Unit

Interval = tuple[float, float]
ZERO_STUB = 4.0  # px: the narrowest bar drawn (a zero is an outlined stub of this width)
PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#9d755d", "#eeca3b")
WIDTH = 1000
LABEL_W = 200
RIGHT_PAD = 70
FONT = 'font-family="system-ui,Segoe UI,Helvetica,Arial,sans-serif"'

@dataclass(frozen=True)
class Row:
    """One row of a chart: a slice (or the overall value) with one value per series."""

    group: str  # "" for the overall row; else the slice key
    label: str
    values: Sequence[float | None]
    intervals: Sequence[Interval | None] = ()
    marker: float | None = None  # the baseline
    note: str = ""  # shown after the label (e.g. "n=42")


@dataclass(frozen=True)
class Chart:
    title: str
    alt: str
    unit: Unit
    higher_is_better: bool
    series: Sequence[str]
    rows: Sequence[Row] = field(default_factory=tuple)
    marker_name: str = "baseline"


def nice_max(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above ``value``."""
    if not is_number(value) or value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if m * exp >= value - 1e-12:
            return float(m * exp)
    return float(10 * exp)


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def axis_max(chart: Chart) -> float:
    if chart.unit.bounded:
        return 100.0
    top = 0.0
    for r in chart.rows:
        top = max([top, *(float(v) for v in r.values if v is not None and _finite(v))])
        top = max([top, *(iv[1] for iv in r.intervals if iv is not None and _finite(iv[1]))])
        if r.marker is not None and _finite(r.marker):
            top = max(top, r.marker)
    return nice_max(top * 1.05)


def _ticks(top: float) -> list[float]:
    step = top / 5 if top > 0 else 1.0
    return [i * step for i in range(6)]


def _tick_text(v: float, unit: Unit) -> str:
    return f"{v:g}" if unit.key != "count" else f"{v:.2g}" if v < 10 else f"{v:g}"


def _legend(chart: Chart, y: float, has_marker: bool, has_interval: bool) -> tuple[list[str], float]:
    out: list[str] = []
    x = float(LABEL_W)
    for i, name in enumerate(chart.series):
        out.append(f'<rect x="{x:.1f}" y="{y - 10:.1f}" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>'
                   f'<text x="{x + 16:.1f}" y="{y:.1f}" font-size="12">{esc(name)}</text>')
        x += 30 + 7 * len(name)
    if has_marker:
        out.append(f'<line x1="{x + 6:.1f}" x2="{x + 6:.1f}" y1="{y - 12:.1f}" y2="{y + 2:.1f}" stroke="#222" '
                   f'stroke-width="3"/><text x="{x + 14:.1f}" y="{y:.1f}" font-size="12">'
                   f"{esc(chart.marker_name)}</text>")
        x += 30 + 7 * len(chart.marker_name)
    if has_interval:
        out.append(f'<path d="M{x:.1f} {y - 4:.1f}h22M{x:.1f} {y - 9:.1f}v10M{x + 22:.1f} {y - 9:.1f}v10" '
                   f'stroke="#333" fill="none"/><text x="{x + 28:.1f}" y="{y:.1f}" font-size="12">95% interval</text>')
    return out, y + 12


def bar_chart(chart: Chart) -> str:
    """The chart as an ``<svg>`` element (scales to its container; 1000 units wide)."""
    n_series = max(1, len(chart.series))
    bar_h = 14 if n_series == 1 else 11
    row_h = n_series * bar_h + 8
    top = axis_max(chart)
    plot_w = WIDTH - LABEL_W - RIGHT_PAD
    has_marker = any(r.marker is not None and _finite(r.marker) for r in chart.rows)
    has_interval = any(iv is not None for r in chart.rows for iv in r.intervals)

    def x_of(v: float) -> float:
        return LABEL_W + plot_w * min(max(v, 0.0), top) / top

    way = "higher is better" if chart.higher_is_better else "lower is better"
    arrow = "\u2191" if chart.higher_is_better else "\u2193"
    parts = [f'<text x="0" y="16" font-size="15" font-weight="600">{esc(chart.title)}</text>',
             f'<text x="0" y="34" font-size="12" fill="#444">{esc(chart.unit.axis)} \u00b7 {arrow} {way}</text>']
    legend, y = _legend(chart, 56, has_marker, has_interval)
    parts += legend
    y += 14
    axis_top = y
    body: list[str] = []
    group = None
    for r in chart.rows:
        if r.group != group and r.group:
            body.append(f'<text x="4" y="{y + 13:.1f}" font-size="12" font-weight="600" fill="#555">'
                        f"by {esc(r.group)}</text>")
            y += 18
        group = r.group
        label = r.label + (f"  {r.note}" if r.note else "")
        weight = ' font-weight="600"' if not r.group else ""
        body.append(f'<text x="{LABEL_W - 8}" y="{y + row_h / 2 + 4:.1f}" font-size="12" text-anchor="end"{weight}>'
                    f"{esc(label)}</text>")
        for i, v in enumerate(r.values):
            by = y + 4 + i * bar_h
            colour = PALETTE[i % len(PALETTE)]
            if v is None or not _finite(v):
                body.append(f'<text x="{LABEL_W + 4}" y="{by + bar_h - 3:.1f}" font-size="11" fill="#888">'
                            "no value</text>")
                continue
            x1 = x_of(v)
            who = chart.series[i] if i < len(chart.series) else ""
            # A zero (or nearly zero) bar would vanish under the axis line: it is drawn as a short outlined
            # stub past the axis instead, so "0 %" reads as a value, not as a missing bar.
            width = x1 - LABEL_W
            look = (f'fill="{colour}"' if width >= ZERO_STUB else
                    f'fill="#fff" stroke="{colour}" stroke-width="1.5"')
            body.append(f'<rect x="{LABEL_W + (0 if width >= ZERO_STUB else 1):.1f}" y="{by:.1f}" '
                        f'width="{max(width, ZERO_STUB):.1f}" height="{bar_h - 2}" {look}><title>{esc(who)}: '
                        f"{esc(chart.unit.label(v))}</title></rect>")
            end = max(x1, LABEL_W + ZERO_STUB + 1)
            iv = r.intervals[i] if i < len(r.intervals) else None
            if iv is not None and _finite(iv[0]) and _finite(iv[1]):
                a, b, mid = x_of(iv[0]), x_of(iv[1]), by + (bar_h - 2) / 2
                body.append(f'<path d="M{a:.1f} {mid:.1f}H{b:.1f}M{a:.1f} {mid - 4:.1f}v8M{b:.1f} {mid - 4:.1f}v8" '
                            'stroke="#222" stroke-width="1.2" fill="none"/>')
                end = max(end, b)
            clipped = v > top
            text = chart.unit.label(v) + (" \u25b6" if clipped else "")
            body.append(f'<text x="{end + 5:.1f}" y="{by + bar_h - 3:.1f}" font-size="11">{esc(text)}</text>')
        if r.marker is not None and _finite(r.marker):
            mx = x_of(r.marker)
            body.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{y + 1:.1f}" y2="{y + row_h - 1:.1f}" stroke="#222" '
                        f'stroke-width="3"><title>{esc(chart.marker_name)}: {esc(chart.unit.label(r.marker))}</title>'
                        "</line>")
        y += row_h
    axis = [f'<line x1="{LABEL_W}" x2="{LABEL_W}" y1="{axis_top:.1f}" y2="{y:.1f}" stroke="#999"/>']
    for t in _ticks(top):
        tx = x_of(t)
        axis.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{axis_top:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>'
                    f'<text x="{tx:.1f}" y="{y + 14:.1f}" font-size="11" text-anchor="middle" fill="#555">'
                    f"{esc(_tick_text(t, chart.unit))}</text>")
    axis.append(f'<text x="{LABEL_W + plot_w / 2:.1f}" y="{y + 30:.1f}" font-size="12" text-anchor="middle">'
                f"{esc(chart.unit.axis)}</text>")
    height = y + 38
    return _svg(chart.alt, height, [*parts, *axis, *body])


def _svg(alt: str, height: float, parts: Sequence[str], width: int = WIDTH) -> str:
    return (f'<svg class="plot" role="img" aria-label="{esc(alt)}" viewBox="0 0 {width} {height:.0f}" '
            f'width="{width}" height="{height:.0f}" {FONT} xmlns="http://www.w3.org/2000/svg">'
            f"<title>{esc(alt)}</title>" + "".join(parts) + "</svg>")


def histogram(values: Sequence[float], p50: float, p95: float, title: str = "latency per sample") -> str:
    """Counts of per-sample latencies, with p50 and p95 marked."""
    finite = [v for v in values if _finite(v)]
    width, left, bottom_pad = 720, 56, 44
    plot_w, plot_h, top_y = width - left - 20, 180, 44
    mid = top_y + plot_h / 2
    top = nice_max(max(finite) * 1.02) if finite else 1.0
    n_bins = min(40, max(5, 2 * int(math.sqrt(len(finite))))) if finite else 5
    counts = [0] * n_bins
    for v in finite:
        counts[min(n_bins - 1, int(v / top * n_bins))] += 1
    cmax = max(counts) or 1
    parts = [f'<text x="0" y="16" font-size="15" font-weight="600">{esc(title)} ({len(finite)} samples)</text>']
    bw = plot_w / n_bins
    for i, c in enumerate(counts):
        h = plot_h * c / cmax
        parts.append(f'<rect x="{left + i * bw + 0.5:.1f}" y="{top_y + plot_h - h:.1f}" width="{bw - 1:.1f}" '
                     f'height="{h:.1f}" fill="#72b7b2"><title>{c} samples</title></rect>')
    keys = []
    for q, v, dash in (("p50", p50, "6 3"), ("p95", p95, "2 2")):
        if _finite(v):
            x = left + plot_w * min(v, top) / top
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top_y}" y2="{top_y + plot_h}" stroke="#c03030" '
                         f'stroke-width="2" stroke-dasharray="{dash}"><title>{q} {v:.1f} ms</title></line>')
            keys.append(f"{q} {v:.1f} ms ({'dashed' if q == 'p50' else 'dotted'})")
    parts.append(f'<text x="0" y="32" font-size="12" fill="#b03030">{esc(", ".join(keys))}</text>')
    for t in _ticks(top):
        x = left + plot_w * t / top
        parts.append(f'<text x="{x:.1f}" y="{top_y + plot_h + 14}" font-size="11" text-anchor="middle" fill="#555">'
                     f"{t:g}</text>")
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{top_y + plot_h}" y2="{top_y + plot_h}" stroke="#999"/>'
                 f'<text x="{left + plot_w / 2}" y="{top_y + plot_h + 32}" font-size="12" text-anchor="middle">'
                 "milliseconds per sample</text>"
                 f'<text x="14" y="{mid}" font-size="12" transform="rotate(-90 14 {mid})" '
                 f'text-anchor="middle">samples</text><text x="{left - 6}" y="{top_y + 4}" font-size="11" '
                 f'text-anchor="end" fill="#555">{cmax}</text>')
    return _svg("latency distribution", top_y + plot_h + bottom_pad, parts, width)


def scatter(title: str, unit: Unit, higher_is_better: bool, points: Sequence[tuple[float, float, str]]) -> str:
    """Labelled points: x = p50 latency (ms), y = the headline metric in its unit."""
    width, left, plot_w, plot_h, top_y = 720, 64, 600, 260, 40
    mid = top_y + plot_h / 2
    pts = [p for p in points if _finite(p[0]) and _finite(p[1])]
    xmax = nice_max(max((p[0] for p in pts), default=1.0) * 1.15)
    ymax = 100.0 if unit.bounded else nice_max(max((p[1] for p in pts), default=1.0) * 1.15)
    way = "higher is better" if higher_is_better else "lower is better"
    parts = [f'<text x="0" y="16" font-size="15" font-weight="600">{esc(title)}</text>',
             '<text x="0" y="32" font-size="12" fill="#444">up and to the left is better' if higher_is_better
             else '<text x="0" y="32" font-size="12" fill="#444">down and to the left is better']
    parts[-1] += f" ({esc(way)}, faster is better)</text>"
    for t in _ticks(xmax):
        x = left + plot_w * t / xmax
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top_y}" y2="{top_y + plot_h}" stroke="#eee"/>'
                     f'<text x="{x:.1f}" y="{top_y + plot_h + 14}" font-size="11" text-anchor="middle">{t:g}</text>')
    for t in _ticks(ymax):
        y = top_y + plot_h - plot_h * t / ymax
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
                     f"{_tick_text(t, unit)}</text>")
    for i, (x, y, label) in enumerate(pts):
        px, py = left + plot_w * x / xmax, top_y + plot_h - plot_h * min(y, ymax) / ymax
        parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="6" fill="{PALETTE[i % len(PALETTE)]}">'
                     f"<title>{esc(label)}: {esc(unit.label(y))}, {x:.1f} ms</title></circle>"
                     f'<text x="{px + 9:.1f}" y="{py - 7:.1f}" font-size="12">{esc(label)}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{top_y + plot_h + 32}" font-size="12" text-anchor="middle">'
                 "p50 latency per sample (ms)</text>"
                 f'<text x="14" y="{mid}" font-size="12" transform="rotate(-90 14 {mid})" '
                 f'text-anchor="middle">{esc(unit.axis)}</text>')
    return _svg("accuracy vs latency", top_y + plot_h + 44, parts, width)
