"""Every family module is reachable and registered under its own name (issue 21: adding a family
is one module plus one registry line, so a module without its line, or a line naming another
module's family, must fail here rather than at a user's run)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from pytest_uiground import registry
from pytest_uiground.models import families
from pytest_uiground.models.families import FAMILY_GROUP, Family, parts

MODULES = sorted(p.stem for p in Path(families.__file__).parent.glob("*.py")
                 if p.stem not in ("__init__", "reading", "parts", "clawgui"))  # shared helpers and records, no family
FAMILY_MODULES = {
    "elam": "pytest_uiground.models.families.elam",
    "molmo": "pytest_uiground.models.families.molmo",
    "uitars": "pytest_uiground.models.families.uitars",
    "uground": "pytest_uiground.models.families.uground",
    "qwen-vl": "pytest_uiground.models.families.qwen_vl",
    "qwen3-vl": "pytest_uiground.models.families.qwen3_vl",
    "tinyclick": "pytest_uiground.models.families.tinyclick",
    "gui-owl": "pytest_uiground.models.families.gui_owl",
    "ui-venus": "pytest_uiground.models.families.ui_venus",
    "holo": "pytest_uiground.models.families.holo",
    "opencua": "pytest_uiground.models.families.opencua",
    "mai-ui": "pytest_uiground.models.families.mai_ui",
    "gta1": "pytest_uiground.models.families.gta1",
    "gelato": "pytest_uiground.models.families.gelato",
    "gelab-zero": "pytest_uiground.models.families.gelab_zero",
    "duvo-eye": "pytest_uiground.models.families.duvo_eye",
    "groundnext": "pytest_uiground.models.families.groundnext",
    "seed": "pytest_uiground.models.families.seed",
    "kimi": "pytest_uiground.models.families.kimi",
    "gemini": "pytest_uiground.models.families.gemini",
}


def test_every_family_module_has_its_registry_line() -> None:
    targets = registry.known(FAMILY_GROUP)
    registered = {t.partition(":")[0].rpartition(".")[2] for t in targets.values()}
    assert set(MODULES) == registered, "a family module without an entry point (or one pointing nowhere)"
    assert {name: t.partition(":")[0] for name, t in targets.items()} == FAMILY_MODULES


@pytest.mark.parametrize(("name", "module"), sorted(FAMILY_MODULES.items()))
def test_each_module_defines_the_family_it_is_registered_as(name: str, module: str) -> None:
    family = importlib.import_module(module).FAMILY
    assert isinstance(family, Family)
    assert family.name == name
    assert families.get(name) is family
    assert family.sources, f"{name}: a family cites where its prompt and reading come from"
    for task, prompt in family.prompts.items():
        assert "{instruction}" in prompt.user or task == "detect", f"{name}/{task}: the instruction has a place"


def test_the_parts_of_a_family_are_the_package_s_own() -> None:
    """``Prompt``, ``Resize``, ``Generation`` and ``smart_resize`` live in ``families.parts`` and are
    re-exported, so ``from pytest_uiground.models.families import Prompt`` keeps working."""
    for name in ("Prompt", "Resize", "Generation", "SHARED_PROMPTS", "FRAMES", "smart_resize",
                 "QWEN25_MIN_PIXELS", "QWEN25_MAX_PIXELS"):
        assert getattr(families, name) is getattr(parts, name), name
