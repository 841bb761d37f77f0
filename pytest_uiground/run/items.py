"""What a collected sample test carries, read by the worker and the controller.

Kept apart from :mod:`pytest_uiground.run.collect` (which builds the items and calls the
worker) so that the worker can read items without importing collection: no cycle.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SUITE_FILE = "suite.toml"
SAMPLE_ARG = "uiground_sample"
SUITE_ATTR = "__uiground_suite__"  # the suite.toml path, set on the generated module


def suite_path_of(item: pytest.Item) -> Path | None:
    """The suite file an item was collected from, or None for items of other plugins."""
    module = item.getparent(pytest.Module)
    path = getattr(getattr(module, "obj", None), SUITE_ATTR, None) if module else None
    return path if isinstance(path, Path) else None
