"""The prediction cache as the prediction paths use it: keys, overrides, writes that cannot fail.

Both the batch path (:func:`.worker.predict`) and the models that work ahead of their tests
(:mod:`.ahead`) key a sample the same way and store its prediction the same way; the rules
live here once, for both.
"""

from __future__ import annotations

from typing import Any

from pytest_uiground.models.base import Model
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.prediction_cache import PredictionCache
from pytest_uiground.suite.loading import LoadedSuite


def apply_overrides(model: Model, loaded: LoadedSuite) -> dict[str, Any]:
    """Hand the suite's overrides for this model to it; their key joins the cache key."""
    from pytest_uiground.models import overrides

    wanted = model.overrides_table
    table = wanted if wanted is not None and wanted in loaded.config.models else model.name
    ov = overrides.resolve(loaded.config.name, table, loaded.config.models.get(table))
    model.use_overrides(ov)
    return {} if ov.empty else {"overrides": ov.key()}


def cache_parts(model: Model, sample: Sample) -> dict[str, Any] | None:
    """The model's cache key for a sample plus the image's content hash (a screenshot
    replaced under the same name must not replay the old answer); None: not cacheable
    (the model declares no key, or the image cannot be read: the sample fails on its own)."""
    parts = model.cache_key(sample)
    if parts is None:
        return None
    try:
        return {**parts, "image_content": sample.image.content_key()}
    except OSError:
        return None


def store_prediction(cache: PredictionCache, key: str, pred: Prediction) -> str | None:
    """Write a cache entry; a failure (a full disk, a file where a folder should be) is a
    note on the sample, never an error: the prediction is kept and scored, not requested again."""
    try:
        cache.put(key, pred)
    except OSError as exc:
        return f"warning: the prediction cache could not be written ({exc}); the prediction is kept and scored"
    return None
