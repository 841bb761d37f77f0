"""``python -m pytest_uiground compare DIR... [--html OUT.html] [--labels a,b]``.

Choosing between models (or checkpoints, prompts, quantisations) means reading
several ``--uiground-report`` runs side by side: the same metrics in one table, and
the trade-offs a single run cannot show, accuracy by element size per method and
accuracy against latency. Numbers from different suites measure different things,
so runs of different suites are refused outright rather than tabulated together.

Only ``summary.json`` (and ``samples.jsonl`` when present, for latencies the summary
lacks) is read: comparing needs no model, no dataset and no GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_uiground.baseline import atomic_write_text

from . import html as hr

SIZE_KEY = "size"


class CompareError(Exception):
    """The runs cannot be compared; the message says which and why."""


@dataclass(frozen=True)
class Run:
    path: Path
    label: str
    suites: Mapping[str, Mapping[str, Any]]  # suite name → its summary.json
    records: Sequence[Mapping[str, Any]] = field(default_factory=tuple)

    def suite_records(self, suite: str) -> list[Mapping[str, Any]]:
        return [r for r in self.records if r.get("suite") == suite]


# -- loading ------------------------------------------------------------------------

def read_summary(path: Path) -> dict[str, dict[str, Any]]:
    """Suite name → summary, from either the single-suite or the ``{"suites": ...}`` form."""
    file = path / "summary.json"
    if not file.is_file():
        raise CompareError(f"{path}: no summary.json (expected {file}); run pytest with --uiground-report {path} "
                           "to produce one")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CompareError(f"{file}: not readable JSON ({exc})") from exc
    if isinstance(data, dict) and isinstance(data.get("suites"), dict):
        return {str(k): v for k, v in data["suites"].items() if isinstance(v, dict)}
    if isinstance(data, dict) and isinstance(data.get("suite"), str):
        return {data["suite"]: data}
    raise CompareError(f"{file}: not a uiground summary (no 'suite' or 'suites' field)")


def read_records(path: Path) -> list[dict[str, Any]]:
    """The per-sample lines, if the run kept them; a torn last line is skipped."""
    file = path / "samples.jsonl"
    if not file.is_file():
        return []
    out = []
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def default_label(path: Path, suites: Mapping[str, Mapping[str, Any]]) -> str:
    models = sorted({str(s.get("model")) for s in suites.values() if s.get("model")})
    name = path.resolve().name or str(path)
    return f"{'+'.join(models)} ({name})" if models else name


def load_runs(dirs: Sequence[Path], labels: Sequence[str] | None) -> list[Run]:
    if labels is not None and len(labels) != len(dirs):
        raise CompareError(f"--labels has {len(labels)} label(s) for {len(dirs)} run(s); give one per run")
    runs = []
    for i, d in enumerate(dirs):
        suites = read_summary(d)
        label = labels[i] if labels is not None else default_label(d, suites)
        runs.append(Run(d, label, suites, read_records(d)))
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

def headline(summary: Mapping[str, Any]) -> tuple[str | None, float]:
    """The first metric and its value: the suite's headline number."""
    metrics = hr.metrics_of(summary)
    name = next(iter(metrics), None)
    value = metrics[name].get("value") if name is not None else None
    return name, float(value) if value is not None and hr.is_number(value) else math.nan


def latency(run: Run, suite: str) -> tuple[float, float]:
    return hr.latency_percentiles(run.suites[suite], run.suite_records(suite))


def table_rows(suite: str, runs: Sequence[Run]) -> list[list[str]]:
    """Metric (and slice) rows × run columns, then latency and error counts."""
    docs = [r.suites[suite] for r in runs]
    rows: list[list[str]] = []
    for name in _ordered(name for d in docs for name in hr.metrics_of(d)):
        entries = [hr.metrics_of(d).get(name, {}) for d in docs]
        rows.append([name, *(hr.fmt(e.get("value")) for e in entries)])
        for label in _ordered(lab for e in entries for lab in (e.get("slices") or {})):
            rows.append([f"  {label}", *(hr.fmt((e.get("slices") or {}).get(label)) for e in entries)])
    lat = [latency(r, suite) for r in runs]
    rows.append(["latency p50 (ms)", *(hr.fmt(p50, digits=1) for p50, _ in lat)])
    rows.append(["latency p95 (ms)", *(hr.fmt(p95, digits=1) for _, p95 in lat)])
    rows.append(["format errors", *(str(d.get("format_errors", 0)) for d in docs)])
    rows.append(["errors", *(str(len(d.get("errors") or [])) for d in docs)])
    rows.append(["samples", *(str(d.get("n_samples", "-")) for d in docs)])
    return rows


def _ordered(names: Any) -> list[str]:
    return list(dict.fromkeys(names))


def text_table(suite: str, runs: Sequence[Run]) -> str:
    rows = [[f"suite {suite}", *(r.label for r in runs)], *table_rows(suite, runs)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    return "\n".join(line.rstrip() for line in lines)


# -- plots --------------------------------------------------------------------------

def slice_key(suite: str, runs: Sequence[Run]) -> str | None:
    """``size`` when any run slices by it, else a slice key every run has, else None."""
    keys_per_run = [{hr.split_slice(lab)[0] for e in hr.metrics_of(r.suites[suite]).values()
                     for lab in (e.get("slices") or {})} for r in runs]
    if any(SIZE_KEY in keys for keys in keys_per_run):
        return SIZE_KEY
    common = set.intersection(*keys_per_run) if keys_per_run else set()
    return sorted(common)[0] if common else None


def bucket_order(values: set[str], key: str) -> list[str]:
    from pytest_uiground.geometry import SIZE_BUCKETS

    known = [b for b in SIZE_BUCKETS if b in values] if key == SIZE_KEY else []
    return known + sorted(values - set(known))


def slice_plot(suite: str, metric: str, key: str, runs: Sequence[Run]) -> str | None:
    """Grouped bars: one group per value of ``key`` (size bucket), one bar per run."""
    per_run = [{hr.split_slice(lab)[1]: v for lab, v in
                (hr.metrics_of(r.suites[suite]).get(metric, {}).get("slices") or {}).items()
                if hr.split_slice(lab)[0] == key} for r in runs]
    buckets = bucket_order({b for d in per_run for b in d}, key)
    if not buckets:
        return None
    fig = hr.figure(min(14.0, 3.0 + 0.5 * len(buckets) * len(runs)), 3.8)
    ax = fig.add_subplot()
    w = hr.bar_width(len(runs))
    for i, (run, values) in enumerate(zip(runs, per_run, strict=True)):
        xs = [j + (i - (len(runs) - 1) / 2) * w for j in range(len(buckets))]
        ys = [float(values[b]) if hr.is_number(values.get(b)) else math.nan for b in buckets]  # NaN: no bar
        bars = ax.bar(xs, ys, w, label=run.label)
        ax.bar_label(bars, labels=["" if math.isnan(y) else f"{y:.0f}" for y in ys], padding=2, fontsize=7)
    ax.legend(fontsize=8, loc="lower right")
    what = "element size" if key == SIZE_KEY else key
    hr.label_axes(ax, buckets, f"{suite}: {metric} by {what}", "accuracy (%)")
    return hr.img_tag(hr.figure_uri(fig), f"{metric} by {what}")


def scatter_plot(suite: str, runs: Sequence[Run]) -> str | None:
    """Headline accuracy against p50 latency, one labelled point per run."""
    points = [(latency(r, suite)[0], headline(r.suites[suite])[1], r.label) for r in runs]
    points = [p for p in points if hr.is_number(p[0]) and hr.is_number(p[1])]
    if not points:
        return None
    fig = hr.figure(6.5, 4.0)
    ax = fig.add_subplot()
    for x, y, label in points:
        ax.scatter([x], [y], s=40)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
    name = headline(runs[0].suites[suite])[0] or "headline"
    ax.set_xlabel("p50 latency per sample (ms)")
    ax.set_ylabel(f"{name} (%)")
    ax.set_ylim(0, 105)
    ax.set_xlim(left=0, right=max(x for x, _, _ in points) * 1.25 + 1e-3)
    ax.set_title(f"{suite}: accuracy vs latency", fontsize=10)
    ax.grid(alpha=0.3)
    return hr.img_tag(hr.figure_uri(fig), "accuracy vs latency")


# -- output -------------------------------------------------------------------------

def html_table(suite: str, runs: Sequence[Run]) -> str:
    head = '<tr><th class="l">metric</th>' + "".join(f"<th>{hr.esc(r.label)}</th>" for r in runs) + "</tr>"
    body = []
    for row in table_rows(suite, runs):
        cls = "slice" if row[0].startswith("  ") else "all"
        body.append(f'<tr class="{cls}"><td class="l">{hr.esc(row[0].strip())}</td>'
                    + "".join(f"<td>{hr.esc(c)}</td>" for c in row[1:]) + "</tr>")
    return "<table>" + head + "".join(body) + "</table>"


def runs_list(runs: Sequence[Run]) -> str:
    items = "".join(f"<dt>{hr.esc(r.label)}</dt><dd>{hr.esc(r.path)}</dd>" for r in runs)
    return f'<dl class="meta">{items}</dl>'


def suite_section(suite: str, runs: Sequence[Run]) -> str:
    parts = [f"<h2>{hr.esc(suite)}</h2>", html_table(suite, runs)]
    key = slice_key(suite, runs)
    metrics = _ordered(name for r in runs for name in hr.metrics_of(r.suites[suite]))
    plots = [slice_plot(suite, m, key, runs) for m in metrics] if key else []
    plots.append(scatter_plot(suite, runs))
    shown = [p for p in plots if p]
    parts += shown or ['<p class="note">nothing to plot</p>']
    return "\n".join(parts)


def render_html(runs: Sequence[Run]) -> str:
    suites = sorted(runs[0].suites)
    body = "<h1>uiground comparison</h1>" + runs_list(runs) + "\n".join(suite_section(s, runs) for s in suites)
    return hr.page("uiground comparison: " + ", ".join(suites), body)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m pytest_uiground compare",
                                 description="Compare several --uiground-report runs of the same suite(s).")
    ap.add_argument("dirs", nargs="+", type=Path, help="report directories written by --uiground-report")
    ap.add_argument("--html", type=Path, help="also write a self-contained HTML page here")
    ap.add_argument("--labels", help="comma-separated run labels, one per directory (default: model + dir name)")
    return ap.parse_args(list(argv))


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    labels = [s.strip() for s in args.labels.split(",")] if args.labels is not None else None
    try:
        runs = load_runs(args.dirs, labels)
        check_same_suites(runs)
    except CompareError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return 2
    print("\n\n".join(text_table(s, runs) for s in sorted(runs[0].suites)))
    if args.html is not None:
        atomic_write_text(args.html, render_html(runs))
        print(f"\nwrote {args.html}")
    return 0
