"""``python -m pytest_uiground compare A B [C...] [LOG...] [--html OUT.html] [--labels a,b,c]``.

Choosing between models (or checkpoints, prompts, quantisations) means asking what
changed from run A: for each metric and slice, each run's value and its delta
against the first, whether the change is more than noise (the paired bootstrap
interval of the difference and the exact McNemar p-value on the samples both runs
scored, computed the way the baseline checks compute them), which samples flipped
(fixed, regressed), and what each run costs in latency. Numbers from different
suites measure different things, so runs of different suites are refused outright.

Only ``summary.json`` and ``samples.jsonl`` are read, through the types the run
wrote them with (:mod:`pytest_uiground.report.summary`,
:class:`~pytest_uiground.record.result.SampleResult`); flipped samples show the crops each
run's report wrote under ``report_files/crops/``. Comparing needs no model, no
dataset and no GPU. A file that does not read as those types is refused by name
(and, for ``samples.jsonl``, by line), never half-used. The HTML page is
:mod:`~pytest_uiground.report.comparepage`.

A file among the arguments (not a folder) is a published per-sample log (``eval_screenspot_pro.py``'s,
Gelato's; :mod:`pytest_uiground.record.published`), put beside the first run sample by sample with its
authors' own verdicts (:mod:`~pytest_uiground.report.beside`): the paired table, the flips each way and
McNemar, as ``--uiground-against`` prints them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_uiground.gate.checks import Paired
from pytest_uiground.record import published
from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.record.published import Published
from pytest_uiground.report import beside, units
from pytest_uiground.report.markup import fmt, is_number
from pytest_uiground.report.runs import *  # noqa: F403  (the command re-exports what it compares)
from pytest_uiground.report.runs import (
    CompareError,
    Run,
    check_same_suites,
    flip_lines,
    latency,
    lines,
    load_runs,
    metric_names,
)


def _cell_p(p: Paired | None) -> str:
    return "-" if p is None or p.p_value is None else f"{p.p_value:.3g}"


def text_table(suite: str, runs: Sequence[Run]) -> str:
    """Per metric and slice: each run's value, then each later run's delta against the first and McNemar p."""
    head = [f"suite {suite}", runs[0].label]
    for r in runs[1:]:
        head += [r.label, f"delta {r.label}", "p"]
    rows = [head]
    for metric in metric_names(suite, runs):
        first = next(e for r in runs if (e := r.suites[suite].metrics.get(metric)) is not None)
        unit = units.unit_of(metric, first.unit)
        for ln in lines(suite, metric, runs):
            row = [metric if ln.label is None else f"  {ln.label}", unit.fmt(ln.values[0])]
            for k in range(1, len(runs)):
                row += [unit.fmt(ln.values[k]), unit.fmt(ln.deltas[k], signed=True), _cell_p(ln.paired[k])]
            rows.append(row)
    lat = [latency(r, suite) for r in runs]
    for name, i in (("latency p50 (ms)", 0), ("latency p95 (ms)", 1)):
        row = [name, fmt(lat[0][i], digits=1)]
        for k in range(1, len(runs)):
            d = lat[k][i] - lat[0][i] if is_number(lat[k][i]) and is_number(lat[0][i]) else None
            row += [fmt(lat[k][i], digits=1), fmt(d, signed=True, digits=1), ""]
        rows.append(row)
    for name, get in (("format errors", lambda d: d.format_errors), ("errors", lambda d: len(d.errors)),
                      ("samples", lambda d: d.n_samples)):
        row = [name, str(get(runs[0].suites[suite]))]
        for r in runs[1:]:
            row += [str(get(r.suites[suite])), "", ""]
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
           for row in rows]
    for r in runs[1:]:
        out += flip_lines(suite, runs[0], r)
    return "\n".join(line.rstrip() for line in out)


def read_log(path: Path) -> Published:
    """A published log; replay answers carry no verdict, and compare has no dataset to score them with."""
    try:
        if published.layout_of(path) == published.REPLAY:
            raise CompareError(f"{path}: replay answers carry no verdict, and compare has no dataset to score them: "
                               "put them beside a run with pytest --uiground-against FILE")
        return published.read(path)
    except published.PublishedError as exc:
        raise CompareError(str(exc)) from None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m pytest_uiground compare",
                                 description="Compare several --uiground-report runs of the same suite(s); "
                                             "deltas and paired tests are against the first.")
    ap.add_argument("dirs", nargs="+", type=Path, help="report directories written by --uiground-report; a file: a "
                    "published per-sample log (eval_screenspot_pro.py's, Gelato's) put beside the first")
    ap.add_argument("--html", type=Path, help="also write a self-contained HTML page here")
    ap.add_argument("--labels", help="comma-separated run labels, one per directory (default: model or dir name)")
    return ap.parse_args(list(argv))


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    labels = [s.strip() for s in args.labels.split(",")] if args.labels is not None else None
    dirs = [d for d in args.dirs if not d.is_file()]
    try:
        logs = [read_log(f) for f in args.dirs if f.is_file()]
        if not dirs:
            raise CompareError("a published log is put beside a run: give a --uiground-report folder first")
        runs = load_runs(dirs, labels)
        check_same_suites(runs)
        besides = []
        if logs:
            from pytest_uiground.report.comparepage import suite_dir

            besides = [beside.beside(runs[0], s, suite_dir(runs[0], s) / "report.html", log)
                       for log in logs for s in sorted(runs[0].suites)]
    except CompareError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return 2
    print("\n\n".join([text_table(s, runs) for s in sorted(runs[0].suites)]
                      + ["\n".join([f"{runs[0].label}:", *b.lines()]) for b in besides]))
    if args.html is not None:
        from pytest_uiground.report.comparepage import render_html

        atomic_write_text(args.html, render_html(runs))
        print(f"\nwrote {args.html}")
    return 0
