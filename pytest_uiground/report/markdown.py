"""The Markdown summary for CI: ``--uiground-markdown FILE`` and, when set, ``$GITHUB_STEP_SUMMARY``.

One section per suite: the verdict first (what a reviewer of a model upgrade needs), the model
and the baseline it was compared with, the metric table with deltas, the delta's 95% bootstrap
interval and the McNemar p-value (slices folded under ``<details>``), the regressed and fixed
sample ids (the first few with the baseline's answer beside this run's), and where the
artifacts are (the report files, and the workflow run's artifacts page on GitHub Actions).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_uiground.gate.checks import Check, LatencyCheck
from pytest_uiground.gate.verdict import SIGNIFICANT, Verdict
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult, sample_line
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import refusals
from pytest_uiground.report.summary import latency_text
from pytest_uiground.report.terminal import left_out_note, verdict_cell

ID_LIMIT = 50
LINE_LIMIT = 10  # changed samples shown with both answers


@dataclass(frozen=True)
class SuiteSection:
    suite: str
    model: str
    baseline: Mapping[str, Any] | None
    checks: Sequence[Check]
    latency: LatencyCheck | None
    results: Sequence[SampleResult]
    artifacts: Sequence[Path]
    verdict: Verdict | None  # the gate's verdict (None only for a section built by hand in a test)
    samples: Mapping[str, Sample] = field(default_factory=dict)  # for the changed samples' lines, in pixels
    robustness: Sequence[str] = ()  # report/robustness.py's lines, when perturbations ran


def cell(text: object) -> str:
    """Text that stays inside its table cell and renders as itself in a CI job summary: a pipe
    would end the cell, and ``![t](url)``, links and raw HTML from a slice value or a model name
    (suite and dataset metadata) would be rendered. Markdown punctuation is backslash-escaped,
    ``<``/``>``/``&`` become entities, and a line break becomes a space. (``_`` inside a word is
    not emphasis in GitHub's Markdown, so metric names stay readable in the raw file.)"""
    out = []
    for ch in " ".join(str(text).split()):
        if ch in "&<>":
            out.append({"&": "&amp;", "<": "&lt;", ">": "&gt;"}[ch])
        elif ch in "\\`*[]|":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def code(text: object) -> str:
    """An inline code span that a backtick in ``text`` cannot end (ids, model names)."""
    t = " ".join(str(text).split()).replace("`", "'")
    return f"`{t}`"


def _f(v: float | None, signed: bool = False) -> str:
    if v is None or not math.isfinite(v):
        return "–"
    v = round(v, 4)  # as summary.json stores it, so that the two never differ in the last digit
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def _row(c: Check, grown: bool = False) -> str:
    """One check; ``value``, ``baseline`` and ``delta`` on the same samples (the ones the baseline has), and
    where the suite grew (``grown``) the value on every sample under ``with new``."""
    a, p = c.current, c.paired
    interval = f"[{a.low:.1f}, {a.high:.1f}]" if a.low is not None and a.high is not None else "–"
    paired_ci = p is not None and p.delta_low is not None and p.delta_high is not None
    delta_ci = f"[{p.delta_low:+.1f}, {p.delta_high:+.1f}]" if p and paired_ci else "–"
    pval = f"{p.p_value:.3g}" if p and p.p_value is not None else "–"
    flips = f"{p.regressed} / {p.fixed}" if p and p.regressed is not None else "–"
    verdict = verdict_cell(c)
    verdict = f"**{verdict}**" if verdict.startswith("FAIL") else verdict
    name = cell(c.metric if c.slice is None else f"{c.metric} · {c.slice}")
    with_new = (f" {_f(a.value)} (+{c.left_out}) |" if c.left_out else " – |") if grown else ""
    return (f"| {name} | {_f(c.compared_value)} | {_f(p.baseline_value if p else None)} | "
            f"{_f(p.delta if p else None, True)} |{with_new} {delta_ci} | {interval} | {flips} | {pval} | {verdict} |")


def _head(grown: bool) -> str:
    extra = (" with new |", " ---: |") if grown else ("", "")
    return (f"| metric | value | baseline | delta |{extra[0]} delta 95% CI | 95% interval | regressed / fixed | "
            f"McNemar p | verdict |\n| --- | ---: | ---: | ---: |{extra[1]} --- | --- | ---: | ---: | --- |")


def _ids(title: str, ids: Sequence[str]) -> str:
    if not ids:
        return f"**{title} (0)**"
    shown = ", ".join(code(i) for i in ids[:ID_LIMIT])
    more = f", … (+{len(ids) - ID_LIMIT} more: see samples.jsonl)" if len(ids) > ID_LIMIT else ""
    return f"**{title} ({len(ids)}):** {shown}{more}"


def _changed(s: SuiteSection, outcome: Outcome) -> list[str]:
    """One line per changed sample (capped): what it expects, what this run and the baseline answered."""
    changed = [r for r in s.results if r.outcome == outcome]
    if not changed:
        return []
    # Only the lines shown are built: each reads its screenshot's header for pixels.
    lines = [f"- {cell(sample_line(s.samples.get(r.id), r))}" for r in changed[:LINE_LIMIT]]
    more = [f"- … (+{len(changed) - LINE_LIMIT} more: see samples.jsonl)"] if len(changed) > LINE_LIMIT else []
    return [*lines, *more, ""]


def run_link(env: Mapping[str, str]) -> str | None:
    """The GitHub Actions run page (its Artifacts list), from the variables Actions sets."""
    server, repo, run = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


def render(sections: Sequence[SuiteSection], env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    out: list[str] = []
    for s in sections:
        failed = s.verdict is None or not s.verdict.passed
        status = s.verdict.status if s.verdict is not None else "verdict not decided"
        out.append(f"## {'❌' if failed else '✅'} uiground: {cell(s.suite)} — {status}")
        out.append("")
        out.append(cell(s.verdict.text if s.verdict is not None else "no verdict was decided for this suite"))
        if s.verdict is not None and s.verdict.rule == SIGNIFICANT:
            out += ["", "regressions judged by rule `significant`: " + cell(s.verdict.flips_text)]
        out.append("")
        base = (f"baseline {code(s.baseline.get('model'))} ({cell(s.baseline.get('date', '?'))})" if s.baseline
                else "no baseline: the gate fails until one is recorded with `--snapshot-update` and committed")
        refused = refusals(r.score for r in s.results)
        count = f", {refused} refusal{'s' * (refused != 1)}" if refused is not None else ""
        out.append(f"model {code(s.model)}, {len(s.results)} samples{count}; {base}")
        out.append("")
        overall = [c for c in s.checks if c.slice is None]
        slices = [c for c in s.checks if c.slice is not None]
        grown = any(c.left_out for c in s.checks)
        out += [_head(grown), *(_row(c, grown) for c in overall), ""]
        note = left_out_note(s.checks)
        out += [cell(note), ""] if note else []
        if slices:
            n_failed = sum(c.verdict == "FAIL" for c in slices)
            out += [f"<details><summary>{len(slices)} slices ({n_failed} failed)</summary>", "", _head(grown),
                    *(_row(c, grown) for c in slices), "", "</details>", ""]
        out += s.robustness
        cached = sum(r.cache == "hit" for r in s.results)
        if s.latency is not None or cached:
            lat = s.latency
            out += [latency_text(lat.p50_ms if lat else None, lat.p95_ms if lat else None, lat.n if lat else 0,
                                 cached), ""]
        if s.verdict is not None and s.verdict.noise_text:
            out += [cell(s.verdict.noise_text), ""]
        if s.verdict is not None and s.verdict.confirm_text:
            out += [cell(s.verdict.confirm_text), ""]
        if s.verdict is not None and s.verdict.power_text:
            out += [cell(s.verdict.power_text), ""]
        regressed = sorted(r.id for r in s.results if r.outcome == Outcome.REGRESSION)
        fixed = sorted(r.id for r in s.results if r.outcome == Outcome.FIXED)
        errors = sorted(r.id for r in s.results if r.error is not None)
        out += [_ids("Regressed", regressed), ""]
        out += _changed(s, Outcome.REGRESSION)
        unstable = sorted(r.id for r in s.results if r.outcome == Outcome.UNSTABLE)
        if unstable:
            out += [_ids("Unstable (regressed but noise: never failing alone)", unstable), ""]
            out += _changed(s, Outcome.UNSTABLE)
        out += [_ids("Fixed", fixed), ""]
        if errors:
            out += [_ids("Sample errors", errors), ""]
        links = [code(p) for p in s.artifacts]
        link = run_link(env)
        if link:
            links.append(f"[workflow run artifacts]({link}#artifacts)")
        if links:
            out += ["Artifacts: " + ", ".join(links), ""]
    return "\n".join(out) + "\n"


def write(text: str, path: Path | None, env: Mapping[str, str] | None = None,
          failed: Callable[[str], None] | None = None) -> list[Path]:
    """Write to ``path`` (replaced atomically) and append to ``$GITHUB_STEP_SUMMARY`` (Actions' job summary
    file). A file that cannot be written is told to ``failed`` in one line (raised when it is None)."""
    from pytest_uiground.record.files import atomic_write_text

    env = os.environ if env is None else env
    written: list[Path] = []
    targets: list[tuple[Path, bool]] = [(path, False)] if path is not None else []
    step = env.get("GITHUB_STEP_SUMMARY")
    if step:
        targets.append((Path(step), True))
    for target, append in targets:
        try:
            if append:
                with open(target, "a", encoding="utf-8") as fh:
                    fh.write(text)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(target, text)
        except OSError as exc:
            if failed is None:
                raise
            failed(f"uiground: could not write the Markdown summary at {target}: {exc.strerror or exc} "
                   f"(errno {exc.errno})")
            continue
        written.append(target)
    return written
