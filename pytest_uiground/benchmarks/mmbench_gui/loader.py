"""MMBench-GUI (``open-compass/MMBench-GUI``): L1 content understanding and L2 element grounding.

Layout (VLMEvalKit's ``$LMUData`` convention)::

    MMBench-GUI/
      L1_annotations.json
      L2_annotations.json
      offline_images/os_{windows,mac,linux,ios,android,web}/<file>.png

Image paths: the published records hold ``image_path`` relative to the platform folder and
the reference dataloader prefixes ``{platform}/`` (``f"{platform}/{image_path}"``) before
joining with ``offline_images/``. This loader does the same join,
``offline_images/{platform}/{image_path}``, except when ``image_path`` already starts with
``{platform}/`` (the form the reference's own docs print, after its prefixing), which is
joined as ``offline_images/{image_path}`` instead of being prefixed twice.

* **L2** (loader ``mmbench_gui_l2``): one point sample ``l2-{index}`` per record; ``bbox`` is
  normalized ``[x1, y1, x2, y2]``. As the reference scorer does, a ``-1`` coordinate reads
  as 0 and a box with a coordinate above 1 is taken as pixels and divided by the record's
  ``image_size``. ``meta``: ``platform``, ``grounding_type`` (basic|advanced), ``data_type``
  (icon|text), ``app_name`` and ``cell`` = ``{platform}/{grounding_type}/{data_type}``.
* **L1** (loader ``mmbench_gui_l1``): mode ``all`` flattens each record's ``groups``; every
  question is an option sample ``l1-{index}-{q}`` (``q`` its position in ``groups``) whose
  instruction is the reference prompt's body (``Hint:`` when there is one, ``Question:``,
  ``Options:`` with the letters present); the target is the answer letter. ``meta``:
  ``platform``, ``difficulty``, ``app_name``, ``cell`` = ``{difficulty}/{platform}``.

Both set ``meta["row_index"]`` to the reference's own ``index`` of the sample (L2: the
record's ``index``; L1: the running number over flattened questions), so outputs saved by
the reference harness replay with ``--model replay`` keyed by that index.

A malformed record becomes an ``invalid`` sample naming the record and the field, and only
that sample fails. The data is looked for in ``--uiground-data-path`` (the ``MMBench-GUI`` folder or
a root holding it), then in ``$LMUData/MMBench-GUI`` (``~/LMUData`` when unset, as
VLMEvalKit does); a miss names every file looked for and how to get the data.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite import hub
from pytest_uiground.suite.loading import (
    LayoutError,
    LoaderContext,
    RecordError,
    candidates,
    check_options,
    clipped_box,
    inside,
    invalid_sample,
    known_meta,
    meta_field,
    numbers,
    read_records,
    safe_id,
    text_field,
    text_or_empty,
)

FOLDER = "MMBench-GUI"
IMAGES = "offline_images"
PLATFORMS = ("os_windows", "os_mac", "os_linux", "os_ios", "os_android", "os_web")
GROUNDING_TYPES = ("basic", "advanced")
DATA_TYPES = ("icon", "text")
DIFFICULTIES = ("easy", "medium", "hard")
LETTERS = "ABCDEF"
HUB_ID = "OpenGVLab/MMBench-GUI"
HUB_FILES = ("L1_annotations.json", "L2_annotations.json", "MMBench-GUI-OfflineImages.zip")
HOW_TO_GET = (
    f"run without --uiground-data-path to fetch {HUB_ID} into the Hugging Face cache, or "
    f"`hf download {HUB_ID} --repo-type dataset --local-dir /data/{FOLDER}`, unzip MMBench-GUI-OfflineImages.zip "
    f"there and pass `--uiground-data-path /data/{FOLDER}` (VLMEvalKit's $LMUData/{FOLDER} is found too)"
)


def lmu_root() -> Path:
    """VLMEvalKit's data root: ``$LMUData``, else ``~/LMUData``."""
    env = os.environ.get("LMUData")
    return Path(env) if env else Path.home() / "LMUData"


def locate(data_path: Path | None, annotation: str) -> Path:
    """The ``MMBench-GUI`` folder holding ``annotation`` and ``offline_images/``.

    Raises :class:`LayoutError` naming each file looked for, or the missing image folder
    beside annotations that were found (a half-extracted download).
    """
    looked: list[str] = []
    folders = [*candidates(data_path, FOLDER), lmu_root() / FOLDER]
    if data_path is None and not (lmu_root() / FOLDER / annotation).is_file():  # the hub, through the HF cache
        try:
            folders.append(hub.dataset_dir(HUB_ID, archives=HUB_FILES[2:], allow_patterns=HUB_FILES))
        except hub.HubError as exc:
            looked.append(str(exc))
    for folder in folders:
        if (folder / annotation).is_file():
            if not (folder / IMAGES).is_dir():
                raise LayoutError(
                    f"MMBench-GUI: found {folder / annotation} but no image folder beside it: expected "
                    f"{folder / IMAGES}/os_{{windows,mac,linux,ios,android,web}}/ (extract the offline images "
                    f"there). To get it: {HOW_TO_GET}"
                )
            return folder
        looked.append(str(folder / annotation))
    raise LayoutError(
        f"MMBench-GUI {annotation} not found. Looked for: " + "; ".join(looked)
        + f". Expected layout: <root>/{FOLDER}/{{L1_annotations.json, L2_annotations.json, "
        f"{IMAGES}/os_*/}}. To get it: {HOW_TO_GET}"
    )


def _image_rel(record: Mapping[str, Any]) -> str | None:
    path, platform = record.get("image_path"), record.get("platform")
    if not isinstance(path, str) or not path or not isinstance(platform, str) or not platform:
        return None
    return path if path.startswith(f"{platform}/") else f"{platform}/{path}"


def image_ref(folder: Path, record: Mapping[str, Any], fallback: str) -> ImageRef:
    """``offline_images/{platform}/{image_path}`` (no second prefix when already there); a path
    leading outside the image folder is never followed (:func:`_check_image_fields` says why)."""
    rel = _image_rel(record)
    if rel is None:
        return ImageRef(key=fallback)
    try:
        return ImageRef.from_path(inside(folder / IMAGES, rel, "image_path"))
    except RecordError:
        return ImageRef(key=fallback)


def _check_image_fields(record: Mapping[str, Any], folder: Path) -> None:
    text_field(record, "platform")
    text_field(record, "image_path")
    inside(folder / IMAGES, _image_rel(record) or "", "image_path")


def _index(record: Any, seen: dict[str, int], i: int) -> tuple[str, RecordError | None]:
    """Record ``i``'s ``index`` as id text, or why it cannot name a sample.

    A missing or repeated index gets a positional id (``...-record{i}``, which no index can
    produce) so the suite still loads and the record fails alone.
    """
    value = record.get("index") if isinstance(record, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, str)) or str(value) == "":
        return "", RecordError("index", f"expected a number, got {value!r}")
    index = safe_id(str(value))
    if index in seen:
        return index, RecordError("index", f"{value!r} repeats the index of record {seen[index]}")
    seen[index] = i
    return index, None


def _choice(options: Mapping[str, Any], value: str, name: str) -> str:
    if value not in options:
        raise RecordError(name, f"{value!r} is not one of {', '.join(options)}")
    return value


def app_name(record: Mapping[str, Any], where: str) -> str:
    """``app_name``, which may be empty: the published L2 file has records (197 and 2331, whose image
    names carry ``d41d8cd9``, the md5 of the empty string) with ``""``, and the reference scores them
    (no figure groups by application), so they are samples with a warning naming the record; a
    missing or non-text ``app_name`` is still a record error."""
    return text_or_empty(record, "app_name", where, "scored as the reference scores it (no figure is grouped by "
                         "application), as published")


# -- L2 -------------------------------------------------------------------------------------------
def l2_box(record: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """The normalized box as the reference reads it: ``-1`` → 0, pixels ÷ ``image_size``."""
    values = [0.0 if v == -1 else v for v in numbers(record.get("bbox"), 4, "bbox")]
    if all(0.0 <= v <= 1.0 for v in values):
        return values[0], values[1], values[2], values[3]
    w, h = numbers(record.get("image_size"), 2, "image_size")
    if w <= 0 or h <= 0:
        raise RecordError("image_size", f"expected a positive [w, h], got {record.get('image_size')!r}")
    return values[0] / w, values[1] / h, values[2] / w, values[3] / h


def l2_record_to_sample(folder: Path, i: int, record: Any, sid: str, problem: RecordError | None) -> Sample:
    where = f"L2_annotations.json record {i}"
    if not isinstance(record, dict):
        return invalid_sample(sid, ImageRef(key=sid), "point", {},
                              f"{where}: expected an object, got {type(record).__name__}")
    meta = known_meta(record, ("platform", "grounding_type", "data_type", "app_name"))
    if {"platform", "grounding_type", "data_type"} <= set(meta):
        meta["cell"] = f"{meta['platform']}/{meta['grounding_type']}/{meta['data_type']}"
    if "index" in record:
        meta["row_index"] = str(record["index"])
    image = image_ref(folder, record, sid)
    try:
        if problem:
            raise problem
        _check_image_fields(record, folder)
        _choice(dict.fromkeys(GROUNDING_TYPES), meta_field(record, "grounding_type"), "grounding_type")
        _choice(dict.fromkeys(DATA_TYPES), meta_field(record, "data_type"), "data_type")
        app_name(record, f"MMBench-GUI {where} (index {record.get('index')!r}, image {record.get('image_path')!r})")
        instruction = text_field(record, "instruction")
        box = clipped_box(*l2_box(record), "bbox")
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where} (index {record.get('index')!r}): {exc}")
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=Target(box=box), meta=meta)


def load_l2(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """MMBench-GUI L2 element grounding: one point sample per record (``mode``: all|basic|advanced)."""
    check_options(options, {"mode"})
    mode = options.get("mode", "all")
    if mode not in ("all", *GROUNDING_TYPES):
        raise ValueError(f"loader option mode: expected all, basic or advanced, got {mode!r}")
    folder = locate(ctx.data_path, "L2_annotations.json")
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for i, record in enumerate(read_records(folder / "L2_annotations.json")):
        index, problem = _index(record, seen, i)
        sid = f"l2-{index}" if problem is None else f"l2-record{i}"
        sample = l2_record_to_sample(folder, i, record, sid, problem)
        if mode == "all" or sample.meta.get("grounding_type") == mode:
            samples.append(sample)
    return samples


# -- L1 -------------------------------------------------------------------------------------------
def l1_instruction(group: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The reference prompt's body and the options present (letters A-F, nulls skipped).

    The reference's own closing line ("Please select the correct answer ...") is left to
    the model's prompt template, which adds its own answer-format instruction.
    """
    question = text_field(group, "question")
    raw = group.get("options")
    if not isinstance(raw, dict):
        raise RecordError("options", f"expected an object of letter → text, got {raw!r}")
    extra = sorted(k for k in raw if k not in LETTERS)
    if extra:
        raise RecordError("options", f"key {extra[0]!r} is not a letter A-F (the only letters scored)")
    options = {k: str(raw[k]) for k in LETTERS if k in raw and raw[k] is not None and str(raw[k]) != ""}
    if len(options) < 2:
        raise RecordError("options", f"expected at least two options, got {raw!r}")
    hint = group.get("hint")
    lines = [f"Hint: {hint}"] if isinstance(hint, str) and hint.strip() else []
    lines += [f"Question: {question}", "Options:", *(f"{k}. {v}" for k, v in options.items())]
    return "\n".join(lines), options


def l1_group_to_sample(folder: Path, record: Mapping[str, Any], where: str, sid: str, q: int, group: Any,
                       flat: int, problem: RecordError | None) -> Sample:
    meta = known_meta(record, ("platform", "app_name"))
    meta["row_index"] = str(flat)
    if isinstance(group, dict):
        meta.update(known_meta(group, ("difficulty",)))
    if "difficulty" in meta and "platform" in meta:
        meta["cell"] = f"{meta['difficulty']}/{meta['platform']}"
    image = image_ref(folder, record, sid)
    field = f"groups[{q}]"
    try:
        if problem:
            raise problem
        _check_image_fields(record, folder)
        app_name(record, f"MMBench-GUI {where} (image {record.get('image_path')!r})")
        if not isinstance(group, dict):
            raise RecordError(field, f"expected an object, got {type(group).__name__}")
        try:
            _choice(dict.fromkeys(DIFFICULTIES), meta_field(group, "difficulty"), "difficulty")
            instruction, options = l1_instruction(group)
            answer = group.get("answer")
            letter = answer.strip().upper().rstrip(".") if isinstance(answer, str) else None
            if letter not in options:
                raise RecordError("answer", f"{answer!r} is not one of the options {', '.join(options)}")
        except RecordError as exc:
            raise exc.within(field) from None
    except RecordError as exc:
        return invalid_sample(sid, image, "option", meta, f"{where}: {exc}")
    return Sample(id=sid, image=image, instruction=instruction, task="option", target=Target(option=letter),
                  meta=meta)


def load_l1(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """MMBench-GUI L1 content understanding: every question of every record (``mode``: all or
    one difficulty, chosen by each question's ``difficulty`` field rather than by its position)."""
    check_options(options, {"mode"})
    mode = options.get("mode", "all")
    if mode not in ("all", *DIFFICULTIES):
        raise ValueError(f"loader option mode: expected all, easy, medium or hard, got {mode!r}")
    folder = locate(ctx.data_path, "L1_annotations.json")
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    flat = 0
    for i, record in enumerate(read_records(folder / "L1_annotations.json")):
        where = f"L1_annotations.json record {i}"
        index, problem = _index(record, seen, i)
        base = f"l1-{index}" if problem is None else f"l1-record{i}"
        if not isinstance(record, dict):
            samples.append(invalid_sample(f"{base}-0", ImageRef(key=base), "option", {},
                                          f"{where}: expected an object, got {type(record).__name__}"))
            continue
        groups = record.get("groups")
        if not isinstance(groups, list) or not groups:
            meta = known_meta(record, ("platform", "app_name"))
            samples.append(invalid_sample(f"{base}-0", image_ref(folder, record, base), "option", meta,
                                          f"{where}: field 'groups': expected a non-empty list, got {groups!r}"))
            continue
        for q, group in enumerate(groups):
            sample = l1_group_to_sample(folder, record, f"{where} (index {record.get('index')!r})",
                                        f"{base}-{q}", q, group, flat, problem)
            flat += 1
            if mode == "all" or sample.meta.get("difficulty") == mode:
                samples.append(sample)
    return samples
