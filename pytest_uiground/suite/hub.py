"""Datasets from the Hugging Face Hub, for suites run without ``--uiground-data-path``.

:func:`dataset_dir` downloads a dataset repository with ``huggingface_hub.snapshot_download``
(``repo_type="dataset"``) into the Hugging Face cache, so ``HF_HOME``, ``HF_HUB_CACHE``,
``HF_HUB_OFFLINE`` and tokens are honoured by huggingface_hub itself; offline, a cached
snapshot is used and a missing one is an error naming the ``hf download`` command. Archives
the dataset ships (``screenspotv2_image.zip``, ``MMBench-GUI-OfflineImages.zip``) are extracted
once into the snapshot folder, as the datasets' own instructions do (``unzip X.zip -d DIR``),
through a temporary folder and a marker file, so an interrupted extraction is redone.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path


class HubError(FileNotFoundError):
    """The dataset could not be fetched (offline and not cached, no network, unknown repository)."""


def download_hint(repo_id: str, folder: str) -> str:
    return (f"`hf download {repo_id} --repo-type dataset --local-dir /data/{folder}` and pass "
            f"`--uiground-data-path /data/{folder}`, or run online once so that it lands in the Hugging Face cache")


def dataset_dir(repo_id: str, *, archives: Sequence[str] = (), allow_patterns: Sequence[str] | None = None) -> Path:
    """The local snapshot folder of dataset ``repo_id`` (downloaded into the HF cache if needed),
    with ``archives`` extracted into it."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # a core dependency; only a broken install gets here
        raise HubError(f"huggingface_hub is not installed ({exc}): pip install huggingface_hub") from None
    try:
        folder = Path(snapshot_download(repo_id, repo_type="dataset",
                                        allow_patterns=list(allow_patterns) if allow_patterns else None))
    except Exception as exc:  # offline without a cached copy, network and auth errors alike
        raise HubError(f"could not get {repo_id} from the Hugging Face Hub or its cache "
                       f"({type(exc).__name__}: {exc})") from None
    for name in archives:
        if (folder / name).is_file():
            extract_once(folder / name, folder)
    return folder


def extract_once(archive: Path, into: Path) -> None:
    """Extract ``archive`` (zip or tar) into ``into`` unless a previous extraction finished."""
    marker = into / f".{archive.name}.extracted"
    if marker.is_file():
        return
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=into))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(tmp, filter="data")
        for entry in tmp.iterdir():
            if entry.name == "__MACOSX":
                continue
            target = into / entry.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            entry.rename(target)
        marker.write_text("ok\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
