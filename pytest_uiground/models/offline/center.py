"""``center``: always predicts the image centre.

The trivial reference baseline that grounding papers report: a model that does not
beat it has learned nothing about the screen. It decodes each image (and ignores
it), so a missing or corrupt image fails its sample as with any real model, and a
run with it measures the harness's cost including image decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample


class CenterModel(ModelAdapter):
    name = "center"

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        out = []
        for s in samples:
            s.image.load()
            out.append(Prediction(point=Point(0.5, 0.5), verdict="passed", option="A", answer="",
                                  raw="center:(0.5,0.5)"))
        return out

    def fingerprint(self) -> dict[str, Any]:
        return {"model": self.name, "version": 1}


def create(options: ModelOptions) -> CenterModel:
    return CenterModel()
