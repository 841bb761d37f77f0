"""``center``: always predicts the image centre.

The trivial reference baseline that grounding papers report: a model that does not
beat it has learned nothing about the screen. It reads no pixels, so it also
measures the harness's own overhead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..geometry import Point
from ..prediction import Prediction
from ..sample import Sample
from .base import ModelOptions


class CenterModel:
    name = "center"

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return [
            Prediction(point=Point(0.5, 0.5), verdict="passed", option="A", answer="", raw="center:(0.5,0.5)")
            for _ in samples
        ]

    def fingerprint(self) -> dict[str, Any]:
        return {"model": self.name, "version": 1}


def create(options: ModelOptions) -> CenterModel:
    return CenterModel()
