"""The uiground section of the terminal summary: one block per suite, after pytest's own summary.

It only formats what the run already decided (a :class:`~pytest_uiground.gate.outcome.SuiteOutcome`):
the table of checks, latency, judge, errors, regressed samples, the baseline's fate and the
verdict (read, never decided: :mod:`pytest_uiground.gate.verdict`). Printed by the terminal writer
(:mod:`.writers`), kept beside the other terminal formatting (:mod:`.terminal`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate.stats import judge_stability as stability
from pytest_uiground.gate.verdict import SIGNIFICANT, BaselineFate
from pytest_uiground.options import RunOptions
from pytest_uiground.perturb.robustness import of_outcome
from pytest_uiground.record.outcome import Outcome
from pytest_uiground.record.result import SampleResult, id_list
from pytest_uiground.record.score import refusals
from pytest_uiground.report import robustness
from pytest_uiground.report.summary import endpoint_table, latency_text
from pytest_uiground.report.terminal import limit_problems, sample_lines, table

if TYPE_CHECKING:  # types only: the section formats an outcome the gate built
    from pytest_uiground.gate.outcome import SuiteOutcome

SAMPLE_LINES = 10
"""Per-sample lines in the terminal; the rest are counted, and all are in the report."""


def write_suite(tr: Any, o: SuiteOutcome, options: RunOptions, load: str, artifact_lines: list[str]) -> None:
    """One suite's block on the terminal reporter ``tr``; ``load`` says how long the model took to
    load ("" if unknown), ``artifact_lines`` where the report and the markdown summary were written."""
    model = (o.model or {}).get("name", options.model.name)
    shown = o.provenance.get("setting", "native")
    how = "" if shown == "native" else f", {shown}"
    tr.write_sep("=", f"uiground: {o.loaded.config.name} (model {model}{how}, {len(o.results)} samples)")
    if o.missing:
        tr.write_line(o.missing)
    elif o.baseline is None:
        tr.write_line("no baseline yet: this run records one")
    elif o.baseline.damaged and options.updating:
        tr.write_line(f"replacing a {o.baseline.damaged}")
    elif o.baseline.damaged:
        tr.write_line(o.baseline.damaged)
    else:
        prov = o.baseline.provenance
        tr.write_line(f"baseline: model {prov.get('model')!r}"
                      + (f" ({prov['setting']})" if prov.get("setting", "native") != "native" else "")
                      + f", {prov.get('date', '?')}"
                      + (" (partial run: compared on the same samples)" if o.partial else ""))
    quirks = o.loaded.quirks
    if quirks:  # issue 38: a note of the plugin's own, never a warning that -W error turns into a crash
        # a loader's notes: records kept and scored as their reference scores them, or advice on the data
        # (the grounding loader's validate findings, a metadata key no slice uses); never a dropped sample
        tr.write_line(f"data quirks: {len(quirks)} note{'s' * (len(quirks) != 1)} on the suite's data (listed in "
                      f"summary.json): {quirks[0]}" + (f"; and {len(quirks) - 1} more" if len(quirks) > 1 else ""))
    grown = baseline_mod.growth_text(o.new_ids, o.removed_ids)
    if grown:
        tr.write_line(("only the new samples ran; " if o.only_new else "") + grown)
    for line in table(o.checks) + limit_problems(o.checks) + robustness.terminal_lines(of_outcome(o)):
        tr.write_line(line)
    cached = sum(r.cache == "hit" for r in o.results)
    if o.latency is not None or cached:
        lat = o.latency
        tr.write_line(latency_text(lat.p50_ms if lat else None, lat.p95_ms if lat else None, lat.n if lat else 0,
                                   cached, lat.parallel if lat else False))
    endpoints = endpoint_table(o.results)
    if endpoints:
        tr.write_line("endpoints: " + "; ".join(endpoint_text(url, e) for url, e in endpoints.items()))
    if o.incomparable:
        tr.write_line(f"baseline NOT comparable: {o.incomparable}")
    if o.judge:
        tr.write_line(judge_line(o.judge, o.results))
    fmt = sum(r.format_error for r in o.results)
    errs = sorted(r.id for r in o.results if r.error is not None)
    hits = sum(r.cache == "hit" for r in o.results)
    refused = refusals(r.score for r in o.results)
    if o.provenance.get("refusals"):  # the suite's refusal policy: which denominator each figure has
        words = {"count": "refusals counted", "exclude": "refusals excluded"}
        tr.write_line("refusal policy " + repr(o.provenance["refusals"]) + ": " + "; ".join(
            f"{m.spec.name} ({m.overall.n}, {words[m.spec.refusals]})" for m in o.metric_results
            if m.spec.refusals in words))
    tr.write_line(f"format errors: {fmt}; " + (f"refusals: {refused}; " if refused is not None else "")
                  + f"sample errors: {len(errs)}; "
                  f"{hits} prediction{'s' * (hits != 1)} from the cache" + (f"; {load}" if load else ""))
    lookup = {s.id: s for s in o.loaded.samples}.get
    where = ("all of them: samples.jsonl and report.html" if options.report_dir
             else "all of them: rerun with --uiground-report DIR")
    verdict = o.verdict
    assert verdict is not None, "the controller concludes every suite before the terminal summary"
    if verdict.rule == SIGNIFICANT:
        tr.write_line(f"regressions judged by rule 'significant': {verdict.flips_text}")
    if verdict.noise_text:
        tr.write_line(verdict.noise_text)
    if verdict.confirm_text:
        tr.write_line(verdict.confirm_text)
    if verdict.power_text:
        tr.write_line(verdict.power_text)
    if o.against is not None:  # --uiground-against: beside a published run (a report, not part of the verdict)
        for line in o.against.lines():
            tr.write_line(line)
    regressed = [r for r in o.results if r.outcome == Outcome.REGRESSION]
    if regressed:
        for line in sample_lines("regressed (right in the baseline, wrong now)", regressed, lookup,
                                 SAMPLE_LINES, where):
            tr.write_line(line)
    unstable = [r for r in o.results if r.outcome == Outcome.UNSTABLE]
    if unstable:
        for line in sample_lines("unstable (right in the baseline, wrong now, but noise: never failing alone)",
                                 unstable, lookup, SAMPLE_LINES, where):
            tr.write_line(line)
    fixed = sorted(r.id for r in o.results if r.outcome == Outcome.FIXED)
    if fixed:
        tr.write_line(id_list("fixed", fixed))
    if errs:
        tr.write_line(id_list("errors", errs))
    if verdict.fate_text:
        shown = (verdict.fate_text + ": " + str(baseline_mod.suite_dir(options.baselines_dir, o.name))
                 if verdict.fate is BaselineFate.UPDATED else verdict.fate_text)
        tr.write_line(shown)
    for line in artifact_lines:
        tr.write_line(line)
    tr.write_line(verdict.line(o.name), **({"green": True} if verdict.passed else {"red": True}))


def judge_line(judge: dict[str, Any], results: list[SampleResult]) -> str:
    """One terminal line: who judged, how many replies were unparseable, how stable it was."""
    parse = sum(1 for r in results if r.score.notes.get("judge_parse_error"))
    who = " ".join(str(v) for v in (judge.get("judge"), judge.get("served_model") or judge.get("model")) if v)
    line = (f"judge: {who}, settings {judge.get('settings')} "
            f"prompts {judge.get('prompt_hash')}; unparseable replies: {parse}")
    st = stability(results)
    if st:
        line += (f"; stability over {st['samples']} samples x {st['repeats']}: mean range {st['mean_range']:.2f}, "
                 f"max range {st['max_range']:.2f}, {len(st['unstable'])} unstable")
    return line


def endpoint_text(url: str, e: dict[str, Any]) -> str:
    """One endpoint of several --uiground-api-base: its samples, errors, median latency, and whether it went down."""
    text = f"{url} {e['samples']} samples, {e['errors']} errors"
    if e["p50_ms"]:
        text += f", p50 {e['p50_ms']:.0f} ms"
    if e["went_down"]:
        text += f", WENT DOWN ({e['left']} requests moved to the others)"
    return text
