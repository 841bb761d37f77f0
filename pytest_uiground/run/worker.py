"""Worker side: predict, score and judge one sample inside its test.

The prediction comes from the process's prediction strategy (:mod:`.predictors`: batches,
requests in flight, or preparation overlapped with generation, picked once per process),
which fails one bad sample (a corrupt image, an out-of-memory) on its own and goes on.
Scoring is the suite's scorer (:mod:`pytest_uiground.scoring.scorer`); a judged scorer's judge is built on
first use and judges a predicted batch in the background (:mod:`pytest_uiground.judges.pool`).
"""

from __future__ import annotations

import traceback
from dataclasses import replace

import pytest

from pytest_uiground.judges.base import incomparable
from pytest_uiground.models.base import Model
from pytest_uiground.record.outcome import Outcome, classify
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import PROPERTY, SampleResult, property_value, sample_line
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score
from pytest_uiground.run.state import STATE, JudgeSetupError, WorkerState
from pytest_uiground.suite.items import suite_path_of
from pytest_uiground.suite.loading import LoadedSuite


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


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
    predictor = state.predictor(model)
    pred = predictor.get(item, loaded, sample)
    result.prediction, result.latency_ms = pred, pred.latency_ms
    result.cache = predictor.note(sample.id)
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
