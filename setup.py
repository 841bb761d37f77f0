"""Build step: ship the built-in suites inside the wheel, with ``suites/`` kept as their one source.

``pyproject.toml`` holds all the metadata; this file only extends ``build_py`` so that a
wheel (``pip install .``, ``pip wheel .``) carries ``suites/``, the committed offline
``baselines/``, the gate workflow and its model file under ``pytest_uiground/_builtin/``,
which ``python -m pytest_uiground init`` copies into a user's project. An editable install
reads them from the checkout instead (``pytest_uiground.suite.builtin``), so nothing is
copied into the source tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: checkout path -> path under pytest_uiground/_builtin/ (the same list as suite/builtin.py's SOURCES)
SHIPPED = {
    "suites": "suites",
    "baselines": "baselines",
    ".github/workflows/model-upgrade-gate.yml": "workflows/model-upgrade-gate.yml",
    "uiground-model.toml": "uiground-model.toml",
}


class BuildWithSuites(build_py):
    """``build_py`` plus the copy of the built-in suites into the build tree."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "pytest_uiground" / "_builtin"
        shutil.rmtree(target, ignore_errors=True)
        for source, dest in SHIPPED.items():
            src = ROOT / source
            if not src.exists():
                raise SystemExit(f"setup.py: {source} is missing from the source tree; the wheel needs it")
            out = target / dest
            out.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, out, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*.lock"))
            else:
                shutil.copy2(src, out)


setup(cmdclass={"build_py": BuildWithSuites})
