"""Worker side: predict, score and judge one sample inside its test.

Predictions are made in batches of ``--batch-size`` by looking ahead at the next
sample tests of the same suite in this process's item list; each batch is timed
and a batch that raises is retried sample by sample, so one bad sample (a corrupt
image, an out-of-memory) fails only itself and the worker goes on.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.judges.base import incomparable
from pytest_uiground.judges.scoring import JudgedScorer
from pytest_uiground.models.base import Model

from . import baseline as baseline_mod
from .cache import PredictionCache
from .items import SAMPLE_ARG, suite_path_of
from .loading import LoadedSuite, load_suite
from .options import RunOptions
from .outcome import Outcome, classify
from .prediction import Prediction
from .results import PROPERTY, SampleResult
from .sample import Sample
from .score import score

STATE = pytest.StashKey["WorkerState"]()


@dataclass
class WorkerState:
    """Per-process state: options, baselines and predictions made ahead of their test."""

    options: RunOptions
    worker_id: str = "master"
    pending: dict[str, Prediction] = field(default_factory=dict)
    baselines: dict[str, baseline_mod.Baseline | None] = field(default_factory=dict)
    model_sent: bool = False
    judge_sent: bool = False
    notes: dict[str, str] = field(default_factory=dict)
    judged: JudgedScorer | None = None
    judge_error: str | None = None
    _order: dict[str, int] | None = None
    _cache: PredictionCache | None = None

    def cache_for(self, model: Model) -> PredictionCache | None:
        """The prediction cache, for models that say what determines their output."""
        if self.options.cache_dir is None or not callable(getattr(model, "cache_key", None)):
            return None
        if self._cache is None:
            self._cache = PredictionCache(self.options.cache_dir, model.fingerprint())
        return self._cache

    def judged_scorer(self, loaded: LoadedSuite) -> JudgedScorer:
        """The judge, built on first use; a judge that cannot be built fails every judged sample."""
        if self.judge_error is not None:
            raise JudgeSetupError(self.judge_error)
        if self.judged is None:
            try:
                self.judged = build_judged_scorer(self.options, self.worker_id, loaded)
            except Exception as exc:
                self.judge_error = f"the judge could not be set up: {_error_text(exc)}"
                raise JudgeSetupError(self.judge_error) from exc
        return self.judged

    def judge_fingerprint(self) -> dict[str, Any] | None:
        return self.judged.judge.fingerprint() if self.judged is not None else None

    def suite(self, path: Path) -> LoadedSuite:
        return load_suite(path, self.options.data_path)

    def baseline(self, suite: str) -> baseline_mod.Baseline | None:
        if suite not in self.baselines:
            self.baselines[suite] = baseline_mod.load(self.options.baselines_dir, suite)
        return self.baselines[suite]

    def lookahead(self, item: pytest.Item, n: int) -> list[Sample]:
        """Up to ``n`` samples of the same suite that this process will run next.

        Without xdist that is the session's item order. An xdist worker runs only what
        the controller sends it, so it looks at its own queue of item indices; if that
        queue cannot be read (xdist internals changed), it predicts one sample at a
        time rather than predicting samples another worker will run.
        """
        if n <= 0:
            return []
        items = item.session.items
        if self._order is None:
            self._order = {it.nodeid: i for i, it in enumerate(items)}
        start = self._order.get(item.nodeid)
        if start is None:
            return []
        if self.worker_id == "master":
            upcoming: list[pytest.Item] = items[start + 1 :]
        else:
            queue = worker_queue(item.config)
            if queue is None:
                return []
            upcoming = [items[i] for i in queue if 0 <= i < len(items)]
        path = suite_path_of(item)
        found: list[Sample] = []
        for nxt in upcoming:
            callspec = getattr(nxt, "callspec", None)
            sample = callspec.params.get(SAMPLE_ARG) if callspec is not None else None
            if not isinstance(sample, Sample) or suite_path_of(nxt) != path:
                break
            if sample.invalid is None and sample.id not in self.pending:
                found.append(sample)
            if len(found) >= n:
                break
        return found


class JudgeSetupError(Exception):
    """--judge is missing or wrong: every judged sample fails with this message."""


def build_judged_scorer(options: RunOptions, worker_id: str, loaded: LoadedSuite) -> JudgedScorer:
    from dataclasses import replace

    from pytest_uiground.benchmarks.bench2drive_vl.prompts import PROMPT_HASH

    from . import registry
    from .judges import base as judge_mod

    jopts = replace(options.judge, worker_id=worker_id, device=options.device)
    if not jopts.name:
        raise JudgeSetupError(f"suite {loaded.config.name!r} scores free-text answers with an LLM judge: pass "
                              "--judge openai --judge-api-base URL --judge-model NAME (or --judge module:factory)")
    factory = registry.resolve(registry.JUDGE_GROUP, jopts.name, what="judge", option="--judge")
    backend = factory(jopts)
    cache_root = options.cache_dir / "judge" if options.cache_dir is not None else None
    j = judge_mod.Judge(backend=backend, options=jopts, prompt_hash=PROMPT_HASH, cache_root=cache_root)
    ids = [s.id for s in loaded.samples if s.task == "vqa" and s.invalid is None]
    subset = judge_mod.repeat_subset(ids, jopts.repeat_samples, options.seed) if jopts.repeat > 1 else frozenset()
    return JudgedScorer(j, parse_errors=jopts.parse_errors, repeat=jopts.repeat, repeat_ids=subset)


def worker_queue(config: pytest.Config) -> list[int] | None:
    """The item indices this xdist worker will run next, in order, or None if unknown."""
    for plugin in config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if torun is None or not hasattr(plugin, "nextitem_index") or not hasattr(torun, "lock"):
            continue
        try:
            with torun.lock() as queued:
                pending = list(queued)
        except Exception:  # an xdist version with another queue: no look-ahead
            return None
        head = [plugin.nextitem_index]
        return [i for i in head + pending if isinstance(i, int)]
    return None


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def predict_isolated(model: Model, batch: Sequence[Sample]) -> list[Prediction]:
    """Predict a batch; on failure retry one by one so the error lands on its sample."""
    t0 = time.perf_counter()
    try:
        preds = model.predict(batch)
        if len(preds) != len(batch):
            raise RuntimeError(f"model {model.name!r} returned {len(preds)} predictions for {len(batch)} samples")
    except Exception as exc:
        if len(batch) > 1:
            return [p for s in batch for p in predict_isolated(model, [s])]
        return [Prediction(error=_error_text(exc), raw="", latency_ms=(time.perf_counter() - t0) * 1000)]
    per = (time.perf_counter() - t0) * 1000 / len(batch)
    for p in preds:
        if not p.latency_ms:  # keep a per-sample time the model measured itself (e.g. per request)
            p.latency_ms = per
    return preds


def apply_overrides(model: Model, loaded: LoadedSuite) -> dict[str, Any]:
    """Hand the suite's overrides for this model to it; their key joins the cache key."""
    from .models import overrides

    ov = overrides.resolve(loaded.config.name, model.name, loaded.config.models.get(model.name))
    use = getattr(model, "use_overrides", None)
    if callable(use):
        use(ov)
    return {} if ov.empty else {"overrides": ov.key()}


def predict(state: WorkerState, item: pytest.Item, sample: Sample, model: Model) -> Prediction:
    if sample.id not in state.pending:
        path = suite_path_of(item)
        extra = apply_overrides(model, state.suite(path)) if path is not None else {}
        # A model may ask for larger batches (an HTTP client keeps that many requests in flight).
        size = max(state.options.batch_size, int(getattr(model, "preferred_batch_size", 1)))
        batch = [sample, *state.lookahead(item, size - 1)]
        cache = state.cache_for(model)
        keys: dict[str, str] = {}
        todo: list[Sample] = []
        for s in batch:
            if cache is not None:
                keys[s.id] = cache.key({**model.cache_key(s), **extra})  # type: ignore[attr-defined]
                found = cache.get(keys[s.id])
                if found.problem:
                    state.notes[s.id] = found.problem
                if found.prediction is not None:
                    state.pending[s.id] = found.prediction
                    state.notes[s.id] = "hit"
                    continue
            todo.append(s)
        if todo:
            for s, p in zip(todo, predict_isolated(model, todo), strict=True):
                state.pending[s.id] = p
                if cache is not None:
                    cache.put(keys[s.id], p)
        if state.judged is not None:  # judge the whole batch in the background
            for s in batch:
                if s.task == "vqa" and s.id in state.pending:
                    state.judged.submit(s, state.pending[s.id])
    return state.pending.pop(sample.id)


def evaluate(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample, model: Model) -> SampleResult:
    base = SampleResult(
        suite=loaded.config.name, id=sample.id, task=sample.task, meta=dict(sample.meta), value=0.0, correct=False
    )
    if sample.invalid is not None:
        base.error = f"sample {sample.id!r} is invalid: {sample.invalid}"
        return base
    pred = predict(state, item, sample, model)
    base.raw, base.latency_ms, base.prediction = pred.raw, pred.latency_ms, pred.to_json()
    note = state.notes.pop(sample.id, None)
    if note is not None:
        base.details["cache"] = note
    if pred.error is not None:
        base.error = f"sample {sample.id!r}: the model failed: {pred.error}"
        return base
    if sample.task == "vqa":
        try:
            judged = state.judged_scorer(loaded).result(sample, pred)
        except JudgeSetupError as exc:
            base.error = f"sample {sample.id!r}: {exc}"
            item.session.shouldstop = str(exc)
            return base
        if judged.unreachable:
            item.session.shouldstop = judged.error or "the judge is unreachable"
        if judged.score is None:
            base.error = f"sample {sample.id!r}: {judged.error}"
            base.details.update(judged.details)
            return base
        s = judged.score
    else:
        try:
            s = score(sample, pred)
        except Exception as exc:
            base.error = f"sample {sample.id!r}: scoring failed: {_error_text(exc)}\n{traceback.format_exc(limit=3)}"
            return base
    base.value, base.correct, base.format_error = s.value, s.correct, s.format_error
    base.details = {**base.details, **s.details}
    return base


def describe(sample: Sample, result: SampleResult) -> str:
    target = sample.target
    want = target.box and "[" + ", ".join(f"{v:.3f}" for v in target.box) + "]"
    want = want or target.verdict or target.option or target.answer
    pred = result.prediction or {}
    got = pred.get("point") or pred.get("verdict") or pred.get("option") or pred.get("answer")
    return (
        f"  instruction: {sample.instruction!r}\n  target: {want}\n  predicted: {got}"
        f"{' (format error)' if result.format_error else ''}\n  raw output: {result.raw[:300]!r}"
    )


def run_sample(item: pytest.Item, sample: Sample, model: Model) -> None:
    state = item.config.stash[STATE]
    path = suite_path_of(item)
    assert path is not None, f"{item.nodeid} is not inside a suite file"
    loaded = state.suite(path)
    result = evaluate(state, item, loaded, sample, model)
    if not state.model_sent:
        result.model = {"name": model.name, "fingerprint": model.fingerprint()}
        state.model_sent = True
    judge_fp = state.judge_fingerprint() if sample.task == "vqa" else None
    if judge_fp is not None and not state.judge_sent:
        result.judge = judge_fp
        state.judge_sent = True
    baseline = state.baseline(loaded.config.name)
    if baseline is not None and judge_fp is not None and incomparable(baseline.provenance.get("judge"), judge_fp):
        baseline = None  # judged by another judge: flagged by the aggregate checks, not compared per sample
    outcome = classify(
        result.right,
        baseline.right(sample.id) if baseline is not None else None,
        updating=state.options.updating,
        error=result.error is not None,
    )
    result.outcome = outcome.value
    item.user_properties.append((PROPERTY, result.to_json()))
    if outcome is Outcome.ERROR:
        pytest.fail(result.error or "error", pytrace=False)
    if outcome is Outcome.REGRESSION:
        pytest.fail(
            f"REGRESSION {sample.id}: right in the baseline, wrong now\n{describe(sample, result)}", pytrace=False
        )
    if outcome.xfails:
        reason = {
            Outcome.KNOWN_FAILURE: "known failure (wrong in the baseline too)",
            Outcome.WRONG_NO_BASELINE: "wrong (no baseline yet)",
            Outcome.WRONG_UPDATING: "wrong (baseline being updated)",
        }[outcome]
        # pytrace=False: pytest would otherwise format a full traceback (parsing
        # source files) for every expected failure, ~18 ms per sample.
        raise pytest.xfail.Exception(reason, pytrace=False)


def _loadable(samples: Sequence[Sample], n: int) -> list[Sample]:
    """The first ``n`` samples whose image decodes: broken ones fail their own tests."""
    from .image import ImageError

    out: list[Sample] = []
    for s in samples:
        if len(out) >= n:
            break
        if s.invalid is None:
            try:
                s.image.load()
            except ImageError:
                continue
            out.append(s)
    return out


def run_latency_benchmark(item: pytest.Item, benchmark: Any, model: Model) -> None:
    """Time the model serially on the suite's first valid samples."""
    if getattr(benchmark, "disabled", False):
        pytest.skip(
            "pytest-benchmark is disabled (it turns itself off under xdist -n and with "
            "--benchmark-disable); run without -n to measure latency serially"
        )
    state = item.config.stash[STATE]
    path = suite_path_of(item)
    assert path is not None
    loaded = state.suite(path)
    k = loaded.config.latency.benchmark_samples
    samples = _loadable(sorted(loaded.samples, key=lambda s: s.id), k + 1)
    if len(samples) < 2:
        pytest.skip(f"suite {loaded.config.name!r} has fewer than 2 valid samples to time")
    timings: list[float] = []
    queue = list(samples)

    def setup() -> tuple[tuple[Sample], dict[str, Any]]:
        reset = getattr(model, "clear_cache", None)
        if callable(reset):
            reset()  # measure real work, not a cache hit from the sample tests
        return (queue.pop(0),), {}

    def target(sample: Sample) -> None:
        t0 = time.perf_counter()
        model.predict([sample])
        timings.append((time.perf_counter() - t0) * 1000)

    benchmark.pedantic(target, setup=setup, rounds=len(samples) - 1, warmup_rounds=1)
    from . import stats

    measured = timings[1:]
    benchmark.extra_info.update(
        {"suite": loaded.config.name, "model": model.name, "samples": len(measured),
         "p50_ms": stats.percentile(measured, 50), "p95_ms": stats.percentile(measured, 95)}
    )
