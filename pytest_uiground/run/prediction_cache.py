"""Prediction cache: finished predictions survive a crash, a threshold change or a rerun.

Entries are keyed by everything that determines a model's output for a sample: the
model fingerprint (weights, config, processor), the sample id and image, the exact
prompt and the generation settings. Layout, atomic writes and the policy for a damaged
entry (reported on its sample and predicted again, never fatal) are the shared disk
cache's, :mod:`pytest_uiground.record.disk_cache`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_uiground.record.disk_cache import DiskCache
from pytest_uiground.record.prediction import Prediction


def _encode(prediction: Prediction) -> dict[str, Any]:
    return prediction.to_json()


def _decode(data: Any) -> Prediction:
    if not isinstance(data, Mapping):
        raise TypeError(f"the prediction is a {type(data).__name__}, not an object")
    return Prediction.from_json(data)


class PredictionCache(DiskCache[Prediction]):
    def __init__(self, root: Path, fingerprint: Mapping[str, Any]) -> None:
        super().__init__(root, fingerprint, what="prediction", field="prediction", encode=_encode,
                         decode=_decode, again="predicting again")

    def put(self, key: str, value: Prediction) -> None:
        if value.error is not None:
            return  # errors (OOM, a bad image) are retried on the next run, never cached
        super().put(key, value)
