"""What a collected sample test carries, read by the worker and the controller.

Kept apart from :mod:`pytest_uiground.run.collect` (which builds the items and calls the
worker) so that the worker can read items without importing collection: no cycle.
"""

from __future__ import annotations

import types
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


class SuiteModule(pytest.Module):
    """A ``suite.toml`` file as a pytest module built in memory (pytest cannot import a TOML file).

    Its object carries the suite file's path (``SUITE_ATTR``) and whatever test functions a
    subclass adds: the sample tests (:class:`pytest_uiground.run.collect.SuiteFile`) or, on the
    controller, nothing (the aggregate checks are created directly under it), so the controller
    side has a parent for its items without importing the prediction stack.
    """

    def tests(self) -> dict[str, object]:
        return {}

    def _getobj(self) -> types.ModuleType:
        mod = types.ModuleType(f"uiground_suite_{self.path.parent.name}")
        mod.__file__ = str(self.path)
        for name, fn in self.tests().items():
            setattr(mod, name, fn)
        setattr(mod, SUITE_ATTR, self.path)
        return mod
