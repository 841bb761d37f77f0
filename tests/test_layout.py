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


BENCHMARKS = "pytest_uiground.benchmarks"


def _benchmark(module: str) -> str | None:
    """The benchmark folder a module belongs to (``pytest_uiground.benchmarks.osworld_g``), or None for the core."""
    parts = module.split(".")
    return ".".join(parts[:3]) if module.startswith(BENCHMARKS + ".") and len(parts) > 2 else None


def test_the_core_knows_no_benchmark_and_benchmarks_never_tie() -> None:
    """No module outside ``benchmarks/`` imports a benchmark, and no benchmark imports another, counting
    imports by string (``importlib.import_module("...")``, a module name kept in a constant) like any import:
    a benchmark is reached through the registry's entry points only. No exception list."""
    tool = _graph_tool()
    graph = tool.build(ROOT)
    found = sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets
                   if _benchmark(t) is not None and _benchmark(m) != _benchmark(t))
    assert found == []


def test_string_imports_count_as_edges(tmp_path: Path) -> None:
    """The graph sees ``import_module("pytest_uiground.x")``, ``__import__`` and a module named in a constant."""
    tool = _graph_tool()
    pkg = tmp_path / "pytest_uiground"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    for path in (pkg / "__init__.py", pkg / "a" / "__init__.py", pkg / "b" / "__init__.py", pkg / "b" / "y.py",
                 pkg / "b" / "z.py", pkg / "b" / "w.py"):
        path.write_text("")
    (pkg / "a" / "x.py").write_text('import importlib\nTOOL = "pytest_uiground.b.z:main"\n'
                                   'def f():\n    return importlib.import_module("pytest_uiground.b.y")\n'
                                   'def g():\n    return __import__("pytest_uiground.b.w")\n')
    assert tool.build(tmp_path)["pytest_uiground.a.x"] == {"pytest_uiground.b.y", "pytest_uiground.b.z",
                                                            "pytest_uiground.b.w"}


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


MODELS = ROOT / "pytest_uiground" / "models"
MAX_MODELS_TOP_LEVEL_FILES = 6
TRANSPORTS = ("pytest_uiground.models.openai", "pytest_uiground.models.hf")


def test_few_files_at_the_models_top_level() -> None:
    """``models/`` holds the interface and what every adapter shares (issue 29); the adapters live
    in a folder per transport (``offline/``, ``hf/``, ``openai/``) and the contract in ``families/``."""
    top = sorted(p.name for p in MODELS.glob("*.py"))
    assert len(top) <= MAX_MODELS_TOP_LEVEL_FILES, top


def _transport(module: str) -> str | None:
    return next((t for t in TRANSPORTS if module == t or module.startswith(t + ".")), None)


def private_uses(path: Path, module: str, root: Path = ROOT) -> list[str]:
    """Leading-underscore names of ``models/openai`` or ``models/hf`` that ``path`` (the module
    ``module``) takes from outside them: ``from <transport>... import _x``, and ``alias._x`` where
    ``alias`` is a transport module bound by ``import`` or ``from ... import``."""
    own = _transport(module)
    found: list[tuple[int, str]] = []
    aliases: dict[str, str] = {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            where = _transport(node.module)
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                if _transport(target) not in (None, own) and not alias.name.startswith("_"):
                    aliases[alias.asname or alias.name] = target  # a transport module bound by name
                elif where is not None and where != own and alias.name.startswith("_"):
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _transport(alias.name) not in (None, own) and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in aliases):
            found.append((node.lineno, f"{aliases[node.value.id]}.{node.attr}"))
    return [f"{path.relative_to(root)}:{line}: {what}" for line, what in sorted(found)]


def test_no_module_outside_a_transport_takes_its_private_names() -> None:
    """The ``openai`` and ``hf`` transports are used through their public names only (the judges
    included): what starts with ``_`` may change with the transport. Tests are white-box and
    exempt; the package and ``perf/`` are held to it."""
    tool = _graph_tool()
    found = [use for name, path in tool.modules(ROOT).items() for use in private_uses(path, name)]
    for path in sorted((ROOT / "perf").glob("*.py")):
        found += private_uses(path, f"perf.{path.stem}")
    assert found == []


def test_the_private_name_check_sees_both_forms(tmp_path: Path) -> None:
    """The scan above finds an imported private name and a private attribute of a bound module."""
    source = tmp_path / "user.py"
    source.write_text("from pytest_uiground.models.openai.http import _x\n"
                      "from pytest_uiground.models.hf import molmo\n"
                      "import pytest_uiground.models.openai.wire as wire\n"
                      "from pytest_uiground.models.openai.http import ChatPoster\n"
                      "molmo._helper()\nwire._PNG\nmolmo.create_elam\n", encoding="utf-8")
    uses = private_uses(source, "pytest_uiground.judges.user", tmp_path)
    inside = private_uses(source, "pytest_uiground.models.hf.user", tmp_path)
    assert [u.split(": ", 1)[1] for u in uses] == [
        "from pytest_uiground.models.openai.http import _x",
        "pytest_uiground.models.hf.molmo._helper", "pytest_uiground.models.openai.wire._PNG"]
    assert [u.split(": ", 1)[1] for u in inside] == [
        "from pytest_uiground.models.openai.http import _x", "pytest_uiground.models.openai.wire._PNG"]


GATE = "pytest_uiground.gate"


def _within(graph: dict[str, set[str]], prefix: str) -> dict[str, set[str]]:
    """``graph`` cut down to the modules under ``prefix`` (the package itself included) and the edges between them."""
    inside = {m for m in graph if m == prefix or m.startswith(prefix + ".")}
    return {m: graph[m] & inside for m in inside}


def test_no_circle_in_the_gate_even_type_only() -> None:
    """The gate's modules depend one way (issue 42): no circle between them, counting the imports under
    ``if TYPE_CHECKING:`` (a type-only import still says which module knows the other) and imports by
    string. A type two modules share lives in the lower one or in ``gate/__init__.py`` (``EACH``,
    ``SIGNIFICANT``); a function that needs the higher one's type moves up (``checks.attach``)."""
    tool = _graph_tool()
    assert tool.cycles(_within(tool.build(ROOT, types=True), GATE)) == []


def test_no_circle_in_the_package_even_type_only() -> None:
    """No two modules of the package import each other, at run time (lazily or by string included) or
    only for types (``models.overrides`` took a model's name and parser, not ``base.ModelOptions``)."""
    tool = _graph_tool()
    assert tool.cycles(tool.build(ROOT)) == []
    assert tool.cycles(tool.build(ROOT, types=True)) == []


def test_the_circle_check_sees_type_only_and_string_imports(tmp_path: Path) -> None:
    """A circle closed by a type-only import is one with ``types=True`` and none without; a string naming a
    module closes one at run time; a circle of three is one group."""
    tool = _graph_tool()
    pkg = tmp_path / "pytest_uiground"
    (pkg / "g").mkdir(parents=True)
    for name in ("__init__.py", "g/__init__.py", "g/d.py"):
        (pkg / name).write_text("")
    (pkg / "g" / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                    "    from pytest_uiground.g.b import B\n")
    (pkg / "g" / "b.py").write_text("from pytest_uiground.g import a\nfrom pytest_uiground.g.c import C\n")
    (pkg / "g" / "c.py").write_text('PLUGIN = "pytest_uiground.g.b"\nclass C: ...\n')
    assert tool.cycles(tool.build(tmp_path)) == [["pytest_uiground.g.b", "pytest_uiground.g.c"]]
    assert tool.cycles(tool.build(tmp_path, types=True)) == [
        ["pytest_uiground.g.a", "pytest_uiground.g.b", "pytest_uiground.g.c"]]
    assert tool.cycles(_within(tool.build(tmp_path, types=True), "pytest_uiground.g.d")) == []


SHARD = "pytest_uiground.shard"
MANIFEST_FILE = "shard.json"
#: what the rest of the package may take from ``shard/``: the plan of the samples a run collects (every run
#: takes it, the shard's part of it under ``--uiground-shard``), the plugin that writes a shard's manifest
#: (the plugin registers it), and the ``merge`` command (``__main__``'s table names it). Reading a manifest
#: (``shard.shards.read_shard``, ``manifest.NAME``) is none of these.
SHARD_ENTRY_POINTS = {f"{SHARD}.plan": {"planned"}, f"{SHARD}.manifest": {"ShardManifest"}, f"{SHARD}.merge": {"main"}}


def shard_uses(path: Path, module: str) -> list[str]:
    """What ``path`` (the module ``module``, outside ``shard/``) takes from ``shard/`` beyond
    :data:`SHARD_ENTRY_POINTS` (a module named by string is run as a command: its ``main``), and every
    string of code (docstrings aside) naming the manifest's file."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith(SHARD + "."):
            found += [(node.lineno, f"from {node.module} import {a.name}") for a in node.names
                      if a.name not in SHARD_ENTRY_POINTS.get(node.module, set())]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if (a.name + ".").startswith(SHARD + ".")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            named, _, attr = node.value.partition(":")
            if (named + ".").startswith(SHARD + ".") and (attr or "main") not in SHARD_ENTRY_POINTS.get(named, set()):
                found.append((node.lineno, repr(node.value)))
            elif MANIFEST_FILE in node.value:
                found.append((node.lineno, repr(node.value)))
    return [f"{module}:{line}: {what}" for line, what in sorted(found)]


def test_sharding_lives_in_one_room() -> None:
    """``shard/`` is the one room for sharding (issue 42: it lived in ``run/shard.py`` and ``shard/``): no
    module outside it is named for shards, and none reads a shard's manifest: outside ``shard/`` only its
    entry points are taken (:data:`SHARD_ENTRY_POINTS`) and no code string names ``shard.json``."""
    tool = _graph_tool()
    outside = {m: p for m, p in tool.modules(ROOT).items() if not (m + ".").startswith(SHARD + ".")}
    assert sorted(m for m in outside if "shard" in m.removeprefix("pytest_uiground.")) == []
    assert [use for m, p in outside.items() for use in shard_uses(p, m)] == []


def test_the_shard_room_check_sees_a_manifest_read_outside(tmp_path: Path) -> None:
    """The scan above finds a shard reader imported, the manifest module imported whole, a module of
    ``shard/`` named by string, and the manifest's file name in code; the entry points and prose pass."""
    source = tmp_path / "user.py"
    source.write_text('"""Reads ``shard.json``? Not here: prose."""\n'
                      "from pytest_uiground.shard.plan import planned\n"
                      "from pytest_uiground.shard.manifest import ShardManifest, NAME\n"
                      "from pytest_uiground.shard.shards import read_shard\n"
                      "import pytest_uiground.shard.manifest\n"
                      'MERGE = "pytest_uiground.shard.merge"\nREPLAY = "pytest_uiground.shard.replay"\n'
                      'def f(d):\n    return (d / "shard.json").read_text()\n', encoding="utf-8")
    assert [u.split(": ", 1)[1] for u in shard_uses(source, "pytest_uiground.report.user")] == [
        "from pytest_uiground.shard.manifest import NAME",
        "from pytest_uiground.shard.shards import read_shard",
        "import pytest_uiground.shard.manifest",
        "'pytest_uiground.shard.replay'",
        "'shard.json'"]
