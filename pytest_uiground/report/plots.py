"""The plots of ``report.html`` and of ``compare``, drawn from plain numbers.

This module only draws: callers work out what to plot from the typed summary and
records (:mod:`pytest_uiground.report.html`, :mod:`pytest_uiground.report.compare`)
and pass labels, values and intervals. Keeping matplotlib here keeps those modules
about *what* a report says. Every figure is a bare ``Figure`` on its own Agg canvas
(no pyplot global state), returned as an ``<img>`` with a ``data:`` URI; matplotlib
is imported inside the functions that draw, so importing the plugin stays cheap.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .markup import img_tag, is_number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Interval = tuple[float, float]

MISSING = ('<p class="note">plots need matplotlib, the [report] extra: '
           "<code>pip install 'pytest-uiground[report]'</code></p>")
"""What a page shows instead of its plots when matplotlib is not installed (the rest renders)."""


def available() -> bool:
    """Whether matplotlib can be imported; without it the pages render without plots."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def figure(width: float, height: float) -> Figure:
    """A matplotlib figure on its own Agg canvas (no pyplot, no global backend state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def figure_uri(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def bar_width(n_series: int) -> float:
    return 0.8 / max(1, n_series)


def label_axes(ax: Any, labels: Sequence[str], title: str, ylabel: str) -> None:
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30 if len(labels) > 4 else 0, ha="right" if len(labels) > 4 else "center",
                       fontsize=8)
    ax.set_ylim(0, 110)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def slice_bars(name: str, labels: Sequence[str], values: Sequence[float], intervals: Sequence[Interval | None],
               overall: float | None) -> str:
    """Bars of one metric per slice with their 95% intervals, and the overall value as a line.

    The intervals are the metric's own (Wilson for binary outcomes, bootstrap for graded
    values), so the title does not name a method.
    """
    lows = [max(0.0, v - iv[0]) if iv else 0.0 for v, iv in zip(values, intervals, strict=True)]
    highs = [max(0.0, iv[1] - v) if iv else 0.0 for v, iv in zip(values, intervals, strict=True)]
    fig = figure(min(14.0, 2.5 + 0.7 * len(labels)), 3.6)
    ax = fig.add_subplot()
    bars = ax.bar(range(len(labels)), values, yerr=[lows, highs], capsize=4, color="#4c78a8", ecolor="#333")
    ax.bar_label(bars, fmt="%.1f", padding=2, fontsize=8)
    if overall is not None and is_number(overall):
        ax.axhline(overall, color="#e45756", linestyle="--", linewidth=1, label="overall")
        ax.legend(loc="lower right", fontsize=8)
    label_axes(ax, labels, f"{name} by slice (95% intervals)", "accuracy (%)")
    return img_tag(figure_uri(fig), f"{name} by slice")


def latency_histogram(values: Sequence[float], p50: float, p95: float) -> str:
    fig = figure(6.5, 3.2)
    ax = fig.add_subplot()
    ax.hist(values, bins=min(40, max(5, 2 * int(math.sqrt(len(values))))), color="#72b7b2", edgecolor="#2d6a66")
    for q, v, style in (("p50", p50, "--"), ("p95", p95, ":")):
        if is_number(v):
            ax.axvline(v, color="#e45756", linestyle=style, label=f"{q} {v:.1f} ms")
    ax.set_xlabel("latency per sample (ms)")
    ax.set_ylabel("samples")
    ax.set_title(f"latency distribution ({len(values)} samples)", fontsize=10)
    ax.legend(fontsize=8)
    return img_tag(figure_uri(fig), "latency distribution")


def baseline_bars(name: str, labels: Sequence[str], base: Sequence[float], cur: Sequence[float]) -> str:
    """Grouped bars baseline vs current, one group per label."""
    fig = figure(min(14.0, 2.5 + 0.9 * len(labels)), 3.6)
    ax = fig.add_subplot()
    w = bar_width(2)
    xs = range(len(labels))
    ax.bar([x - w / 2 for x in xs], base, w, label="baseline", color="#bab0ac")
    ax.bar([x + w / 2 for x in xs], cur, w, label="current", color="#4c78a8")
    ax.legend(fontsize=8, loc="lower right")
    label_axes(ax, labels, f"{name}: baseline vs current", "accuracy (%)")
    return img_tag(figure_uri(fig), f"{name} baseline vs current")


def grouped_bars(title: str, alt: str, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float]]]) -> str:
    """One group per ``groups`` entry, one bar per series (label, values); NaN leaves a gap."""
    fig = figure(min(14.0, 3.0 + 0.5 * len(groups) * len(series)), 3.8)
    ax = fig.add_subplot()
    w = bar_width(len(series))
    for i, (label, ys) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * w for j in range(len(groups))]
        bars = ax.bar(xs, ys, w, label=label)
        ax.bar_label(bars, labels=["" if math.isnan(y) else f"{y:.0f}" for y in ys], padding=2, fontsize=7)
    ax.legend(fontsize=8, loc="lower right")
    label_axes(ax, groups, title, "accuracy (%)")
    return img_tag(figure_uri(fig), alt)


def scatter(title: str, ylabel: str, points: Sequence[tuple[float, float, str]]) -> str:
    """Labelled points (x latency, y accuracy, label)."""
    fig = figure(6.5, 4.0)
    ax = fig.add_subplot()
    for x, y, label in points:
        ax.scatter([x], [y], s=40)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("p50 latency per sample (ms)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 105)
    ax.set_xlim(left=0, right=max(x for x, _, _ in points) * 1.25 + 1e-3)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    return img_tag(figure_uri(fig), "accuracy vs latency")
