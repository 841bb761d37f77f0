"""pytest_uiground.scoring.scorer: a suite's scorer by registered name or module:attribute."""

from __future__ import annotations

import pytest

from pytest_uiground import registry
from pytest_uiground.record import score as score_mod
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.scoring import rules, scorer


def _rule(sample: Sample, prediction: Prediction) -> score_mod.Score:
    return score_mod.Score(100.0, True)


def test_the_default_name_is_the_built_in_task_rules() -> None:
    got = scorer.load(scorer.DEFAULT)
    assert got.name == "task" and got.rule is rules.score and got.judged is None
    assert not got.needs_judge
    sample = Sample("s", ImageRef.from_source("k", lambda: b""), "Click", "point", Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    assert got.rule(sample, Prediction(point=Point(0.5, 0.5))).correct is True
    assert got.rule(sample, Prediction(point=Point(0.1, 0.1))).correct is False


def test_load_is_cached_per_name() -> None:
    assert scorer.load("task") is scorer.load("task")


def test_a_registered_scorer_object_is_returned_as_is() -> None:
    from pytest_uiground.benchmarks.bench2drive_vl.scorer import SCORER

    got = scorer.load("bench2drive_vl")
    assert got is SCORER and isinstance(got, scorer.Scorer)


def test_a_plain_function_at_module_attribute_becomes_a_rule() -> None:
    name = f"{__name__}:_rule"
    got = scorer.load(name)
    assert got.name == name and got.rule is _rule and not got.needs_judge


def test_an_unknown_name_lists_the_known_ones_and_the_option() -> None:
    with pytest.raises(registry.UnknownNameError) as info:
        scorer.load("no-such-scorer")
    message = str(info.value)
    assert "no-such-scorer" in message and "task" in message and "bench2drive_vl" in message
    assert "[scorer] name in suite.toml" in message


def test_a_target_that_is_not_callable_is_refused_with_its_type() -> None:
    with pytest.raises(registry.UnknownNameError, match=r"is a str; expected a function"):
        scorer.load("pytest_uiground.scoring.scorer:DEFAULT")


def test_a_scorer_needs_exactly_one_of_rule_and_judged() -> None:
    def judged(sample: Sample, prediction: Prediction, judge: object, repeat: int) -> score_mod.Score:
        return score_mod.Score(0.0, False)

    with pytest.raises(ValueError, match="exactly one"):
        scorer.Scorer(name="none")
    with pytest.raises(ValueError, match="exactly one"):
        scorer.Scorer(name="both", rule=_rule, judged=judged)  # type: ignore[arg-type]
    assert scorer.Scorer(name="j", judged=judged).needs_judge  # type: ignore[arg-type]
