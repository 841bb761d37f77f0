"""The package's import graph from its own source: depth from a module, back-edges between folders.

    python perf/import_graph.py [--from pytest_uiground.plugin] [--top-level-only] [--types]

Every ``import``/``from … import`` in the package is an edge, module-level and lazy (inside a
function) alike, unless ``--top-level-only``; ``if TYPE_CHECKING:`` blocks are skipped (they do
not run) unless ``--types``: a type-only import still says which module knows the other, so the
circles (:func:`cycles`) are looked for with them too. An import by string is an edge too (issue 39:
string imports hid a runtime cycle and ties the rules were meant to forbid): a string constant that
names one of the package's modules (``importlib.import_module("pytest_uiground.x")``, ``__import__``,
or a name kept in a constant or a table and imported later), with or without a ``:attr`` suffix.
Entry-point group names (``MODEL_GROUP = "pytest_uiground.models"``) name groups, not modules: a
constant assigned to a ``*_GROUP`` name is not an edge. Prints the longest import chain from the
start module (its depth counts modules, the start included), the pairs of folders that import each
other (two-way ties), the circles between modules, and module sizes.
Only the standard library is used, so anyone can run it on a checkout.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

PKG = "pytest_uiground"


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted((root / PKG).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _group_name(node: ast.AST) -> bool:
    """``X_GROUP = "..."``: an entry-point group's name (see the module docstring)."""
    return (isinstance(node, (ast.Assign, ast.AnnAssign))
            and any(isinstance(t, ast.Name) and t.id.endswith("_GROUP")
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])))


def imports(name: str, path: Path, known: set[str], top_level_only: bool, types: bool = False) -> set[str]:
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def resolve(target: str) -> None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    def visit(node: ast.AST, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if (_type_checking(child) and not types) or _group_name(child):
                continue
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                named = child.value.partition(":")[0]
                if named in known:  # a module named by string: imported by name somewhere (see above)
                    resolve(named)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    resolve(alias.name)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")
                    up = up[: len(up) - (child.level - 1)]
                    base = ".".join([*up, base] if base else up)
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    resolve(full if full in known else base)
            is_scope = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if not (top_level_only and is_scope):
                visit(child, depth + (1 if is_scope else 0))

    visit(tree, 0)
    return {t for t in found if t.startswith(PKG)}


def folder(name: str) -> str:
    """A stage folder (``pytest_uiground.gate``), or a top-level module standing for itself."""
    return ".".join(name.split(".")[:2])


def build(root: Path, top_level_only: bool = False, types: bool = False) -> dict[str, set[str]]:
    """Module → the package modules it imports (``types``: its ``if TYPE_CHECKING:`` imports too)."""
    mods = modules(root)
    known = set(mods)
    return {m: imports(m, p, known, top_level_only, types) for m, p in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``graph``: each group of modules that reach one another (a strongly connected
    component of more than one module), sorted. Tarjan's algorithm, iterative (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            step = next(targets, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def longest_chain(graph: dict[str, set[str]], start: str) -> tuple[str, ...]:
    """The longest import chain from ``start`` (modules, the start included)."""
    @cache
    def longest(m: str, seen: frozenset[str] = frozenset()) -> tuple[str, ...]:
        best: tuple[str, ...] = ()
        for n in sorted(graph[m]):
            if n in seen:
                continue
            chain = longest(n, seen | {m})
            if len(chain) > len(best):
                best = chain
        return (m, *best)

    return longest(start)


def folder_ties(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """Pairs of folders (or top-level modules) that import each other, with the edges that do it."""
    ties: dict[tuple[str, str], list[str]] = defaultdict(list)
    for m, targets in graph.items():
        for t in targets:
            a, b = folder(m), folder(t)
            if a != b:
                ties[(a, b)].append(f"{m} -> {t}")
    return {(a, b): ties[(a, b)] + ties[(b, a)] for a, b in sorted({tuple(sorted(k)) for k in ties
                                                                      if (k[1], k[0]) in ties})}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="start", default=f"{PKG}.plugin")
    ap.add_argument("--top-level-only", action="store_true")
    ap.add_argument("--types", action="store_true", help="count the imports under if TYPE_CHECKING: too")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    args = ap.parse_args(argv)
    mods = modules(Path(args.root))
    graph = build(Path(args.root), args.top_level_only, args.types)
    sys.setrecursionlimit(10000)
    chain = longest_chain(graph, args.start)
    print(f"import depth from {args.start}: {len(chain)}")
    print("  " + " -> ".join(c.removeprefix(PKG + ".") for c in chain))
    two_way = folder_ties(graph)
    print(f"two-way ties between folders: {len(two_way)}")
    for (a, b), edges in two_way.items():
        print(f"  {a} <-> {b}")
        for edge in edges:
            print(f"      {edge}")
    circles = cycles(graph)
    print(f"circles between modules{' (type-only imports counted)' if args.types else ''}: {len(circles)}")
    for group in circles:
        print("  " + " <-> ".join(m.removeprefix(PKG + ".") for m in group))
    sizes = sorted(((len(p.read_text().splitlines()), m) for m, p in mods.items()), reverse=True)
    funcs = sorted(n.end_lineno - n.lineno + 1 for p in mods.values() for n in ast.walk(ast.parse(p.read_text()))
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno is not None)
    lines = sorted(n for n, _ in sizes)
    print(f"module lines: median {lines[len(lines) // 2]}, max {lines[-1]}; functions: {len(funcs)}, "
          f"median {funcs[len(funcs) // 2]} lines, p90 {funcs[int(len(funcs) * 0.9)]}, max {funcs[-1]}")
    top = sorted(p.name for p in (Path(args.root) / PKG).glob("*.py"))
    print(f"modules: {len(mods)}; files at the package top level: {len(top)} ({' '.join(top)}); "
          f"over 400 lines: {', '.join(f'{m} ({n})' for n, m in sizes if n > 400) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
