"""Worker side: predict, score and judge one sample inside its test.

Predictions are made in batches of ``--uiground-batch-size`` by looking ahead at the next
sample tests of the same suite in this process's item list (:mod:`.xdist_queue`);
each batch is timed and a batch that raises is retried sample by sample, so one bad
sample (a corrupt image, an out-of-memory) fails only itself and the worker goes on.
Models that work ahead of their tests (streaming, preparing) take :mod:`.ahead` instead;
the per-process state they share lives in :mod:`.state`, the cache rules in :mod:`.cached`.
Scoring is the suite's scorer (:mod:`.scoring`); a judged scorer's judge is built on
first use and judges a predicted batch in the background (:mod:`.judges.pool`).
"""

from __future__ import annotations

import traceback
from dataclasses import replace

import pytest

from pytest_uiground.judges.base import incomparable
from pytest_uiground.models.base import Model
from pytest_uiground.record.outcome import Outcome, classify
from pytest_uiground.record.prediction import Prediction, finite
from pytest_uiground.record.result import PROPERTY, SampleResult, property_value
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score
from pytest_uiground.report.terminal import sample_line
from pytest_uiground.run.ahead import predict_ahead
from pytest_uiground.run.cached import apply_overrides, cache_parts, store_prediction
from pytest_uiground.run.items import suite_path_of
from pytest_uiground.run.pipeline import predict_isolated
from pytest_uiground.run.state import STATE, JudgeSetupError, WorkerState
from pytest_uiground.suite.loading import LoadedSuite


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


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
                    problem = store_prediction(cache, keys[s.id], p)
                    if problem:
                        state.notes[s.id] = problem
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
    pred = finite(predict(state, item, loaded, sample, model))  # a NaN point is a format error, not a miss
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
        damaged = outcome is Outcome.WRONG_NO_BASELINE and baseline is not None and baseline.damaged
        reason = "wrong (the baseline is damaged: see the aggregate checks)" if damaged else _XFAIL_REASONS[outcome]
        raise pytest.xfail.Exception(reason, pytrace=False)
