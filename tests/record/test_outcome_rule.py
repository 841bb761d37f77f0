"""One sample decision (issue 42) and the sequential confirmation of ``--uiground-confirm`` (issue 40),
pytest_uiground.record.outcome: ``decide`` asks the confirmation only for a regression of a sample the
baseline saw stable, the rule stops at the first right re-ask or after K wrong ones, and its chance to call
a sample right with probability ``1 - q`` stably wrong is ``q ** (K + 1)`` (exactly, and by simulation)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import pytest

from pytest_uiground.record.outcome import Outcome, classify, confirmation_counted, confirmation_done, decide


def sequential(answers: list[bool], k: int) -> list[bool]:
    """The re-asks the rule takes from a stream of answers."""
    rights: list[bool] = []
    stream = iter(answers)
    while not confirmation_done(rights, k):
        rights.append(next(stream))
    return rights


def test_the_rule_stops_at_the_first_right_answer_or_after_k() -> None:
    for k in range(1, 5):
        for answers in itertools.product([False, True], repeat=k):
            took = sequential(list(answers), k)
            first = answers.index(True) + 1 if True in answers else k
            assert took == list(answers[:first]), (k, answers)
            assert confirmation_counted(took, k) == took, "what the rule took, it reads back"


def test_a_record_the_rule_cannot_have_written_counts_as_no_confirmation() -> None:
    assert confirmation_counted([False], 2) is None, "stopped early with no right answer"
    assert confirmation_counted([False, False, False], 2) is None, "more than K"
    assert confirmation_counted([], 2) is None
    assert confirmation_counted([True, True], 2) == [True], "read up to the first right answer"
    assert confirmation_counted([False, False], 2) == [False, False]


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_a_noisy_sample_is_confirmed_wrong_with_probability_q_to_the_k_plus_1(k: int, q: float) -> None:
    """A regression (its first answer wrong, probability q) stays one only when its K re-asks are wrong too:
    exactly q^(K+1) by summing over every sequence of answers, and within 4 standard errors of it over 20,000
    simulated samples, each asking only what the rule asks."""
    exact = 0.0
    for answers in itertools.product([False, True], repeat=k + 1):
        p = 1.0
        for right in answers:
            p *= (1 - q) if right else q

        def ask(rest: tuple[bool, ...] = answers[1:]) -> list[bool]:
            return sequential(list(rest), k)

        if decide(answers[0], True, confirm=ask) is Outcome.REGRESSION:
            exact += p
    assert exact == pytest.approx(q ** (k + 1), rel=1e-12)

    rng = random.Random(k * 100 + int(q * 10))
    n, hits, asked = 20_000, 0, 0
    for _ in range(n):
        def more() -> list[bool]:
            nonlocal asked
            rights: list[bool] = []
            while not confirmation_done(rights, k):
                rights.append(rng.random() >= q)
                asked += 1
            return rights

        hits += decide(rng.random() >= q, True, confirm=more) is Outcome.REGRESSION
    se = (q ** (k + 1) * (1 - q ** (k + 1)) / n) ** 0.5
    assert abs(hits / n - q ** (k + 1)) <= 4 * se + 1e-9, (hits, n)
    expected_calls = n * q * sum(q ** i for i in range(k))  # re-asks only after a wrong first answer
    assert abs(asked - expected_calls) <= 0.05 * expected_calls + 50, (asked, expected_calls)


def test_decide_asks_only_for_a_regression_of_a_stable_sample() -> None:
    asked: list[str] = []

    def ask(answers: list[bool]) -> Callable[[], list[bool]]:
        def run() -> list[bool]:
            asked.append("x")
            return answers
        return run

    cases = [  # (first, baseline right, baseline unstable, updating, error) -> outcome without any re-ask
        (True, True, False, False, False), (True, False, False, False, False), (True, None, False, False, False),
        (False, False, False, False, False), (False, None, False, False, False), (False, True, False, True, False),
        (False, True, False, False, True), (False, True, True, False, False),
    ]
    for first, base, unstable, updating, error in cases:
        got = decide(first, base, baseline_unstable=unstable, confirm=ask([True]),
                     updating=updating, error=error)
        want = classify(first, base, updating=updating, error=error)
        assert got == (Outcome.UNSTABLE if unstable and want is Outcome.REGRESSION else want)
    assert asked == [], "nothing re-asked: none was a regression of a stable sample"
    assert decide(False, True, confirm=ask([False, False])) is Outcome.REGRESSION
    assert decide(False, True, confirm=ask([False, True])) is Outcome.UNSTABLE
    assert decide(False, True) is Outcome.REGRESSION, "no confirmation: the first answer decides"
    assert asked == ["x", "x"]
