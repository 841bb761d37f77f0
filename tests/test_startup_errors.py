"""One start-up error per mistake: a model whose extra is missing, a mistyped replay parser.

Each fails once, before any sample runs, in a few lines that name the fix; a core install
is played by a ``sitecustomize`` in the pytest subprocess that makes torch, torchvision and
transformers unimportable.
"""

from __future__ import annotations

import json
import types

import pytest
from conftest import Project, needs

from pytest_uiground.options import missing_extra

BLOCKER = '''
import sys


class _CoreInstall:
    """Plays a core install: the [hf] extra's modules are not there."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"torch", "torchvision", "transformers"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _CoreInstall())
'''


def test_missing_extra_names_the_extra_and_the_absent_modules() -> None:
    present = types.SimpleNamespace(EXTRA=("report", ("json", "os")))
    absent = types.SimpleNamespace(EXTRA=("hf", ("json", "no_such_module_xyz", "torch_not_here_xyz")))
    assert missing_extra(present) is None
    assert missing_extra(types.SimpleNamespace()) is None  # a model with no extra (ocr, center, replay)
    message = missing_extra(absent)
    assert message is not None
    assert "no_such_module_xyz, torch_not_here_xyz are not installed" in message
    assert 'pip install "pytest-uiground[hf]"' in message and "json" not in message


@pytest.mark.slow
def test_model_whose_extra_is_missing_fails_once_before_any_test(project: Project, xdist: list[str]) -> None:
    project.pytester.makepyfile(sitecustomize=BLOCKER)  # the subprocess has the project folder on PYTHONPATH
    result = project.pytester.runpytest_subprocess("suites/mini", "--model", "uitars", "-p", "no:cacheprovider",
                                                   *xdist)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert len(out.splitlines()) < 40, out
    assert '--model uitars: needs the [hf] extra' in out
    assert 'pip install "pytest-uiground[hf]"' in out
    assert "test_sample" not in out and "ModuleNotFoundError" not in out


@pytest.mark.slow
def test_model_with_its_extra_installed_is_not_refused(project: Project) -> None:
    pytest.importorskip("transformers", reason=needs("hf"))
    pytest.importorskip("torchvision", reason=needs("hf"))
    result = project.pytester.runpytest_subprocess("suites/mini", "--model", "uitars", "--co", "-q",
                                                   "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert "needs the [hf] extra" not in result.stdout.str() + result.stderr.str()


@pytest.mark.slow
def test_mistyped_replay_parser_is_one_error_not_one_per_sample(project: Project, xdist: list[str]) -> None:
    records = [{"sample_id": i, "output": "(10, 10)"} for i in project.ids()]
    (project.root / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "replay", "--uiground-predictions", "outputs.jsonl",
        "--uiground-replay-parser", "ugrond", "-p", "no:cacheprovider", *xdist)
    out = result.stdout.str()
    assert result.ret != 0
    assert len(out.splitlines()) < 40, out
    assert "--uiground-replay-parser 'ugrond' is unknown" in out and "did you mean 'uground'?" in out
    assert "[models.ugrond]" in out
    assert "passed" not in out and " failed" not in out.replace("checks failed", "")


@pytest.mark.slow
def test_replay_parser_the_suite_declares_is_accepted(project: Project) -> None:
    toml = project.root / "suites" / "mini" / "suite.toml"
    toml.write_text(toml.read_text() + '\n[models.mine]\nparser = "uground"\n')
    records = [{"sample_id": i, "output": "(10, 10)"} for i in project.ids()]
    (project.root / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "replay", "--uiground-predictions", "outputs.jsonl",
        "--uiground-replay-parser", "mine", "--co", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert f"test_sample[{project.ids()[0]}]" in result.stdout.str()
