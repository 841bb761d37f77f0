"""Outputs: ``samples.jsonl`` written as results arrive, ``summary.json`` and the
terminal table at the end. Lines are flushed one by one so a crash loses nothing
that finished."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pytest_uiground.checks import Check, LatencyCheck
from pytest_uiground.metrics import MetricResult, summary_entry
from pytest_uiground.results import SampleResult

from .summary import Comparison, Latency, SuiteSummary


class SampleLog:
    """Append-only JSON lines, flushed per record."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh: IO[str] = path.open("w", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._fh.write(json.dumps(record, sort_keys=True) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def summary(
    suite: str,
    model: dict[str, Any] | None,
    results: Sequence[SampleResult],
    metric_results: Sequence[MetricResult],
    checks: Sequence[Check],
    latency: LatencyCheck | None,
    provenance: dict[str, Any],
) -> SuiteSummary:
    def r4(v: float) -> float | None:
        return round(v, 4) if math.isfinite(v) else None

    comparisons: dict[str, Comparison] = {}
    for c in checks:
        p = c.paired
        comparisons[c.label] = Comparison(
            value=r4(c.current.value),
            baseline=r4(p.baseline_value) if p else None,
            delta=r4(p.delta) if p else None,
            delta_interval=(round(p.delta_low, 4), round(p.delta_high, 4)) if p else None,
            regressed=p.regressed if p else None,
            fixed=p.fixed if p else None,
            mcnemar_p=p.p_value if p else None,
            floor=c.floor,
            verdict=c.verdict,
        )
    judged = "judge" in provenance
    if judged:
        from pytest_uiground.judges.pool import stability
    return SuiteSummary(
        suite=suite,
        model=(model or {}).get("name"),
        model_fingerprint=(model or {}).get("fingerprint"),
        n_samples=len(results),
        metrics={m.spec.name: summary_entry(m) for m in metric_results},
        baseline_comparison=comparisons,
        latency_ms=Latency(latency.p50_ms, latency.p95_ms, latency.n) if latency else None,
        regressed=tuple(sorted(r.id for r in results if r.outcome == "regression")),
        fixed=tuple(sorted(r.id for r in results if r.outcome == "fixed")),
        errors=tuple(sorted(r.id for r in results if r.error is not None)),
        format_errors=sum(r.format_error for r in results),
        provenance=provenance,
        judge=provenance["judge"] if judged else None,
        judge_parse_errors=tuple(sorted(r.id for r in results if r.score.notes.get("judge_parse_error")))
        if judged else None,
        judge_stability=stability(results) if judged else None,
    )


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def table(checks: Sequence[Check]) -> list[str]:
    head = ("metric", "slice", "value", "baseline", "delta", "95% interval", "verdict")
    rows = [head]
    for c in checks:
        a, p = c.current, c.paired
        interval = f"[{a.low:.1f}, {a.high:.1f}]" if a.low is not None and a.high is not None else "-"
        rows.append((c.metric, c.slice or "(all)", _fmt(a.value), _fmt(p.baseline_value if p else None),
                     _fmt(p.delta if p else None, signed=True), interval, c.verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def id_list(title: str, ids: Sequence[str], limit: int = 50) -> str:
    shown = ", ".join(ids[:limit])
    more = f" ... (+{len(ids) - limit} more)" if len(ids) > limit else ""
    return f"{title} ({len(ids)}): {shown}{more}"
