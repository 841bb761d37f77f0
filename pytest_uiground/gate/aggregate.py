"""The aggregate checks as real pytest items, run on the controller after every sample test.

Each of a suite's checks (a metric against its floor and its stored snapshot) and its
latency check becomes a ``test_aggregate[...]`` item under the suite file, so it shows in the
summary, the JUnit XML and the exit status like any test. Building those items and their test
bodies is apart from the controller's hooks (:mod:`pytest_uiground.controller`), which only decide when.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_uiground.gate import baseline as baseline_mod
from pytest_uiground.gate.snapshot import extension_for
from pytest_uiground.options import RunOptions
from pytest_uiground.suite.items import SuiteModule

if TYPE_CHECKING:  # types only: the items run checks they are handed
    from pytest_uiground.gate.checks import Check, LatencyCheck
    from pytest_uiground.gate.rules import SuiteOutcome


def aggregate_items(session: pytest.Session, config: pytest.Config, options: RunOptions,
                    out: SuiteOutcome) -> list[pytest.Function]:
    """The suite's aggregate test items: one per check (in ``out.checks`` order), then latency."""
    loaded = out.loaded
    module = SuiteModule.from_parent(session, path=out.path)
    snapshot_dir = baseline_mod.suite_dir(options.baselines_dir, loaded.config.name)
    snapshots = snapshot_dir / baseline_mod.SNAPSHOT_DIR
    items = [
        pytest.Function.from_parent(
            module, name=f"test_aggregate[{c.label}]",
            # Each check's own tolerance (the suite's, or the metric's override) decides the snapshot match.
            callobj=_metric_check(c, extension_for(snapshots, c.tolerance, options.updating),
                                  options.updating,
                                  out.baseline is not None and out.incomparable is None, out.refusal),
        )
        for c in out.checks
    ]
    if out.latency is not None:
        items.append(pytest.Function.from_parent(
            module, name="test_aggregate[latency]",
            callobj=_latency_check(out.latency),
        ))
    return items


def _metric_check(check: Check, ext: type, updating: bool, has_baseline: bool,
                  refusal: str | None = None) -> Callable[..., None]:
    def test_aggregate(snapshot: Any) -> None:
        if updating and check.partial:
            pytest.fail(
                f"refusing to update the baseline of {check.suite!r} from a partial run (-k, --lf, "
                "--uiground-limit or deselection); rerun the whole suite with --snapshot-update",
                pytrace=False,
            )
        if updating and refusal:  # before the snapshot is touched: syrupy must not write it either
            pytest.fail(refusal, pytrace=False)
        problems = check.problems()
        # Without a baseline there is nothing to compare with; the snapshot is
        # written only on --snapshot-update, never as a side effect of a plain run.
        matched = snapshot.use_extension(ext) == check.snapshot_data() if has_baseline or updating else True
        if not matched and not updating and not problems:
            worse = "fell below" if check.higher_is_better else "rose above"
            problems.append(f"{check.label} {worse} its stored snapshot by more than the tolerance "
                            f"{check.tolerance:.2f}")
        if problems:
            pytest.fail("\n".join(problems) + "\n" + check.explain(), pytrace=False)

    return test_aggregate


def _latency_check(check: LatencyCheck) -> Callable[[], None]:
    def test_aggregate() -> None:
        problems = check.problems()
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

    return test_aggregate
