"""What a metric's number *is*, so pages label and scale it honestly.

Every metric value is a mean over samples, but not every mean is a percentage:
``latency_ms`` is milliseconds, ``attempts_to_success`` a count of model calls,
``mean_iou`` an IoU scaled by 100, ``false_positive_rate`` a rate where lower is
better. A page that draws them all as "accuracy (%)" on a 0–110 axis clips the
milliseconds, flattens the counts and mislabels the rates. The unit is decided once,
when the run knows each metric's score component (:func:`infer`), stored in the
summary record (``MetricSummary.unit``), and read back by every page
(:func:`unit_of`), with a fallback on the metric's name for older summaries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

#: The pseudo-component that reads each sample's latency (ms); as :data:`pytest_uiground.gate.metrics.LATENCY`.
LATENCY = "latency_ms"


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


def infer(name: str, component: str | None, values: Iterable[object] = ()) -> str:
    """The unit of a metric from its score component and the values that component took.

    A numeric component is an IoU when its name says so and a count otherwise (the
    built-in numeric components are ``iou`` and ``attempts``); a boolean component, or
    the whole score, is a share of samples: "accuracy" for the sample's main outcome
    or a metric named for it, "rate" for one event among several (detected, false
    positive, IoU over 50).
    """
    if component == LATENCY:
        return "ms"
    if component is not None:
        numeric = any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        if numeric:
            return "iou" if "iou" in component.lower() else "count"
        return "accuracy" if "acc" in name.lower() else "rate"
    return by_name(name)


def by_name(name: str) -> str:
    """The unit a metric's name suggests: for summaries written before units were recorded."""
    low = name.lower()
    if low.endswith("_ms") or "latency" in low:
        return "ms"
    if "attempt" in low or "count" in low:
        return "count"
    if "iou" in low and "over" not in low:
        return "iou"
    if "rate" in low or "over" in low:
        return "rate"
    return "accuracy"


def unit_of(name: str, unit: str) -> Unit:
    return UNITS.get(unit) or UNITS[by_name(name)]


def direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"
