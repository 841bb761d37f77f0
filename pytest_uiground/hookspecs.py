"""The plugin's own hooks: what another plugin can observe of a uiground run.

Registered in ``pytest_addhooks`` (as pytest-xdist registers its ``pytest_xdist_*`` hooks,
``xdist/newhooks.py``), they are called on the controlling process only (the xdist controller,
or the single process), in this order:

1. :func:`pytest_uiground_sample_result` for every sample's record, as it arrives;
2. :func:`pytest_uiground_provenance` once per suite, when its outcome is assembled;
3. :func:`pytest_uiground_suite_outcome` once per suite, when its verdict is decided (before the
   aggregate checks run as test items, and again, re-decided, if the run is interrupted);
4. :func:`pytest_uiground_run_outcome` once, at the end of the session, with every suite.

The built-in outputs are implementations of these hooks (:mod:`pytest_uiground.report.writers`:
``samples.jsonl``, ``summary.json``, ``report.html``, the Markdown summary, the JUnit suite
properties, the terminal section), and the coordinate probe stamps the provenance through
(2). A third-party plugin (a conftest.py, or an installed plugin) implements any of them by name,
e.g. to send each result to a dashboard::

    def pytest_uiground_sample_result(config, result):
        dashboard.log(result.suite, result.id, result.right)

Records are shared, not copied: an implementation must not change them, except where the hook
says so (:func:`pytest_uiground_provenance`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # types only: the hooks are declared, never run, here
    from pytest_uiground.gate.outcome import SuiteOutcome
    from pytest_uiground.record.result import SampleResult


def pytest_uiground_sample_result(config: pytest.Config, result: SampleResult) -> None:
    """A sample's record (:class:`~pytest_uiground.record.result.SampleResult`: its prediction, score,
    outcome against the baseline, error, latency), as the controller receives it. Called once per sample
    and run, in the order the records arrive (with ``-n N``, the order the workers finish them)."""


def pytest_uiground_provenance(config: pytest.Config, outcome: SuiteOutcome, provenance: dict[str, Any]) -> None:
    """What the run records about a suite (model, fingerprints, dataset, packages, date), once per suite,
    before the baseline is written and the summaries are built: both carry this one dict.
    Implementations may add keys to ``provenance`` and to ``outcome.model`` (the probe adds its verdict
    and stamps the model fingerprint with it)."""


def pytest_uiground_suite_outcome(config: pytest.Config, outcome: SuiteOutcome) -> None:
    """A suite's finished outcome (:class:`~pytest_uiground.gate.outcome.SuiteOutcome`) with its verdict
    (``outcome.verdict``: passed, reasons, failed checks, regressed and error counts, the baseline's fate).
    Called once the verdict is decided; again if the run is then interrupted (the verdict re-decided)."""


def pytest_uiground_run_outcome(config: pytest.Config, outcomes: Sequence[SuiteOutcome],
                                interrupted: bool) -> None:
    """Every suite's outcome at the end of the session (``interrupted``: the run stopped early and the
    outcomes hold what finished). Not called for a run that ran no sample."""
