"""The samples of an annotations file: each line of ``annotations.jsonl`` (:mod:`.format`) as a sample.

One code path from a line to a :class:`~pytest_uiground.record.sample.Sample`, used by the ``grounding``
loader (``benchmarks/grounding``) and by ``validate`` (:mod:`.validate`), so that what ``validate``
passes is what a run loads. A bad line becomes one invalid sample naming the file, the line, the value
and the fix (the loader's docstring says how each task is read).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_uiground.record.geometry import Box, Point, size_bucket
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.screens import format as fmt
from pytest_uiground.suite.loading import LoaderContext, header_size


def annotations_path(options: Mapping[str, Any], ctx: LoaderContext) -> Path:
    """The annotation file: ``annotations`` relative to ``--uiground-data-path`` when given, else to the suite."""
    value = options.get("annotations", fmt.DEFAULT_FILE)
    if not isinstance(value, str) or not value:
        raise ValueError(f"loader option annotations: expected a file name such as {fmt.DEFAULT_FILE!r}, got "
                         f"{value!r}")
    path = Path(value).expanduser()
    return path if path.is_absolute() else (ctx.data_path or ctx.suite_dir) / path


def samples_of(path: Path, lines: list[fmt.Line]) -> list[Sample]:
    """The samples of an already-read file, in file order."""
    sizes: dict[Path, tuple[int, int] | str] = {}
    used: set[str] = set()
    ids = fmt.line_ids(lines)  # the one id rule: a line's own id, else the one the annotator would give it
    return [_sample(path, line, ids[line.number], sizes, used) for line in lines]


def _unique(sid: str, used: set[str]) -> tuple[str, str | None]:
    if sid not in used:
        used.add(sid)
        return sid, None
    n = 2
    while f"{sid}-{n}" in used:
        n += 1
    used.add(f"{sid}-{n}")
    return f"{sid}-{n}", f"its id {sid!r} is used by an earlier line; give every line a unique 'id'"


def _sample(path: Path, line: fmt.Line, line_id: str, sizes: dict[Path, tuple[int, int] | str],
            used: set[str]) -> Sample:
    where = f"{path.name} line {line.number}"
    raw = line.raw or {}
    sid, dup = _unique(line_id, used)
    meta = {str(k): fmt._meta_text(v) for k, v in raw.items() if k not in fmt.KNOWN and fmt._meta_text(v)}
    if isinstance(raw.get("element_type"), str) and raw["element_type"]:
        meta["element_type"] = raw["element_type"]
    task = raw.get("task") if raw.get("task") in fmt.TASKS else "point"

    def invalid(reason: str, image: ImageRef | None = None) -> Sample:
        return Sample(id=sid, image=image or ImageRef(key=f"{path}#{line.number}"), instruction="",
                      task="detect" if task == "detect" else "point", target=Target(), meta=meta,
                      invalid=f"{where} (sample {sid}): {reason}")

    if dup:
        return invalid(dup)
    try:
        ann = fmt.parse(line)
    except fmt.BadLine as exc:
        return invalid(str(exc))
    image_path = path.parent / ann.image
    ref = ImageRef.from_path(image_path)
    size = header_size(image_path, sizes, missing_hint=f" ('image' {ann.image!r} is relative to {path.parent})")
    if isinstance(size, str):
        return invalid(size, ref)
    w, h = size
    x1, y1, x2, y2 = ann.bbox
    if ann.task != "refusal":
        if x2 <= 0 or y2 <= 0 or x1 >= w or y1 >= h:
            return invalid(f"{fmt.box_text(ann.bbox)} lies outside the {w}x{h} px image; boxes are pixels of the "
                           "screenshot (top-left origin)", ref)
        meta["size"] = size_bucket(min(x2, w) - max(x1, 0), min(y2, h) - max(y1, 0))
    box = Box(max(0.0, x1 / w), max(0.0, y1 / h), min(1.0, x2 / w), min(1.0, y2 / h))
    if ann.task == "refusal":
        target = Target(refusal=True)
    elif ann.polygon is not None:
        target = Target(box=box, polygon=ann.polygon, frame=(w, h))
    else:
        target = Target(box=box)
    click = None
    if ann.task == "detect" and ann.click is not None:  # an input of detection only, never drawn on a grounding sample
        cx, cy = ann.click
        if not (x1 <= cx <= x2 and y1 <= cy <= y2):
            return invalid(f"{fmt.click_text(ann.click)} is outside its {fmt.box_text(ann.bbox)}; "
                           "the click is where a user clicked on this element", ref)
        click = Point(cx / w, cy / h)
    return Sample(id=sid, image=ref, instruction=ann.instruction or (ann.element_type or "the element"),
                  task="detect" if ann.task == "detect" else "point", target=target, meta=meta, click=click,
                  instruction_alts=ann.instruction_alts)
