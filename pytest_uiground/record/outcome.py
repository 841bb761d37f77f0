"""Per-sample outcome against the baseline.

right → pass; wrong and wrong in the baseline → known failure (xfail); wrong but
right in the baseline → regression (FAIL); right but wrong in the baseline → pass,
reported as fixed. A regression that is noise by the run's own evidence (the sample was
unstable in the baseline's repeats, or right in the majority of its ``--uiground-confirm``
re-asks) is *unstable*: listed, counted among the flips, never failing alone (xfail).
Without a baseline, or while the baseline is being rewritten,
nothing fails per sample: wrong answers are reported as xfail.
"""

from __future__ import annotations

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
