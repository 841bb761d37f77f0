"""The prediction strategies (pytest_uiground.run.predictors) driven directly: a fake model,
fake items, no pytest run (as pytest-xdist tests its schedulers with a fake node).

Each strategy must give every test its own sample's prediction, answer cache hits without
asking the model, hand every prediction to ``on_ready`` exactly once, and keep the notes the
cache left on a sample for that sample's record.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_pipeline import answer, fake_items, samples  # tests/ is on sys.path (its conftest.py)

from pytest_uiground.models.base import ModelAdapter
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.predictors import Batched, Overlapped, Streaming, predictor_for

LOADED: Any = SimpleNamespace(config=SimpleNamespace(name="a", models={}))


class Fake(ModelAdapter):
    """Answers each sample with its box centre; records every batch it was asked for."""

    name = "fake"

    def __init__(self, kind: str = "batch", bad: str = "") -> None:
        self.in_flight = 3 if kind == "stream" else 0
        self.prepares = kind == "prepare"
        self.preferred_batch_size = 1
        self.bad = bad
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(3) if kind == "stream" else None

    def _one(self, s: Sample) -> Prediction:
        if s.id == self.bad:
            raise ValueError(f"image of {s.id} is corrupt")
        return answer(s)

    def predict(self, batch: Sequence[Sample]) -> list[Prediction]:
        with self.lock:
            self.calls.append([s.id for s in batch])
        return [self._one(s) for s in batch]

    def prepare(self, batch: Sequence[Sample]) -> list[Sample]:
        with self.lock:
            self.calls.append([s.id for s in batch])
        for s in batch:
            if s.id == self.bad:
                raise ValueError(f"image of {s.id} is corrupt")
        return list(batch)

    def generate(self, prepared: list[Sample]) -> list[Prediction]:
        return [self._one(s) for s in prepared]

    def submit(self, sample: Sample) -> Future[Prediction]:
        assert self.pool is not None
        with self.lock:
            self.calls.append([sample.id])
        return self.pool.submit(self._one, sample)

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        return {"sample": sample.id}

    def fingerprint(self) -> dict[str, Any]:
        return {"model": "fake"}

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def run(kind: str, n: int, *, batch_size: int = 4, cache_dir: Path | None = None,
        bad: str = "") -> tuple[Fake, dict[str, Prediction], dict[str, str | None], list[str]]:
    model = Fake(kind, bad)
    ready: list[str] = []
    predictor = predictor_for(model, worker_id="master", batch_size=batch_size, cache_dir=cache_dir,
                              on_ready=lambda loaded, s, p: ready.append(s.id))
    ss = samples(n)
    items = fake_items({"a": ss})
    got, notes = {}, {}
    try:
        for item, s in zip(items, ss, strict=False):
            got[s.id] = predictor.get(item, LOADED, s)
            notes[s.id] = predictor.note(s.id)
    finally:
        predictor.close()
        model.close()
    return model, got, notes, ready


@pytest.mark.parametrize(("kind", "cls"), [("batch", Batched), ("stream", Streaming), ("prepare", Overlapped)])
def test_the_strategy_is_picked_by_what_the_model_can_do(kind: str, cls: type) -> None:
    assert type(predictor_for(Fake(kind), worker_id="master", batch_size=1, cache_dir=None)) is cls


@pytest.mark.parametrize("kind", ["batch", "stream", "prepare"])
def test_each_test_gets_its_own_prediction_and_each_is_ready_once(kind: str) -> None:
    model, got, notes, ready = run(kind, 10)
    assert {sid: p.raw for sid, p in got.items()} == {f"s{i}": f"s{i}" for i in range(10)}
    assert sorted(ready) == sorted(got), "every prediction is handed on exactly once"
    assert set(notes.values()) == {None}, "no cache: no notes"
    asked = [sid for call in model.calls for sid in call]
    if kind == "batch":
        assert [len(c) for c in model.calls] == [4, 4, 2], "batches of --uiground-batch-size from the look-ahead"
    assert sorted(set(asked)) == sorted(got)


@pytest.mark.parametrize("kind", ["batch", "stream", "prepare"])
def test_a_rerun_is_answered_from_the_cache_with_a_note(kind: str, tmp_path: Path) -> None:
    first, got1, notes1, _ = run(kind, 7, cache_dir=tmp_path)
    again, got2, notes2, ready2 = run(kind, 7, cache_dir=tmp_path)
    assert first.calls and not again.calls, "the rerun asks the model for nothing"
    assert {k: p.raw for k, p in got2.items()} == {k: p.raw for k, p in got1.items()}
    assert set(notes2.values()) == {"hit"} and set(notes1.values()) == {None}
    assert sorted(ready2) == sorted(got2), "cache hits reach the judge too"


@pytest.mark.parametrize("kind", ["batch", "stream", "prepare"])
def test_one_broken_sample_fails_alone(kind: str) -> None:
    _, got, _, _ = run(kind, 6, bad="s2")
    assert got["s2"].error is not None and "corrupt" in got["s2"].error
    assert all(p.error is None and p.raw == sid for sid, p in got.items() if sid != "s2")


def test_a_cache_that_cannot_be_written_is_a_note_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    _, got, notes, _ = run("batch", 3, cache_dir=blocker)
    assert all(p.error is None for p in got.values())
    assert all(n is not None and n.startswith("warning: the prediction cache could not be written")
               for n in notes.values()), notes
