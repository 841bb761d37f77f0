"""Per-sample outcome against the baseline.

right → pass; wrong and wrong in the baseline → known failure (xfail); wrong but
right in the baseline → regression (FAIL); right but wrong in the baseline → pass,
reported as fixed. A regression that is noise by the run's own evidence (the sample was
unstable in the baseline's repeats, or right in any of its ``--uiground-confirm`` re-asks)
is *unstable*: listed, never failing alone (xfail).
Without a baseline, or while the baseline is being rewritten,
nothing fails per sample: wrong answers are reported as xfail.

:func:`decide` is the one place a sample's outcome is decided (issue 42): the worker calls it once,
with every answer it has, and a merge of shards calls it with the answers counted again.

**Sequential confirmation** (``--uiground-confirm K``, issue 40): a regressed sample is re-asked one
answer at a time, and asking stops at the first right answer (the sample is not stably wrong: it is
unstable) or after K wrong ones (a confirmed regression, K + 1 wrong answers in all). Why sequential:
a real regression costs K calls, a noise flip usually one or two. The error it bounds: a sample right
with probability ``1 - q`` on every call is confirmed wrong with probability ``q ** (K + 1)`` (K + 1
independent wrong answers), so a coin toss (q = 1/2) with K = 2 is called a regression 1 time in 8,
against 1 in 2 unconfirmed; a sample the candidate really broke (q = 1) is always confirmed.

The other side of the flip test is confirmed too, or removing only the regressions' noise would leave the
fixes' noise to outweigh a real drop (simulated: the 3 % drop of issue 40 caught 208 times in 300 that way,
237 unconfirmed, 294 with both sides): a fix of a sample the baseline answered ``R`` times alike
(``--uiground-repeat R`` on the baseline) is re-asked until a wrong answer or ``min(K, R - 1)`` right ones,
so that both kinds of flip are as many answers alike as the baseline's. The gate's level then holds for a
sample of any rate (:mod:`pytest_uiground.gate.flips` has the bound).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum


class Outcome(str, Enum):
    PASS = "pass"
    FIXED = "fixed"
    NEW = "new"  # right, and the sample is not in the baseline
    KNOWN_FAILURE = "known-failure"
    REGRESSION = "regression"
    UNSTABLE = "unstable"  # right in the baseline, wrong now, but noisy (see the module docstring)
    WRONG_NO_BASELINE = "wrong-no-baseline"
    WRONG_UPDATING = "wrong-updating"
    ERROR = "error"

    def __str__(self) -> str:
        """The word (``regression``), wherever an outcome is printed: the report's sample table showed
        ``Outcome.REGRESSION``, as ``str()`` of an enum gives its repr-like name."""
        return self.value

    @property
    def fails(self) -> bool:
        return self in (Outcome.REGRESSION, Outcome.ERROR)

    @property
    def xfails(self) -> bool:
        return self in (Outcome.KNOWN_FAILURE, Outcome.WRONG_NO_BASELINE, Outcome.WRONG_UPDATING, Outcome.UNSTABLE)


def classify(right: bool, baseline_right: bool | None, *, updating: bool = False, error: bool = False) -> Outcome:
    """Decide one sample's fate. ``baseline_right`` is None when the baseline lacks it.

    A broken sample (its image is missing, the model raised) always fails: it is
    not a property of the model's quality and must not hide behind a baseline.
    """
    if error:
        return Outcome.ERROR
    if right:
        if baseline_right is None:
            return Outcome.NEW
        return Outcome.PASS if baseline_right else Outcome.FIXED
    if updating:
        return Outcome.WRONG_UPDATING
    if baseline_right is None:
        return Outcome.WRONG_NO_BASELINE
    return Outcome.REGRESSION if baseline_right else Outcome.KNOWN_FAILURE


Confirm = Callable[[bool, int], Sequence[bool]]
"""Asks a sample again for its confirmation: ``confirm(stop_on, k)`` re-asks it one answer at a time until an
answer is ``stop_on`` (right: True) or ``k`` were asked, and returns each re-ask's rightness."""


def confirmation_done(rights: Sequence[bool], k: int, stop_on: bool = True) -> bool:
    """Whether a sequential confirmation (module docstring) stops after the re-asks ``rights`` (each right or
    wrong): at the first answer that is ``stop_on`` (a right one for a regression, a wrong one for a fix), or
    once ``k`` were asked."""
    return stop_on in rights or len(rights) >= k


def confirmation_counted(rights: Sequence[bool], k: int, stop_on: bool = True) -> list[bool] | None:
    """The re-asks a record holds, read by the sequential rule (a merge counts them again): the answers up to
    and including the first that is ``stop_on``; None when they cannot be the rule's (more than ``k``, or
    none ``stop_on`` and fewer than ``k``: the confirmation stopped early), so the sample counts as not
    confirmed."""
    for i, right in enumerate(rights[:k]):
        if right == stop_on:
            return list(rights[: i + 1])
    return list(rights) if len(rights) == k and k > 0 else None


def fix_depth(k: int, baseline_answers: int) -> int:
    """How many re-asks confirm a fix: ``min(k, R - 1)`` for a baseline of ``R`` agreeing answers, so a fix,
    like the baseline's answer it overturns, is ``R`` answers alike (module docstring: this keeps the flip
    test's level for every sample rate); 0 for a baseline without repeats."""
    return max(0, min(k, baseline_answers - 1))


def decide(first: bool, baseline_right: bool | None, *, baseline_unstable: bool = False,
           baseline_answers: int = 1, confirm: Confirm | None = None, k: int = 0, fixes: bool = True,
           updating: bool = False, error: bool = False) -> Outcome:
    """A sample's outcome from its answers and its baseline entry, the one rule (module docstring): its first
    answer ``first`` against the baseline (:func:`classify`); a regression is then *unstable* when the baseline
    saw the sample flip (``baseline_unstable``), else, under ``--uiground-confirm k``, when a re-ask is right.
    A fix of a sample the baseline answered ``baseline_answers`` times alike is re-asked up to
    :func:`fix_depth` times when fixes weigh in the verdict (``fixes``: the rule ``significant``; under
    ``each`` only regressions do); it stays *fixed* (it is right now), and the flip test leaves it out when a
    re-ask was wrong. ``confirm`` asks (:data:`Confirm`) and is called only here, only for those two: nothing else
    costs a call. Repeats (``--uiground-repeat``) never change the outcome: the gate weighs them
    (:func:`pytest_uiground.gate.flips.split_test`)."""
    outcome = classify(first, baseline_right, updating=updating, error=error)
    if outcome is Outcome.REGRESSION:
        if baseline_unstable or (confirm is not None and k > 0 and True in confirm(True, k)):
            return Outcome.UNSTABLE
    elif outcome is Outcome.FIXED and fixes and confirm is not None and not baseline_unstable:
        depth = fix_depth(k, baseline_answers)
        if depth > 0:
            confirm(False, depth)  # the outcome stays: the flip test reads the re-asks
    return outcome
