"""Name → implementation, through entry points; and the one import-by-string routine.

Built-in models, loaders, judges and scorers are declared once, as entry points in
``pyproject.toml``; other packages add theirs the same way (groups below). A name can
also be given directly as ``package.module:attribute``. Targets are imported only when
chosen, so loading the plugin stays light. Unknown names fail listing the known ones.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

MODEL_GROUP = "pytest_uiground.models"
LOADER_GROUP = "pytest_uiground.loaders"
JUDGE_GROUP = "pytest_uiground.judges"
SCORER_GROUP = "pytest_uiground.scorers"
OVERRIDES_GROUP = "pytest_uiground.models.overrides"
MODEL_OPTIONS_GROUP = "pytest_uiground.model_options"
IMPORTER_GROUP = "pytest_uiground.importers"  # import KIND: a benchmark's own export format (screens/importers.py)


class UnknownNameError(LookupError):
    """A name that no entry point declares, or a target that cannot be imported."""


@cache
def known(group: str) -> dict[str, str]:
    """Every name registered in ``group`` with its ``module:attr`` target."""
    return {ep.name: ep.value for ep in entry_points(group=group)}


def is_import_path(name: str) -> bool:
    """``package.module:attr`` names an object directly, without an entry point."""
    module, sep, attr = name.partition(":")
    return bool(sep and module and attr)


PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", ".git")
"""A folder holding one of these is a project's root: the search for a module of the user's stops there."""


def _project_module(module_name: str, near: Path) -> Path | None:
    """The folder from ``near`` up to the project's root that holds ``module_name``'s top package or module
    (``myloaders.py`` or ``myloaders/``), or None."""
    top = module_name.split(".", 1)[0]
    for folder in (near, *near.parents):
        if (folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file():
            return folder
        if any((folder / m).exists() for m in PROJECT_MARKERS):
            return None
    return None


def import_object(target: str, *, what: str, near: Path | None = None) -> Any:
    """The object at ``package.module:attr.path``; a clear error naming ``what`` otherwise.

    ``near`` (a suite's folder): a module of the user's project that is not importable yet (pytest puts
    only the test folders on ``sys.path``, so ``myloaders:load`` beside ``suites/`` was not found without
    ``pythonpath = ["."]``, issue 30) is looked for from there up to the project's root, and its folder
    added to ``sys.path``; when it is nowhere, the error says exactly what to add."""
    module_name, sep, attr = target.partition(":")
    if not (sep and module_name and attr):
        raise UnknownNameError(f"{what} {target!r} is not of the form package.module:attribute")
    if near is not None and importlib.util.find_spec(module_name.split(".", 1)[0]) is None:
        folder = _project_module(module_name, near)
        if folder is None:
            top = module_name.split(".", 1)[0]
            raise UnknownNameError(
                f"{what} {target!r} cannot be imported: no module {top!r} on sys.path, nor as {top}.py or "
                f"{top}/__init__.py in {near} or a folder above it up to the project's root; put it in the "
                "project's root, or add its folder to pytest's path in pyproject.toml: [tool.pytest.ini_options] "
                'pythonpath = ["FOLDER"] (relative to the rootdir)')
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UnknownNameError(f"{what} {target!r} cannot be imported: {exc}; is the module on PYTHONPATH?") from exc
    return obj


def resolve(group: str, name: str, *, what: str, option: str, near: Path | None = None) -> Any:
    """The object registered as ``name`` in ``group`` (or named by ``module:attr``, looked for ``near`` a
    suite's folder too: :func:`import_object`)."""
    if is_import_path(name):
        return import_object(name, what=what, near=near)
    targets = known(group)
    if name not in targets:
        listed = ", ".join(sorted(targets)) or "none (is pytest-uiground installed, e.g. pip install -e .?)"
        raise UnknownNameError(
            f"no {what} named {name!r}; known: {listed}. "
            f"Pick one with {option}, or register yours under the {group!r} entry-point group"
        )
    return import_object(targets[name], what=f"{what} {name!r} ->")
