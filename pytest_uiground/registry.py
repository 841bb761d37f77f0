"""Name → implementation, through entry points; and the one import-by-string routine.

Built-in models, loaders, judges and scorers are declared once, as entry points in
``pyproject.toml``; other packages add theirs the same way (groups below). A name can
also be given directly as ``package.module:attribute``. Targets are imported only when
chosen, so loading the plugin stays light. Unknown names fail listing the known ones.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import entry_points
from typing import Any

MODEL_GROUP = "pytest_uiground.models"
LOADER_GROUP = "pytest_uiground.loaders"
JUDGE_GROUP = "pytest_uiground.judges"
SCORER_GROUP = "pytest_uiground.scorers"
OVERRIDES_GROUP = "pytest_uiground.models.overrides"
MODEL_OPTIONS_GROUP = "pytest_uiground.model_options"


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


def import_object(target: str, *, what: str) -> Any:
    """The object at ``package.module:attr.path``; a clear error naming ``what`` otherwise."""
    module_name, sep, attr = target.partition(":")
    if not (sep and module_name and attr):
        raise UnknownNameError(f"{what} {target!r} is not of the form package.module:attribute")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UnknownNameError(f"{what} {target!r} cannot be imported: {exc}; is the module on PYTHONPATH?") from exc
    return obj


def resolve(group: str, name: str, *, what: str, option: str) -> Any:
    """The object registered as ``name`` in ``group`` (or named by ``module:attr``)."""
    if is_import_path(name):
        return import_object(name, what=what)
    targets = known(group)
    if name not in targets:
        listed = ", ".join(sorted(targets)) or "none (is pytest-uiground installed, e.g. pip install -e .?)"
        raise UnknownNameError(
            f"no {what} named {name!r}; known: {listed}. "
            f"Pick one with {option}, or register yours under the {group!r} entry-point group"
        )
    return import_object(targets[name], what=f"{what} {name!r} ->")
