"""ScreenSpot-v2 (``OS-Copilot/ScreenSpot-v2``) and ScreenSpot-Pro (``likaixin/ScreenSpot-Pro``).

Both are point-grounding sets whose boxes are in *pixels*; the project's one convention is
a normalized box, so each loader normalizes at load time:

* **v2** (loader ``screenspot_v2``): ``screenspot_{mobile,desktop,web}_v2.json``, records
  ``{img_filename, instruction, bbox [x, y, w, h], data_type text|icon, data_source}``.
  The records carry no image size, so the size is read from the image *header*
  (``PIL.Image.open(path).size`` decodes no pixels), once per image file. Images live in
  ``screenspotv2_image/`` (the name of the hub's zip) or ``images/``; both are accepted.
  Sample ``ssv2-{split}-{i}`` is record ``i`` of that split's file.
* **Pro** (loader ``screenspot_pro``): ``annotations/{app}_{platform}.json``, records
  ``{img_filename, bbox [x1, y1, x2, y2], instruction, instruction_cn, id, application,
  platform, img_size [w, h], ui_type, group}``; images in ``images/``. The box is
  normalized with the record's ``img_size``, as the reference scorer does, so no image is
  opened at collection. Sample ``sspro-{id}`` (the id made safe for pytest). A record with
  ``"gt_type": "negative"`` (a negative instruction: the element is absent) is scored as
  ``eval_screenspot_pro.py --gt_type negative`` scores it (``eval_sample_negative_gt``: right iff the
  answer is a refusal, a point is wrong, nothing readable is ``wrong_format``); its ``bbox`` is not
  read. Every Pro sample carries ``gt_type`` and ``expects`` (``element``/``refusal``) in its meta,
  so the suite counts negatives separately (metric ``negative_accuracy``).

Boxes are kept as the references compute them, NOT clipped to the image: neither
reference clips the predicted point either (the suites' reference parsers,
:mod:`pytest_uiground.benchmarks.screenspot.parsers`), so a point just beyond the image edge
hits a box that overhangs the screenshot there, exactly as in the reference. A box with
negative size or wholly outside the image is refused. A record the reference would crash
on (no bbox, a box outside the image, no instruction, a missing image) becomes an
``invalid`` sample naming the file, the record and the field; the other records run.

Slice keys (``meta``), for every figure the references print:

* v2: ``split``, ``data_type``, ``data_source`` and ``cell`` = ``{split}/{text|icon}``; the
  SeeClick script counts every ``data_type`` other than exactly ``text`` as icon.
* Pro: ``group`` (``none`` on a record without one, as the reference's ``None``), ``application``,
  ``platform``, ``ui_type``, ``cell`` = ``{group}/{ui_type}``
  (text/icon accuracy per group), ``application_type`` = ``{application}/{ui_type}`` (per
  application, the reference's ``leaderboard_detailed_style``), ``platform_type`` =
  ``{platform}/{ui_type}`` (``seeclick_style``), ``platform_application`` =
  ``{platform}/{application}`` and ``platform_application_type`` (``fine_grained``).

``--uiground-data-path DIR`` is the dataset folder itself or a data root holding ``ScreenSpot-v2/``
or ``ScreenSpot-Pro/`` (one ``--uiground-data-path`` for several suites). Without it the dataset
is fetched from the hub into the Hugging Face cache (:mod:`pytest_uiground.suite.hub`). A missing layout raises
an error naming every place looked and what was expected there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite import hub
from pytest_uiground.suite.config import EXPECTS
from pytest_uiground.suite.loading import (
    LayoutError,
    LoaderContext,
    RecordError,
    candidates,
    check_options,
    clipped_box,
    header_size,
    inside,
    invalid_sample,
    known_meta,
    meta_field,
    numbers,
    optional_meta,
    read_records,
    safe_id,
    text_field,
)

V2_FOLDER = "ScreenSpot-v2"
V2_SPLITS = ("mobile", "desktop", "web")
V2_IMAGE_DIRS = ("screenspotv2_image", "images")
V2_HUB_ID = "OS-Copilot/ScreenSpot-v2"
V2_HOW_TO_GET = (
    f"run without --uiground-data-path to fetch {V2_HUB_ID} into the Hugging Face cache, or download it with "
    f"`hf download {V2_HUB_ID} --repo-type dataset --local-dir /data/{V2_FOLDER}`, unzip screenspotv2_image.zip "
    f"there, and pass `--uiground-data-path /data/{V2_FOLDER}` (or a folder that contains {V2_FOLDER}/)"
)
PRO_FOLDER = "ScreenSpot-Pro"
PRO_HUB_ID = "likaixin/ScreenSpot-Pro"
PRO_LANGUAGES = {"en": "instruction", "cn": "instruction_cn"}
PRO_META = ("group", "application", "ui_type", "platform")
#: eval_screenspot_pro.py reads ``"group": sample["group"] if "group" in sample else None`` and the others
#: as ``sample[k]``: a record without ``group`` scores, in the ``group=none`` slice; the others are required.
PRO_OPTIONAL = ("group",)
#: eval_screenspot_pro.py GT_TYPES; a record's own ``gt_type`` (absent: positive) says which rule scores it.
PRO_GT_TYPES = ("positive", "negative")
#: Combined slice keys (meta key -> the keys joined with "/"), one per table the reference prints.
PRO_SLICES = {
    "cell": ("group", "ui_type"),
    "application_type": ("application", "ui_type"),
    "platform_type": ("platform", "ui_type"),
    "platform_application": ("platform", "application"),
    "platform_application_type": ("platform", "application", "ui_type"),
}
PRO_HOW_TO_GET = (
    f"run without --uiground-data-path to fetch {PRO_HUB_ID} into the Hugging Face cache, or download it with "
    f"`hf download {PRO_HUB_ID} --repo-type dataset --local-dir /data/{PRO_FOLDER}` and pass "
    f"`--uiground-data-path /data/{PRO_FOLDER}` (or a folder that contains {PRO_FOLDER}/)"
)

def unclipped_box(x0: float, y0: float, x1: float, y1: float, field: str) -> Box:
    """The normalized box as the reference computes it (no clipping), refusing a box of
    negative size or one wholly outside the image (:func:`clipped_box`'s checks)."""
    clipped_box(x0, y0, x1, y1, field)
    return Box(x0, y0, x1, y1)


# -- ScreenSpot-v2 ----------------------------------------------------------------------------------
def _v2_file(split: str) -> str:
    return f"screenspot_{split}_v2.json"


def locate_v2(data_path: Path | None, splits: Sequence[str]) -> tuple[Path, Path]:
    """The folder holding the split files and the image folder, or a :class:`LayoutError`."""
    looked: list[str] = []
    if data_path is None:  # the hub, through the Hugging Face cache
        try:
            data_path = hub.dataset_dir(V2_HUB_ID, archives=("screenspotv2_image.zip",))
        except hub.HubError as exc:
            raise LayoutError(f"ScreenSpot-v2: no --uiground-data-path, and {exc}. "
                              f"To get it: {V2_HOW_TO_GET}") from None
    for folder in candidates(data_path, V2_FOLDER):
        present = [s for s in V2_SPLITS if (folder / _v2_file(s)).is_file()]
        if not present:
            looked.append(f"{folder} (no {', '.join(_v2_file(s) for s in splits)})")
            continue
        missing = [s for s in splits if s not in present]
        if missing:
            raise LayoutError(
                f"ScreenSpot-v2 at {folder} is incomplete: expected "
                + ", ".join(str(folder / _v2_file(s)) for s in missing)
                + f" (found {', '.join(_v2_file(s) for s in present)}). Re-download it, or set "
                "[loader.options] splits to the splits you have"
            )
        for name in V2_IMAGE_DIRS:
            if (folder / name).is_dir():
                return folder, folder / name
        raise LayoutError(
            f"ScreenSpot-v2 at {folder} has the annotation files but no image folder: expected "
            f"{folder / V2_IMAGE_DIRS[0]}/ (the unzipped screenspotv2_image.zip) or {folder / V2_IMAGE_DIRS[1]}/"
        )
    raise LayoutError(
        "dataset ScreenSpot-v2 not found. Looked in: " + "; ".join(looked) + f". To get it: {V2_HOW_TO_GET}"
    )




def _image(images: Path, name: Any, sid: str) -> ImageRef:
    """The record's image inside the image folder; anything else is never opened (the record
    check names it: :func:`~pytest_uiground.suite.loading.inside`)."""
    if not isinstance(name, str) or not name:
        return ImageRef(key=sid)
    try:
        return ImageRef.from_path(inside(images, name, "img_filename"))
    except RecordError:
        return ImageRef(key=sid)


def v2_record_to_sample(split: str, i: int, record: Any, images: Path,
                        size_of: Callable[[Path], tuple[int, int] | str]) -> Sample:
    sid = f"ssv2-{split}-{i}"
    where = f"{_v2_file(split)} record {i}"
    meta = {"split": split}
    if not isinstance(record, dict):
        return invalid_sample(sid, ImageRef(key=sid), "point", meta,
                              f"{where}: expected an object, got {type(record).__name__}")
    name = record.get("img_filename")
    image = _image(images, name, sid)
    meta.update(known_meta(record, ("data_type", "data_source")))
    if "data_type" in meta:  # screenspot_test.py: data_type == 'text' -> text, anything else -> icon
        meta["cell"] = f"{split}/{'text' if meta['data_type'] == 'text' else 'icon'}"
    try:
        for key in ("data_type", "data_source"):
            meta_field(record, key)
        instruction = text_field(record, "instruction")
        if not isinstance(name, str) or not name:
            raise RecordError("img_filename", f"expected a file name, got {name!r}")
        x, y, w, h = numbers(record.get("bbox"), 4, "bbox")
        size = size_of(inside(images, name, "img_filename"))
        if isinstance(size, str):
            raise RecordError("img_filename", f"{size}")
        width, height = size
        # SeeClick pretrain/screenspot_test.py: [x, y, w, h] -> [x, y, x+w, y+h], / the opened image size
        box = unclipped_box(x / width, y / height, (x + w) / width, (y + h) / height, "bbox")
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where}: {exc}")
    image = replace(image, size=(width, height))  # read from the header once: a replay needs no more
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=Target(box=box), meta=meta)


def load_v2(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """ScreenSpot-v2: one point sample per record of each split file, boxes normalized by image size."""
    check_options(options, {"splits"})
    splits = options.get("splits", list(V2_SPLITS))
    if not isinstance(splits, list) or not splits or any(s not in V2_SPLITS for s in splits):
        raise ValueError(f"loader option splits: expected a non-empty list of {', '.join(V2_SPLITS)}, got {splits!r}")
    folder, images = locate_v2(ctx.data_path, splits)
    sizes: dict[Path, tuple[int, int] | str] = {}
    samples: list[Sample] = []
    for split in splits:
        for i, record in enumerate(read_records(folder / _v2_file(split))):
            samples.append(v2_record_to_sample(split, i, record, images, lambda p: header_size(p, sizes)))
    return samples


# -- ScreenSpot-Pro ---------------------------------------------------------------------------------
def locate_pro(data_path: Path | None) -> tuple[list[Path], Path]:
    """The annotation files and the image folder, or a :class:`LayoutError`."""
    if data_path is None:  # the hub, through the Hugging Face cache
        try:
            data_path = hub.dataset_dir(PRO_HUB_ID)
        except hub.HubError as exc:
            raise LayoutError(f"ScreenSpot-Pro: no --uiground-data-path, and {exc}. To get it: "
                              f"{PRO_HOW_TO_GET}") from None
    looked: list[str] = []
    for folder in candidates(data_path, PRO_FOLDER):
        files = sorted((folder / "annotations").glob("*.json"))
        if not files:
            looked.append(f"{folder} (no annotations/*.json)")
            continue
        if not (folder / "images").is_dir():
            raise LayoutError(
                f"ScreenSpot-Pro at {folder} has annotations/ but no image folder: expected {folder / 'images'}/ "
                "holding each record's img_filename"
            )
        return files, folder / "images"
    raise LayoutError(
        "dataset ScreenSpot-Pro not found: expected annotations/{app}_{platform}.json and images/. Looked in: "
        + "; ".join(looked) + f". To get it: {PRO_HOW_TO_GET}"
    )


def pro_record_to_sample(file: Path, i: int, record: Any, images: Path, language: str, seen: dict[str, str]) -> Sample:
    where = f"{file.name} record {i}"
    raw_id = record.get("id") if isinstance(record, dict) else None
    fallback = f"sspro-{safe_id(file.stem)}-{i}"
    sid = f"sspro-{safe_id(str(raw_id))}" if isinstance(raw_id, (str, int)) and str(raw_id) else fallback
    meta: dict[str, str] = {"language": language}
    if not isinstance(record, dict):
        return invalid_sample(fallback, ImageRef(key=fallback), "point", meta,
                              f"{where}: expected an object, got {type(record).__name__}")
    if sid in seen:
        first, sid = seen[sid], fallback
        return invalid_sample(sid, ImageRef(key=sid), "point", meta,
                              f"{where}: field 'id': {raw_id!r} repeats the id of {first}")
    seen[sid] = where
    name = record.get("img_filename")
    image = _image(images, name, sid)
    gt_type = record.get("gt_type", "positive")
    negative = gt_type == "negative"
    meta.update({"gt_type": str(gt_type), EXPECTS: "refusal" if negative else "element"})
    meta.update(known_meta(record, PRO_META))
    meta.update(optional_meta(record, PRO_OPTIONAL))
    for key, parts in PRO_SLICES.items():
        if all(p in meta for p in parts):
            meta[key] = "/".join(meta[p] for p in parts)
    try:
        if raw_id is None or str(raw_id) == "":
            raise RecordError("id", "missing")
        if gt_type not in PRO_GT_TYPES:
            raise RecordError("gt_type", f"{gt_type!r} is not one of {', '.join(PRO_GT_TYPES)} (absent: positive)")
        for key in PRO_META:
            if key not in PRO_OPTIONAL:
                meta_field(record, key)
        instruction = text_field(record, PRO_LANGUAGES[language])
        if not isinstance(name, str) or not name:
            raise RecordError("img_filename", f"expected a file name, got {name!r}")
        inside(images, name, "img_filename")
        width, height = numbers(record.get("img_size"), 2, "img_size")
        if width <= 0 or height <= 0:
            raise RecordError("img_size", f"expected a positive [w, h], got {record.get('img_size')!r}")
        if negative:  # eval_sample_negative_gt reads only the answer: right iff it is "negative"
            target = Target(refusal=True)
        else:
            x0, y0, x1, y1 = numbers(record.get("bbox"), 4, "bbox")
            # eval_screenspot_pro.py eval_sample_positive_gt: bbox / the record's img_size, unclipped
            target = Target(box=unclipped_box(x0 / width, y0 / height, x1 / width, y1 / height, "bbox"))
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where}: {exc}")
    if width == int(width) and height == int(height):  # the size the reference scores with: no header read
        image = replace(image, size=(int(width), int(height)))
    meta["dataset_id"] = str(raw_id)  # a replay file may key its records by the dataset's own id
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=target, meta=meta)


def load_pro(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """ScreenSpot-Pro: one point sample per record of every ``annotations/*.json`` file (sorted)."""
    check_options(options, {"language"})
    language = options.get("language", "en")
    if language not in PRO_LANGUAGES:
        raise ValueError(f"loader option language: expected one of {', '.join(PRO_LANGUAGES)}, got {language!r}")
    files, images = locate_pro(ctx.data_path)
    seen: dict[str, str] = {}
    samples: list[Sample] = []
    for file in files:
        for i, record in enumerate(read_records(file)):
            samples.append(pro_record_to_sample(file, i, record, images, language, seen))
    return samples
