"""Prediction: what a model said about one sample, already in the internal convention.

Adapters fill the parsed fields (normalized ``point``/``box``, ``verdict``,
``option``, ``answer``) and always keep the ``raw`` text, so a report can show
exactly what the model produced. ``format_error`` marks output the parser could
not read: it is scored as wrong *and* counted, never silently folded into misses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .geometry import Box, Point


@dataclass(slots=True)
class Prediction:
    point: Point | None = None
    box: Box | None = None
    verdict: str | None = None
    option: str | None = None
    answer: str | None = None
    raw: str = ""
    latency_ms: float = 0.0
    error: str | None = None
    format_error: bool = False
    attempts: int | None = None  # model calls a search strategy made (detection with cropping)

    def to_json(self) -> dict[str, Any]:
        return {
            "point": list(self.point) if self.point is not None else None,
            "box": list(self.box) if self.box is not None else None,
            "verdict": self.verdict,
            "option": self.option,
            "answer": self.answer,
            "raw": self.raw,
            "latency_ms": round(self.latency_ms, 3),
            "error": self.error,
            "format_error": self.format_error,
            "attempts": self.attempts,
        }
