"""How predictions are made: one seam, three strategies, picked once per process.

A sample test asks its process's :class:`Predictor` for one sample's prediction
(:meth:`Predictor.get`). How the model is driven behind that call depends on what the
model can do, decided once when the model fixture is built (:func:`predictor_for`):

* :class:`Batched`: lock-step batches of ``--uiground-batch-size`` (or the model's
  ``preferred_batch_size``) from the look-ahead, predicted on the test's thread; a batch
  that raises is predicted again sample by sample (:func:`.pipeline.predict_isolated`).
* :class:`Streaming`, for models with ``in_flight > 0`` (an HTTP client): a sliding window
  of requests topped up from the look-ahead (:class:`.pipeline.InFlight`).
* :class:`Overlapped`, for models with ``prepares = True`` (local adapters): the next
  batch prepared in the background while one generates (:class:`.pipeline.Overlap`).

All three share one body (:class:`_Predictions`): the look-ahead and where it stopped,
the one prediction-cache lookup, and the predictions finished ahead of their tests, each
cached and handed to the judge (``on_ready``) as it finishes. Each strategy owns its
state; nothing outside this module reads it. This is the shape pytest-xdist gives its
schedulers (``xdist/scheduler/load.py``: one protocol, an implementation chosen once,
tested with a fake node): the strategies here are tested with a fake model and fake
items, no pytest run (``tests/run/test_predictors.py``).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Container, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from pytest_uiground.models.base import Model
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.lookahead import Lookahead
from pytest_uiground.run.pipeline import InFlight, Overlap, predict_isolated
from pytest_uiground.run.prediction_cache import PredictionCache

if TYPE_CHECKING:  # the type only: a strategy never loads a suite
    from pytest_uiground.suite.loading import LoadedSuite

Ready = Callable[["LoadedSuite", Sample, Prediction], None]
"""Called once for every prediction as it becomes available (the judge starts on it)."""


class Predictor(Protocol):
    """One sample's prediction for its test; whatever was made ahead stays inside."""

    def get(self, item: pytest.Item, loaded: LoadedSuite, sample: Sample) -> Prediction:
        """``sample``'s prediction (``item`` is its test: the look-ahead starts there)."""
        ...

    def note(self, sample_id: str) -> str | None:
        """What the prediction cache said about the sample ("hit", a warning), once."""
        ...

    def close(self) -> None:
        """Cancel what was started ahead and no test will collect."""
        ...


def predictor_for(model: Model, *, worker_id: str, batch_size: int, cache_dir: Path | None,
                  on_ready: Ready | None = None) -> Predictor:
    """The strategy this model calls for (see the module docstring)."""
    kind: type[_Predictions] = Streaming if model.in_flight > 0 else Overlapped if model.prepares else Batched
    return kind(model, worker_id=worker_id, batch_size=batch_size, cache_dir=cache_dir, on_ready=on_ready)


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


class _Predictions(abc.ABC):
    """What every strategy shares: the look-ahead, the cache, the predictions held ahead."""

    def __init__(self, model: Model, *, worker_id: str, batch_size: int, cache_dir: Path | None,
                 on_ready: Ready | None = None) -> None:
        self.model = model
        self.size = max(batch_size, model.preferred_batch_size)
        self.look = Lookahead(worker_id)
        self.held: dict[str, Prediction] = {}  # finished, waiting for their tests
        self._cache_dir = cache_dir
        self._cache: PredictionCache | None = None
        self._keys: dict[str, str] = {}  # cache keys of samples started and not yet finished
        self._notes: dict[str, str] = {}
        self._on_ready = on_ready

    @abc.abstractmethod
    def get(self, item: pytest.Item, loaded: LoadedSuite, sample: Sample) -> Prediction:
        """See :meth:`Predictor.get`."""

    def note(self, sample_id: str) -> str | None:
        return self._notes.pop(sample_id, None)

    def cache(self) -> PredictionCache | None:
        """The prediction cache, built on first use: the fingerprint it is keyed by is read only then."""
        if self._cache_dir is None:
            return None
        if self._cache is None:
            self._cache = PredictionCache(self._cache_dir, self.model.fingerprint())
        return self._cache

    def to_predict(self, loaded: LoadedSuite, samples: Sequence[Sample]) -> list[Sample]:
        """The samples still to predict; the others are answered from the prediction cache
        (held from now on). The suite's overrides reach the model first: they are part of
        the key and of what the model is asked."""
        if not samples:
            return []
        extra = apply_overrides(self.model, loaded)
        cache = self.cache()
        todo: list[Sample] = []
        for s in samples:
            parts = cache_parts(self.model, s) if cache is not None else None
            if cache is not None and parts is not None:
                key = cache.key({**parts, **extra})
                found = cache.get(key)
                if found.problem:
                    self._notes[s.id] = found.problem
                if found.value is not None:
                    self._notes[s.id] = "hit"
                    self.ready(loaded, s, found.value, store=False)
                    continue
                self._keys[s.id] = key
            todo.append(s)
        return todo

    def ready(self, loaded: LoadedSuite, sample: Sample, pred: Prediction, *, store: bool = True) -> None:
        """A finished prediction: cached, handed to the judge, held until its test runs."""
        self.held[sample.id] = pred
        key = self._keys.pop(sample.id, None)
        if store and key is not None and self._cache is not None:
            problem = store_prediction(self._cache, key, pred)
            if problem is not None:
                self._notes[sample.id] = problem
        if self._on_ready is not None:
            self._on_ready(loaded, sample, pred)

    def close(self) -> None:
        return None


class Batched(_Predictions):
    """Lock-step batches from the look-ahead, predicted on the test's thread."""

    def get(self, item: pytest.Item, loaded: LoadedSuite, sample: Sample) -> Prediction:
        if sample.id not in self.held:
            batch = [sample, *self.look.upcoming(item, self.size - 1, self.held)]
            todo = self.to_predict(loaded, batch)
            if todo:  # else every one came from the cache
                for s, p in zip(todo, predict_isolated(self.model, todo), strict=True):
                    self.ready(loaded, s, p)
        return self.held.pop(sample.id)


class Streaming(_Predictions):
    """A sliding window of requests: topped up from the look-ahead, each test takes its own.

    The look-ahead continues where the previous test's stopped (``_horizon``), so each test
    looks only at samples not yet handed to the model or the cache: a rerun answered from the
    cache costs the same per test on a suite of 50 or 50,000 samples.
    """

    def __init__(self, model: Model, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.window = InFlight(model)
        self._horizon: int | None = None

    def get(self, item: pytest.Item, loaded: LoadedSuite, sample: Sample) -> Prediction:
        def upcoming(n: int) -> list[Sample]:
            more, self._horizon = self.look.after(item, n, horizon=self._horizon)
            return more

        for done, pred in self.window.collect(sample, self.held, upcoming, lambda b: self.to_predict(loaded, b)):
            self.ready(loaded, done, pred)
        return self.held.pop(sample.id)

    def close(self) -> None:
        self.window.close()


class Overlapped(_Predictions):
    """This sample's batch generated now while the next one is prepared in the background."""

    def __init__(self, model: Model, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.overlap = Overlap(model)

    def get(self, item: pytest.Item, loaded: LoadedSuite, sample: Sample) -> Prediction:
        if sample.id not in self.held:
            def upcoming(n: int, skip: Container[str]) -> list[Sample]:
                return self.look.upcoming(item, n, _Either(self.held, skip))

            for done, pred in self.overlap.predictions(sample, upcoming, self.size,
                                                       lambda b: self.to_predict(loaded, b)):
                self.ready(loaded, done, pred)
        return self.held.pop(sample.id)

    def close(self) -> None:
        self.overlap.close()


class _Either:
    """``x in _Either(a, b)``: in a or in b."""

    def __init__(self, a: Container[str], b: Container[str]) -> None:
        self.a, self.b = a, b

    def __contains__(self, item: object) -> bool:
        return item in self.a or item in self.b
