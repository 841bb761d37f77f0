"""What kind of number a metric is: a share of samples, an IoU, a count or milliseconds.

Decided once, from the metric's score component and the values it took, and used twice: by the
gate, whose paired comparison (:mod:`.paired`) counts per-sample flips and runs McNemar's test
only where a sample is right or wrong (not for counts and timings), and by the pages, which label
and scale each number (:mod:`pytest_uiground.report.units`).
"""

from __future__ import annotations

from collections.abc import Iterable

#: The pseudo-component that reads each sample's latency (ms), not its score.
LATENCY = "latency_ms"

__all__ = ["LATENCY", "by_name", "infer"]


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
