"""Where a suite's project is, found from the suite's own path: the baselines sit beside ``suites/``.

Baselines used to be found under pytest's rootdir. pytest decides the rootdir before this plugin's
options are known, so ``pytest suites/synthetic --uiground-report /some/existing/dir`` (the
space-separated form, an existing folder) counted that folder as a test path, moved the rootdir to
a common ancestor, found no baseline there and passed two regressed samples (issue 38). The final
positional arguments (``config.args``) never include an option's value, so the project is found
from them: the folder holding ``suites/`` (``X/suites/name/suite.toml`` → ``X``), else the nearest
folder holding ``baselines/`` or a project file, else the rootdir. The same baseline is then read
whatever the current directory, the option form or the folders named in options. A baseline folder
that would lie outside the suite's git repository stops the run (:func:`outside_repository`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SUITES, BASELINES = "suites", "baselines"
PROJECT_FILES = ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", ".git")
"""A folder holding one of these is a project's root when no ``suites/`` folder says where it is."""


def _path_of(arg: str, invocation_dir: Path) -> Path:
    """A positional argument as a path: ``suites/x/suite.toml::test_sample[id]`` → the file, absolute."""
    head = arg.split("::", 1)[0]
    path = Path(head)
    return (path if path.is_absolute() else invocation_dir / path).resolve()


def project_of(path: Path) -> Path | None:
    """The project a test path belongs to, or None when nothing marks one (module docstring)."""
    start = path if path.is_dir() else path.parent
    chain = [start, *start.parents]
    for folder in chain:
        if folder.name == SUITES:
            return folder.parent
        if (folder / SUITES).is_dir():
            return folder
    for folder in chain:
        if (folder / BASELINES).is_dir() or any((folder / name).exists() for name in PROJECT_FILES):
            return folder
    return None


def baselines_root(args: Iterable[str], invocation_dir: Path, rootdir: Path) -> Path:
    """``<project>/baselines`` for the run's test paths; the rootdir's when they name no project.
    Paths of two projects in one run use the first's (each suite's name is its folder under it)."""
    for arg in args:
        found = project_of(_path_of(arg, invocation_dir))
        if found is not None:
            return found / BASELINES
    return rootdir / BASELINES


def git_root(path: Path) -> Path | None:
    """The work tree holding ``path`` (the nearest folder with a ``.git``), or None outside git."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def outside_repository(baselines: Path, args: Iterable[str], invocation_dir: Path) -> str | None:
    """Why the run must stop: its baselines would be read or written outside the git repository of
    its suites (a moved root, or ``--uiground-baselines`` naming a folder elsewhere); None when they
    are inside it, or the suites are in no repository."""
    for arg in args:
        repo = git_root(_path_of(arg, invocation_dir))
        if repo is not None and not baselines.resolve().is_relative_to(repo):
            return (f"the baselines folder {baselines} lies outside the repository {repo} of the suites being "
                    f"run ({arg}); a gate must read the baseline committed with its suites: pass "
                    f"--uiground-baselines={repo / BASELINES} (or a folder inside {repo})")
    return None
