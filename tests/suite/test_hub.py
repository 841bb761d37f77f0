"""Datasets from the hub: without --uiground-data-path, ScreenSpot and MMBench-GUI come from the Hugging Face
cache through huggingface_hub (a local cache folder stands in for the hub; HF_HUB_OFFLINE keeps it off the
network), archives are extracted once, and a missing dataset names `hf download`."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from pytest_uiground.benchmarks.mmbench_gui import loader as mmbench_gui
from pytest_uiground.benchmarks.mmbench_gui.lookalike import write_mmbench_gui
from pytest_uiground.benchmarks.screenspot import loader as screenspot
from pytest_uiground.benchmarks.screenspot.lookalike import write_screenspot_pro, write_screenspot_v2
from pytest_uiground.suite import hub
from pytest_uiground.suite.loading import LoaderContext

REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "hf-home" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # HF_HUB_CACHE defaults to $HF_HOME/hub
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("LMUData", str(tmp_path / "no-lmudata"))
    import huggingface_hub.constants as constants

    # huggingface_hub reads these variables at import; point its constants at this test's cache too.
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache


def publish(cache: Path, repo_id: str, files: Path) -> Path:
    """Lay ``files`` out as the cached snapshot of dataset ``repo_id`` (what a download leaves behind)."""
    repo = cache / f"datasets--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(REVISION)
    snapshot = repo / "snapshots" / REVISION
    shutil.copytree(files, snapshot)
    return snapshot


def zip_folder(folder: Path, archive: Path) -> None:
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, path.relative_to(folder.parent))
    shutil.rmtree(folder)


def ctx() -> LoaderContext:
    return LoaderContext(suite_name="t", suite_dir=Path("."), data_path=None)


def test_screenspot_v2_from_the_hub_cache_with_its_zip(hub_cache: Path, tmp_path: Path) -> None:
    fx = write_screenspot_v2(tmp_path / "src", folder_name="")
    zip_folder(tmp_path / "src" / "screenspotv2_image", tmp_path / "src" / "screenspotv2_image.zip")
    snapshot = publish(hub_cache, screenspot.V2_HUB_ID, tmp_path / "src")
    samples = screenspot.load_v2({}, ctx())
    assert sorted(s.id for s in samples) == sorted(w.sample_id for w in fx.samples)
    assert all(s.invalid is None for s in samples)
    assert (snapshot / "screenspotv2_image").is_dir()  # extracted once, beside the annotation files
    samples[0].image.load()
    assert len(screenspot.load_v2({}, ctx())) == len(samples)  # the second time reuses the extraction


def test_screenspot_pro_from_the_hub_cache(hub_cache: Path, tmp_path: Path) -> None:
    fx = write_screenspot_pro(tmp_path / "src", folder_name="")
    publish(hub_cache, screenspot.PRO_HUB_ID, tmp_path / "src")
    assert sorted(s.id for s in screenspot.load_pro({}, ctx())) == sorted(w.sample_id for w in fx.samples)


def test_mmbench_gui_from_the_hub_cache(hub_cache: Path, tmp_path: Path) -> None:
    write_mmbench_gui(tmp_path / "src", l1_records=2, l2_records=1, platforms=("os_ios",))
    src = tmp_path / "src" / "MMBench-GUI"
    zip_folder(src / "offline_images", src / "MMBench-GUI-OfflineImages.zip")
    publish(hub_cache, mmbench_gui.HUB_ID, src)
    samples = mmbench_gui.load_l2({}, ctx())
    assert samples and all(s.invalid is None for s in samples)
    samples[0].image.load()


def test_offline_without_a_cached_copy_names_hf_download(hub_cache: Path) -> None:
    with pytest.raises(FileNotFoundError) as err:
        screenspot.load_v2({}, ctx())
    msg = str(err.value)
    assert "OS-Copilot/ScreenSpot-v2" in msg and "hf download OS-Copilot/ScreenSpot-v2 --repo-type dataset" in msg
    assert "huggingface-cli" not in msg
    with pytest.raises(FileNotFoundError, match="hf download likaixin/ScreenSpot-Pro"):
        screenspot.load_pro({}, ctx())
    with pytest.raises(FileNotFoundError, match="hf download OpenGVLab/MMBench-GUI"):
        mmbench_gui.load_l2({}, ctx())


def test_an_interrupted_extraction_is_redone(tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.txt").write_text("a")
    zip_folder(tmp_path / "imgs", tmp_path / "imgs.zip")
    (tmp_path / "imgs").mkdir()  # a half-written folder from an earlier run, without the marker
    hub.extract_once(tmp_path / "imgs.zip", tmp_path)
    assert (tmp_path / "imgs" / "a.txt").read_text() == "a"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".extract-")]
