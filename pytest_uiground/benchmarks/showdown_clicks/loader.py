"""Showdown-clicks (``generalagents/showdown-clicks``), the dev split, read as its authors' ``eval.py`` reads it.

Why this exists: Holo1.5 and duvo-eye-1 report showdown-clicks-dev (557 human left clicks on macOS,
1280×800 to 1680×1050); the official harness is ``generalagents/showdown`` ``clicks/eval.py``
(``evaluate_csv``) with ``clicks/src/clicks/evaluate/utils.py`` (``is_point_in_bbox``).

Layout (``--uiground-data-path`` names ``showdown-clicks-dev/``, or a folder holding it: the
repository's ``clicks/data/`` or the dataset repository)::

    showdown-clicks-dev/
      data.csv          id, recording_id, instruction, image, x1, y1, x2, y2, width, height
      frames/...        the screenshots; ``image`` is relative to showdown-clicks-dev/

``eval.py`` joins ``image`` to ``showdown-clicks-dev/`` (``os.path.join(frames_dir, image_path)``);
the box ``x1, y1, x2, y2`` is in pixels of the screenshot (``EvaluationItem``: integers);
``width``/``height`` are its size. Scoring (:mod:`.scorer`): the click in whole pixels inside the box,
edges inclusive; no click is a miss, kept in the denominator (``analyze_results`` divides by every
processed row).

Samples: ``showdown-<id>`` (the row's ``id``; ``showdown-row<i>`` when it has none or repeats one).
Meta: ``recording_id`` (the episode; for ``-k``) and ``resolution`` (``{width}x{height}``, a slice:
the card's range of screen sizes; project choice, the CSV carries no categories). A row with a
missing or non-integer box, a missing image or instruction is an invalid sample naming the row and
the field; ``eval.py`` would stop the whole run there (pydantic rejects it).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import (
    LayoutError,
    LoaderContext,
    RecordError,
    candidates,
    check_options,
    header_size,
    inside,
    invalid_sample,
    safe_id,
    text_field,
    unused_id,
)

FOLDER = "showdown-clicks-dev"
CSV = "data.csv"
HUB_ID = "generalagents/showdown-clicks"
HOW_TO_GET = (f"`hf download {HUB_ID} --repo-type dataset --local-dir /data/showdown-clicks` and pass "
              f"`--uiground-data-path /data/showdown-clicks` (a folder holding {FOLDER}/{CSV} and the frames), "
              "or the clicks/data/ folder of a github.com/generalagents/showdown checkout with its data")
BOX = ("x1", "y1", "x2", "y2")


def locate(data_path: Path | None) -> Path:
    if data_path is None:
        raise LayoutError(f"Showdown-clicks needs --uiground-data-path. To get it: {HOW_TO_GET}")
    looked = []
    for folder in candidates(data_path, FOLDER):
        if (folder / CSV).is_file():
            return folder
        looked.append(str(folder / CSV))
    raise LayoutError(f"dataset Showdown-clicks not found: expected {FOLDER}/{CSV}. Looked for: {'; '.join(looked)}. "
                      f"To get it: {HOW_TO_GET}")


def integer(row: Mapping[str, Any], field: str) -> int:
    """A whole number, as ``EvaluationItem`` (pydantic ``Optional[int]``) takes it: ``12`` or ``12.0``."""
    raw = row.get(field)
    text = raw.strip() if isinstance(raw, str) else ""
    try:
        value = float(text)
    except ValueError:
        raise RecordError(field, f"expected a whole number of pixels, got {raw!r}") from None
    if value != value or value != int(value):
        raise RecordError(field, f"expected a whole number of pixels, got {raw!r}")
    return int(value)


def row_to_sample(folder: Path, i: int, row: Mapping[str, Any], sid: str,
                  sizes: dict[Path, tuple[int, int] | str]) -> Sample:
    where = f"{CSV} row {i + 1}"
    meta: dict[str, str] = {}
    if (row.get("recording_id") or "").strip():
        meta["recording_id"] = str(row["recording_id"]).strip()
    image = ImageRef(key=sid)
    try:
        name = (row.get("image") or "").strip()
        if not name:
            raise RecordError("image", f"expected a path to the screenshot, got {row.get('image')!r}")
        path = inside(folder, name, "image")
        image = ImageRef.from_path(path)
        instruction = text_field(row, "instruction")
        if (row.get("width") or "").strip() and (row.get("height") or "").strip():
            size = (integer(row, "width"), integer(row, "height"))
            if size[0] <= 0 or size[1] <= 0:
                raise RecordError("width", f"expected a positive size, got {size!r}")
        else:
            got = header_size(path, sizes, missing_hint=f" (check --uiground-data-path and {FOLDER}/frames/)")
            if isinstance(got, str):
                raise RecordError("image", got)
            size = got
        if not path.is_file():
            raise RecordError("image", f"{path} does not exist (check --uiground-data-path and {FOLDER}/frames/)")
        image = ImageRef.from_path(path, size=size)
        meta["resolution"] = f"{size[0]}x{size[1]}"
        x1, y1, x2, y2 = (integer(row, f) for f in BOX)
        if x2 < x1 or y2 < y1:
            raise RecordError("x2", f"expected x1 <= x2 and y1 <= y2, got {[x1, y1, x2, y2]!r}")
        w, h = size
        target = Target(box=Box(x1 / w, y1 / h, x2 / w, y2 / h))
    except RecordError as exc:
        return invalid_sample(sid, image, "point", meta, f"{where}: {exc}")
    meta["dataset_id"] = str(row.get("id") or "").strip() or sid
    return Sample(id=sid, image=image, instruction=instruction, task="point", target=target, meta=meta)


def sample_ids(rows: list[dict[str, Any]]) -> list[str]:
    raw = [(r.get("id") or "").strip() for r in rows]
    counts: dict[str, int] = {}
    for v in raw:
        if v:
            counts[safe_id(v)] = counts.get(safe_id(v), 0) + 1
    own = {v: f"showdown-{safe_id(v)}" for v in raw if v and counts[safe_id(v)] == 1}
    taken = set(own.values())
    return [own[v] if v in own else unused_id(f"showdown-row{i}", taken) for i, v in enumerate(raw)]


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Every row of ``showdown-clicks-dev/data.csv`` (see the module docstring). No options."""
    check_options(options, set())
    folder = locate(ctx.data_path)
    with (folder / CSV).open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("id", "instruction", "image", *BOX) if c not in (reader.fieldnames or [])]
        if missing:
            raise LayoutError(f"{folder / CSV}: not the showdown-clicks CSV: no column(s) {', '.join(missing)} "
                              f"(expected id, recording_id, instruction, image, x1, y1, x2, y2, width, height)")
        rows = list(reader)
    sizes: dict[Path, tuple[int, int] | str] = {}
    return [row_to_sample(folder, i, row, sid, sizes) for i, (row, sid) in enumerate(zip(rows, sample_ids(rows),
                                                                                         strict=True))]
