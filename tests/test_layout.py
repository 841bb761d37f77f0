"""The package's shape, held by tests (issue 21): stage folders that depend one way, a short import
chain from the plugin, few files at the top, and every module imported by some test.

The graph is read from the source by ``perf/import_graph.py`` (standard library only; lazy imports
count, ``if TYPE_CHECKING:`` blocks do not, since they never run), the same script a person runs to
see the chain and the ties.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
MAX_DEPTH = 8  # modules in the longest runtime import chain from plugin.py, plugin.py included
MAX_TOP_LEVEL_FILES = 12


def _graph_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "perf" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_graph", module)
    spec.loader.exec_module(module)
    return module


def test_no_two_folders_import_each_other() -> None:
    tool = _graph_tool()
    ties = tool.folder_ties(tool.build(ROOT))
    assert ties == {}, "two-way ties (folder pair: the edges making it): " + repr(ties)


def test_the_import_chain_from_the_plugin_is_short() -> None:
    tool = _graph_tool()
    chain = tool.longest_chain(tool.build(ROOT), "pytest_uiground.plugin")
    assert len(chain) <= MAX_DEPTH, " -> ".join(chain)


def test_few_files_at_the_package_top_level() -> None:
    top = sorted(p.name for p in (ROOT / "pytest_uiground").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_FILES, top


def test_every_module_is_imported_by_some_test() -> None:
    """A module no test imports is a module whose behaviour nothing pins (a package counts as
    imported when one of its modules is; family modules are loaded through their registry lines,
    which ``tests/models/test_families_registry.py`` imports one by one)."""
    tool = _graph_tool()
    modules = set(tool.modules(ROOT))
    imported: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                     if isinstance(node, ast.ImportFrom) and node.module else [])
            for name in names:
                imported.add(name)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules:
                imported.add(node.value)  # importlib.import_module("pytest_uiground....")
    for name in list(imported):  # importing a module imports its packages
        parts = name.split(".")
        imported.update(".".join(parts[:i]) for i in range(1, len(parts)))
    missing = sorted(m for m in modules if m not in imported and not m.endswith("__main__"))
    assert missing == [], f"imported by no test: {missing}"
