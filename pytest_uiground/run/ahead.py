"""Models that work ahead of the tests: a sliding window of requests, or batches prepared ahead.

A streaming model (``in_flight > 0``) keeps that many requests running, topped up from the
look-ahead as each test takes its own; a preparing model (``prepares``) has the next batch
prepared in the background while one generates (:mod:`.pipeline`). Either way a prediction
finished ahead is cached, handed to the judge and kept in ``WorkerState.pending`` until its
test runs. Models that do neither take the batch path in :func:`.worker.predict`.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

import pytest

from pytest_uiground.models.base import Model
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.cached import apply_overrides, cache_parts, store_prediction
from pytest_uiground.run.pipeline import InFlight, Overlap
from pytest_uiground.run.state import WorkerState
from pytest_uiground.suite.loading import LoadedSuite


def predict_ahead(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample,
                  model: Model) -> Prediction | None:
    """The sample's prediction for a streaming or preparing model, else None (the batch path)."""
    if model.in_flight > 0:
        return _predict_streaming(state, item, loaded, sample, model)
    if model.prepares:
        return _predict_overlapped(state, item, loaded, sample, model)
    return None


def _todo(state: WorkerState, model: Model, loaded: LoadedSuite, samples: Sequence[Sample]) -> list[Sample]:
    """The samples still to predict: the others come from the prediction cache into ``pending``
    (and to the judge); the cache keys of the rest are kept for :func:`_finish`."""
    if not samples:
        return []
    extra = apply_overrides(model, loaded)
    cache = state.cache_for(model)
    todo: list[Sample] = []
    for s in samples:
        parts = cache_parts(model, s) if cache is not None else None
        if cache is not None and parts is not None:
            key = cache.key({**parts, **extra})
            found = cache.get(key)
            if found.problem:
                state.notes[s.id] = found.problem
            if found.prediction is not None:
                state.notes[s.id] = "hit"
                _finish(state, loaded, s, found.prediction, store=False)
                continue
            state._keys[s.id] = key
        todo.append(s)
    return todo


def _finish(state: WorkerState, loaded: LoadedSuite, sample: Sample, pred: Prediction, *, store: bool = True) -> None:
    """A prediction made ahead: cached, handed to the judge, kept until its test runs."""
    state.pending[sample.id] = pred
    key = state._keys.pop(sample.id, None)
    if store and key is not None and state._cache is not None:
        problem = store_prediction(state._cache, key, pred)
        if problem is not None:
            state.notes[sample.id] = problem
    judged = state.judged.get(loaded.config.name)
    if judged is not None:
        judged.submit(sample, pred)


def _predict_streaming(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample,
                       model: Model) -> Prediction:
    """A sliding window: top up the requests in flight from the look-ahead, take this sample's.

    The look-ahead continues where the previous test's stopped (``state._horizon``), so each
    test looks only at samples not yet handed to the model or the cache: a rerun answered
    from the cache costs the same per test on a suite of 50 or 50,000 samples.
    """
    if state._inflight is None:
        state._inflight = InFlight(model)
    look = state.look()

    def upcoming(n: int) -> list[Sample]:
        more, state._horizon = look.after(item, n, horizon=state._horizon)
        return more

    for done, pred in state._inflight.collect(sample, state.pending, upcoming,
                                              lambda b: _todo(state, model, loaded, b)):
        _finish(state, loaded, done, pred)
    return state.pending.pop(sample.id)


def _predict_overlapped(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample,
                        model: Model) -> Prediction:
    """Generate this sample's batch while the next one is prepared in the background."""
    if sample.id not in state.pending:
        if state._overlap is None:
            state._overlap = Overlap(model)
        look = state.look()
        size = max(state.options.model.batch_size, model.preferred_batch_size)

        def upcoming(n: int, skip: Container[str]) -> list[Sample]:
            return look.upcoming(item, n, _Either(state.pending, skip))

        for done, pred in state._overlap.predictions(sample, upcoming, size,
                                                     lambda b: _todo(state, model, loaded, b)):
            _finish(state, loaded, done, pred)
    return state.pending.pop(sample.id)


class _Either:
    """``x in _Either(a, b)``: in a or in b."""

    def __init__(self, a: Container[str], b: Container[str]) -> None:
        self.a, self.b = a, b

    def __contains__(self, item: object) -> bool:
        return item in self.a or item in self.b

