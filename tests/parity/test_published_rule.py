"""The truncation-aware comparison of a computed figure with a published one (tests/parity/published.py)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from .published import assert_published, candidates, percent, published_rule


@pytest.mark.parametrize(("correct", "total", "published", "rule"), [
    (344, 564, "60.9", "truncated"),    # MAI-UI-8B on OSWorld-G: 60.99 printed 60.9
    (316, 564, "56.02", "truncated"),   # GTA1-7B in Gelato's README: 56.028
    (379, 564, "67.19", "truncated"),   # Gelato-30B, refusals counted: 67.198
    (390, 564, "69.15", "rounded"),     # Gelato-30B with the refusal prompt: 69.148
    (421, 564, "74.65", "rounded"),     # refined, refusal prompt: 74.645
    (379, 510, "74.31", "rounded"),     # the log's own accuracy, refusals left out: 74.314
    (1, 8, "12.5", "rounded"),          # exact: both rules agree, reported as rounded
    (1, 3, "33", "rounded"),
])
def test_published_figures_rounded_or_truncated(correct: int, total: int, published: str, rule: str) -> None:
    assert published_rule(percent(correct, total), published) == rule
    assert assert_published(percent(correct, total), published) == rule


def test_a_figure_neither_rule_gives_fails_naming_both() -> None:
    assert published_rule(percent(344, 564), "61.1") is None
    with pytest.raises(AssertionError, match=r"accuracy: published 61\.1, computed 60\.992908 \(rounded 61\.0, "
                                             r"truncated 60\.9\)"):
        assert_published(percent(344, 564), "61.1", "accuracy")


def test_an_exact_half_is_decided_exactly_not_by_float_error() -> None:
    # 0.125 * 100 = 12.5 exactly: half up gives 13, half to even 12 (both are rounding), truncation 12.
    assert {k: str(v) for k, v in candidates(Fraction(25, 2), "12").items()} == {
        "rounded": "13", "rounded half to even": "12", "truncated": "12"}
    assert published_rule(Fraction(25, 2), "13") == "rounded"
    # 2.675 as a float is below 2.675; the exact fraction 107/40 rounds up to 2.68.
    assert published_rule(Fraction(107, 40), "2.68") == "rounded"
    assert published_rule(Fraction(107, 40), "2.67") == "truncated"
