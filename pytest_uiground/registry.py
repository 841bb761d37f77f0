"""Name → implementation registries for models and loaders, through entry points.

Other packages add theirs by declaring an entry point in the ``pytest_uiground.models``
or ``pytest_uiground.loaders`` group; targets are imported only when chosen, so the
plugin stays light. Unknown names fail listing the known ones.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Any

MODEL_GROUP = "pytest_uiground.models"
LOADER_GROUP = "pytest_uiground.loaders"
JUDGE_GROUP = "pytest_uiground.judges"

# The built-ins are also listed here so a source checkout without installed
# metadata still works; installed entry points of the same name take precedence.
_BUILTIN: dict[str, dict[str, str]] = {
    MODEL_GROUP: {
        "ocr": "pytest_uiground.models.ocr:create",
        "center": "pytest_uiground.models.center:create",
        "replay": "pytest_uiground.models.replay:create",
        "openai": "pytest_uiground.models.openai_client:create",
        "uground": "pytest_uiground.models.qwen:create_uground",
        "uitars": "pytest_uiground.models.qwen:create_uitars",
        "qwen-vl": "pytest_uiground.models.qwen:create_qwen_vl",
        "tinyclick": "pytest_uiground.models.florence:create_tinyclick",
        "elam": "pytest_uiground.models.molmo:create_elam",
        "molmo": "pytest_uiground.models.molmo:create_molmo",
    },
    LOADER_GROUP: {
        "synthetic": "pytest_uiground.loaders.synthetic:load",
        "automotive": "pytest_uiground.loaders.automotive:load",
        "mmbench_gui_l1": "pytest_uiground.loaders.mmbench_gui:load_l1",
        "mmbench_gui_l2": "pytest_uiground.loaders.mmbench_gui:load_l2",
        "screenspot_v2": "pytest_uiground.loaders.screenspot:load_v2",
        "screenspot_pro": "pytest_uiground.loaders.screenspot:load_pro",
        "openadapt": "pytest_uiground.loaders.openadapt:load",
        "recorded_sessions": "pytest_uiground.loaders.openadapt:load_recorded",
        "bench2drive_vl": "pytest_uiground.loaders.bench2drive:load",
    },
    JUDGE_GROUP: {
        "openai": "pytest_uiground.judge_openai:create",
        "hf": "pytest_uiground.judge_hf:create",
    },
}


class UnknownNameError(LookupError):
    pass


@cache
def known(group: str) -> dict[str, str]:
    """Every registered name in ``group`` with its ``module:attr`` target."""
    names = dict(_BUILTIN.get(group, {}))
    for ep in entry_points(group=group):
        names[ep.name] = ep.value
    return names


def is_import_path(name: str) -> bool:
    """``package.module:factory`` names a factory directly, without an entry point."""
    module, sep, attr = name.partition(":")
    return bool(sep and module and attr)


def resolve(group: str, name: str, *, what: str, option: str) -> Any:
    targets = known(group)
    if is_import_path(name):
        targets = {**targets, name: name}
    if name not in targets:
        raise UnknownNameError(
            f"no {what} named {name!r}; known: {', '.join(sorted(targets))}. "
            f"Pick one with {option}, or register yours under the {group!r} entry-point group"
        )
    module_name, _, attr = targets[name].partition(":")
    import importlib

    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise UnknownNameError(f"{what} {name!r} points at {targets[name]!r}, which cannot be imported: {exc}") from exc
    return obj
