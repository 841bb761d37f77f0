"""``python -m pytest_uiground init [SUITE ...]``: start using the gate in your own project.

Copies the named built-in suites into ``./suites/<name>/`` with their committed baselines
(the suites that run offline have one), the gate workflow into
``.github/workflows/model-upgrade-gate.yml`` and the model file it watches
(``uiground-model.toml``, naming the copied suites). Nothing that exists is overwritten: a
suite or baseline folder already there stops the whole command before anything is copied;
an existing workflow or model file is kept (so a second ``init`` can add a suite), except that
the new suites are added to the model file's ``suites`` list: left out, the gate would never
run them (issue 34 item 5). Where that list cannot be rewritten safely (the file does not parse,
or the rewrite would change anything else), the exact line to write is printed instead.

Every destination is checked before anything is copied (issue 34 item 9): ``--dir`` naming a
file, a folder init cannot write into, or a file where init needs a folder (``.github/workflows``
as a file) each end in one error naming the path, the problem and the fix, never in a traceback
after half the project was written (which the rerun then refused: "nothing was copied").
``init --list`` lists the built-in suites, one line each.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_uiground.suite import builtin

DEFAULT = "synthetic"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pytest_uiground init",
        description="Copy built-in suites (with their committed baselines), the gate workflow and its model file "
                    "into a project; nothing that exists is overwritten.",
    )
    p.add_argument("suites", nargs="*", metavar="SUITE", help=f"built-in suite folders (default: {DEFAULT}); "
                   "see --list")
    p.add_argument("--list", action="store_true", help="list the built-in suites and exit")
    p.add_argument("--dir", type=Path, default=Path("."), help="the project to write into (default: .)")
    p.add_argument("--from", dest="source", type=Path, default=None, metavar="DIR",
                   help="a folder of your own screenshots (with or without annotations.jsonl): writes suites/NAME "
                        "as a grounding suite (one NAME)")
    return p


def _list(found: Sequence[builtin.BuiltinSuite]) -> str:
    width = max(len(s.folder) for s in found)
    lines = []
    for s in found:
        where = "offline, baseline committed" if s.offline else "needs data (--uiground-data-path or the hub)"
        lines.append(f"{s.folder:<{width}}  {where:<44}  {s.description}")
        lines += [f"  {s.folder}/{part}: {text}" for part, text in s.parts]  # screenspot is v2 and pro
    return "\n".join(lines)


def _model_file(text: str, suite_dirs: Sequence[str]) -> str:
    """The model file with its ``suites = [...]`` line naming the copied suites."""
    listed = ", ".join(f'"{d}"' for d in suite_dirs)
    return re.sub(r"(?m)^suites = \[.*\]$", lambda _: f"suites = [{listed}]", text, count=1)


def _add_suites(path: Path, suite_dirs: Sequence[str]) -> str:
    """Add ``suite_dirs`` to the ``suites`` list of an existing model file; what was done, for the user.

    The file is the user's (comments, other keys), so only the ``suites = [...]`` text is
    replaced, and the result must parse to the same document with the new suites appended;
    otherwise nothing is written and the message says exactly what to add.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        text = ""
    try:
        if not text:
            raise tomllib.TOMLDecodeError("empty, or not UTF-8 text")
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        before, why = {}, f"it does not parse as TOML ({exc})"
    else:
        why = "its suites = [...] is not a list of folder names"
    listed = before.get("suites")
    if isinstance(listed, list) and all(isinstance(d, str) for d in listed):
        new = [d for d in suite_dirs if d not in listed]
        if not new:
            return f"kept {path} (its suites already lists {', '.join(suite_dirs)})"
        wanted = [*listed, *new]
        line = "suites = [" + ", ".join(f'"{d}"' for d in wanted) + "]"
        rewritten = re.sub(r"(?ms)^suites\s*=\s*\[[^\]]*\]", lambda _: line, text, count=1)
        try:
            after = tomllib.loads(rewritten)
        except tomllib.TOMLDecodeError:
            after = {}
        if after == {**before, "suites": wanted}:
            path.write_text(rewritten, encoding="utf-8")
            return f"added {', '.join(new)} to the suites of {path}"
        why = "its suites = [...] could not be rewritten alone"
    else:
        wanted = list(suite_dirs)
    want = "suites = [" + ", ".join(f'"{d}"' for d in wanted) + "]"
    return (f"kept {path}, but {why}: write the line {want} in it (listing every suite folder the gate should "
            "run), or the gate will not run the new suites")


def _unwritable(project: Path, files: Sequence[Path], folders: Sequence[Path]) -> list[str]:
    """Why init cannot write what it means to (``files`` it writes, ``folders`` it copies), or ``[]``.

    For each destination, the nearest part of its path that exists must be a folder init may write
    into, and an existing destination must be a file it may write (the model file it updates).
    """
    if project.exists() and not project.is_dir():
        return [f"--dir {project} is a file, not a folder: pass the project's folder (a missing one is created)"]
    problems: dict[str, None] = {}
    for dest in [*files, *folders]:
        if dest.exists():
            if dest in files and dest.is_dir():
                problems[f"{dest} is a folder where init writes a file: move or rename it"] = None
            elif dest in files and not os.access(dest, os.W_OK):
                problems[f"{dest} is not writable: make it writable (chmod u+w {dest})"] = None
            continue
        part = dest.parent
        while not part.exists() and part != part.parent:
            part = part.parent
        if not part.is_dir():
            problems[f"{part} is a file where init needs a folder (for {dest}): move or rename it"] = None
        elif not os.access(part, os.W_OK | os.X_OK):
            problems[f"{part} is not writable (init writes {dest}): run init in a folder you may write to "
                     f"(--dir), or make it writable (chmod u+w {part})"] = None
    return list(problems)


def main(argv: Sequence[str] | None = None, from_dir: Callable[[str, Path, Path], int] | None = None) -> int:
    """``init [SUITE ...]``: copy built-in suites; ``init NAME --from DIR`` is ``from_dir`` (the own-screens
    scaffold, :func:`pytest_uiground.screens.scaffold.main`, which imports this module: handing it in keeps
    the import one way, issue 39)."""
    args = _parser().parse_args(argv)
    try:
        where = builtin.locate()
    except builtin.BuiltinMissing as exc:
        print(f"init: {exc}", file=sys.stderr)
        return 1
    found = {s.folder: s for s in builtin.suites(where)}
    if args.source is not None:
        if len(args.suites) != 1:
            print("init: --from DIR writes one suite: python -m pytest_uiground init NAME --from DIR",
                  file=sys.stderr)
            return 2
        if from_dir is None:  # the own-screens scaffold is handed in by python -m pytest_uiground (screens/)
            print("init: --from DIR is a command of python -m pytest_uiground: python -m pytest_uiground init NAME "
                  "--from DIR", file=sys.stderr)
            return 2
        return int(from_dir(args.suites[0], args.source, args.dir))
    if args.list:
        print(_list(list(found.values())))
        return 0
    names = list(dict.fromkeys(args.suites or [DEFAULT]))
    unknown = [n for n in names if n not in found]
    if unknown:
        print(f"init: no built-in suite named {', '.join(map(repr, unknown))}; known: {', '.join(found)} "
              "(python -m pytest_uiground init --list)", file=sys.stderr)
        return 2
    project: Path = args.dir
    copies: list[tuple[Path, Path]] = []
    suite_dirs: list[str] = []
    for name in names:
        s = found[name]
        copies.append((s.path, project / "suites" / name))
        suite_dirs += [f"suites/{t.parent.relative_to(where.path('suites')).as_posix()}"
                       for t in sorted(s.path.rglob("suite.toml"))]
        copies += [(b, project / "baselines" / suite) for suite, b in s.suites if b is not None]
    taken = [dest for _, dest in copies if dest.exists()]
    if taken:
        print("init: refusing to overwrite what exists (nothing was copied):\n"
              + "\n".join(f"  {p}" for p in taken)
              + "\nremove or rename it, or init other suites", file=sys.stderr)
        return 1
    extras = [(where.path("workflow"), project / ".github" / "workflows" / "model-upgrade-gate.yml", None),
              (where.path("model_file"), project / "uiground-model.toml", suite_dirs)]
    workflow, model_file = (dest for _, dest, _ in extras)
    ignore = project / ".gitignore"
    files = [model_file, ignore] + ([workflow] if not workflow.exists() else [])
    problems = _unwritable(project, files, [dest for _, dest in copies])
    if problems:
        print("init: cannot write the project (nothing was copied):\n" + "\n".join(f"  {p}" for p in problems),
              file=sys.stderr)
        return 1
    try:
        _write(copies, extras)
        print(_ignore_reports(ignore))
        print(pin_rootdir(project))
    except OSError as exc:  # checked above; what is left is the disk (full, gone) or a race
        print(f"init: could not write {exc.filename or project}: {exc.strerror or exc}; fix that and remove what "
              "init copied above, then rerun it", file=sys.stderr)
        return 1
    offline = [n for n in names if found[n].offline]
    print("next: " + (f"pytest {' '.join(f'suites/{n}' for n in offline)}" if offline else
                      "give the suites their data (see each suite's README.md), then pytest suites/<name>")
          + "; commit suites/, baselines/, uiground-model.toml, pytest.ini, .gitignore and .github/workflows/")
    return 0


PLACEHOLDER = "pytest-uiground[hf,openai] @ git+https://github.com/OWNER/pytest-uiground@COMMIT"
"""The workflow's install line where init cannot tell where the package came from: its install step
fails on ``OWNER``, saying what to put there."""


def installed_from() -> str | None:
    """The install line this package was installed from, per its PEP 610 ``direct_url.json``: a git URL and
    commit (``pip install git+...``); :data:`PLACEHOLDER` for a local folder or archive (a CI runner has
    neither); None when there is no such file (installed from an index: the pinned version works)."""
    import importlib.metadata
    import json

    try:
        text = importlib.metadata.distribution("pytest-uiground").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return PLACEHOLDER
    vcs = data.get("vcs_info") if isinstance(data, dict) else None
    url = data.get("url") if isinstance(data, dict) else None
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and isinstance(url, str) and vcs.get("commit_id") \
            and not url.startswith("file:"):
        return f"pytest-uiground[hf,openai] @ git+{url}@{vcs['commit_id']}"
    return PLACEHOLDER


def _install_line(workflow: str) -> str:
    """The workflow with its ``UIGROUND_PACKAGE`` line naming where this package came from (issue 30 item 7)."""
    line = installed_from()
    if line is None:
        return workflow
    return re.sub(r'(?m)^(  UIGROUND_PACKAGE: )".*"$', lambda m: f'{m.group(1)}"{line}"', workflow, count=1)


REPORT_DIR = "out/"
"""The report folder the README's commands and the gate workflow write (``--uiground-report out``)."""


def project_files(project: Path, suite_dirs: Sequence[str]) -> None:
    """Write the gate workflow, the model file (listing ``suite_dirs``) and ``.gitignore``'s ``out/`` for a
    suite written elsewhere (``init NAME --from DIR``); existing files are kept or extended as :func:`main`
    does, and each step is printed."""
    where = builtin.locate()
    _write([], [(where.path("workflow"), project / ".github" / "workflows" / "model-upgrade-gate.yml", None),
                (where.path("model_file"), project / "uiground-model.toml", suite_dirs)])
    print(_ignore_reports(project / ".gitignore"))
    print(pin_rootdir(project))


PYTEST_INI = """\
# Written by `python -m pytest_uiground init`: this file pins pytest's rootdir to this folder.
# Without a pytest configuration file pytest picks the rootdir from the command line's paths before
# it knows this plugin's options, so a value naming an existing folder (`--uiground-report /some/dir`,
# space-separated) moves it to a common ancestor. pytest-uiground finds each suite's baseline from the
# suite's own path (baselines/ beside suites/) either way; a pinned rootdir keeps test ids, the
# prediction cache (.pytest_cache) and conftest.py discovery in place too. Add your settings below.
[pytest]
"""


def pin_rootdir(project: Path) -> str:
    """A ``pytest.ini`` in the project unless a pytest configuration is there already (issue 38)."""
    def configures(name: str, section: str) -> bool:
        path = project / name
        try:
            return path.is_file() and section in path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False

    if (project / "pytest.ini").exists() or (project / ".pytest.ini").exists() \
            or configures("pyproject.toml", "[tool.pytest") or configures("tox.ini", "[pytest]") \
            or configures("setup.cfg", "[tool:pytest]"):
        return "kept the project's pytest configuration (it pins pytest's rootdir)"
    (project / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return f"wrote {project / 'pytest.ini'} (pins pytest's rootdir to the project; see its comment)"


def _ignore_reports(path: Path) -> str:
    """``out/`` in the project's ``.gitignore``: a report folder (screenshots and crops included) is an
    artifact of a run, uploaded by the workflow, never a file to commit beside the baselines."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if any(line.strip().strip("/") == REPORT_DIR.strip("/") for line in text.splitlines()):
        return f"kept {path} (it already ignores {REPORT_DIR})"
    head = "" if not text or text.endswith("\n") else "\n"
    path.write_text(text + head + f"# pytest-uiground reports (--uiground-report out)\n{REPORT_DIR}\n",
                    encoding="utf-8")
    return f"{'added' if text else 'wrote'} {REPORT_DIR} to {path}"


def _write(copies: Sequence[tuple[Path, Path]], extras: Sequence[tuple[Path, Path, Sequence[str] | None]]) -> None:
    for src, dest in copies:
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*.lock"))
        print(f"copied {dest}")
    for src, dest, dirs in extras:
        if dest.exists() and dirs is not None:
            print(_add_suites(dest, dirs))
            continue
        if dest.exists():
            print(f"kept {dest} (exists; compare it with {src})")
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        text = src.read_text(encoding="utf-8")
        dest.write_text(_model_file(text, dirs) if dirs is not None else _install_line(text), encoding="utf-8")
        print(f"wrote {dest}")
