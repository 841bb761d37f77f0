"""One sample decision (issue 42) and the sequential confirmation of ``--uiground-confirm`` (issue 40),
pytest_uiground.record.outcome: ``decide`` re-asks only a regression or a fix of a sample the baseline saw
stable, the rule stops at the first answer that disagrees with the flip or after K, its chance to call a
sample right with probability ``1 - q`` stably wrong is ``q ** (K + 1)`` (exactly, and by simulation), and
a flip it keeps is a regression with probability at most 1/2 for every rate once K >= R - 1."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest

from pytest_uiground.record.outcome import (
    Confirm,
    Outcome,
    classify,
    confirmation_counted,
    confirmation_done,
    decide,
    fix_depth,
)


def sequential(answers: Sequence[bool], k: int, stop_on: bool = True) -> list[bool]:
    """The re-asks the rule takes from a stream of answers."""
    rights: list[bool] = []
    stream = iter(answers)
    while not confirmation_done(rights, k, stop_on):
        rights.append(next(stream))
    return rights


@pytest.mark.parametrize("stop_on", [True, False])
def test_the_rule_stops_at_the_first_disagreeing_answer_or_after_k(stop_on: bool) -> None:
    for k in range(1, 5):
        for answers in itertools.product([False, True], repeat=k):
            took = sequential(answers, k, stop_on)
            first = answers.index(stop_on) + 1 if stop_on in answers else k
            assert took == list(answers[:first]), (k, answers)
            assert confirmation_counted(took, k, stop_on) == took, "what the rule took, it reads back"


def test_a_record_the_rule_cannot_have_written_counts_as_no_confirmation() -> None:
    assert confirmation_counted([False], 2) is None, "stopped early with no right answer"
    assert confirmation_counted([False, False, False], 2) is None, "more than K"
    assert confirmation_counted([], 2) is None
    assert confirmation_counted([True, True], 2) == [True], "read up to the first right answer"
    assert confirmation_counted([False, False], 2) == [False, False]
    assert confirmation_counted([True], 2, stop_on=False) is None, "a fix stopped early with no wrong answer"
    assert confirmation_counted([True, False, False], 3, stop_on=False) == [True, False]


def confirm_from(stream: Sequence[bool], calls: list[tuple[bool, int]]) -> Confirm:
    def confirm(stop_on: bool, k: int) -> list[bool]:
        calls.append((stop_on, k))
        return sequential(stream, k, stop_on)
    return confirm


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_a_noisy_sample_is_confirmed_wrong_with_probability_q_to_the_k_plus_1(k: int, q: float) -> None:
    """A regression (its first answer wrong, probability q) stays one only when its K re-asks are wrong too:
    exactly q^(K+1) by summing over every sequence of answers, and within 4 standard errors of it over 20,000
    simulated samples, each asking only what the rule asks (q(1 + q + ... + q^(K-1)) calls a sample)."""
    exact = 0.0
    for answers in itertools.product([False, True], repeat=k + 1):
        p = 1.0
        for right in answers:
            p *= (1 - q) if right else q
        got = decide(answers[0], True, confirm=confirm_from(answers[1:], []), k=k)
        exact += p * (got is Outcome.REGRESSION)
    assert exact == pytest.approx(q ** (k + 1), rel=1e-12)

    rng = random.Random(k * 100 + int(q * 10))
    n, hits, asked = 20_000, 0, 0
    for _ in range(n):
        def more(stop_on: bool, depth: int) -> list[bool]:
            nonlocal asked
            rights: list[bool] = []
            while not confirmation_done(rights, depth, stop_on):
                rights.append(rng.random() >= q)
                asked += 1
            return rights

        hits += decide(rng.random() >= q, True, confirm=more, k=k) is Outcome.REGRESSION
    se = (q ** (k + 1) * (1 - q ** (k + 1)) / n) ** 0.5
    assert abs(hits / n - q ** (k + 1)) <= 4 * se, (hits, n)
    expected_calls = n * q * sum(q ** i for i in range(k))  # re-asks only after a wrong first answer
    assert abs(asked - expected_calls) <= 0.05 * expected_calls + 50, (asked, expected_calls)


def flip_odds(p: float, big_r: int, k: int) -> tuple[float, float]:
    """Exactly, over every sequence of answers of a sample right with probability ``p`` on every call: the
    chance that the baseline's ``big_r`` answers agree and this run counts a regression, and a fix."""
    reg = fix = 0.0
    for base_right in (True, False):
        base = (p if base_right else 1 - p) ** big_r
        for answers in itertools.product([False, True], repeat=k + 1):
            w = 1.0
            for right in answers:
                w *= p if right else 1 - p
            got = decide(answers[0], base_right, baseline_answers=big_r, k=k,
                         confirm=confirm_from(answers[1:], []))
            kept = sequential(answers[1:], fix_depth(k, big_r), stop_on=False) if got is Outcome.FIXED else []
            reg += base * w * (got is Outcome.REGRESSION)
            fix += base * w * (got is Outcome.FIXED and all(kept))
    return reg, fix


@pytest.mark.parametrize("big_r", [1, 2, 3, 5])
def test_a_kept_flip_is_a_regression_at_most_half_the_time_once_k_reaches_r_minus_1(big_r: int) -> None:
    """The flip test's null (gate/flips.py): for every rate p, P(counted regression) <= P(counted fix) when
    K >= R - 1, equal at K = R - 1; a plain rerun (K = 0) of a 3-answer baseline leans towards regressions."""
    for p in (0.05, 0.2, 0.5, 0.8, 0.95, 0.99):
        for k in range(max(1, big_r - 1), big_r + 2):
            reg, fix = flip_odds(p, big_r, k)
            assert reg <= fix * (1 + 1e-9), (p, big_r, k, reg, fix)
            if k == big_r - 1:
                assert reg == pytest.approx(fix, rel=1e-9), (p, big_r, k)
    reg, fix = flip_odds(0.9, 3, 0)
    assert reg > 10 * fix, "unconfirmed, a sample right 90 % of the time leans towards regressions"


def test_decide_asks_only_for_a_flip_of_a_stable_sample() -> None:
    calls: list[tuple[bool, int]] = []
    cases = [  # (first, baseline right, baseline unstable, updating, error)
        (True, True, False, False, False), (True, None, False, False, False), (False, False, False, False, False),
        (False, None, False, False, False), (False, True, False, True, False), (False, True, False, False, True),
        (False, True, True, False, False), (True, False, True, False, False),
    ]
    for first, base, unstable, updating, error in cases:
        got = decide(first, base, baseline_unstable=unstable, baseline_answers=3, k=2, updating=updating,
                     error=error, confirm=confirm_from([True, True], calls))
        want = classify(first, base, updating=updating, error=error)
        assert got == (Outcome.UNSTABLE if unstable and want is Outcome.REGRESSION else want)
    assert calls == [], "nothing re-asked: no flip of a sample the baseline saw stable"
    confirm = confirm_from([False, True], calls)
    assert decide(False, True, k=2, confirm=confirm) is Outcome.UNSTABLE
    assert decide(False, True, k=1, confirm=confirm) is Outcome.REGRESSION
    assert decide(True, False, k=2, confirm=confirm) is Outcome.FIXED, "no repeats: a fix is not re-asked"
    assert decide(True, False, k=2, baseline_answers=3, confirm=confirm) is Outcome.FIXED
    assert decide(False, True, k=0, confirm=confirm) is Outcome.REGRESSION, "K = 0: the first answer decides"
    assert decide(True, False, k=2, baseline_answers=3, fixes=False, confirm=confirm) is Outcome.FIXED
    assert calls == [(True, 2), (True, 1), (False, 2)], "under 'each' (fixes=False) a fix is not re-asked"
    assert [fix_depth(k, r) for k, r in [(2, 1), (2, 3), (1, 3), (5, 3), (0, 3)]] == [0, 2, 1, 2, 0]
