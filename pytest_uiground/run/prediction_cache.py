"""Prediction cache: finished predictions survive a crash, a threshold change or a rerun.

Entries are keyed by everything that determines a model's output for a sample: the
model fingerprint (weights, config, processor), the sample id and image, the exact
prompt and the generation settings. Layout, atomic writes and the policy for a damaged
entry (reported on its sample and predicted again, never fatal) are the shared disk
cache's, :mod:`pytest_uiground.record.disk_cache`.

A stored prediction is served as the model's answer without the model being asked, so every
field of it is checked on the way back (:func:`pytest_uiground.record.prediction.stored`): an
entry such as ``{"point": null, "raw": 7}`` (issue 38) or a point of letters is a damaged entry,
reported and predicted again, never a real answer scored as a miss. An error is never cached, so
an entry that holds one is damaged too; and what :meth:`PredictionCache.put` writes is what the
reader accepts (a prediction the check refuses is not stored, it is predicted again next time).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_uiground.record.codec import FieldError
from pytest_uiground.record.disk_cache import DiskCache
from pytest_uiground.record.prediction import Prediction, problem, stored

CACHE_TEXT_CHARS = 1_000_000
"""The longest text a cached prediction may hold (a raw output of a million characters is no generation)."""


def _encode(prediction: Prediction) -> dict[str, Any]:
    return prediction.to_json()


def _decode(data: Any) -> Prediction:
    if not isinstance(data, Mapping):
        raise TypeError(f"the prediction is a {type(data).__name__}, not an object")
    try:
        pred = stored(data, text_chars=CACHE_TEXT_CHARS)
    except FieldError as exc:
        raise ValueError(f"prediction.{exc.field}: {exc.why}") from None
    if pred.error is not None:
        raise ValueError("prediction.error is set (an error is never cached)")
    return pred


class PredictionCache(DiskCache[Prediction]):
    def __init__(self, root: Path, fingerprint: Mapping[str, Any]) -> None:
        super().__init__(root, fingerprint, what="prediction", field="prediction", encode=_encode,
                         decode=_decode, again="predicting again")

    def put(self, key: str, value: Prediction) -> None:
        if value.error is not None:
            return  # errors (OOM, a bad image) are retried on the next run, never cached
        if problem(value, text_chars=CACHE_TEXT_CHARS) is not None:
            return  # the reader would call it damaged: predicted again next time instead
        super().put(key, value)
