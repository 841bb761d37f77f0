"""Extras are honest: code that needs one names it once; tests that need one skip naming it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_uiground import extras
from pytest_uiground.suite.builtin import tomllib

ROOT = Path(__file__).resolve().parents[1]
BLOCK_AUTOMOTIVE = '''
import sys


class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"pyarrow", "datasets"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Blocked())
'''


def test_require_names_the_extra_and_what_needed_it(monkeypatch: pytest.MonkeyPatch) -> None:
    extras.require("report", ("json",), "the plots")  # present: nothing happens
    with pytest.raises(extras.ExtraMissing, match=r'^the plots needs the \[report\] extra, and no_such_mod_q is not '
                                                  r'installed: pip install "pytest-uiground\[report\]"$'):
        extras.require("report", ("json", "no_such_mod_q"), "the plots")
    assert "CPU build of torch" not in (extras.missing("hf", ("no_such_mod_q",)) or "")
    monkeypatch.setattr(extras, "absent", lambda modules: list(modules))  # a core install: torch is absent
    assert "--index-url https://download.pytorch.org/whl/cpu" in (extras.missing("hf", ("torch",)) or "")


def test_every_extra_named_in_the_code_is_declared() -> None:
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    from pytest_uiground.benchmarks.automotive import lookalike
    from pytest_uiground.models.hf import florence, molmo, qwen
    from pytest_uiground.models.openai import client as openai_client

    named = {lookalike.EXTRA} | {m.EXTRA[0] for m in (florence, molmo, openai_client, qwen)}
    assert named <= declared, named - declared
    assert {"pyarrow", "datasets"} <= {r.split(">")[0] for r in
                                      tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
                                          "optional-dependencies"]["automotive"]}


def test_the_automotive_writer_without_its_extra_says_which_one(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(BLOCK_AUTOMOTIVE)
    done = subprocess.run([sys.executable, "-c", "from pytest_uiground.benchmarks.automotive.lookalike import "
                           "write_fixture; write_fixture('aui', rows=4)"], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("pytest_uiground.extras.ExtraMissing: write_fixture needs the [automotive] extra, and pyarrow, "
                    'datasets are not installed: pip install "pytest-uiground[automotive]"'), done.stderr
    assert not (tmp_path / "aui").exists()


def test_every_importorskip_in_the_tests_names_an_extra() -> None:
    """On a core install, each test that needs an extra skips saying which one."""
    unnamed = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "importorskip":
                reason = next((k.value for k in node.keywords if k.arg == "reason"), None)
                ok = (isinstance(reason, ast.Call) and getattr(reason.func, "id", "") == "needs") or (
                    isinstance(reason, ast.Constant) and "[" in str(reason.value))
                if not ok:
                    unnamed.append(f"{path.name}:{node.lineno}")
    assert unnamed == []
