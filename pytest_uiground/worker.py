"""Worker side: predict, score and judge one sample inside its test.

Predictions are made in batches of ``--uiground-batch-size`` by looking ahead at the next
sample tests of the same suite in this process's item list (:mod:`.xdist_queue`);
each batch is timed and a batch that raises is retried sample by sample, so one bad
sample (a corrupt image, an out-of-memory) fails only itself and the worker goes on.
Scoring is the suite's scorer (:mod:`.scoring`); a judged scorer's judge is built on
first use and judges a predicted batch in the background (:mod:`.judges.pool`).
"""

from __future__ import annotations

import traceback
from collections.abc import Container, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from . import baseline as baseline_mod
from . import registry
from .cache import PredictionCache
from .items import suite_path_of
from .judges import base as judge_mod
from .judges.base import JudgeBackend, incomparable
from .judges.pool import JudgedScorer
from .loading import LoadedSuite, SuiteLoadError, load_suite
from .models.base import Model
from .options import RunOptions
from .outcome import Outcome, classify
from .pipeline import InFlight, Overlap, predict_isolated
from .prediction import Prediction
from .report.terminal import sample_line
from .results import PROPERTY, SampleResult, property_value
from .sample import Sample
from .score import Score
from .xdist_queue import Lookahead

STATE = pytest.StashKey["WorkerState"]()


class JudgeSetupError(Exception):
    """--uiground-judge is missing or wrong: every judged sample fails with this message."""


@dataclass
class WorkerState:
    """Per-process state: options, baselines, judges and predictions made ahead of their test."""

    options: RunOptions
    worker_id: str = "master"
    pending: dict[str, Prediction] = field(default_factory=dict)
    baselines: dict[str, baseline_mod.Baseline | None] = field(default_factory=dict)
    sent: set[tuple[str, str]] = field(default_factory=set)  # (suite, "model"/"judge") identities sent
    notes: dict[str, str] = field(default_factory=dict)
    judged: dict[str, JudgedScorer] = field(default_factory=dict)  # per suite name
    judge_error: str | None = None
    suite_names: dict[str, Path] = field(default_factory=dict)  # suite name → its file, one file per name
    model_load_s: float | None = None  # how long the model fixture took to build the model
    _backend: JudgeBackend | None = None
    _lookahead: Lookahead | None = None
    _cache: PredictionCache | None = None
    _inflight: InFlight | None = None  # streaming models: requests started ahead of their tests
    _overlap: Overlap | None = None  # preparing models: the next batch prepared while one generates
    _keys: dict[str, str] = field(default_factory=dict)  # cache keys of samples started ahead

    def cache_for(self, model: Model) -> PredictionCache | None:
        """The prediction cache, for models that say what determines their output."""
        if self.options.cache_dir is None:
            return None
        if self._cache is None:
            self._cache = PredictionCache(self.options.cache_dir, model.fingerprint())
        return self._cache

    def judged_scorer(self, loaded: LoadedSuite) -> JudgedScorer:
        """The suite's judge, built on first use; a judge that cannot be built fails every judged sample."""
        if self.judge_error is not None:
            raise JudgeSetupError(self.judge_error)
        name = loaded.config.name
        if name not in self.judged:
            try:
                self.judged[name] = self._build_judged(loaded)
            except Exception as exc:
                self.judge_error = f"the judge could not be set up: {type(exc).__name__}: {exc}"
                raise JudgeSetupError(self.judge_error) from exc
        return self.judged[name]

    def _build_judged(self, loaded: LoadedSuite) -> JudgedScorer:
        jopts = replace(self.options.judge, worker_id=self.worker_id, device=self.options.model.device)
        if not jopts.name:
            raise JudgeSetupError(
                f"suite {loaded.config.name!r} scores free-text answers with an LLM judge: pass "
                "--uiground-judge openai "
                "--uiground-judge-api-base URL --uiground-judge-model NAME (or --uiground-judge module:factory)")
        if self._backend is None:
            factory = registry.resolve(registry.JUDGE_GROUP, jopts.name, what="judge", option="--uiground-judge")
            self._backend = factory(jopts)
        cache_root = self.options.cache_dir / "judge" if self.options.cache_dir is not None else None
        judge = judge_mod.Judge(backend=self._backend, options=jopts, prompt_hash=loaded.scorer.prompt_hash,
                                cache_root=cache_root)
        assert loaded.scorer.judged is not None
        ids = [s.id for s in loaded.samples if s.invalid is None]
        subset = (judge_mod.repeat_subset(ids, jopts.repeat_samples, self.options.seed) if jopts.repeat > 1
                  else frozenset())
        return JudgedScorer(judge, loaded.scorer.judged, parse_errors=jopts.parse_errors, repeat=jopts.repeat,
                            repeat_ids=subset)

    def judge_fingerprint(self, suite: str) -> dict[str, Any] | None:
        judged = self.judged.get(suite)
        return judged.judge.fingerprint() if judged is not None else None

    def suite(self, path: Path) -> LoadedSuite:
        loaded = load_suite(path, self.options.data_path)
        claim_name(self.suite_names, loaded.config.name, path)
        return loaded

    def baseline(self, suite: str) -> baseline_mod.Baseline | None:
        if suite not in self.baselines:
            self.baselines[suite] = baseline_mod.load(self.options.baselines_dir, suite)
        return self.baselines[suite]

    def lookahead(self, item: pytest.Item, n: int) -> list[Sample]:
        if self._lookahead is None:
            self._lookahead = Lookahead(self.worker_id)
        return self._lookahead.upcoming(item, n, self.pending)

    def first(self, suite: str, what: str) -> bool:
        """True once per suite and process: whether this record carries the model's (or judge's) identity."""
        if (suite, what) in self.sent:
            return False
        self.sent.add((suite, what))
        return True

    def close(self) -> None:
        for ahead in (self._inflight, self._overlap):
            if ahead is not None:
                ahead.close()
        for judged in self.judged.values():
            judged.close()
        close = getattr(self._backend, "close", None)
        if callable(close):
            close()


def claim_name(names: dict[str, Path], name: str, path: Path) -> None:
    """Two suite files with one ``[suite] name`` would share (and overwrite) one baseline."""
    first = names.setdefault(name, path)
    if first != path:
        raise SuiteLoadError(f"{path}: [suite] name {name!r} is already used by {first}; each suite needs its own "
                             "name (it names its folder under the baselines and the report)")


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"




def apply_overrides(model: Model, loaded: LoadedSuite) -> dict[str, Any]:
    """Hand the suite's overrides for this model to it; their key joins the cache key."""
    from .models import overrides

    wanted = model.overrides_table
    table = wanted if wanted is not None and wanted in loaded.config.models else model.name
    ov = overrides.resolve(loaded.config.name, table, loaded.config.models.get(table))
    model.use_overrides(ov)
    return {} if ov.empty else {"overrides": ov.key()}


def predict(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample, model: Model) -> Prediction:
    ahead = predict_ahead(state, item, loaded, sample, model)
    if ahead is not None:
        return ahead
    if sample.id not in state.pending:
        extra = apply_overrides(model, loaded)
        # A model may ask for larger batches (an HTTP client keeps that many requests in flight).
        size = max(state.options.model.batch_size, model.preferred_batch_size)
        batch = [sample, *state.lookahead(item, size - 1)]
        cache = state.cache_for(model)
        keys: dict[str, str] = {}
        todo: list[Sample] = []
        for s in batch:
            parts = cache_parts(model, s) if cache is not None else None
            if cache is not None and parts is not None:
                keys[s.id] = cache.key({**parts, **extra})
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
                if cache is not None and s.id in keys:
                    problem = _store(cache, keys[s.id], p)
                    if problem:
                        state.notes[s.id] = problem
        judged = state.judged.get(loaded.config.name)
        if judged is not None:  # judge the whole batch in the background
            for s in batch:
                if s.id in state.pending:
                    judged.submit(s, state.pending[s.id])
    return state.pending.pop(sample.id)


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


def _store(cache: PredictionCache, key: str, pred: Prediction) -> str | None:
    """Write a cache entry; a failure (a full disk, a file where a folder should be) is a
    note on the sample, never an error: the prediction is kept and scored, not requested again."""
    try:
        cache.put(key, pred)
    except OSError as exc:
        return f"warning: the prediction cache could not be written ({exc}); the prediction is kept and scored"
    return None



# --- models that work ahead of the tests (pytest_uiground.pipeline) ------------------------------


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
        problem = _store(state._cache, key, pred)
        if problem is not None:
            state.notes[sample.id] = problem
    judged = state.judged.get(loaded.config.name)
    if judged is not None:
        judged.submit(sample, pred)


def _predict_streaming(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample,
                       model: Model) -> Prediction:
    """A sliding window: top up the requests in flight from the look-ahead, take this sample's."""
    if state._inflight is None:
        state._inflight = InFlight(model)
    ahead = state._inflight
    window = [sample, *state.lookahead(item, ahead.window - 1)]
    new = [s for s in window if s.id not in ahead and s.id not in state.pending]
    ahead.submit(_todo(state, model, loaded, new))
    for done, pred in ahead.finished():  # done early: cache and judge them now
        _finish(state, loaded, done, pred)
    if sample.id not in state.pending:
        _finish(state, loaded, sample, ahead.take(sample.id))
    return state.pending.pop(sample.id)


def _predict_overlapped(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample,
                        model: Model) -> Prediction:
    """Generate this sample's batch while the next one is prepared in the background."""
    if sample.id not in state.pending:
        if state._overlap is None:
            state._overlap = Overlap(model)
        if state._lookahead is None:
            state.lookahead(item, 0)
        assert state._lookahead is not None
        look = state._lookahead
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


def _score(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample, pred: Prediction,
           result: SampleResult) -> Score | None:
    """The suite scorer's Score, or None with ``result.error`` set."""
    if not loaded.scorer.needs_judge:
        try:
            assert loaded.scorer.rule is not None
            return loaded.scorer.rule(sample, pred)
        except Exception as exc:
            result.error = f"sample {sample.id!r}: scoring failed: {_error_text(exc)}\n{traceback.format_exc(limit=3)}"
            return None
    try:
        judged = state.judged_scorer(loaded).result(sample, pred)
    except JudgeSetupError as exc:
        result.error = f"sample {sample.id!r}: {exc}"
        item.session.shouldstop = str(exc)
        return None
    if judged.unreachable:
        item.session.shouldstop = judged.error or "the judge is unreachable"
    if judged.score is None:
        result.error = f"sample {sample.id!r}: {judged.error}"
        result.score = Score(0.0, False, notes=dict(judged.notes))
    return judged.score


def evaluate(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample, model: Model) -> SampleResult:
    result = SampleResult(suite=loaded.config.name, id=sample.id, task=sample.task, meta=dict(sample.meta))
    if sample.invalid is not None:
        result.error = f"sample {sample.id!r} is invalid: {sample.invalid}"
        return result
    pred = predict(state, item, loaded, sample, model)
    result.prediction, result.latency_ms = pred, pred.latency_ms
    result.cache = state.notes.pop(sample.id, None)
    if pred.error is not None:
        result.error = f"sample {sample.id!r}: the model failed: {pred.error}"
        return result
    score = _score(state, item, loaded, sample, pred, result)
    if score is not None:
        result.score = score
    cap_output(result, state.options.max_raw_chars)
    return result


def cap_output(result: SampleResult, cap: int) -> None:
    """Keep at most ``cap`` characters of the model's text on the record (after scoring,
    which saw all of it), and note the cut: a model that rambles 5 MB per sample must not
    make ``samples.jsonl`` and the workers' reports enormous."""
    pred = result.prediction
    if pred is None:
        return
    cut = {name: len(text) for name in ("raw", "answer")
           if isinstance(text := getattr(pred, name), str) and len(text) > cap}
    if not cut:
        return
    result.prediction = replace(pred, **{name: getattr(pred, name)[:cap] for name in cut})
    result.score.notes["output_cut"] = {"cap_chars": cap, **{f"{k}_chars": n for k, n in cut.items()}}


_XFAIL_REASONS = {
    Outcome.KNOWN_FAILURE: "known failure (wrong in the baseline too)",
    Outcome.WRONG_NO_BASELINE: "wrong (no baseline yet)",
    Outcome.WRONG_UPDATING: "wrong (baseline being updated)",
}


def run_sample(item: pytest.Item, sample: Sample, model: Model) -> None:
    state = item.config.stash[STATE]
    path = suite_path_of(item)
    assert path is not None, f"{item.nodeid} is not inside a suite file"
    loaded = state.suite(path)
    suite = loaded.config.name
    result = evaluate(state, item, loaded, sample, model)
    if state.first(suite, "model"):
        deferred = model.deferred_load_s()  # weights loaded by this first prediction (none from the cache)
        load_s = state.model_load_s + deferred if state.model_load_s is not None and deferred else state.model_load_s
        result.model = {"name": model.name, "fingerprint": model.fingerprint(), "worker": state.worker_id,
                        "load_s": load_s}
    judge_fp = state.judge_fingerprint(suite)
    if judge_fp is not None and state.first(suite, "judge"):
        result.judge = judge_fp
    baseline = state.baseline(suite)
    if baseline is not None and judge_fp is not None and incomparable(baseline.provenance.get("judge"), judge_fp):
        baseline = None  # judged by another judge: flagged by the aggregate checks, not compared per sample
    outcome = classify(
        result.right,
        baseline.right(sample.id) if baseline is not None else None,
        updating=state.options.updating,
        error=result.error is not None,
    )
    result.outcome = outcome.value
    item.user_properties.append((PROPERTY, property_value(result.to_json())))
    if outcome is Outcome.ERROR:
        pytest.fail(result.error or "error", pytrace=False)
    if outcome is Outcome.REGRESSION:
        pytest.fail(f"REGRESSION (right in the baseline, wrong now) {sample_line(sample, result)}", pytrace=False)
    if outcome.xfails:
        # pytrace=False: pytest would otherwise format a full traceback (parsing
        # source files) for every expected failure, ~18 ms per sample.
        raise pytest.xfail.Exception(_XFAIL_REASONS[outcome], pytrace=False)
