"""One start-up error per mistake: a model whose extra is missing, a mistyped replay parser.

Each fails once, before any sample runs, in a few lines that name the fix; a core install
is played by a ``sitecustomize`` in the pytest subprocess that makes torch, torchvision and
transformers unimportable.
"""

from __future__ import annotations

import importlib.util
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


# -- OmniParser's weights: one start-up line naming the fix, never a setup error per test -----------------

OMNI_REVISION = "f55d0750e5b94db2125ef0b45b0fa4a85ddc59b4"


def _omniparser_run(project: Project, *args: str, online: bool = False) -> tuple[pytest.RunResult, str]:
    """``--model omniparser`` with an empty user cache and Hugging Face cache of the project's own."""
    if importlib.util.find_spec("ultralytics") is None:  # not imported: it patches Pillow and loads torch
        pytest.skip(needs("omniparser"))  # (without it the missing extra is the one error, tested above)
    project.monkeypatch.delenv("UIGROUND_WEIGHTS_DIR", raising=False)
    project.monkeypatch.setenv("XDG_CACHE_HOME", str(project.root / "cache"))
    project.monkeypatch.setenv("HF_HUB_CACHE", str(project.root / "hf"))
    project.monkeypatch.setenv("HF_HUB_OFFLINE", "0" if online else "1")
    project.monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # were the hub asked, nothing would answer
    result = project.pytester.runpytest_subprocess("suites/mini", "--model", "omniparser", "-p", "no:cacheprovider",
                                                   *args)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    errors = [line for line in out.splitlines() if line.strip()]
    assert len(errors) < 10 and "Traceback" not in out and "test_sample" not in out, out
    return result, out


def test_omniparser_without_weights_is_one_line_naming_the_fetch_command(project: Project, xdist: list[str]) -> None:
    _, out = _omniparser_run(project, *xdist, online=True)  # online, the default detector is still not downloaded
    assert "ERROR: model 'omniparser': no OmniParser v2 detector in " in out
    assert "fetch it with python -m pytest_uiground weights omniparser" in out
    assert "summary.json" not in out


@pytest.mark.parametrize("where", ["fetched", "hub-cache"])
def test_omniparser_detector_with_another_sha256_is_refused_at_start_up(project: Project, where: str) -> None:
    folder = (project.root / "cache" / "pytest-uiground" / "omniparser-v2" if where == "fetched" else
              project.root / "hf" / "models--microsoft--OmniParser-v2.0" / "snapshots" / OMNI_REVISION)
    (folder / "icon_detect").mkdir(parents=True)
    (folder / "icon_detect" / "model.pt").write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # a zip, not the detector
    _, out = _omniparser_run(project)
    assert f"{folder / 'icon_detect' / 'model.pt'} is not the pinned OmniParser v2 detector (sha256 " in out
    assert "damaged or replaced); fetch it again with python -m pytest_uiground weights omniparser --force" in out


def test_omniparser_missing_local_detector_is_named_not_a_hub_download(project: Project) -> None:
    (project.root / "weights").mkdir()
    _, out = _omniparser_run(project, "--model-path", "weights/model.pt")
    assert "--model-path 'weights/model.pt': no such file or folder" in out
    assert "hub" not in out and "download" not in out.replace("pip download", "")


def test_omniparser_damaged_local_detector_is_one_error(project: Project) -> None:
    (project.root / "model.pt").write_bytes(b"\x00" * 4096)  # truncated to nothing useful
    _, out = _omniparser_run(project, "--model-path", "model.pt")
    assert "model.pt is not a PyTorch checkpoint (not a zip archive: truncated or damaged?)" in out
