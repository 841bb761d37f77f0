"""A model that does nothing at all: for measuring the harness's own per-sample cost.

    PYTHONPATH=perf pytest suites/synthetic --model zero_model:create
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample


class ZeroModel(ModelAdapter):
    name = "zero"

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return [Prediction(point=Point(0.5, 0.5), raw="zero") for _ in samples]

    def fingerprint(self) -> dict[str, Any]:
        return {"model": self.name}


def create(options: ModelOptions) -> ZeroModel:
    return ZeroModel()
