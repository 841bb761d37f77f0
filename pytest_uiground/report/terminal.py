"""Outputs: ``samples.jsonl`` written as results arrive, ``summary.json`` and the
terminal table at the end. Lines are flushed one by one so a crash loses nothing
that finished.

The terminal is written for a CI log read from the bottom: per-sample regressions and
failed aggregate checks get their own test-status categories (``regressed``, ``checks
failed``), so pytest lists them in neither its FAILURES section nor its short summary
(they still fail the run, JUnit XML and ``--lf``); the uiground section prints them once,
one line each in id order, after the table, and ends with the verdict. Long runs get a
progress line every ``--uiground-progress`` seconds (:class:`Progress`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult, records_in, sample_line
from pytest_uiground.record.sample import Sample

if TYPE_CHECKING:  # types only: the terminal formats checks and metrics the gate built
    from pytest_uiground.gate.checks import Check


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    v = round(v, 4)  # as summary.json stores it, so that the two never differ in the last digit
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def powerless(c: Check) -> bool:
    """The check fails because it cannot see a drop of its tolerance (``--uiground-require-power``)."""
    d = c.detectable
    return c.require_power and d is not None and d.short and not c.updating


def verdict_cell(c: Check) -> str:
    """``ok``, ``improved``, or ``FAIL`` with the limits it broke, so no extra line is needed."""
    if c.verdict != "FAIL":
        return c.verdict
    v, why = c.current.value, []
    if c.floor is not None and (math.isnan(v) or v < c.floor):
        why.append(f"< floor {c.floor:g}")
    if c.ceiling is not None and (math.isnan(v) or v > c.ceiling):
        why.append(f"> ceiling {c.ceiling:g}")
    if c.paired is not None and not c.updating and c.worse_by > c.tolerance:
        why.append(f"worse > {c.tolerance:g}")
    if c.incomparable and not c.updating:
        why.append("baseline not comparable")
    if powerless(c):
        why.append("cannot see a drop of its tolerance")
    return "FAIL" + (f" ({', '.join(why)})" if why else "")


def table(checks: Sequence[Check]) -> list[str]:
    """One row per check; a metric's slices are indented under it (narrow enough for a CI log). ``value``,
    ``baseline`` and ``delta`` are on the same samples, the ones the baseline has; where the suite grew
    since, a ``with new`` column gives the value on every sample (the one floors and the 95% interval are
    of), and a line under the table says how many new samples the comparison leaves out."""
    grown = any(c.left_out for c in checks)
    head = ("metric / slice", "value", "baseline", "delta", *(("with new",) if grown else ()), "95% interval",
            "verdict")
    rows = [head]
    for c in checks:
        a, p = c.current, c.paired
        interval = f"[{a.low:.1f}, {a.high:.1f}]" if a.low is not None and a.high is not None else "-"
        with_new = (f"{_fmt(a.value)} (+{c.left_out})" if c.left_out else "-",) if grown else ()
        rows.append((c.metric if c.slice is None else f"  {c.slice}", _fmt(c.compared_value),
                     _fmt(p.baseline_value if p else None), _fmt(p.delta if p else None, signed=True), *with_new,
                     interval, verdict_cell(c)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    note = left_out_note(checks)
    return out + ([note] if note else [])


def left_out_note(checks: Sequence[Check]) -> str:
    """Under a table whose comparison leaves new samples out: how many, and what the columns count (the
    terminal, Markdown and report.html say the same)."""
    most = max((c for c in checks if c.left_out), key=lambda c: c.left_out, default=None)
    if most is None or most.paired is None:
        return ""
    n = most.left_out
    return (f"value, baseline and delta compare the {most.paired.n} samples the baseline has; {n} new "
            f"sample{'s' * (n != 1)} not in it {'are' if n != 1 else 'is'} left out of the comparison "
            "('with new' and the 95% interval count them)")


def limit_problems(checks: Sequence[Check]) -> list[str]:
    """The failing checks' problems other than a drop beyond the tolerance (which the table shows):
    a floor or ceiling (naming the suite file that sets it), a baseline that is not comparable or
    damaged. A reason every check shares (a damaged baseline) is printed once, for the first check."""
    out: list[str] = []
    seen: set[str] = set()
    for c in checks:
        if c.verdict != "FAIL":
            continue
        for p in c.problems():
            shared = p.removeprefix(f"{c.label}: ")
            if ("tolerance" in p and not (powerless(c) and p.startswith(f"{c.label}: too small"))) or (
                    shared != p and shared in seen):
                continue
            seen.add(shared)
            out.append(p)
    return out


def sample_lines(title: str, results: Sequence[SampleResult], lookup: Callable[[str], Sample | None],
                 limit: int, more_hint: str) -> list[str]:
    """``title (n):`` then one line per sample in id order, at most ``limit`` of them."""
    ordered = sorted(results, key=lambda r: r.id)
    lines = [f"{title} ({len(ordered)}):"] + ["  " + sample_line(lookup(r.id), r) for r in ordered[:limit]]
    if len(ordered) > limit:
        lines.append(f"  ... and {len(ordered) - limit} more ({more_hint})")
    return lines


# -- pytest's own report lines -----------------------------------------------------------------

REGRESSED = "regressed"
CHECKS_FAILED = "checks failed"


def teststatus(report: pytest.TestReport) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """Status category for pytest's terminal: a per-sample regression is ``regressed`` (``R``), a failed
    aggregate check ``checks failed``; both still count as failures (exit status, JUnit, ``--lf``)."""
    if report.when != "call" or not report.failed:
        return None
    name = report.nodeid.rpartition("::")[2]
    if name.startswith("test_aggregate["):
        return CHECKS_FAILED, "F", ("FAILED", {"red": True})
    if any(r.get("outcome") == Outcome.REGRESSION.value for r in records_in(report.user_properties)):
        return REGRESSED, "R", ("REGRESSED", {"red": True})
    return None


def _duration(seconds: float) -> str:
    h, rest = divmod(max(0, round(seconds)), 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """A progress line every ``interval`` seconds on the controller: samples done / total, samples
    per second, ETA, cache hits and model load time.

    Fed by ``pytest_runtest_logreport``, which the xdist controller receives for every worker's
    tests too, and written through the terminal reporter on a line of its own after pytest has
    written the test's status character, so pytest's own progress is never overwritten. Short runs
    (under ``interval``) print nothing.
    """

    def __init__(self, config: pytest.Config, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.config, self.interval, self.clock = config, interval, clock
        self.total = 0
        self.done = 0
        self.hits = 0
        self.load_s: dict[str, float] = {}
        self.start: float | None = None
        self.last = 0.0

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = sum("::test_sample[" in item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.total = self.total or sum("::test_sample[" in i for i in ids)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for value in records_in(report.user_properties):
            self.done += 1
            self.hits += value.get("cache") == "hit"
            model = value.get("model")
            if isinstance(model, dict) and isinstance(model.get("load_s"), (int, float)):
                self.load_s[str(model.get("worker", "?"))] = float(model["load_s"])
        now = self.clock()
        if self.start is None:
            self.start = self.last = now
        if self.interval > 0 and now - self.last >= self.interval and self.done:
            self.last = now
            tr = self.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                # Under xdist pytest's reporter does not end its line of status letters before ours.
                if getattr(getattr(tr, "_tw", None), "width_of_current_line", 0) and not tr.currentfspath:
                    tr.write("\n")
                tr.write_line(self.line(now))

    def line(self, now: float) -> str:
        elapsed = now - (self.start or now)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        total = max(self.total, self.done)
        eta = _duration((total - self.done) / rate) if rate > 0 else "?"
        out = f"uiground: {self.done}/{total} samples, {rate:.1f}/s, ETA {eta}, {self.hits} from the cache"
        load = self.load_text()
        return out + (f"; {load}" if load else "")

    def load_text(self) -> str:
        if not self.load_s:
            return ""
        parts = ", ".join(f"{v:.1f} s ({k})" for k, v in sorted(self.load_s.items()))
        return f"model loaded in {parts}"
