"""Worker side: predict, score and judge one sample inside its test.

Predictions are made in batches of ``--uiground-batch-size`` by looking ahead at the next
sample tests of the same suite in this process's item list (:mod:`.xdist_queue`);
each batch is timed and a batch that raises is retried sample by sample, so one bad
sample (a corrupt image, an out-of-memory) fails only itself and the worker goes on.
Scoring is the suite's scorer (:mod:`.scoring`); a judged scorer's judge is built on
first use and judges a predicted batch in the background (:mod:`.judges.pool`).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
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
from .loading import LoadedSuite, load_suite
from .models.base import Model
from .options import RunOptions
from .outcome import Outcome, classify
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
    model_load_s: float | None = None  # how long the model fixture took to build the model
    _backend: JudgeBackend | None = None
    _lookahead: Lookahead | None = None
    _cache: PredictionCache | None = None

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
        return load_suite(path, self.options.data_path)

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
        for judged in self.judged.values():
            judged.close()
        close = getattr(self._backend, "close", None)
        if callable(close):
            close()


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
    model.use_overrides(ov)
    return {} if ov.empty else {"overrides": ov.key()}


def predict(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample, model: Model) -> Prediction:
    if sample.id not in state.pending:
        extra = apply_overrides(model, loaded)
        # A model may ask for larger batches (an HTTP client keeps that many requests in flight).
        size = max(state.options.model.batch_size, model.preferred_batch_size)
        batch = [sample, *state.lookahead(item, size - 1)]
        cache = state.cache_for(model)
        keys: dict[str, str] = {}
        todo: list[Sample] = []
        for s in batch:
            parts = model.cache_key(s) if cache is not None else None
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
                    cache.put(keys[s.id], p)
        judged = state.judged.get(loaded.config.name)
        if judged is not None:  # judge the whole batch in the background
            for s in batch:
                if s.id in state.pending:
                    judged.submit(s, state.pending[s.id])
    return state.pending.pop(sample.id)


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
    return result


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
        result.model = {"name": model.name, "fingerprint": model.fingerprint(), "worker": state.worker_id,
                        "load_s": state.model_load_s}
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
