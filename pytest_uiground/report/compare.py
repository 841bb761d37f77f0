"""``python -m pytest_uiground compare DIR... [--html OUT.html] [--labels a,b]``.

Choosing between models (or checkpoints, prompts, quantisations) means reading
several ``--uiground-report`` runs side by side: the same metrics in one table, and
the trade-offs a single run cannot show, accuracy by element size per method and
accuracy against latency. Numbers from different suites measure different things,
so runs of different suites are refused outright rather than tabulated together.

Only ``summary.json`` (and ``samples.jsonl`` when present, for latencies the summary
lacks) is read, through the same types the run wrote them with
(:mod:`pytest_uiground.report.summary`, :class:`~pytest_uiground.results.SampleResult`):
comparing needs no model, no dataset and no GPU. A file that does not read as those
types is refused by name (and, for ``samples.jsonl``, by line), never half-used.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_uiground.baseline import atomic_write_text
from pytest_uiground.results import SampleResult

from . import plots as pl
from . import summary as summary_mod
from .html import latency_percentiles, split_slice
from .markup import esc, fmt, is_number, page
from .summary import SuiteSummary

SIZE_KEY = "size"


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
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, Mapping):
                raise TypeError(f"expected a JSON object, got {type(data).__name__}")
            out.append(SampleResult.from_json(data))
        except KeyError as exc:
            raise CompareError(f"{file}, line {number}: not a sample record (no {exc} field)") from exc
        except (ValueError, TypeError, AttributeError) as exc:
            raise CompareError(f"{file}, line {number}: not a sample record ({type(exc).__name__}: {exc})") from exc
    return out


def default_label(path: Path, suites: Mapping[str, SuiteSummary]) -> str:
    models = sorted({s.model for s in suites.values() if s.model})
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

def headline(summary: SuiteSummary) -> tuple[str | None, float]:
    """The first metric and its value: the suite's headline number."""
    name = next(iter(summary.metrics), None)
    value = summary.metrics[name].value if name is not None else None
    return name, value if value is not None and is_number(value) else math.nan


def latency(run: Run, suite: str) -> tuple[float, float]:
    return latency_percentiles(run.suites[suite], run.suite_records(suite))


def table_rows(suite: str, runs: Sequence[Run]) -> list[list[str]]:
    """Metric (and slice) rows × run columns, then latency and error counts."""
    docs = [r.suites[suite] for r in runs]
    rows: list[list[str]] = []
    for name in _ordered(name for d in docs for name in d.metrics):
        entries = [d.metrics.get(name) for d in docs]
        rows.append([name, *(fmt(e.value if e is not None else None) for e in entries)])
        for label in _ordered(lab for e in entries if e is not None for lab in e.slices):
            rows.append([f"  {label}", *(fmt(e.slices.get(label) if e is not None else None) for e in entries)])
    lat = [latency(r, suite) for r in runs]
    rows.append(["latency p50 (ms)", *(fmt(p50, digits=1) for p50, _ in lat)])
    rows.append(["latency p95 (ms)", *(fmt(p95, digits=1) for _, p95 in lat)])
    rows.append(["format errors", *(str(d.format_errors) for d in docs)])
    rows.append(["errors", *(str(len(d.errors)) for d in docs)])
    rows.append(["samples", *(str(d.n_samples) for d in docs)])
    return rows


def _ordered(names: Iterable[str]) -> list[str]:
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
    keys_per_run = [{split_slice(lab)[0] for e in r.suites[suite].metrics.values() for lab in e.slices}
                    for r in runs]
    if any(SIZE_KEY in keys for keys in keys_per_run):
        return SIZE_KEY
    common = set.intersection(*keys_per_run) if keys_per_run else set()
    return sorted(common)[0] if common else None


def bucket_order(values: set[str], key: str) -> list[str]:
    from pytest_uiground.geometry import SIZE_BUCKETS

    known = [b for b in SIZE_BUCKETS if b in values] if key == SIZE_KEY else []
    return known + sorted(values - set(known))


def slice_values(summary: SuiteSummary, metric: str, key: str) -> dict[str, float | None]:
    """The metric's value per value of slice ``key`` (``size=lt32`` → ``lt32``)."""
    entry = summary.metrics.get(metric)
    if entry is None:
        return {}
    return {split_slice(lab)[1]: v for lab, v in entry.slices.items() if split_slice(lab)[0] == key}


def slice_plot(suite: str, metric: str, key: str, runs: Sequence[Run]) -> str | None:
    """Grouped bars: one group per value of ``key`` (size bucket), one bar per run."""
    per_run = [slice_values(r.suites[suite], metric, key) for r in runs]
    buckets = bucket_order({b for d in per_run for b in d}, key)
    if not buckets:
        return None
    series = [(run.label, [v if (v := values.get(b)) is not None and is_number(v) else math.nan  # NaN: no bar
                           for b in buckets])
              for run, values in zip(runs, per_run, strict=True)]
    what = "element size" if key == SIZE_KEY else key
    return pl.grouped_bars(f"{suite}: {metric} by {what}", f"{metric} by {what}", buckets, series)


def scatter_plot(suite: str, runs: Sequence[Run]) -> str | None:
    """Headline accuracy against p50 latency, one labelled point per run."""
    points = [(latency(r, suite)[0], headline(r.suites[suite])[1], r.label) for r in runs]
    points = [p for p in points if is_number(p[0]) and is_number(p[1])]
    if not points:
        return None
    name = headline(runs[0].suites[suite])[0] or "headline"
    return pl.scatter(f"{suite}: accuracy vs latency", f"{name} (%)", points)


# -- output -------------------------------------------------------------------------

def html_table(suite: str, runs: Sequence[Run]) -> str:
    head = '<tr><th class="l">metric</th>' + "".join(f"<th>{esc(r.label)}</th>" for r in runs) + "</tr>"
    body = []
    for row in table_rows(suite, runs):
        cls = "slice" if row[0].startswith("  ") else "all"
        body.append(f'<tr class="{cls}"><td class="l">{esc(row[0].strip())}</td>'
                    + "".join(f"<td>{esc(c)}</td>" for c in row[1:]) + "</tr>")
    return "<table>" + head + "".join(body) + "</table>"


def runs_list(runs: Sequence[Run]) -> str:
    items = "".join(f"<dt>{esc(r.label)}</dt><dd>{esc(r.path)}</dd>" for r in runs)
    return f'<dl class="meta">{items}</dl>'


def suite_section(suite: str, runs: Sequence[Run]) -> str:
    parts = [f"<h2>{esc(suite)}</h2>", html_table(suite, runs)]
    key = slice_key(suite, runs)
    metrics = _ordered(name for r in runs for name in r.suites[suite].metrics)
    if not pl.available():
        return "\n".join([*parts, pl.MISSING])
    plots = [slice_plot(suite, m, key, runs) for m in metrics] if key else []
    plots.append(scatter_plot(suite, runs))
    shown = [p for p in plots if p]
    parts += shown or ['<p class="note">nothing to plot</p>']
    return "\n".join(parts)


def render_html(runs: Sequence[Run]) -> str:
    suites = sorted(runs[0].suites)
    body = "<h1>uiground comparison</h1>" + runs_list(runs) + "\n".join(suite_section(s, runs) for s in suites)
    return page("uiground comparison: " + ", ".join(suites), body)


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
