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

from pytest_uiground.options import RunOptions
from pytest_uiground.suite.items import SuiteModule

if TYPE_CHECKING:  # types only: the items run checks they are handed
    from pytest_uiground.gate.checks import Check, LatencyCheck
    from pytest_uiground.gate.rules import SuiteOutcome


def aggregate_items(session: pytest.Session, config: pytest.Config, options: RunOptions,
                    out: SuiteOutcome) -> list[pytest.Function]:
    """The suite's aggregate test items: one per check (in ``out.checks`` order), then latency."""
    module = SuiteModule.from_parent(session, path=out.path)
    items = [
        pytest.Function.from_parent(module, name=f"test_aggregate[{c.label}]", callobj=_metric_check(c, out))
        for c in out.checks
    ]
    if out.latency is not None:
        items.append(pytest.Function.from_parent(
            module, name="test_aggregate[latency]",
            callobj=_latency_check(out.latency),
        ))
    return items


def _metric_check(check: Check, out: SuiteOutcome) -> Callable[[], None]:
    """The check's test: it fails exactly when the outcome record says so (the check's problems,
    the stored snapshot's comparison included, or the update's refusal or write failure), so the
    verdict line, the summaries and the exit status cannot disagree."""
    def test_aggregate() -> None:
        if out.updating and check.partial:
            pytest.fail(
                f"refusing to update the baseline of {check.suite!r} from a partial run (-k, --lf, "
                "--uiground-limit or deselection); rerun the whole suite with --snapshot-update",
                pytrace=False,
            )
        if out.updating and out.refusal:
            pytest.fail(out.refusal, pytrace=False)
        if out.updating and out.write_error:
            pytest.fail(f"baseline NOT written: {out.write_error}", pytrace=False)
        problems = check.problems()
        if problems:
            pytest.fail("\n".join(problems) + "\n" + check.explain(), pytrace=False)

    return test_aggregate


def _latency_check(check: LatencyCheck) -> Callable[[], None]:
    def test_aggregate() -> None:
        problems = check.problems()
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

    return test_aggregate
