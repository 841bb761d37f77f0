"""The ``grounding`` loader: your own screenshots and ``annotations.jsonl`` (:mod:`.format`) as a suite.

Why this exists: the teams this plugin is for gate their checkpoints on their product's screens.
Before it, the only own-data path made ``detect`` samples from OpenAdapt JSON with normalized boxes;
a grounding suite (``point`` samples with an instruction) needed a loader of one's own. This one reads
the documented format (pixels, relative image paths) with no code in the user's project:

.. code-block:: toml

    [loader]
    name = "grounding"
    [loader.options]
    annotations = "annotations.jsonl"   # or a .csv with the same columns

Each line becomes one sample: ``point`` (find the element the instruction names; a ``polygon`` is
scored as the polygon), ``refusal`` (the element is absent: only a refusal is right) or ``detect``
(find the element's box, from ``click`` when the line has one). Boxes are converted from pixels with
the image's header size (never decoding the pixels); metadata keys become slices, with ``size``
(the box's longer side: ``lt32``, ``32to100``, ``gt100``) and ``element_type`` where given.

**Failures stay local.** A malformed line, an image that is missing or unreadable, a box outside
its image or a line with no instruction yet becomes one invalid sample naming the file, the line,
the value and the fix; the other samples run. The cheap checks of ``validate`` (duplicate boxes,
an instruction used twice on one screen, metadata keys on only some lines...) are given as
notes at collection (:mod:`.checks`; the terminal and summary.json list them), one line each
with the sample id and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pytest_uiground.benchmarks.grounding import checks
from pytest_uiground.benchmarks.grounding import format as fmt
from pytest_uiground.record.geometry import Box, Point, size_bucket
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import LayoutError, LoaderContext, check_options, header_size, quirk

OPTIONS: Final = ("annotations", "warnings")


def annotations_path(options: Mapping[str, Any], ctx: LoaderContext) -> Path:
    """The annotation file: ``annotations`` relative to ``--uiground-data-path`` when given, else to the suite."""
    value = options.get("annotations", fmt.DEFAULT_FILE)
    if not isinstance(value, str) or not value:
        raise ValueError(f"loader option annotations: expected a file name such as {fmt.DEFAULT_FILE!r}, got "
                         f"{value!r}")
    path = Path(value).expanduser()
    return path if path.is_absolute() else (ctx.data_path or ctx.suite_dir) / path


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """One sample per line of the annotation file (see the module docstring). Options: ``annotations``
    (default ``annotations.jsonl``) and ``warnings`` (default true: the cheap validate checks as notes)."""
    check_options(options, OPTIONS)
    path = annotations_path(options, ctx)
    if not path.is_file():
        where = (f"--uiground-data-path {ctx.data_path}" if ctx.data_path is not None
                 else f"the suite folder {ctx.suite_dir}")
        raise LayoutError(f"annotations {str(path)!r} not found (relative paths are read from {where}); set "
                          f"[loader.options] annotations, or create the file: python -m pytest_uiground init NAME "
                          "--from SCREENSHOTS, or python -m pytest_uiground import coco|label-studio|cvat FILE --out "
                          f"{fmt.DEFAULT_FILE}")
    try:
        lines = fmt.read(path)
    except fmt.FormatError as exc:
        raise ValueError(str(exc)) from exc
    samples = samples_of(path, lines)
    if options.get("warnings", True):
        for problem in checks.cheap(path, lines, samples):
            # A note of the plugin's own (terminal, summary.json), never a warning: under a project's
            # filterwarnings = ["error"] a warning stopped the whole suite at collection (issue 38).
            quirk(path.name, problem.line())
    return samples


def samples_of(path: Path, lines: list[fmt.Line]) -> list[Sample]:
    """The samples of an already-read file, in file order."""
    sizes: dict[Path, tuple[int, int] | str] = {}
    used: set[str] = set()
    return [_sample(path, line, sizes, used) for line in lines]


def _unique(sid: str, used: set[str]) -> tuple[str, str | None]:
    if sid not in used:
        used.add(sid)
        return sid, None
    n = 2
    while f"{sid}-{n}" in used:
        n += 1
    used.add(f"{sid}-{n}")
    return f"{sid}-{n}", f"its id {sid!r} is used by an earlier line; give every line a unique 'id'"


def _sample(path: Path, line: fmt.Line, sizes: dict[Path, tuple[int, int] | str], used: set[str]) -> Sample:
    where = f"{path.name} line {line.number}"
    raw = line.raw or {}
    image_value = raw.get("image")
    fallback = fmt.default_id(image_value if isinstance(image_value, str) else "line", line.number)
    rid = raw.get("id")
    sid, dup = _unique(fmt.clean_id(str(rid)) or fallback if isinstance(rid, (str, int)) else fallback, used)
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
            return invalid(f"click [{fmt._num(cx)}, {fmt._num(cy)}] px is outside its {fmt.box_text(ann.bbox)}; "
                           "the click is where a user clicked on this element", ref)
        click = Point(cx / w, cy / h)
    return Sample(id=sid, image=ref, instruction=ann.instruction or (ann.element_type or "the element"),
                  task="detect" if ann.task == "detect" else "point", target=target, meta=meta, click=click)
