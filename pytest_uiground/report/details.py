"""What the pages need beyond the numbers the terminal prints, added to a suite's summary.

The summary record is built from the metric results and checks
(:func:`pytest_uiground.report.summary.build`); the pages also need to know what
each number is (its unit, :mod:`~pytest_uiground.report.units`), how the metric
selects samples (so ``compare`` can recompute it on the samples two runs share), and
*which* baseline the comparison is against (model, fingerprint, date). The controller
passes its suite outcome through :func:`complete` before writing ``summary.json``.

One number the per-sample baseline cannot give is a latency metric's baseline: the
stored baseline keeps each sample's score, not its timing, so recomputing the metric
"on the baseline's scores" reads the current latencies and shows the current value
as the baseline (+0.00). The aggregate snapshot stored beside it does hold the
baseline run's value; :func:`complete` shows that one, with no paired statistics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_uiground.record.result import SampleResult
from pytest_uiground.report import units
from pytest_uiground.report.summary import Comparison, SuiteSummary
from pytest_uiground.suite.config import MetricSpec

#: Provenance keys that identify a baseline on the page (the package list stays in samples.json).
BASELINE_KEYS = ("model", "model_path", "model_fingerprint", "date", "suite_version", "dataset_fingerprint",
                 "n_samples", "judge")


def selection(spec: MetricSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"score": spec.score, "given": spec.given, "tasks": list(spec.tasks),
                           "where": dict(spec.where), "macro_over": spec.macro_over, "mean_of": list(spec.mean_of)}
    return {k: v for k, v in out.items() if v not in (None, [], {})}


def stored_value(snapshot_dir: Path, label: str) -> float | None:
    """The value a check's aggregate snapshot holds (``test_aggregate[<label>].json``), if readable."""
    from pytest_uiground.gate.snapshot import file_name

    path = snapshot_dir / file_name(label)
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("value")
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _latency_comparison(comp: Comparison, stored: float | None) -> Comparison:
    delta = None if stored is None or comp.value is None else round(comp.value - stored, 4)
    return replace(comp, baseline=stored, delta=delta, delta_interval=None, regressed=None, fixed=None,
                   mcnemar_p=None)


def complete(doc: SuiteSummary, specs: Sequence[MetricSpec], results: Sequence[SampleResult],
             baseline_provenance: Mapping[str, Any] | None, snapshot_dir: Path | None) -> SuiteSummary:
    """``doc`` with metric units and selections, the baseline's identity, and latency baselines as stored."""
    by_name = {s.name: s for s in specs}
    metrics = {}
    for name, entry in doc.metrics.items():
        spec = by_name.get(name)
        if spec is None:
            metrics[name] = entry
            continue
        values = [r.score.components.get(spec.score) for r in results] if spec.score else []
        metrics[name] = replace(entry, unit=units.infer(name, spec.score, values), selection=selection(spec))
    comparisons = dict(doc.baseline_comparison)
    if baseline_provenance is not None:
        for name, spec in by_name.items():
            if spec.score != units.LATENCY:
                continue
            for label, comp in doc.baseline_comparison.items():
                if comp.baseline is not None and (label == name or label.startswith(name + ".")):
                    stored = stored_value(snapshot_dir, label) if snapshot_dir is not None else None
                    comparisons[label] = _latency_comparison(comp, stored)
    base = None if baseline_provenance is None else {
        k: baseline_provenance[k] for k in BASELINE_KEYS if baseline_provenance.get(k) is not None}
    return replace(doc, metrics=metrics, baseline_comparison=comparisons, baseline=base)
