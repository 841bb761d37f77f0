"""Worker side: predict, score and judge one sample inside its test.

The prediction comes from the process's prediction strategy (:mod:`.predictors`: batches,
requests in flight, or preparation overlapped with generation, picked once per process),
which fails one bad sample (a corrupt image, an out-of-memory) on its own and goes on.
Scoring is the suite's scorer (:mod:`pytest_uiground.scoring.scorer`); a judged scorer's judge is built on
first use and judges a predicted batch in the background (:mod:`pytest_uiground.judges.pool`).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pytest

from pytest_uiground.gate.rules import confirm_depth, regression_rule
from pytest_uiground.gate.verdict import SIGNIFICANT
from pytest_uiground.judges.base import JudgeSetupError
from pytest_uiground.record.outcome import Confirm, Outcome, confirmation_counted, decide
from pytest_uiground.record.prediction import Prediction, error_text, finite
from pytest_uiground.record.result import (
    PROPERTY,
    SampleResult,
    Stability,
    answer_text,
    property_value,
    right_of,
    sample_line,
    sample_size,
)
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score
from pytest_uiground.run import STATE
from pytest_uiground.run.repeats import confirm
from pytest_uiground.suite.items import suite_path_of

if TYPE_CHECKING:  # types only: the worker is handed these, it never builds them
    from pytest_uiground.models.base import Model
    from pytest_uiground.run.state import WorkerState
    from pytest_uiground.suite.loading import LoadedSuite


@dataclass
class _Scored:
    """What predicting and scoring left: the parts of the sample's record before its outcome."""

    prediction: Prediction | None = None
    score: Score = field(default_factory=Score.failed)
    error: str | None = None
    cache: str | None = None


def _judged(state: WorkerState, loaded: LoadedSuite, sample: Sample, pred: Prediction) -> _Scored:
    """The suite's scorer on one prediction: a rule, or the suite's judge (built on first use).

    A judge that cannot be set up or reached stops the session after this test (``state.stop``,
    acted on by the plugin's teardown hook): every later judged sample would fail the same way.
    """
    if not loaded.scorer.needs_judge:
        try:
            assert loaded.scorer.rule is not None
            return _Scored(pred, loaded.scorer.rule(sample, pred))
        except Exception as exc:
            return _Scored(pred, error=f"sample {sample.id!r}: scoring failed: {error_text(exc)}\n"
                                       f"{traceback.format_exc(limit=3)}")
    try:
        judged = state.judged_scorer(loaded).result(sample, pred)
    except JudgeSetupError as exc:
        state.stop = str(exc)
        return _Scored(pred, error=f"sample {sample.id!r}: {exc}")
    if judged.unreachable:
        state.stop = judged.error or "the judge is unreachable"
    if judged.score is None:
        return _Scored(pred, Score(0.0, False, notes=dict(judged.notes)), error=f"sample {sample.id!r}: {judged.error}")
    return _Scored(pred, judged.score)


def evaluate(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample, model: Model) -> _Scored:
    """Predict and score one sample; a broken sample or a failed model is that sample's error."""
    if sample.invalid is not None:
        return _Scored(error=f"sample {sample.id!r} is invalid: {sample.invalid}")
    predictor = state.predictor(model)
    pred = finite(predictor.get(item, loaded, sample))  # a NaN point is a format error, not a miss
    note = predictor.note(sample.id)
    if pred.error is not None:
        scored = _Scored(pred, error=f"sample {sample.id!r}: the model failed: {pred.error}")
    else:
        scored = _judged(state, loaded, sample, pred)
        scored.prediction, scored.score = cap_output(pred, scored.score, state.options.max_raw_chars)
    scored.cache = note
    return scored


def cap_output(pred: Prediction, score: Score, cap: int) -> tuple[Prediction, Score]:
    """At most ``cap`` characters of the model's text kept on the record (after scoring,
    which saw all of it), with the cut noted: a model that rambles 5 MB per sample must not
    make ``samples.jsonl`` and the workers' reports enormous."""
    cut = {name: len(text) for name in ("raw", "answer")
           if isinstance(text := getattr(pred, name), str) and len(text) > cap}
    if not cut:
        return pred, score
    notes = {**score.notes, "output_cut": {"cap_chars": cap, **{f"{k}_chars": n for k, n in cut.items()}}}
    return replace(pred, **{name: getattr(pred, name)[:cap] for name in cut}), replace(score, notes=notes)


_XFAIL_REASONS = {
    Outcome.KNOWN_FAILURE: "known failure (wrong in the baseline too)",
    Outcome.WRONG_NO_BASELINE: "wrong (no baseline yet)",
    Outcome.WRONG_UPDATING: "wrong (baseline being updated)",
}


def _score_again(state: WorkerState, loaded: LoadedSuite, sample: Sample, pred: Prediction) -> bool:
    """Whether one extra answer (a repeat or a confirmation) is right, by the suite's own scorer;
    an answer that failed counts as wrong."""
    if pred.error is not None:
        return False
    scored = _judged(state, loaded, sample, finite(pred))
    return scored.error is None and right_of(scored.score)


def _stability(state: WorkerState, sample: Sample, preds: list[Prediction], rights: list[bool],
               first: bool | None, how: str) -> Stability:
    """Right k of K over ``preds`` (scored ``rights``; plus the main answer ``first`` when it counts), the
    answers in words and kept (cut to the output cap) for a merge to count again."""
    size = sample_size(sample)
    words = [f"{answer_text(p, size, format_error=p.format_error)} {'right' if ok else 'wrong'}"
             for p, ok in zip(preds, rights, strict=True)]
    counted = ([first] if first is not None else []) + rights
    kept = [cap_output(p, Score.failed(), state.options.max_raw_chars)[0] for p in preds]
    return Stability(right=sum(counted), of=len(counted), how=how, answers=words, predictions=kept)


def _rights(state: WorkerState, loaded: LoadedSuite, sample: Sample, preds: list[Prediction]) -> list[bool]:
    return [_score_again(state, loaded, sample, p) for p in preds]


def rescore(state: WorkerState, loaded: LoadedSuite, sample: Sample, prior: SampleResult) -> _Scored:
    """A merge (``state.replay``): the shard's record scored again from its prediction by the suite's
    scorer, as :func:`evaluate` scores a fresh one; the record's score and error are never taken on trust
    (only the output cut is kept: the scorer saw the whole output in the shard)."""
    if sample.invalid is not None:
        return _Scored(error=f"sample {sample.id!r} is invalid: {sample.invalid}", cache=prior.cache)
    if prior.prediction is None:
        return _Scored(error=f"sample {sample.id!r}: its shard's record holds no prediction; rerun that shard",
                       cache=prior.cache)
    pred = finite(prior.prediction)
    if pred.error is not None:
        return _Scored(pred, error=f"sample {sample.id!r}: the model failed: {pred.error}", cache=prior.cache)
    scored = _judged(state, loaded, sample, pred)
    cut = prior.score.notes.get("output_cut")
    if cut is not None:
        scored.score = replace(scored.score, notes={**scored.score.notes, "output_cut": cut})
    scored.cache = prior.cache
    return scored


def repeated(state: WorkerState, item: pytest.Item, loaded: LoadedSuite, sample: Sample, model: Model,
             scored: _Scored, prior: Stability | None) -> Stability | None:
    """``--uiground-repeat K``: the sample's K - 1 more answers, each in another batch (:mod:`.repeats`), with
    its main answer. A merge (``state.replay``) asks nothing: it counts again the answers the shard's record
    holds, never its ``right`` and ``of``; a record with another number of answers than the merged run's
    options ask counts as none."""
    opts = state.options
    if opts.repeat <= 1 or scored.error is not None or sample.invalid is not None:
        return None
    if state.replay is not None:
        if prior is None or prior.how != "repeat" or len(prior.predictions) != opts.repeat - 1:
            return None
        preds = list(prior.predictions)
    else:
        preds = state.repeats(model).answers(item, sample, opts.repeat, loaded.samples)
    return _stability(state, sample, preds, _rights(state, loaded, sample, preds), right_of(scored.score), "repeat")


def confirmation(state: WorkerState, loaded: LoadedSuite, sample: Sample, model: Model,
                 prior: Stability | None, out: list[Stability]) -> Confirm:
    """``--uiground-confirm``: the re-asks :func:`decide` asks for (:data:`Confirm`: of a regressed sample
    until one is right, of a fixed one until one is wrong), alone, one at a time. Their stability is appended
    to ``out``. A merge asks nothing: the answers the shard's record holds are scored again and read by the
    same rule; a record the rule cannot have written (more than ``k``, or fewer and none that stops it)
    counts as no confirmation (a regression stays a regression)."""
    def ask(stop_on: bool, k: int) -> list[bool]:
        if state.replay is not None:
            if prior is None or prior.how != "confirm":
                return []
            preds = list(prior.predictions)
            counted = confirmation_counted(_rights(state, loaded, sample, preds), k, stop_on)
            if counted is None:
                return []
            preds, rights = preds[: len(counted)], counted
        else:
            preds, rights = confirm(model, sample, k, lambda p: _score_again(state, loaded, sample, p), stop_on)
        out.append(_stability(state, sample, preds, rights, None, "confirm"))
        return rights
    return ask


def _identity(state: WorkerState, suite: str, model: Model) -> dict[str, Any] | None:
    """The model's identity, on the first record of a suite in each process."""
    if not state.first(suite, "model"):
        return None
    deferred = model.deferred_load_s()  # weights loaded by this first prediction (none from the cache)
    load_s = state.model_load_s + deferred if state.model_load_s is not None and deferred else state.model_load_s
    return {"name": model.name, "fingerprint": model.fingerprint(), "worker": state.worker_id, "load_s": load_s}


def run_sample(item: pytest.Item, sample: Sample, model: Model) -> None:
    """The sample test: predict, score, compare with the baseline, leave the record on the report."""
    state = item.config.stash[STATE]
    path = suite_path_of(item)
    assert path is not None, f"{item.nodeid} is not inside a suite file"
    loaded = state.suite(path)
    suite = loaded.config.name
    if state.replay is not None:  # merge: the shard's record stands in for predicting, never for scoring
        prior = state.replay.records[(suite, sample.id)]
        scored = rescore(state, loaded, sample, prior)
        identity = state.replay.models.get(suite) if state.first(suite, "model") else None
        measured = prior.stability
    else:
        scored = evaluate(state, item, loaded, sample, model)
        identity = _identity(state, suite, model)
        measured = None
    judge_fp = state.judge_fingerprint(suite)
    baseline = state.comparable_baseline(suite)
    entry = baseline.entry(sample.id) if baseline is not None else None
    stability = repeated(state, item, loaded, sample, model, scored, measured)
    confirmed: list[Stability] = []
    outcome = decide(  # the one place the sample's outcome is decided
        right_of(scored.score), entry.right if entry is not None else None,
        baseline_unstable=entry is not None and entry.unstable,
        baseline_answers=entry.stability[1] if entry is not None and entry.stability is not None else 1,
        confirm=confirmation(state, loaded, sample, model, measured, confirmed) if stability is None else None,
        k=confirm_depth(state.options, loaded.config), updating=state.options.updating,
        fixes=regression_rule(state.options, loaded.config)[0] == SIGNIFICANT, error=scored.error is not None,
    )
    stability = confirmed[0] if confirmed else stability
    changed = outcome in (Outcome.REGRESSION, Outcome.UNSTABLE, Outcome.FIXED)
    result = SampleResult(  # the one place a sample's record is built
        suite=suite, id=sample.id, task=sample.task, meta=dict(sample.meta), score=scored.score,
        prediction=scored.prediction, error=scored.error,
        latency_ms=scored.prediction.latency_ms if scored.prediction is not None else None,
        outcome=outcome, cache=scored.cache, model=identity,
        judge=judge_fp if judge_fp is not None and state.first(suite, "judge") else None,
        stability=stability, before=entry.answer if changed and entry is not None else None,
    )
    item.user_properties.append((PROPERTY, property_value(result.to_json())))
    if outcome is Outcome.ERROR:
        pytest.fail(result.error or "error", pytrace=False)
    if outcome is Outcome.REGRESSION and regression_rule(state.options, loaded.config)[0] == SIGNIFICANT:
        # Judged with every other flip by test_aggregate[regressions]: one flip of a noisy model is no evidence.
        expect_failure(item, f"regressed (right in the baseline, wrong now), judged with every flip by "
                             f"test_aggregate[regressions]: {sample_line(sample, result)}")
        return
    if outcome is Outcome.REGRESSION:
        pytest.fail(f"REGRESSION (right in the baseline, wrong now) {sample_line(sample, result)}", pytrace=False)
    if outcome is Outcome.UNSTABLE:
        why = ("unstable in the baseline" if entry is not None and entry.unstable
               else "right when re-asked alone")
        expect_failure(item, f"unstable (right in the baseline, wrong now, but {why}; counted with the "
                             f"flips, never failing alone): {sample_line(sample, result)}")
        return
    if outcome.xfails:
        damaged = outcome is Outcome.WRONG_NO_BASELINE and baseline is not None and baseline.damaged
        expect_failure(item, "wrong (the baseline is damaged: see the aggregate checks)" if damaged
                       else _XFAIL_REASONS[outcome])


EXPECTED: pytest.StashKey[str] = pytest.StashKey()
"""An expected failure's reason, on the sample's item: :func:`as_expected_failure` makes its report an xfail."""


def expect_failure(item: pytest.Item, reason: str) -> None:
    """Mark the sample an expected failure without raising: ``pytest.xfail()`` raises, and pytest then
    filters the exception's traceback for the report even with ``pytrace=False`` (about 4 ms per sample in
    the profile of a zero-cost model, most of the harness's own per-sample cost, issue 42)."""
    item.stash[EXPECTED] = reason


def as_expected_failure(item: pytest.Item, report: pytest.TestReport) -> None:
    """The call report of a sample marked by :func:`expect_failure`: an xfail with its reason, as
    ``pytest.xfail(reason)`` gives (``wasxfail``: the terminal's ``-rx``, JUnit's skipped element and
    xdist read it)."""
    reason = item.stash.get(EXPECTED, None)
    if reason is not None and report.when == "call" and report.passed:
        report.outcome = "skipped"
        report.wasxfail = reason
