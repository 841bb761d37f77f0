"""What a metric's number *is*, so pages label and scale it honestly.

Every metric value is a mean over samples, but not every mean is a percentage:
``latency_ms`` is milliseconds, ``attempts_to_success`` a count of model calls,
``mean_iou`` an IoU scaled by 100, ``false_positive_rate`` a rate where lower is
better. A page that draws them all as "accuracy (%)" on a 0–110 axis clips the
milliseconds, flattens the counts and mislabels the rates. The unit is decided once,
when the run knows each metric's score component (:func:`infer`), stored in the
summary record (``MetricSummary.unit``), and read back by every page
(:func:`unit_of`), with a fallback on the metric's name for older summaries. The decision itself
(:func:`~pytest_uiground.gate.units.infer`) lives in the gate, which needs it too: the paired
comparison counts flips only where a sample is right or wrong (:func:`pytest_uiground.gate.checks.paired`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_uiground.gate.units import LATENCY, by_name, infer  # decided in the gate; re-exported for the pages

__all__ = ["LATENCY", "UNITS", "Unit", "by_name", "direction", "infer", "unit_of"]


@dataclass(frozen=True)
class Unit:
    key: str
    axis: str  # the axis title
    bounded: bool  # a 0..100 scale; otherwise the axis follows the data
    digits: int  # decimals in tables
    short: str  # appended to numbers in labels ("%", " ms")

    def fmt(self, value: float | None, signed: bool = False) -> str:
        if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
            return "-"
        return f"{value:+.{self.digits}f}" if signed else f"{value:.{self.digits}f}"

    def label(self, value: float) -> str:
        """A number as drawn beside a bar: fewer decimals than the table, with its unit."""
        digits = 0 if self.key == "ms" and abs(value) >= 100 else (2 if self.key == "count" else 1)
        return f"{value:.{digits}f}{self.short}"


UNITS = {
    "accuracy": Unit("accuracy", "accuracy (%)", True, 2, "%"),
    "rate": Unit("rate", "share of samples (%)", True, 2, "%"),
    "iou": Unit("iou", "IoU (×100)", True, 2, ""),
    "count": Unit("count", "count per sample", False, 2, ""),
    "ms": Unit("ms", "milliseconds per sample", False, 1, " ms"),
}


def unit_of(name: str, unit: str) -> Unit:
    return UNITS.get(unit) or UNITS[by_name(name)]


def direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"
