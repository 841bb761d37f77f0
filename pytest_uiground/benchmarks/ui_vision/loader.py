"""UI-Vision element grounding, read from the Hub dataset's layout (``ServiceNow/ui-vision``).

Layout (``--uiground-data-path`` names the clone of the dataset, or a folder holding ``ui-vision``)::

    annotations/element_grounding/element_grounding_{basic,functional,spatial}.json
    images/<image_path>          (each record's image_path is relative to images/)

One point sample ``ui-vision-<setting>-<i>`` per record, ``i`` its 0-based index in that setting's
file (the records have no id). The target is the record's ``bbox`` ``[x1, y1, x2, y2]`` pixels, its
corners swapped when reversed and divided by the record's ``image_size`` (not the PNG's), exactly as
``uivision/UI-Vision eval/grounding/eval_uivision.py: eval_sample_positive_gt`` does; the box is not
clipped, so the hit test compares the same numbers as the reference.

``meta``: ``setting``, ``platform``, ``element_type``, ``category`` (when present), ``domain`` (the
``mapdict_cat2platform.json`` group of the platform, shipped beside this module; a platform not in
it has no domain) and ``cell`` = ``<setting>/<domain>``. Loader option ``settings``: the settings to
load (default all three). Without ``--uiground-data-path`` the dataset is fetched from the Hub into
the Hugging Face cache (annotations and element-grounding images only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite import hub
from pytest_uiground.suite.loading import (
    LayoutError,
    LoaderContext,
    RecordError,
    candidates,
    check_options,
    image_in,
    invalid_sample,
    known_meta,
    meta_field,
    numbers,
    read_records,
    text_field,
)

SETTINGS = ("basic", "functional", "spatial")
ANNOTATIONS = "annotations/element_grounding"
IMAGES = "images"
FOLDER = "ui-vision"
HUB_ID = "ServiceNow/ui-vision"
HUB_PATTERNS = (f"{ANNOTATIONS}/*", "images/element_grounding/*")
HOW_TO_GET = (f"run without --uiground-data-path to fetch {HUB_ID} into the Hugging Face cache, or "
              f"{hub.download_hint(HUB_ID, FOLDER)}")


def annotation(setting: str) -> str:
    return f"{ANNOTATIONS}/element_grounding_{setting}.json"


@cache
def domains() -> dict[str, str]:
    """Platform → domain, from the shipped ``mapdict_cat2platform.json`` (domain → platforms)."""
    table = json.loads((Path(__file__).parent / "mapdict_cat2platform.json").read_text(encoding="utf-8"))
    return {platform: domain for domain, platforms in table.items() for platform in platforms}


def locate(data_path: Path | None, setting: str) -> Path:
    """The dataset folder holding the setting's annotation file and ``images/``."""
    looked: list[str] = []
    folders = candidates(data_path, FOLDER)
    if data_path is None:
        try:
            folders.append(hub.dataset_dir(HUB_ID, allow_patterns=HUB_PATTERNS))
        except hub.HubError as exc:
            looked.append(str(exc))
    for folder in folders:
        if (folder / annotation(setting)).is_file():
            if not (folder / IMAGES).is_dir():
                raise LayoutError(f"UI-Vision: found {folder / annotation(setting)} but no {folder / IMAGES}/ "
                                  f"beside it (each record's image_path is relative to it). To get it: {HOW_TO_GET}")
            return folder
        looked.append(str(folder / annotation(setting)))
    raise LayoutError(f"UI-Vision {annotation(setting)} not found. Looked for: {'; '.join(looked)}. Expected "
                      f"layout: <root>/{{{ANNOTATIONS}/element_grounding_{{basic,functional,spatial}}.json, "
                      f"{IMAGES}/}}. To get it: {HOW_TO_GET}")


def box_of(record: Mapping[str, Any]) -> Box:
    """The reference's normalized box: corners ordered, divided by ``image_size``."""
    x1, y1, x2, y2 = numbers(record.get("bbox"), 4, "bbox")
    w, h = numbers(record.get("image_size"), 2, "image_size")
    if w <= 0 or h <= 0:
        raise RecordError("image_size", f"expected a positive [width, height], got {record.get('image_size')!r}")
    x1, x2 = sorted((x1, x2))
    y1, y2 = sorted((y1, y2))
    return Box(x1 / w, y1 / h, x2 / w, y2 / h)


def record_to_sample(folder: Path, setting: str, i: int, record: Any) -> Sample:
    sid = f"ui-vision-{setting}-{i}"
    where = f"element_grounding_{setting}.json record {i}"
    if not isinstance(record, dict):
        return invalid_sample(sid, ImageRef(key=sid), "point", {"setting": setting},
                              f"{where}: expected an object, got {type(record).__name__}")
    meta = {"setting": setting, **known_meta(record, ("platform", "element_type", "category"))}
    domain = domains().get(meta.get("platform", ""))
    if domain is not None:
        meta["domain"] = domain
        meta["cell"] = f"{setting}/{domain}"
    image = ImageRef(key=sid)
    try:
        image = image_in(folder / IMAGES, record.get("image_path"), "image_path")
        instruction = text_field(record, "prompt_to_evaluate")
        meta_field(record, "platform")
        meta_field(record, "element_type")
        box = box_of(record)
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where}: {exc}")
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=Target(box=box), meta=meta)


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Every element-grounding record of the chosen settings (all three by default)."""
    check_options(options, {"settings"})
    settings = options.get("settings", list(SETTINGS))
    if not isinstance(settings, list) or not settings or any(s not in SETTINGS for s in settings):
        raise ValueError(f"loader option settings: expected a list drawn from {list(SETTINGS)}, got {settings!r}")
    samples: list[Sample] = []
    for setting in dict.fromkeys(settings):
        folder = locate(ctx.data_path, setting)
        for i, record in enumerate(read_records(folder / annotation(setting))):
            samples.append(record_to_sample(folder, setting, i, record))
    return samples
