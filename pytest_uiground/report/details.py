"""What the pages need beyond the numbers the terminal prints, added to a suite's summary.

The summary record is built from the metric results and checks
(:func:`pytest_uiground.report.summary.build`); the pages also need to know what
each number is (its unit, :mod:`~pytest_uiground.report.units`), how the metric
selects samples (so ``compare`` can recompute it on the samples two runs share), and
*which* baseline the comparison is against (model, fingerprint, date). The controller
passes its suite outcome through :func:`complete` before writing ``summary.json``.

A latency metric's baseline is the stored aggregate snapshot's value, read once with the baseline
(:func:`pytest_uiground.gate.checks.build_checks`), never re-read here: on an update run the files
were just rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_uiground.record.result import SampleResult
from pytest_uiground.report import units
from pytest_uiground.report.summary import SuiteSummary
from pytest_uiground.suite.config import MetricSpec

#: Provenance keys that identify a baseline on the page (the package list stays in samples.json).
BASELINE_KEYS = ("model", "model_path", "model_fingerprint", "date", "suite_version", "dataset_fingerprint",
                 "n_samples", "judge")


def selection(spec: MetricSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"score": spec.score, "given": spec.given, "tasks": list(spec.tasks),
                           "where": dict(spec.where), "macro_over": spec.macro_over, "mean_of": list(spec.mean_of),
                           "refusals": spec.refusals}
    return {k: v for k, v in out.items() if v not in (None, [], {})}


def complete(doc: SuiteSummary, specs: Sequence[MetricSpec], results: Sequence[SampleResult],
             baseline_provenance: Mapping[str, Any] | None) -> SuiteSummary:
    """``doc`` with metric units and selections, and the baseline's identity."""
    by_name = {s.name: s for s in specs}
    metrics = {}
    for name, entry in doc.metrics.items():
        spec = by_name.get(name)
        if spec is None:
            metrics[name] = entry
            continue
        values = [r.score.components.get(spec.score) for r in results] if spec.score else []
        metrics[name] = replace(entry, unit=units.infer(name, spec.score, values), selection=selection(spec))
    base = None if baseline_provenance is None else {
        k: baseline_provenance[k] for k in BASELINE_KEYS if baseline_provenance.get(k) is not None}
    return replace(doc, metrics=metrics, baseline=base)
