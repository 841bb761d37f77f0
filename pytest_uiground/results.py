"""SampleResult: the record one sample's test leaves behind.

It travels from the xdist worker to the controller inside the test report's
``user_properties`` (one code path for ``-n 0`` and ``-n N``), is written to
``samples.jsonl`` as soon as it arrives, and is everything the metrics need.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PROPERTY = "uiground"


@dataclass(slots=True)
class SampleResult:
    suite: str
    id: str
    task: str
    meta: Mapping[str, str]
    value: float
    correct: bool | None
    format_error: bool = False
    error: str | None = None
    latency_ms: float | None = None
    raw: str = ""
    prediction: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    outcome: str = ""
    model: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None

    @property
    def right(self) -> bool:
        """Binary view for per-sample outcomes; graded scores count as right at >= 50."""
        return self.correct if self.correct is not None else self.value >= 50.0

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "id": self.id,
            "task": self.task,
            "meta": dict(self.meta),
            "value": self.value,
            "correct": self.correct,
            "format_error": self.format_error,
            "error": self.error,
            "latency_ms": self.latency_ms,
            "raw": self.raw,
            "prediction": self.prediction,
            "details": self.details,
            "outcome": self.outcome,
            "model": self.model,
            "judge": self.judge,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleResult:
        return cls(**{k: data[k] for k in cls.__slots__ if k in data})  # type: ignore[attr-defined]
