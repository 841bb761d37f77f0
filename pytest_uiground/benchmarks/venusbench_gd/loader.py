"""VenusBench-GD (``inclusionAI/VenusBench-GD``), read in the layout its authors publish.

Why this exists: VenusBench-GD is UI-Venus-1.5's headline grounding figure and in MAI-UI's table;
its official scorer is ``eval.py`` on the ``VenusBench-GD`` branch of ``inclusionAI/UI-Venus``
(@56b1005), and a figure is only comparable when every record is scored as there.

Layout (``--uiground-data-path`` names the ``VenusBench-GD`` folder, or a folder holding it)::

    VenusBench-GD/
      instruction/{element,spatial,visual,reasoning,functional}_grounding.json, refusal_spatial.json
      images/{web,mobile,desktop}/...
      meta.json

Each annotation file is a JSON list of records; ``eval.py`` reads ``img_filename`` (relative to
``images/``), ``bbox`` ``[x1, y1, x2, y2]`` in pixels, ``instruction`` (``en``), ``instruction_zh``
(``cn``; UI-Venus-1.5's own script reads ``instruction_cn``, accepted when ``instruction_zh`` is
absent), and ``group``, ``platform``, ``application``, ``ui_type`` for its tables (``main``: one
task per file name, ``task_filename``).

Scoring, as ``eval.py`` does (``eval_sample_positive_gt`` / ``eval_sample_negative_gt``):

* a **positive** record (the five grounding files): the box divided by the image size *as opened*
  (``Image.open(img_path).size``, read here from the header, never decoded), a hit iff
  ``x1 <= x <= x2`` and ``y1 <= y <= y2`` (inclusive, unclipped); no point is ``wrong_format``,
  kept in the denominator.
* a **negative** record (``refusal_spatial.json``, run with ``--gt_type negative``): right iff the
  model's answer is a refusal (``result == "negative"``); a point is wrong, nothing readable is
  ``wrong_format``. The family's refusal form (UI-Venus ``[-1, -1]``, Gelato ``refusal``, a
  ``terminate`` call) is its "negative". The record's ``bbox`` is not read.

Samples: ``venusbench-<task>-<id>`` from the record's ``id`` when it has one, else
``venusbench-<task>-<i>`` (``i``: its index in the file); a ``cn`` sample adds ``-cn``. Meta (slices):
``task`` (the file name), ``level`` (``basic``: element, spatial, visual; ``advanced``: reasoning,
functional, refusal; the paper's taxonomy), ``gt_type`` (positive/negative), ``language``,
``platform``, ``application``, ``ui_type``, ``group`` (``none`` when the record lacks one: ``eval.py`` reads
each as ``sample[k] if k in sample else None``, so a copy without ``group`` loads and scores), ``platform_gt``
(``eval.py``'s ``seeclick_style`` key), ``platform_application_gt`` (its ``fine_grained`` key) and
``expects`` (``element``/``refusal``, read by the suite's refusal policy).

Loader options: ``tasks`` (a list of file names, default all six, as ``--task all``), ``language``
(``en`` default, ``cn``, or ``all`` for both). ``eval.py`` raises for Chinese negative samples
("Only positive samples ... are supported for Chinese instructions"), so ``cn`` never loads the
refusal file (``all``: it runs in English only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
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
    numbers,
    optional_meta,
    read_records,
    safe_id,
    text_field,
    unused_id,
)

FOLDER = "VenusBench-GD"
ANNOTATIONS = "instruction"
IMAGES = "images"
BASIC = ("element_grounding", "spatial_grounding", "visual_grounding")
ADVANCED = ("reasoning_grounding", "functional_grounding", "refusal_spatial")
TASKS = (*BASIC, *ADVANCED)
NEGATIVE = "refusal_spatial"
LANGUAGES = ("en", "cn", "all")
#: The instruction field per language: eval.py reads instruction_zh; UI-Venus-1.5's script instruction_cn.
TEXT_FIELDS = {"en": ("instruction",), "cn": ("instruction_zh", "instruction_cn")}
META = ("platform", "application", "ui_type", "group")
HUB_ID = "inclusionAI/VenusBench-GD"
HOW_TO_GET = (f"`git clone https://huggingface.co/datasets/{HUB_ID}` (images and instruction/ as published) and pass "
              f"`--uiground-data-path VenusBench-GD` (or a folder that contains {FOLDER}/)")


def locate(data_path: Path | None, tasks: Sequence[str]) -> Path:
    """The dataset folder (holding ``instruction/`` and ``images/``), or a :class:`LayoutError`."""
    if data_path is None:
        raise LayoutError(f"VenusBench-GD needs --uiground-data-path. To get it: {HOW_TO_GET}")
    looked: list[str] = []
    for folder in candidates(data_path, FOLDER):
        present = [t for t in TASKS if (folder / ANNOTATIONS / f"{t}.json").is_file()]
        if not present:
            looked.append(str(folder / ANNOTATIONS))
            continue
        missing = [t for t in tasks if t not in present]
        if missing:
            raise LayoutError(f"VenusBench-GD at {folder} is incomplete: expected "
                              + ", ".join(str(folder / ANNOTATIONS / f"{t}.json") for t in missing)
                              + f" (found {', '.join(present)}). Re-download it, or set [loader.options] tasks "
                              "to the files you have")
        if not (folder / IMAGES).is_dir():
            raise LayoutError(f"VenusBench-GD at {folder} has {ANNOTATIONS}/ but no {folder / IMAGES}/ holding each "
                              f"record's img_filename. To get it: {HOW_TO_GET}")
        return folder
    raise LayoutError(f"dataset VenusBench-GD not found: expected {ANNOTATIONS}/{{{','.join(TASKS)}}}.json and "
                      f"{IMAGES}/. Looked in: {'; '.join(looked)}. To get it: {HOW_TO_GET}")


def instruction_of(record: Mapping[str, Any], language: str) -> str:
    fields = TEXT_FIELDS[language]
    for name in fields:
        if name in record:
            return text_field(record, name)
    raise RecordError(fields[0], f"missing (a {language} instruction; also looked for {', '.join(fields[1:])})"
                      if len(fields) > 1 else "missing")


def record_to_sample(folder: Path, task: str, i: int, record: Any, sid: str, language: str,
                     sizes: dict[Path, tuple[int, int] | str]) -> Sample:
    where = f"{ANNOTATIONS}/{task}.json record {i}"
    negative = task == NEGATIVE
    meta: dict[str, str] = {"task": task, "level": "basic" if task in BASIC else "advanced",
                            "gt_type": "negative" if negative else "positive", "language": language,
                            EXPECTS: "refusal" if negative else "element"}
    if not isinstance(record, dict):
        return invalid_sample(sid, ImageRef(key=sid), "point", meta,
                              f"{where}: expected an object, got {type(record).__name__}")
    meta.update(optional_meta(record, META))  # eval.py: sample[k] if k in sample else None, for each of META
    meta["platform_gt"] = f"{meta['platform']}/{meta['gt_type']}"
    meta["platform_application_gt"] = f"{meta['platform']}/{meta['application']}/{meta['gt_type']}"
    if isinstance(record.get("id"), (str, int)) and not isinstance(record.get("id"), bool):
        meta["dataset_id"] = str(record["id"])  # a replay file may key answers by the dataset's own id
    image = ImageRef(key=sid)
    try:
        name = record.get("img_filename")
        if not isinstance(name, str) or not name:
            raise RecordError("img_filename", f"expected a file name, got {name!r}")
        path = inside(folder / IMAGES, name, "img_filename")
        image = ImageRef.from_path(path)
        instruction = instruction_of(record, language)
        size = header_size(path, sizes, missing_hint=" (check --uiground-data-path and the images/ folder)")
        if isinstance(size, str):
            raise RecordError("img_filename", size)
        image = replace(image, size=size)
        if negative:
            target = Target(refusal=True)  # eval_sample_negative_gt reads only the answer
        else:
            x0, y0, x1, y1 = numbers(record.get("bbox"), 4, "bbox")
            w, h = size
            clipped_box(x0 / w, y0 / h, x1 / w, y1 / h, "bbox")  # refuse a box no point can hit
            target = Target(box=Box(x0 / w, y0 / h, x1 / w, y1 / h))  # unclipped, as eval.py compares
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where}: {exc}")
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=target, meta=meta)


def sample_ids(task: str, records: Sequence[Any], suffix: str) -> list[str]:
    """One id per record: from its ``id`` when it has one (unique in the file), else its index; a
    repeated or missing id falls back to ``<task>-record<i>`` (never taking an id already used)."""
    raw = [r.get("id") if isinstance(r, dict) else None for r in records]
    usable = [str(v) if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v) else None for v in raw]
    counts: dict[str, int] = {}
    for v in usable:
        if v is not None:
            counts[safe_id(v)] = counts.get(safe_id(v), 0) + 1
    own = {v: f"venusbench-{task}-{safe_id(v)}{suffix}" for v in usable if v is not None and counts[safe_id(v)] == 1}
    taken = set(own.values())  # every real id first, so no fallback can take one
    out: list[str] = []
    for i, v in enumerate(usable):
        if v is not None and v in own:
            sid = own[v]
        elif v is None and not counts:
            sid = f"venusbench-{task}-{i}{suffix}"
        else:
            sid = unused_id(f"venusbench-{task}-record{i}", taken, suffix)
        out.append(sid)
    return out


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Every record of the chosen task files, in each chosen language (see the module docstring)."""
    check_options(options, {"tasks", "language"})
    tasks = options.get("tasks", list(TASKS))
    if not isinstance(tasks, list) or not tasks or any(t not in TASKS for t in tasks):
        raise ValueError(f"loader option tasks: expected a non-empty list drawn from {', '.join(TASKS)}, got {tasks!r}")
    language = options.get("language", "en")
    if language not in LANGUAGES:
        raise ValueError(f"loader option language: expected one of {', '.join(LANGUAGES)}, got {language!r}")
    languages = ("en", "cn") if language == "all" else (language,)
    folder = locate(ctx.data_path, tasks)
    sizes: dict[Path, tuple[int, int] | str] = {}
    samples: list[Sample] = []
    for task in tasks:
        records = read_records(folder / ANNOTATIONS / f"{task}.json")
        for lang in languages:
            if lang == "cn" and task == NEGATIVE:
                continue  # eval.py: "Only positive samples ... are supported for Chinese instructions"
            ids = sample_ids(task, records, "-cn" if lang == "cn" else "")
            for i, (record, sid) in enumerate(zip(records, ids, strict=True)):
                samples.append(record_to_sample(folder, task, i, record, sid, lang, sizes))
    return samples

