"""The built-in suites, wherever this install keeps them.

A wheel carries them under ``pytest_uiground/_builtin/`` (``setup.py`` copies them there
at build time from the checkout's ``suites/``, ``baselines/``, the gate workflow and its
model file, which stay their one source); an editable install or a plain checkout reads
them from the checkout itself. ``python -m pytest_uiground init`` copies from here.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: what a wheel ships, as (path in the checkout, path under pytest_uiground/_builtin/); setup.py's SHIPPED
SOURCES = {
    "suites": ("suites", "suites"),
    "baselines": ("baselines", "baselines"),
    "workflow": (".github/workflows/model-upgrade-gate.yml", "workflows/model-upgrade-gate.yml"),
    "model_file": ("uiground-model.toml", "uiground-model.toml"),
}
_PACKAGED = Path(__file__).resolve().parents[1] / "_builtin"
_CHECKOUT = Path(__file__).resolve().parents[2]


class BuiltinMissing(FileNotFoundError):
    """This install carries no built-in suites (a broken build, or a package copied by hand)."""


@dataclass(frozen=True)
class Builtin:
    """Where the built-in files are: the wheel's copy or the checkout."""

    base: Path
    packaged: bool

    def path(self, key: str) -> Path:
        checkout, packaged = SOURCES[key]
        return self.base / (packaged if self.packaged else checkout)


@dataclass(frozen=True)
class BuiltinSuite:
    """One folder under ``suites/``: one suite, or several (``screenspot/v2``, ``screenspot/pro``)."""

    folder: str
    path: Path
    description: str
    #: the [suite] names inside, each with its committed baseline folder or None (needs data first)
    suites: tuple[tuple[str, Path | None], ...]
    #: each suite's own description, where the folder holds several (``init --list`` shows them all)
    parts: tuple[tuple[str, str], ...] = ()

    @property
    def offline(self) -> bool:
        """Every suite inside has a committed baseline: it runs here without data or a download."""
        return all(b is not None for _, b in self.suites)


def locate() -> Builtin:
    """The wheel's ``_builtin/`` if present, else the checkout this module was imported from."""
    if (_PACKAGED / "suites").is_dir():
        return Builtin(_PACKAGED, packaged=True)
    if (_CHECKOUT / "suites").is_dir() and (_CHECKOUT / "pyproject.toml").is_file():
        return Builtin(_CHECKOUT, packaged=False)
    raise BuiltinMissing(
        f"the built-in suites are not in this install (looked in {_PACKAGED} and {_CHECKOUT / 'suites'}); "
        "reinstall from a clone with `pip install .`, which copies them into the package"
    )


def suites(where: Builtin | None = None) -> list[BuiltinSuite]:
    """Every built-in suite folder, sorted by name, with its description and baselines."""
    where = where or locate()
    baselines = where.path("baselines")
    out = []
    for folder in sorted(p for p in where.path("suites").iterdir() if p.is_dir()):
        found = []
        parts = []
        for toml in sorted(folder.rglob("suite.toml")):
            with toml.open("rb") as f:
                section = tomllib.load(f).get("suite", {})
            name = str(section.get("name", toml.parent.name))
            parts.append((toml.parent.relative_to(folder).as_posix(), str(section.get("description", ""))))
            committed = baselines / name
            found.append((name, committed if (committed / "samples.json").is_file() else None))
        if found:
            many = len(parts) > 1
            description = f"{len(parts)} suites: " + ", ".join(p for p, _ in parts) if many else parts[0][1]
            out.append(BuiltinSuite(folder.name, folder, description, tuple(found), tuple(parts) if many else ()))
    return out
