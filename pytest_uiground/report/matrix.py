"""``python -m pytest_uiground matrix SUITE... --model M --model M2 --cropping none,fixed,screenseeker --out DIR``.

Why it exists: the OpenAdapt grounding plan (a seed of this project) is one comparison, "all 6
methods (2 models x 3 cropping strategies)", by dataset and element size, with latency against
accuracy and what each cropping strategy adds. Running the cells by hand and comparing nine
report folders is slow and error-prone; this command does both.

Every cell (model x cropping) is an ordinary ``pytest`` run in a subprocess, with its own
``--uiground-report`` folder under ``DIR/cells/`` and its log beside it; the prediction cache
makes a rerun of a finished cell cheap, and a cell whose folder already holds the summary of the
same command is reused without running (``--rerun`` runs it again). A cell that fails (no
``summary.json``) is reported with its exit status and the tail of its log, never fatal. Cells
gate against an empty baselines folder (``DIR/baselines``): a comparison of methods is not a
regression gate, and a model other than the baselines' would otherwise fail every cell.

The comparison is read back through :mod:`~pytest_uiground.report.runs` (the ``compare`` command's
loader) and written three ways: the terminal table, ``DIR/matrix.md`` and ``DIR/matrix.html``
(the compare page's run table, bar charts and accuracy-vs-latency plot, from
:mod:`~pytest_uiground.report.comparepage`). Per cell: the suite's headline metric overall and by
dataset and size slice, mean IoU and attempts where the suite has them, p50/p95 latency, wall
time; then, per model, what each cropping strategy adds over ``none``.

A ``--model`` value may carry that model's own pytest options after its name
(``--model "omniparser --model-path weights/"``); options after ``--`` go to every cell.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.report.runs import CompareError, Run, headline, latency, load_runs, slice_labels

STRATEGIES = ("none", "fixed", "screenseeker")
EXTRA_METRICS = ("mean_iou", "attempts_to_success")  # shown when a suite has them (the detection suites)
SLICE_GROUPS = ("dataset", "size")
SIZE_ORDER = {"size=lt32": 0, "size=32to100": 1, "size=gt100": 2}  # small to large, as the seed reports them
LOG_TAIL = 600


@dataclass
class Cell:
    model: str
    model_args: list[str]
    cropping: str
    folder: Path
    status: str = "not run"
    code: int | None = None
    wall_s: float | None = None
    reused: bool = False
    log_tail: str = ""
    run: Run | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"{self.model} \u00b7 {self.cropping}"


def _cell_name(model: str, args: Sequence[str], cropping: str) -> str:
    tag = model.replace(":", "_").replace("/", "_").replace(".", "_")
    if args:
        tag += "-" + hashlib.sha256(" ".join(args).encode()).hexdigest()[:8]  # the same model, other options
    return f"{tag}-{cropping}"


def command(cell: Cell, suites: Sequence[str], extra: Sequence[str], baselines: Path) -> list[str]:
    return [sys.executable, "-m", "pytest", *suites, "--model", cell.model, *cell.model_args,
            "--uiground-cropping", cell.cropping, "--uiground-report", str(cell.folder),
            "--uiground-baselines", str(baselines), *extra]


def run_cell(cell: Cell, cmd: Sequence[str], *, rerun: bool) -> None:
    """Run (or reuse) one cell; its status says what happened."""
    stamp = cell.folder / "cell.json"
    summary = cell.folder / "summary.json"
    if not rerun and summary.is_file() and stamp.is_file():
        try:
            old = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        if old.get("command") == list(cmd[1:]):
            cell.status, cell.code, cell.wall_s, cell.reused = "reused", old.get("code"), old.get("wall_s"), True
            return
    cell.folder.mkdir(parents=True, exist_ok=True)
    summary.unlink(missing_ok=True)
    t0 = time.perf_counter()
    with (cell.folder / "pytest.log").open("w", encoding="utf-8") as log:
        proc = subprocess.run(list(cmd), stdout=log, stderr=subprocess.STDOUT, check=False)
    cell.wall_s, cell.code = time.perf_counter() - t0, proc.returncode
    if summary.is_file():
        cell.status = "ran" if proc.returncode in (0, 1) else f"ran (exit {proc.returncode})"
        atomic_write_text(stamp, json.dumps({"command": list(cmd[1:]), "code": proc.returncode,
                                             "wall_s": cell.wall_s}, indent=1) + "\n")
    else:
        cell.status = f"failed (exit {proc.returncode})"
        text = (cell.folder / "pytest.log").read_text(encoding="utf-8", errors="replace")
        cell.log_tail = text[-LOG_TAIL:]


# -- the figures --------------------------------------------------------------------------------------------

def _value(run: Run, suite: str, metric: str, label: str | None = None) -> float | None:
    entry = run.suites[suite].metrics.get(metric)
    if entry is None:
        return None
    return entry.value if label is None else entry.slices.get(label)


def _f(value: float | None, digits: int = 1, signed: bool = False) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def tables(suite: str, cells: Sequence[Cell]) -> tuple[list[str], list[list[str]], list[str], list[list[str]]]:
    """(head, rows) of the cells' figures and (head, rows) of what cropping adds, for one suite."""
    runs = [c.run for c in cells if c.run is not None and suite in c.run.suites]
    name = headline(runs[0].suites[suite])[0] if runs else None
    slices = sorted((lab for lab in (slice_labels(suite, name, runs) if name else [])
                     if lab.partition("=")[0] in SLICE_GROUPS),
                    key=lambda lab: (SLICE_GROUPS.index(lab.partition("=")[0]), SIZE_ORDER.get(lab, 0), lab))
    extra = [m for m in EXTRA_METRICS if any(m in r.suites[suite].metrics for r in runs)]
    head = ["model", "cropping", "status", name or "headline", *slices, *extra, "p50 ms", "p95 ms", "wall s"]
    rows = []
    for c in cells:
        row = [c.model, c.cropping, c.status + (" (cached)" if c.reused else "")]
        if c.run is None or suite not in c.run.suites or name is None:
            rows.append(row + ["-"] * (len(head) - 3))
            continue
        p50, p95 = latency(c.run, suite)
        row += [_f(_value(c.run, suite, name))] + [_f(_value(c.run, suite, name, lab)) for lab in slices]
        row += [_f(_value(c.run, suite, m), 2) for m in extra] + [_f(p50), _f(p95), _f(c.wall_s, 0)]
        rows.append(row)
    gain_head = ["model", "cropping", f"{name or 'headline'} vs none", *[f"{lab} vs none" for lab in slices],
                 "p50 ms vs none"]
    gains = []
    for c in cells:
        base = next((b for b in cells if b.model == c.model and b.model_args == c.model_args
                     and b.cropping == "none"), None)
        if c.cropping == "none" or base is None or base.run is None or c.run is None or name is None \
                or suite not in c.run.suites or suite not in base.run.suites:
            continue
        def delta(label: str | None, a: Run = c.run, b: Run = base.run) -> str:
            va, vb = _value(a, suite, name, label), _value(b, suite, name, label)
            return _f(va - vb, signed=True) if va is not None and vb is not None else "-"
        lat = latency(c.run, suite)[0] - latency(base.run, suite)[0]
        gains.append([c.model, c.cropping, delta(None), *[delta(lab) for lab in slices], _f(lat, signed=True)])
    return head, rows, gain_head, gains


def text_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths,
                                                                                               strict=True))).rstrip()
                     for r in [head, *rows])


def md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    return "\n".join([line(head), "|" + "|".join("---" if i < 3 else "---:" for i in range(len(head))) + "|",
                      *map(line, rows)])


def html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    from pytest_uiground.report.markup import esc

    def cls(i: int) -> str:
        return ' class="l"' if i < 2 else ' class="l wrap"' if i == 2 else ' class="num"'
    th = "".join(f"<th{cls(i)}>{esc(h)}</th>" for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{esc(c)}</td>" for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="sortable"><tr>{th}</tr>{body}</table></div>'


def render_markdown(suites: Sequence[str], cells: Sequence[Cell], total_s: float) -> str:
    out = ["# uiground matrix", "", f"{len(cells)} cells, {total_s:.0f} s wall time. Each cell: "
           "`python -m pytest SUITE... --model M --uiground-cropping C --uiground-report cells/M-C`.", ""]
    for suite in suites:
        head, rows, ghead, gains = tables(suite, cells)
        out += [f"## {suite}", "", md_table(head, rows), ""]
        if gains:
            out += ["What each cropping strategy adds over none (points; latency in ms):", "", md_table(ghead, gains),
                    ""]
    failed = [c for c in cells if c.run is None]
    for c in failed:
        out += [f"**{c.label}: {c.status}**, log `{c.folder / 'pytest.log'}`:", "", "```text", c.log_tail.strip(),
                "```", ""]
    return "\n".join(out)


def render_html(suites: Sequence[str], cells: Sequence[Cell], total_s: float) -> str:
    from pytest_uiground.report import assets, units
    from pytest_uiground.report.comparepage import COMPARE_CSS, metric_chart, runs_table, scatter_plot
    from pytest_uiground.report.markup import esc, page
    from pytest_uiground.report.runs import lines, metric_names

    runs = [c.run for c in cells if c.run is not None]
    parts = ["<h1>uiground matrix</h1>",
             f"<p>{len(cells)} cells (model \u00d7 cropping), {total_s:.0f} s wall time; each an ordinary pytest run "
             "with its own report folder (<code>cells/</code>).</p>"]
    for c in cells:
        if c.run is None:
            parts.append(f'<p class="note"><b>{esc(c.label)}: {esc(c.status)}</b></p><pre>{esc(c.log_tail)}</pre>')
    for suite in suites:
        head, rows, ghead, gains = tables(suite, cells)
        parts += [f"<h2>{esc(suite)}</h2>", html_table(head, rows)]
        if gains:
            parts += ["<h3>what cropping adds over none</h3>", html_table(ghead, gains)]
        in_suite = [r for r in runs if suite in r.suites]
        if not in_suite:
            continue
        parts += ["<h3>runs</h3>", f'<div class="scroll">{runs_table(suite, in_suite)}</div>']
        scatter = scatter_plot(suite, in_suite)
        if scatter:
            parts += ["<h3>accuracy vs latency</h3>", f'<figure class="chart">{scatter}</figure>']
            unmeasured = [r.label for r in in_suite if latency(r, suite)[0] != latency(r, suite)[0]]
            if unmeasured:  # NaN: every prediction came from the prediction cache
                parts.append(f'<p class="note">not plotted, no latency measured (every prediction came from the '
                             f"prediction cache; run with --uiground-cache off to time them): "
                             f"{esc(', '.join(unmeasured))}</p>")
        for metric in metric_names(suite, in_suite):
            first = next(e for r in in_suite if (e := r.suites[suite].metrics.get(metric)) is not None)
            unit = units.unit_of(metric, first.unit)
            parts += [f'<h3>{esc(metric)} <span class="note">{esc(unit.axis)}, '
                      f"{units.direction(first.higher_is_better)}</span></h3>",
                      f'<figure class="chart">{metric_chart(suite, metric, lines(suite, metric, in_suite), in_suite)}'
                      "</figure>"]
    return page("uiground matrix: " + ", ".join(suites), "\n".join(parts), script=assets.SORT_JS,
                css=COMPARE_CSS + assets.SORT_CSS)


# -- the command --------------------------------------------------------------------------------------------

def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    argv = list(argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(prog="python -m pytest_uiground matrix",
                                 description="Run every model x cropping cell as a pytest run and compare them.")
    ap.add_argument("suites", nargs="+", help="suite folders or suite.toml files, as pytest takes them")
    ap.add_argument("--model", action="append", required=True,
                    help="a model (repeat for more); may carry its own options: --model 'omniparser --model-path W'")
    ap.add_argument("--cropping", default="none", help="comma-separated strategies (default none): none, fixed, "
                    "screenseeker")
    ap.add_argument("--out", type=Path, required=True, help="folder for the cells' reports and the comparison")
    ap.add_argument("--rerun", action="store_true", help="run every cell again, even one already finished")
    args = ap.parse_args(argv)
    crops = [c.strip() for c in args.cropping.split(",") if c.strip()]
    bad = [c for c in crops if c not in STRATEGIES]
    if bad or not crops:
        ap.error(f"--cropping {args.cropping!r}: {', '.join(bad) or 'nothing'} is not one of {', '.join(STRATEGIES)}")
    args.cropping = list(dict.fromkeys(crops))
    return args, extra


def main(argv: Sequence[str]) -> int:
    args, extra = parse_args(argv)
    out: Path = args.out
    cells: list[Cell] = []
    for spec in args.model:
        words = shlex.split(spec)
        if not words:
            print("matrix: --model '' names no model", file=sys.stderr)
            return 2
        for crop in args.cropping:
            cells.append(Cell(words[0], words[1:], crop, out / "cells" / _cell_name(words[0], words[1:], crop)))
    baselines = out / "baselines"
    baselines.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i, cell in enumerate(cells, 1):
        cmd = command(cell, args.suites, extra, baselines)
        print(f"[{i}/{len(cells)}] {cell.label}: {shlex.join(cmd[1:])}", flush=True)
        run_cell(cell, cmd, rerun=args.rerun)
        if cell.status.startswith("failed"):
            print(f"  {cell.status}; log: {cell.folder / 'pytest.log'}", flush=True)
            continue
        try:
            cell.run = load_runs([cell.folder], [cell.label])[0]
        except CompareError as exc:
            cell.status, cell.log_tail = "unreadable report", str(exc)
            continue
        print(f"  {cell.status} in {_f(cell.wall_s, 0)} s", flush=True)
    total = time.perf_counter() - t0
    suites = list(dict.fromkeys(s for c in cells if c.run is not None for s in c.run.suites))
    for suite in suites:
        head, rows, ghead, gains = tables(suite, cells)
        print(f"\nsuite {suite}\n" + text_table(head, rows))
        if gains:
            print("\nwhat cropping adds over none\n" + text_table(ghead, gains))
    atomic_write_text(out / "matrix.md", render_markdown(suites, cells, total) + "\n")
    atomic_write_text(out / "matrix.html", render_html(suites, cells, total))
    failed = [c for c in cells if c.run is None]
    print(f"\n{len(cells) - len(failed)} of {len(cells)} cells ran in {total:.0f} s; wrote {out / 'matrix.md'}, "
          f"{out / 'matrix.html'}" + (f"; failed: {', '.join(c.label for c in failed)}" if failed else ""))
    return 1 if failed else 0
