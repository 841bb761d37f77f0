"""Keeping the model busy: work started ahead of the tests that collect it.

A test asks for one sample's prediction, but a model is fastest when it never waits
for the harness. Two capabilities of :class:`~pytest_uiground.models.base.ModelAdapter`
let the worker start work on the samples this process will run next (its look-ahead,
:mod:`.lookahead`) and collect each prediction when that sample's test runs:

* :class:`InFlight`, for models with ``in_flight > 0`` (an HTTP client): a sliding
  window. Up to :attr:`InFlight.window` upcoming samples are submitted with
  ``model.submit``; the model runs ``in_flight`` of them at once and starts the next
  as soon as any finishes, instead of waiting for the slowest of a lock-step batch.
* :class:`Overlap`, for models with ``prepares = True`` (local adapters): the next
  batch's CPU preparation (decode, resize, processor, tokenizer) runs in one
  background thread while the current batch generates on the test's thread (and
  while the weights load, :meth:`~pytest_uiground.models.base.ModelAdapter.warm_up`,
  before the first). At most
  two batches exist at once (the one generating and the one prepared next), so
  memory stays flat.

Failures stay per sample: a request that fails is that sample's error (the client
never raises); a batch whose preparation raises is prepared again one sample at a
time, and a sample that still fails gets its error; a batch whose generation raises
is predicted again one sample at a time (:func:`predict_isolated`).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Collection, Container, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pytest_uiground.models.base import ModelAdapter
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

WINDOW_FACTOR = 2
"""Samples submitted ahead per request slot. The test thread waits for its own sample
only; with twice as many submitted as run at once, the slots stay busy while one slow
request holds up the collection order (measured in ``perf/bench_inflight.py``)."""

HELD_FACTOR = 4
"""Samples handled ahead of their tests in all (in flight, queued, or finished and waiting),
in windows, before the look-ahead pauses: predictions answered early (from the prediction
cache, or requests faster than the one the current test waits for) stay in memory until
their test runs, and that must stay bounded."""

Upcoming = Callable[[int, Container[str]], list[Sample]]
"""``(n, skip) -> samples``: up to ``n`` samples this process runs next, skipping ids in ``skip``."""
Todo = Callable[[Sequence[Sample]], list[Sample]]
"""The samples still to predict (the worker answers the others from its prediction cache)."""


def _error(exc: BaseException, t0: float) -> Prediction:
    return Prediction.failed(exc, latency_ms=(time.perf_counter() - t0) * 1000)


class InFlight:
    """Predictions of a streaming model, submitted ahead and collected in test order.

    Finished requests are noted by their futures' callbacks, so a test learns what is done
    without polling every future in the window (each poll takes the future's lock, and the
    test thread's time is taken from the request threads, which need the GIL too)."""

    def __init__(self, model: ModelAdapter, window: int | None = None) -> None:
        self.model = model
        self.window = window or max(1, WINDOW_FACTOR * model.in_flight)
        self._futures: dict[str, tuple[Sample, Future[Prediction]]] = {}
        self._ready: set[str] = set()  # done, not yet taken
        self._lock = threading.Lock()

    def __contains__(self, sample_id: object) -> bool:
        return sample_id in self._futures

    def room(self, held: int) -> int:
        """How many more upcoming samples to look at now, given ``held`` finished predictions
        still waiting for their tests: enough to keep :attr:`window` requests unfinished,
        never more than :data:`HELD_FACTOR` windows handled ahead in all."""
        with self._lock:
            unfinished = len(self._futures) - len(self._ready)
        return max(0, min(self.window - unfinished, HELD_FACTOR * self.window - held - len(self._futures)))

    def collect(self, sample: Sample, held: Collection[str], upcoming: Callable[[int], list[Sample]],
                todo: Todo) -> list[tuple[Sample, Prediction]]:
        """The predictions finished so far, ``sample``'s among them (waited for), after topping
        up the window from the look-ahead.

        ``held``: the ids of the caller's finished predictions still waiting for their tests;
        ``upcoming(n)``: the next ``n`` samples this process runs that were not offered yet (the
        caller keeps its place, so a test never walks again over what an earlier one handed
        over); ``todo`` drops the samples the caller already has (cache hits, held from then on).
        """
        if sample.id not in self and sample.id not in held:  # the first test, or one run out of order
            self.submit(todo([sample]))
        room = self.room(len(held))
        if room:
            self.submit(todo([s for s in upcoming(room) if s.id not in self and s.id not in held]))
        out = self.finished()  # done early: the caller caches and judges them now
        if sample.id in self:
            out.append((sample, self.take(sample.id)))
        return out

    def submit(self, samples: Sequence[Sample]) -> None:
        """Start the samples not yet started (in order: the model runs them first come, first served)."""
        for s in samples:
            if s.id not in self._futures:
                future = self.model.submit(s)
                self._futures[s.id] = (s, future)
                future.add_done_callback(functools.partial(self._done, s.id))

    def _done(self, sample_id: str, _: Future[Prediction]) -> None:
        with self._lock:
            if sample_id in self._futures:
                self._ready.add(sample_id)

    def take(self, sample_id: str) -> Prediction:
        """The sample's prediction, waiting for it; a failure becomes the sample's error."""
        _, future = self._futures.pop(sample_id)
        with self._lock:
            self._ready.discard(sample_id)
        t0 = time.perf_counter()
        try:
            return future.result()
        except Exception as exc:
            return _error(exc, t0)

    def finished(self) -> list[tuple[Sample, Prediction]]:
        """Predictions already done, in submission order (handed over without waiting, e.g. to
        start judging them)."""
        with self._lock:
            if not self._ready:
                return []
            ready = set(self._ready)
        done = [s for sid, (s, _) in self._futures.items() if sid in ready]
        return [(s, self.take(s.id)) for s in done]

    def close(self) -> None:
        for _, future in self._futures.values():
            future.cancel()
        with self._lock:
            self._futures.clear()
            self._ready.clear()


@dataclass
class _Batch:
    """One batch: its samples, its preparation (running or done) and the time that took."""

    samples: list[Sample]
    future: Future[tuple[Any, list[Sample], dict[str, Prediction], float]]
    ids: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.ids = frozenset(s.id for s in self.samples)


class Overlap:
    """Batches prepared in a background thread while the previous one generates."""

    def __init__(self, model: ModelAdapter) -> None:
        self.model = model
        self._batches: list[_Batch] = []
        self._pool: ThreadPoolExecutor | None = None
        self._warm = False

    def __contains__(self, sample_id: object) -> bool:
        return any(sample_id in b.ids for b in self._batches)

    def start(self, samples: Sequence[Sample]) -> None:
        """Queue one batch's preparation on the background thread."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="uiground-prepare")
        batch = list(samples)
        self._batches.append(_Batch(batch, self._pool.submit(prepare_isolated, self.model, batch)))

    def predictions(self, sample: Sample, upcoming: Upcoming, size: int,
                    todo: Todo) -> list[tuple[Sample, Prediction]]:
        """Predictions of the batch holding ``sample`` (generated now, on this thread), after
        starting the preparation of the batch that follows it.

        ``upcoming`` is the process's look-ahead; ``todo`` drops the samples the caller
        already has (cache hits). Returns nothing when ``sample`` itself needs no prediction.
        """
        if sample.id not in self:
            first = todo([sample, *upcoming(size - 1, self)])
            if not any(s.id == sample.id for s in first):
                return []
            self.start(first)
        if len(self._batches) <= 1:  # nothing prepared beyond this batch yet: start the next one
            following = todo(upcoming(size, self))
            if following:
                self.start(following)
        if not self._warm:  # load the weights on this thread while the first batch is prepared
            self._warm = True
            with contextlib.suppress(Exception):  # a failed load is generate's to report, on each sample
                self.model.warm_up()
        batch = next(b for b in self._batches if sample.id in b.ids)
        self._batches.remove(batch)
        return self._generate(batch)

    def _generate(self, batch: _Batch) -> list[tuple[Sample, Prediction]]:
        prepared, good, errors, prepare_s = batch.future.result()
        out = {**errors}
        if good:
            out.update(zip([s.id for s in good], self._generate_prepared(prepared, good, prepare_s), strict=True))
        return [(s, out[s.id]) for s in batch.samples]

    def _generate_prepared(self, prepared: Any, good: list[Sample], prepare_s: float) -> list[Prediction]:
        t0 = time.perf_counter()
        try:
            preds = self.model.generate(prepared)
            if len(preds) != len(good):
                raise RuntimeError(f"model {self.model.name!r} returned {len(preds)} predictions for "
                                   f"{len(good)} samples")
        except Exception:  # one sample at a time, so the error lands on its sample
            preds = predict_isolated(self.model, good)
        else:
            per = ((time.perf_counter() - t0) + prepare_s) * 1000 / len(good)
            for p in preds:
                if not p.latency_ms:
                    p.latency_ms = per
        return preds

    def close(self) -> None:
        for b in self._batches:
            b.future.cancel()
        self._batches.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def prepare_isolated(model: ModelAdapter, batch: list[Sample]) -> tuple[Any, list[Sample], dict[str, Prediction],
                                                                           float]:
    """``(prepared, samples it holds, error predictions of the others, seconds)``.

    A batch whose preparation raises is prepared one sample at a time to find the ones
    that fail (a corrupt image): they get their error, the rest are prepared together.
    """
    t0 = time.perf_counter()
    try:
        return model.prepare(batch), batch, {}, time.perf_counter() - t0
    except Exception as exc:
        if len(batch) == 1:
            return None, [], {batch[0].id: _error(exc, t0)}, 0.0
    good: list[Sample] = []
    errors: dict[str, Prediction] = {}
    for s in batch:
        t1 = time.perf_counter()
        try:
            model.prepare([s])
        except Exception as exc:
            errors[s.id] = _error(exc, t1)
        else:
            good.append(s)
    if not good:
        return None, [], errors, 0.0
    t2 = time.perf_counter()
    try:
        return model.prepare(good), good, errors, time.perf_counter() - t2
    except Exception as exc:  # fails only together: each sample gets the error
        return None, [], {**errors, **{s.id: _error(exc, t2) for s in good}}, 0.0


def predict_isolated(model: ModelAdapter, batch: Sequence[Sample]) -> list[Prediction]:
    """Predict a batch; on failure retry one by one so the error lands on its sample."""
    t0 = time.perf_counter()
    try:
        preds = model.predict(batch)
        if len(preds) != len(batch):
            raise RuntimeError(f"model {model.name!r} returned {len(preds)} predictions for {len(batch)} samples")
    except Exception as exc:
        if len(batch) > 1:
            return [p for s in batch for p in predict_isolated(model, [s])]
        return [Prediction.failed(exc, latency_ms=(time.perf_counter() - t0) * 1000)]
    per = (time.perf_counter() - t0) * 1000 / len(batch)
    for p in preds:
        if not p.latency_ms:  # keep a per-sample time the model measured itself (e.g. per request)
            p.latency_ms = per
    return preds
