"""Work started ahead of the tests (pytest_uiground.run.pipeline): the sliding window of a
streaming model and the background preparation of a preparing model.

The overlap itself is proven with events, not timings: a model that could only finish
if the harness overlapped its work would otherwise time out. Speed is measured in
perf/bench_inflight.py and perf/bench_overlap.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Container, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import Project

from pytest_uiground.models.base import DelegatingAdapter, ModelAdapter
from pytest_uiground.models.cropping import CroppingModel
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.run.lookahead import Lookahead
from pytest_uiground.run.pipeline import HELD_FACTOR, InFlight, Overlap
from pytest_uiground.suite.items import SAMPLE_ARG, SUITE_ATTR

WAIT = 10.0


def samples(n: int) -> list[Sample]:
    return [Sample(f"s{i}", ImageRef.from_source(f"img{i}", lambda: b""), f"click {i}", "point",
                   Target(box=Box(0.1 * (i % 5), 0.1, 0.1 * (i % 5) + 0.1, 0.2))) for i in range(n)]


def answer(s: Sample) -> Prediction:
    assert s.target.box is not None
    return Prediction(point=s.target.box.center, raw=s.id)


class Streaming(ModelAdapter):
    """Two slots; sample 0 finishes only once sample 2 has started (impossible in lock-step
    batches of two, where sample 2 waits for the batch of sample 0)."""

    in_flight = 2

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(2)
        self.started: dict[str, threading.Event] = {f"s{i}": threading.Event() for i in range(20)}

    def submit(self, sample: Sample) -> Future[Prediction]:
        return self.pool.submit(self._one, sample)

    def _one(self, s: Sample) -> Prediction:
        self.started[s.id].set()
        if s.id == "s0" and not self.started["s2"].wait(WAIT):
            return Prediction(error="s2 never started while s0 was in flight")
        return answer(s)

    def fingerprint(self) -> dict[str, Any]:
        return {"model": "streaming"}


def test_a_new_request_starts_as_soon_as_any_finishes() -> None:
    model = Streaming()
    ahead = InFlight(model)
    assert ahead.window == 4
    ss = samples(8)
    got = []
    for i, s in enumerate(ss):  # what the worker does: top up from the look-ahead, take its own
        ahead.submit(ss[i:i + ahead.window])
        got.append(ahead.take(s.id))
    ahead.close()
    model.pool.shutdown()
    assert [p.error for p in got] == [None] * 8
    assert [p.raw for p in got] == [s.id for s in ss], "each test gets its own sample's prediction"


class Counting(list):  # type: ignore[type-arg]
    """A list that counts reads by index (the look-ahead's walk over the session's items)."""

    reads = 0

    def __getitem__(self, i: Any) -> Any:
        Counting.reads += 1
        return super().__getitem__(i)


class Fake:
    """Just what the look-ahead reads of a pytest item: node id, parametrised sample, suite file."""

    def __init__(self, session: Any, nodeid: str, sample: Sample | None, suite: Path) -> None:
        self.session, self.nodeid = session, nodeid
        self.callspec = SimpleNamespace(params={SAMPLE_ARG: sample}) if sample is not None else None
        self._module = SimpleNamespace(obj=SimpleNamespace(**{SUITE_ATTR: suite}))

    def getparent(self, cls: type) -> Any:
        return self._module


def fake_items(suites: dict[str, list[Sample]]) -> list[Any]:
    session = SimpleNamespace(items=[])
    for name, ss in suites.items():
        session.items += [Fake(session, f"{name}::test_sample[{s.id}]", s, Path(name)) for s in ss]
        session.items.append(Fake(session, f"{name}::test_latency", None, Path(name)))
    return session.items


def test_the_look_ahead_continues_where_it_stopped_and_stays_in_its_suite() -> None:
    a, b = samples(6), [replace(s, id="b" + s.id) for s in samples(3)]
    items = fake_items({"a": a, "b": b})
    look = Lookahead("master")
    got, horizon = look.after(items[0], 2)
    assert [s.id for s in got] == ["s1", "s2"]
    got, horizon = look.after(items[1], 2, horizon=horizon)  # the next test: on from s2, not from s1
    assert [s.id for s in got] == ["s3", "s4"]
    got, horizon = look.after(items[2], 10, horizon=horizon)
    assert [s.id for s in got] == ["s5"], "the walk ends at the suite's last sample"
    assert look.after(items[3], 10, horizon=horizon)[0] == []
    assert [s.id for s in look.after(items[7], 10, horizon=horizon)[0]] == ["bs1", "bs2"], (
        "another suite's horizon is ignored")
    assert [s.id for s in look.upcoming(items[0], 3, skip={"s2"})] == ["s1", "s3", "s4"]


def test_a_rerun_from_the_cache_looks_at_each_sample_once(tmp_path: Path) -> None:
    """Every prediction of a 600-sample suite is in the cache: each test looks only at samples not
    yet looked at (a few reads per test), and the predictions answered ahead of their tests stay
    bounded. The walk used to restart at the current test and pass every prediction held so far,
    which the cache hits made the rest of the suite: quadratic in the suite's size."""
    from pytest_uiground.run.predictors import Streaming as StreamingPredictor

    class Keyed(Streaming):
        in_flight = 4

        def __init__(self) -> None:
            super().__init__()
            self.submitted = 0

        def submit(self, sample: Sample) -> Future[Prediction]:
            self.submitted += 1
            return self.pool.submit(answer, sample)

        def cache_key(self, sample: Sample) -> dict[str, Any]:
            return {"sample": sample.id}

    ss = samples(600)
    items = fake_items({"a": ss})
    loaded: Any = SimpleNamespace(config=SimpleNamespace(name="a", models={}))
    runs = []
    for _ in range(2):  # the first run fills the cache, the rerun reads it
        model = Keyed()
        predictor = StreamingPredictor(model, worker_id="master", batch_size=1, cache_dir=tmp_path)
        Counting.reads, held = 0, 0
        got = []
        try:
            for item, s in zip(items, ss, strict=False):  # items end with test_latency
                if not isinstance(predictor.look._entries, Counting) and predictor.look._entries:
                    predictor.look._entries = Counting(predictor.look._entries)
                got.append(predictor.get(item, loaded, s))
                held = max(held, len(predictor.held))
        finally:
            predictor.close()
            model.pool.shutdown()
        assert [p.raw for p in got] == [s.id for s in ss]
        runs.append((model.submitted, Counting.reads, held))
    (first_asked, first_reads, _), (asked, reads, held) = runs
    assert first_asked == 600 and asked == 0, "the rerun asks the model for nothing"
    assert reads <= 4 * len(ss) and first_reads <= 4 * len(ss), runs
    window = InFlight(Keyed()).window
    assert held <= HELD_FACTOR * window, runs


class Preparing(ModelAdapter):
    """Records where preparation ran; generation of a batch waits until the next batch is
    being prepared, which only a harness that overlaps the two ever does."""

    prepares = True
    preferred_batch_size = 3

    def __init__(self, bad_image: str = "", bad_generate: str = "", batches: int = 0) -> None:
        self.bad_image, self.bad_generate = bad_image, bad_generate
        self.batches = batches  # > 0: generation waits until the following batch is being prepared
        self.prepare_threads: list[str] = []
        self.generated = 0
        self.live = 0
        self.max_live = 0
        self.lock = threading.Condition()

    def prepare(self, samples: Sequence[Sample]) -> list[Sample]:
        with self.lock:
            self.prepare_threads.append(threading.current_thread().name)
            self.lock.notify_all()
        if self.bad_image in {s.id for s in samples}:
            raise ValueError(f"image of {self.bad_image} is corrupt")
        with self.lock:
            self.live += 1
            self.max_live = max(self.max_live, self.live)
        return list(samples)

    def generate(self, prepared: list[Sample]) -> list[Prediction]:
        with self.lock:
            self.live -= 1
            self.generated += 1
            if self.generated < self.batches and not self.lock.wait_for(
                    lambda: len(self.prepare_threads) > self.generated, WAIT):
                raise AssertionError("the next batch was not being prepared while this one generated")
        if self.bad_generate in {s.id for s in prepared}:
            raise MemoryError("out of memory (scripted)")
        return [answer(s) for s in prepared]

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return self.generate(self.prepare(samples))

    def fingerprint(self) -> dict[str, Any]:
        return {"model": "preparing"}


def run_overlap(model: Preparing, ss: list[Sample], size: int = 3, hits: Container[str] = ()) -> dict[str, Prediction]:
    pending: dict[str, Prediction] = {}
    pipe = Overlap(model)
    out = {}
    try:
        for i, s in enumerate(ss):
            if s.id not in pending and s.id not in hits:
                def upcoming(n: int, skip: Container[str], i: int = i) -> list[Sample]:
                    return [t for t in ss[i + 1:] if t.id not in skip and t.id not in pending][:n]

                def todo(batch: Sequence[Sample]) -> list[Sample]:
                    return [t for t in batch if t.id not in hits]

                pending.update((t.id, p) for t, p in pipe.predictions(s, upcoming, size, todo))
            if s.id not in hits:
                out[s.id] = pending.pop(s.id)
    finally:
        pipe.close()
    return out


def test_the_next_batch_is_prepared_in_the_background_while_one_generates() -> None:
    model = Preparing(batches=4)
    ss = samples(10)
    got = run_overlap(model, ss)
    assert {k: p.raw for k, p in got.items()} == {s.id: s.id for s in ss}
    assert set(model.prepare_threads) == {"uiground-prepare_0"}, "never on the test's thread"
    assert len(model.prepare_threads) == 4  # batches of 3, 3, 3, 1
    assert model.max_live <= 2, "at most the generating batch and the next one are held"
    assert all(p.latency_ms > 0 for p in got.values())


def test_the_weights_load_while_the_first_batch_is_prepared() -> None:
    """The first batch's preparation waits until the warm-up (the weights' load) has begun and the
    warm-up until the preparation has: only a harness that runs the two at once gets past it."""

    class Loading(Preparing):
        def __init__(self) -> None:
            super().__init__()
            self.loading, self.preparing = threading.Event(), threading.Event()
            self.warm_threads: list[str] = []
            self.saw_preparing: list[bool] = []

        def warm_up(self) -> None:
            self.warm_threads.append(threading.current_thread().name)
            self.loading.set()
            self.saw_preparing.append(self.preparing.wait(WAIT))

        def prepare(self, samples: Sequence[Sample]) -> list[Sample]:
            self.preparing.set()
            if not self.loading.wait(WAIT):
                raise ValueError("the weights were not loading while the first batch was prepared")
            return super().prepare(samples)

    model = Loading()
    ss = samples(7)
    out = run_overlap(model, ss)
    assert [p.error for p in out.values()] == [None] * 7
    assert model.warm_threads == ["MainThread"], "one warm-up, on the test's thread"
    assert model.saw_preparing == [True], "the first batch was being prepared while the weights loaded"
    assert all(name.startswith("uiground-prepare") for name in model.prepare_threads)


def test_a_sample_whose_preparation_fails_gets_its_error_and_the_others_go_on() -> None:
    model = Preparing(bad_image="s4")
    got = run_overlap(model, samples(9))
    assert got["s4"].error == "ValueError: image of s4 is corrupt"
    assert {k for k, p in got.items() if p.error} == {"s4"}
    assert got["s3"].raw == "s3" and got["s5"].raw == "s5"


def test_a_batch_whose_generation_fails_is_retried_one_sample_at_a_time() -> None:
    model = Preparing(bad_generate="s1")
    got = run_overlap(model, samples(6))
    assert {k for k, p in got.items() if p.error} == {"s1"}
    assert got["s1"].error == "MemoryError: out of memory (scripted)"


def test_cache_hits_are_never_prepared() -> None:
    model = Preparing()
    prepared: list[str] = []
    original = model.prepare

    def recording(batch: Sequence[Sample]) -> list[Sample]:
        prepared.extend(s.id for s in batch)
        return original(batch)

    model.prepare = recording  # type: ignore[method-assign]
    got = run_overlap(model, samples(7), hits={"s1", "s2", "s5"})
    assert sorted(prepared) == ["s0", "s3", "s4", "s6"]
    assert set(got) == {"s0", "s3", "s4", "s6"}


def test_wrappers_that_change_predict_neither_stream_nor_prepare() -> None:
    class Plain(DelegatingAdapter):
        pass

    assert Plain(Streaming()).in_flight == 2 and Plain(Preparing()).prepares
    cropped = CroppingModel(Preparing(), "fixed")
    assert cropped.prepares is False and cropped.in_flight == 0
    assert cropped.prepare(samples(1)) == samples(1)  # the default: not the inner model's


def test_a_deferred_weights_load_is_seen_through_wrappers() -> None:
    """The "model loaded in" figure adds weights loaded on first use; a wrapper (cropping, a
    duck-typed factory's object) must not hide them."""
    from pytest_uiground.models.base import adapt

    class Lazy(Preparing):
        def deferred_load_s(self) -> float | None:
            return 2.5

    class Duck:
        name = "duck"

        def predict(self, batch: Sequence[Sample]) -> list[Prediction]:
            return []

        def fingerprint(self) -> dict[str, Any]:
            return {}

        def deferred_load_s(self) -> float:
            return 1.5

    assert CroppingModel(Lazy(), "fixed").deferred_load_s() == 2.5
    assert adapt(Duck()).deferred_load_s() == 1.5
    assert Preparing().deferred_load_s() is None


# --- through the worker, with and without xdist ------------------------------------------------

AHEAD_MODELS = '''
import os, threading
from concurrent.futures import ThreadPoolExecutor
from pytest_uiground.models.base import ModelAdapter
from pytest_uiground.record.prediction import Prediction


def log(line):
    with open(os.environ["UIGROUND_AHEADLOG"], "a") as fh:
        fh.write(line + "\\n")


def answer(s):
    s.image.load()
    return Prediction(point=s.target.box.center, raw="answer " + s.id)


class Preparing(ModelAdapter):
    name = "preparing"
    prepares = True
    preferred_batch_size = 3

    def prepare(self, samples):
        log("prepare " + threading.current_thread().name + " " + ",".join(s.id for s in samples))
        if os.environ.get("UIGROUND_BAD", "") in {s.id for s in samples}:
            raise OSError("scripted preparation failure")
        return list(samples)

    def generate(self, prepared):
        return [answer(s) for s in prepared]

    def predict(self, samples):
        return self.generate(self.prepare(samples))

    def fingerprint(self):
        return {"model": "preparing"}

    def cache_key(self, sample):
        return {"sample": sample.id}


class Streaming(ModelAdapter):
    name = "streaming"
    in_flight = 3

    def __init__(self):
        self.pool = ThreadPoolExecutor(3)

    def submit(self, sample):
        log("submit " + sample.id)
        return self.pool.submit(self._one, sample)

    def _one(self, s):
        if s.id == os.environ.get("UIGROUND_BAD", ""):
            return Prediction(error="scripted request failure")
        return answer(s)

    def predict(self, samples):
        return [self._one(s) for s in samples]

    def fingerprint(self):
        return {"model": "streaming"}

    def cache_key(self, sample):
        return {"sample": sample.id}

    def close(self):
        self.pool.shutdown()


def create_preparing(options):
    return Preparing()


def create_streaming(options):
    return Streaming()
'''


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["preparing", "streaming"])
def test_worker_predicts_ahead_per_sample_and_caches(project: Project, xdist: list[str], kind: str) -> None:
    project.pytester.makepyfile(aheadmodels=AHEAD_MODELS)
    ids = project.ids()
    bad = ids[4]
    log = project.root / "ahead.log"
    project.monkeypatch.setenv("UIGROUND_AHEADLOG", str(log))
    project.monkeypatch.setenv("UIGROUND_BAD", bad)
    args = ["suites/mini", "--model", f"aheadmodels:create_{kind}", "-p", "no:cacheprovider", "-p", "no:randomly",
            "--uiground-cache", "cache", "--uiground-report", "out", "--benchmark-disable", *xdist]
    first = project.pytester.runpytest_subprocess(*args)
    assert first.ret == 1, first.stdout.str()[-3000:]  # the bad sample fails, nothing else
    assert first.parseoutcomes()["failed"] == 1
    records = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    assert set(records) == set(ids)
    for sid, r in records.items():
        if sid == bad:
            assert r["error"] and "scripted" in r["error"]
        else:
            assert r["error"] is None and r["prediction"]["raw"] == f"answer {sid}", r
    lines = log.read_text().splitlines()
    if kind == "preparing":
        assert any("uiground-prepare" in line for line in lines), lines
    else:
        submitted = [line.split()[1] for line in lines if line.startswith("submit")]
        assert sorted(set(submitted)) == sorted(ids) and len(submitted) == len(ids), "each sample submitted once"
    log.unlink()
    second = project.pytester.runpytest_subprocess(*args)
    assert second.ret == 1 and second.parseoutcomes()["failed"] == 1
    again = log.read_text().splitlines() if log.exists() else []
    assert again and all(bad in line for line in again if not line.startswith("prepare MainThread")), (
        "the rerun asks the model only for the sample that failed (errors are not cached)")

