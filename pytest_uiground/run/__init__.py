"""The worker side of a run: collection into sample tests, and predicting, scoring and recording one
sample inside its test (the prediction strategies, the look-ahead, the prediction cache).

``STATE`` is the stash key of the process's :class:`~pytest_uiground.run.state.WorkerState`; it lives
here, apart from the state's own module, so that the test bodies reach the state without importing
what it is built from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_uiground.run.state import WorkerState  # noqa: F401  (named in the string below)

STATE = pytest.StashKey["WorkerState"]()
