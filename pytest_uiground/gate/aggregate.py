"""The aggregate checks as real pytest items, run on the controller after every sample test.

Each of a suite's checks (a metric against its floor and its stored snapshot) and its
latency check becomes a ``test_aggregate[...]`` item under the suite file, so it shows in the
summary, the JUnit XML and the exit status like any test. Building those items and their test
bodies is apart from the controller's hooks (:mod:`pytest_uiground.controller`), which only decide when.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pytest_uiground.gate.verdict import SIGNIFICANT
from pytest_uiground.suite.items import SuiteModule

if TYPE_CHECKING:  # types only: the items run checks they are handed
    from pytest_uiground.gate.checks import Check
    from pytest_uiground.gate.outcome import SuiteOutcome


CHECK: pytest.StashKey[Check] = pytest.StashKey()
"""The check an aggregate item runs, on the item: the JUnit writer reads it for the item's properties."""


def aggregate_items(session: pytest.Session, out: SuiteOutcome) -> list[pytest.Function]:
    """The suite's aggregate test items: one per check (in ``out.checks`` order), then latency."""
    module = SuiteModule.from_parent(session, path=out.path)
    items = []
    if out.missing:
        items.append(pytest.Function.from_parent(module, name="test_aggregate[baseline]",
                                                 callobj=_missing_check(out)))
    for c in out.checks:
        item = pytest.Function.from_parent(module, name=f"test_aggregate[{c.label}]", callobj=_metric_check(c, out))
        item.stash[CHECK] = c
        items.append(item)
    if out.latency is not None:
        items.append(pytest.Function.from_parent(module, name="test_aggregate[latency]", callobj=_latency_check(out)))
    if out.flips is not None and out.flips.rule == SIGNIFICANT and (out.flips.regressed or out.flips.fixed):
        items.append(pytest.Function.from_parent(module, name="test_aggregate[regressions]",
                                                 callobj=_flips_check(out)))
    return items


def _metric_check(check: Check, out: SuiteOutcome) -> Callable[[], None]:
    """The check's test: it fails exactly where the suite's verdict says (:mod:`.verdict`): the check is
    among the verdict's failed checks, or the baseline update that was asked for was not done. So the
    verdict line, every summary and the exit status cannot disagree."""
    def test_aggregate() -> None:
        verdict = out.verdict
        assert verdict is not None, "the controller concludes every suite before its checks run"
        if verdict.fate.blocks:
            pytest.fail(verdict.fate_text.removeprefix("baseline NOT updated: "), pytrace=False)
        if check.label in verdict.failed_checks:
            pytest.fail("\n".join(check.problems()) + "\n" + check.explain(), pytrace=False)

    return test_aggregate


def _missing_check(out: SuiteOutcome) -> Callable[[], None]:
    """No baseline: the suite gates nothing, and this item fails with the line that says how to record
    one (the verdict fails for the same reason: :func:`.verdict.decide`)."""
    def test_aggregate() -> None:
        if out.verdict is not None and out.verdict.missing:
            pytest.fail(out.verdict.missing, pytrace=False)

    return test_aggregate


def _flips_check(out: SuiteOutcome) -> Callable[[], None]:
    """``--uiground-regressions significant``: the regressed samples did not fail their own tests; this
    item fails when the verdict finds them significant (:mod:`.flips`)."""
    def test_aggregate() -> None:
        if out.flips is not None and out.flips.fails:
            pytest.fail(out.flips.reason() + "\nregressed: " + ", ".join(out.flips.regressed[:20])
                        + (f" and {len(out.flips.regressed) - 20} more" if len(out.flips.regressed) > 20 else ""),
                        pytrace=False)

    return test_aggregate


def _latency_check(out: SuiteOutcome) -> Callable[[], None]:
    def test_aggregate() -> None:
        if out.verdict is not None and out.verdict.latency_over and out.latency is not None:
            pytest.fail("\n".join(out.latency.problems()), pytrace=False)

    return test_aggregate
