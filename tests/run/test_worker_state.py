"""pytest_uiground.run.state: the per-process WorkerState and claim_name."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_uiground.judges.base import JudgeOptions, JudgeSetupError
from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.options import RunOptions
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.run.predictors import Batched, Streaming
from pytest_uiground.run.state import WorkerState, claim_name
from pytest_uiground.suite.loading import SuiteLoadError


class Fake(ModelAdapter):
    name = "fake"

    def __init__(self, in_flight: int = 0) -> None:
        self.in_flight = in_flight

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        return [Prediction() for _ in samples]

    def fingerprint(self) -> dict[str, Any]:
        return {"model": self.name}


def _state() -> WorkerState:
    return WorkerState(options=RunOptions(model=ModelOptions(name="fake")))


def test_claim_name_allows_the_same_file_again_and_refuses_a_second_file(tmp_path: Path) -> None:
    names: dict[str, Path] = {}
    a, b = tmp_path / "a" / "suite.toml", tmp_path / "b" / "suite.toml"
    claim_name(names, "mini", a)
    claim_name(names, "mini", a)  # the same suite loaded twice is fine
    claim_name(names, "other", b)
    with pytest.raises(SuiteLoadError) as info:
        claim_name(names, "mini", b)
    message = str(info.value)
    assert str(a) in message and str(b) in message and "'mini'" in message
    assert names == {"mini": a, "other": b}  # the first claim stands


def test_the_prediction_strategy_is_picked_once_per_process() -> None:
    state = _state()
    first = state.predictor(Fake())
    assert isinstance(first, Batched)
    assert state.predictor(Fake(in_flight=4)) is first  # picked on first use, kept after
    state.close()
    assert isinstance(_state().predictor(Fake(in_flight=4)), Streaming)


def test_a_judged_suite_without_a_judge_fails_with_the_options_to_pass() -> None:
    state = _state()
    loaded: Any = SimpleNamespace(config=SimpleNamespace(name="b2d"), samples=(), scorer=None)
    with pytest.raises(JudgeSetupError) as info:
        state.judged_scorer(loaded)
    message = str(info.value)
    assert "'b2d'" in message and "--uiground-judge openai" in message and "--uiground-judge-model" in message
    # the error sticks: every later judged sample fails with the same message, nothing is built again
    other: Any = SimpleNamespace(config=SimpleNamespace(name="other"))
    with pytest.raises(JudgeSetupError) as again:
        state.judged_scorer(other)
    assert str(again.value) == message
    assert state.judged == {} and state.judge_fingerprint("b2d") is None


def test_first_is_true_once_per_suite_and_identity() -> None:
    state = _state()
    assert state.first("s", "model") and state.first("s", "judge") and state.first("t", "model")
    assert not state.first("s", "model") and not state.first("s", "judge")


def test_an_unknown_judge_name_fails_judged_samples_naming_it() -> None:
    state = WorkerState(options=RunOptions(model=ModelOptions(name="fake"), judge=JudgeOptions(name="no-such-judge")))
    loaded: Any = SimpleNamespace(config=SimpleNamespace(name="b2d"), samples=(), scorer=None)
    with pytest.raises(JudgeSetupError, match=r"^the judge could not be set up: UnknownNameError: .*'no-such-judge'"):
        state.judged_scorer(loaded)


def test_two_suite_files_with_one_name_are_refused_when_loaded(tmp_path: Path) -> None:
    from conftest import SUITE_TOML

    paths = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "suite.toml"
        path.write_text(SUITE_TOML.format(loader="synthetic", floor=0.0), encoding="utf-8")
        paths.append(path)
    state = _state()
    assert state.suite(paths[0]).config.name == "mini"
    assert state.suite(paths[0]).config.name == "mini"  # the same file again is fine
    with pytest.raises(SuiteLoadError, match="'mini' is already used by"):
        state.suite(paths[1])
