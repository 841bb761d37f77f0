"""OSWorld-G, read from the ``benchmark/`` folder of ``xlang-ai/OSWorld-G`` as the authors publish it.

Layout (``--uiground-data-path`` names the ``benchmark`` folder, or a folder holding it)::

    benchmark/
      OSWorld-G.json                 the records, original (short) instructions
      OSWorld-G_refined.json         the same records with the refined instructions
      classification_result.json     {"classified": {group: [{"id": ...}, ...]}}
      images/<image_path>            PNG screenshots

One point sample ``osworld-g-<id>`` per record. ``box_type`` decides the target, as the official
scorer (``evaluation/eval.py: GroundingEval._eval``) does: ``bbox`` ``[x, y, w, h]`` pixels → the
normalized box ``[x/W, y/H, (x+w)/W, (y+h)/H]`` (an inclusive hit test; dividing both sides by the
same W keeps every comparison's outcome), ``polygon`` → the flat pixel vertex list with its frame
(even-odd ray casting in pixels, see :func:`pytest_uiground.record.geometry.point_in_polygon`),
``refusal`` → a refusal target. W, H are the record's ``image_size``; an image whose real size
differs is an invalid sample, since the official runners click in the PNG's pixels.

``meta``: ``box_type`` and ``group``, the ``classified`` keys whose lists hold the record's id
(the runner's ``accuracy_dict_group``), joined by ``|`` when there are several (the sample then
counts in each slice); a record in no group is ``unclassified``. A group name holding the
separator itself (``text|icon``) would be split into phantom slices, so its ``|`` is replaced by
:data:`GROUP_SEP_STANDIN` (``text¦icon``: one slice, still readable); two names that become the same
this way fail the suite. Loader option ``instructions``:
``original`` (default, ``OSWorld-G.json``) or ``refined`` (``OSWorld-G_refined.json``); papers
differ, so the option is part of the run's provenance (the dataset fingerprint).

A record the runners score although it looks wrong is a sample, scored as there, with a
a data-quirk note (:func:`~pytest_uiground.suite.loading.quirk`) naming it: the refined file publishes
record ``9bQOfLzvdu-0`` with an empty instruction (Gelato's copy too), and MAI-UI-8B's and Gelato's
refined runs score it. A malformed record becomes an ``invalid`` sample naming the record and the field; only that
sample fails. Its id is ``osworld-g-record<i>`` (``i``: its index in the file), or, should a real
record already be called that, the first of ``osworld-g-record<i>-2``, ``-3``, ... that is free:
a fallback id equal to a real one made the whole suite fail to load ("duplicate sample id").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import MULTI_VALUE_SEP, Sample, Target
from pytest_uiground.suite.config import EXPECTS
from pytest_uiground.suite.loading import (
    LayoutError,
    LoaderContext,
    RecordError,
    candidates,
    check_options,
    header_size,
    image_in,
    invalid_sample,
    numbers,
    read_records,
    safe_id,
    text_or_empty,
    unused_id,
)

FOLDER = "benchmark"
FILES = {"original": "OSWorld-G.json", "refined": "OSWorld-G_refined.json"}
CLASSIFICATION = "classification_result.json"
IMAGES = "images"
BOX_TYPES = ("bbox", "polygon", "refusal")
UNCLASSIFIED = "unclassified"
HOW_TO_GET = (
    "`git clone https://github.com/xlang-ai/OSWorld-G` and pass `--uiground-data-path OSWorld-G/benchmark` "
    "(the Hub copy MMInstruction/OSWorld-G is a parquet repack without polygons' layout or the groups file, "
    "so it is not read)"
)


def locate(data_path: Path | None, annotation: str) -> Path:
    """The folder holding ``annotation``, ``classification_result.json`` and ``images/``."""
    if data_path is None:
        raise LayoutError(f"OSWorld-G needs --uiground-data-path (no copy in the published layout is on the "
                          f"Hugging Face Hub). To get it: {HOW_TO_GET}")
    looked = []
    for folder in [*candidates(data_path, FOLDER), data_path / "OSWorld-G" / FOLDER]:
        if (folder / annotation).is_file():
            for need in (CLASSIFICATION, IMAGES):
                if not (folder / need).exists():
                    raise LayoutError(f"OSWorld-G: found {folder / annotation} but not {folder / need} beside it "
                                      f"(the published benchmark/ folder has both). To get it: {HOW_TO_GET}")
            return folder
        looked.append(str(folder / annotation))
    raise LayoutError(f"OSWorld-G {annotation} not found. Looked for: {'; '.join(looked)}. Expected layout: "
                      f"benchmark/{{OSWorld-G.json, OSWorld-G_refined.json, {CLASSIFICATION}, {IMAGES}/}}. "
                      f"To get it: {HOW_TO_GET}")


GROUP_SEP_STANDIN = "\u00a6"
"""Stands in for :data:`MULTI_VALUE_SEP` inside a group's own name (the broken bar, ``¦``)."""


def read_groups(path: Path) -> dict[str, list[str]]:
    """Record id → the groups listing it, from ``{"classified": {group: [entry, ...]}}``.

    The runner needs only ``entry["id"]``; a plain id string is read too (cua-lite accepts
    both). A file of another shape fails the suite naming the file, since every group
    figure would be wrong.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); re-download the file") from exc
    classified = data.get("classified") if isinstance(data, dict) else None
    if not isinstance(classified, dict):
        raise ValueError(f"{path}: expected {{\"classified\": {{group: [entry, ...]}}}}, got "
                         f"{type(data).__name__} without a 'classified' object")
    groups: dict[str, list[str]] = {}
    renamed: dict[str, str] = {}
    for raw_group, entries in classified.items():
        group = raw_group.replace(MULTI_VALUE_SEP, GROUP_SEP_STANDIN)
        if renamed.setdefault(group, raw_group) != raw_group:
            raise ValueError(f"{path}: groups {renamed[group]!r} and {raw_group!r} both become the slice value "
                             f"{group!r} ({MULTI_VALUE_SEP!r} joins a sample's groups, so it is replaced by "
                             f"{GROUP_SEP_STANDIN!r} in a name); rename one of them")
        if not isinstance(entries, list):
            raise ValueError(f"{path}: classified[{group!r}]: expected a list of entries, got {entries!r:.80}")
        for k, entry in enumerate(entries):
            rid = entry.get("id") if isinstance(entry, dict) else entry
            if not isinstance(rid, (str, int)) or isinstance(rid, bool):
                raise ValueError(f"{path}: classified[{group!r}][{k}]: expected an object with an 'id' (or an id), "
                                 f"got {entry!r:.80}")
            names = groups.setdefault(str(rid), [])
            if group not in names:
                names.append(group)
    return groups


def target_of(record: Mapping[str, Any], size: tuple[int, int]) -> Target:
    """The record's target in the internal convention (see the module docstring)."""
    box_type = record.get("box_type")
    if box_type not in BOX_TYPES:
        raise RecordError("box_type", f"{box_type!r} is not one of {', '.join(BOX_TYPES)}")
    if box_type == "refusal":
        return Target(refusal=True)
    coords = record.get("box_coordinates")
    w, h = size
    if box_type == "bbox":
        x, y, bw, bh = numbers(coords, 4, "box_coordinates")
        if bw < 0 or bh < 0:
            raise RecordError("box_coordinates", f"bbox [x, y, w, h] {coords!r} has a negative size")
        # The official test compares x <= cx <= x + w in pixels; the same sum divided by W
        # keeps every comparison (division by a positive number is monotonic).
        return Target(box=Box(x / w, y / h, (x + bw) / w, (y + bh) / h))
    n = len(coords) if isinstance(coords, list) else 0
    if n < 6 or n % 2:
        raise RecordError("box_coordinates", f"a polygon needs a flat [x0, y0, x1, y1, ...] list of at least "
                          f"three vertices, got {coords!r:.80}")
    values = numbers(coords, n, "box_coordinates")
    xs, ys = values[0::2], values[1::2]
    return Target(polygon=tuple(values), frame=size,
                  box=Box(min(xs) / w, min(ys) / h, max(xs) / w, max(ys) / h))


def record_to_sample(folder: Path, file: str, i: int, record: Any, sid: str, groups: Mapping[str, list[str]],
                     sizes: dict[Path, tuple[int, int] | str], problem: RecordError | None) -> Sample:
    where = f"{file} record {i}"
    if not isinstance(record, dict):
        return invalid_sample(sid, ImageRef(key=sid), "point", {},
                              f"{where}: expected an object, got {type(record).__name__}")
    meta: dict[str, str] = {}
    if isinstance(record.get("box_type"), str):
        meta["box_type"] = record["box_type"]
        # the suite's refusal policy ([scorer] refusals) reads this key: count or leave out refusal samples
        meta[EXPECTS] = "refusal" if record["box_type"] == "refusal" else "element"
    meta["group"] = MULTI_VALUE_SEP.join(groups.get(str(record.get("id")), [UNCLASSIFIED]))
    if problem is None:  # a replay file may key its records by the dataset's own id, as the official runners log them
        meta["dataset_id"] = str(record["id"])
    image = ImageRef(key=sid)
    try:
        if problem:
            raise problem
        image = image_in(folder / IMAGES, record.get("image_path"), "image_path")
        instruction = text_or_empty(record, "instruction", f"OSWorld-G {where} (id {record.get('id')!r})",
                                    "scored as the official runners score it (the empty text is the prompt's "
                                    "instruction), as published")
        w, h = numbers(record.get("image_size"), 2, "image_size")
        if w <= 0 or h <= 0 or w != int(w) or h != int(h):
            raise RecordError("image_size", f"expected whole positive [width, height], got {record['image_size']!r}")
        size = (int(w), int(h))
        real = header_size(Path(image.key), sizes, missing_hint=" (check --uiground-data-path)")
        if isinstance(real, str):
            raise RecordError("image_path", real)
        if real != size:
            raise RecordError("image_size", f"{list(size)} but the image is {real[0]}x{real[1]}: the official "
                              "runners click in the image's pixels; re-download the images")
        target = target_of(record, size)
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where} (id {record.get('id')!r}): {exc}")
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=target, meta=meta)


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Every OSWorld-G record, refusals included (the runners count all 564)."""
    check_options(options, {"instructions"})
    which = options.get("instructions", "original")
    if which not in FILES:
        raise ValueError(f"loader option instructions: expected 'original' ({FILES['original']}) or 'refined' "
                         f"({FILES['refined']}), got {which!r}")
    file = FILES[which]
    folder = locate(ctx.data_path, file)
    groups = read_groups(folder / CLASSIFICATION)
    sizes: dict[Path, tuple[int, int] | str] = {}
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    records = read_records(folder / file)
    problems: list[RecordError | None] = []
    for i, record in enumerate(records):
        rid = record.get("id") if isinstance(record, dict) else None
        problem = None
        if isinstance(rid, bool) or not isinstance(rid, (str, int)) or str(rid) == "":
            problem = RecordError("id", f"expected the record's id text, got {rid!r}")
        elif safe_id(str(rid)) in seen:
            problem = RecordError("id", f"{rid!r} repeats the id of record {seen[safe_id(str(rid))]}")
        else:
            seen[safe_id(str(rid))] = i
        problems.append(problem)
    taken = {f"osworld-g-{sid}" for sid in seen}  # every real id first, so no fallback can take one
    for i, (record, problem) in enumerate(zip(records, problems, strict=True)):
        if problem is None:
            sid = f"osworld-g-{safe_id(str(record['id']))}"
        else:
            sid = unused_id(f"osworld-g-record{i}", taken)
        samples.append(record_to_sample(folder, file, i, record, sid, groups, sizes, problem))
    return samples
