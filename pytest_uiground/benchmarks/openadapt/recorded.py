"""Recorded click sessions (loader ``recorded_sessions``): element detection at a click
location, on screenshots taken while a person used the application.

Why this exists: OpenAdapt's evaluation plan asks "can we find the element the user
clicked?" on recorded sessions as well as on curated screenshots (:mod:`.loader`), and a
recording is stored differently: a folder of screenshots and ``clicks.jsonl``, one
``{"image", "click_xy" [x, y], "label", "bbox" [x0, y0, x1, y1], "type"}`` per line in
*pixels*. The box is filled in later by a person, so a line without one is an invalid
sample saying so. Pixel values are normalized with the image size read from the file
header (``PIL.Image.open(path).size`` decodes no pixels).

Each line becomes one ``detect`` sample, as in the annotation loader; a malformed line
becomes an ``invalid`` sample naming the log, the line number and the fix, and the other
lines run. Images are never decoded here: samples hold lazy
:class:`~pytest_uiground.record.image.ImageRef`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pytest_uiground.benchmarks.openadapt.common import (
    UNKNOWN_TYPE,
    BadValue,
    base_note,
    bucket,
    finite_numbers,
    instruction_for,
    nonblank,
    resolve_path,
    show,
    unique_id,
)
from pytest_uiground.record import jsontext
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import LayoutError, LoaderContext, RecordError, check_options, header_size, inside

DEFAULT_CLICKS: Final = "clicks.jsonl"
RECORDED_DATASET: Final = "recorded"


def _header_size(path: Path, sizes: dict[Path, tuple[int, int] | str]) -> tuple[int, int] | str:
    return header_size(path, sizes, missing_hint="; put the screenshot in the session folder or fix 'image'",
                       unreadable_hint="; re-save the screenshot")


def pixel_click(value: Any, width: int, height: int) -> Point:
    """``click_xy`` in pixels → a normalized point, or :class:`BadValue`."""
    if value is None:
        raise BadValue("has no 'click_xy'; a detection sample needs the click location [x, y] in pixels")
    x, y = finite_numbers(value, 2, "click_xy", hint="[x, y] in pixels")
    if not (0 <= x <= width and 0 <= y <= height):
        raise BadValue(f"click_xy {show(value)} lies outside the {width}x{height} image; it is in pixels of that "
                       "screenshot")
    return Point(x / width, y / height)


def pixel_box(value: Any, width: int, height: int) -> Box:
    """A pixel ``[x0, y0, x1, y1]`` → a normalized box, or :class:`BadValue` with the fix."""
    if value is None:
        raise BadValue("the ground-truth box is missing: add \"bbox\": [x0, y0, x1, y1] in pixels to this line "
                       "(read it off the screenshot, e.g. with `python -m pytest_uiground annotate`, which prints "
                       "pixel boxes)")
    x0, y0, x1, y1 = finite_numbers(value, 4, "bbox", hint="[x0, y0, x1, y1] in pixels")
    if x1 <= x0 or y1 <= y0:
        raise BadValue(f"bbox {show(value)} has zero or negative area; it is [x0, y0, x1, y1] in pixels with "
                       "x1 > x0 and y1 > y0")
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
        raise BadValue(f"bbox {show(value)} lies outside the {width}x{height} image; it is [x0, y0, x1, y1] in "
                       "pixels of that screenshot")
    return Box(x0 / width, y0 / height, x1 / width, y1 / height)


def _recorded_line(session: Path, log: Path, n: int, line: str, dataset: str, sizes: dict[Path, tuple[int, int] | str],
                   seen: dict[str, int], used: set[str]) -> Sample:
    where = f"{log}:{n}"
    problem: str | None = None
    try:
        record = jsontext.loads(line)
    except RecursionError as exc:  # jsontext.TooDeep
        record, problem = {}, f"{exc}; fix or delete the line"
    except ValueError as exc:  # JSONDecodeError, an integer of 5,000 digits
        record, problem = {}, f"not valid JSON ({exc}); fix or delete the line"
    else:
        problem = None if isinstance(record, dict) else f"expected a JSON object, got {show(record)[:60]}"
        record = record if isinstance(record, dict) else {}
    image = record.get("image")
    stem = Path(image).stem if isinstance(image, str) and image else f"line{n}"
    seen[stem] = seen.get(stem, -1) + 1
    sid = unique_id(f"{stem}.{seen[stem]}", used, fallback=f"line{n}")
    etype = nonblank(record.get("type")) or UNKNOWN_TYPE
    meta = {"dataset": dataset, "element_type": etype}
    try:
        image_file = inside(session, image, "image") if isinstance(image, str) and image else None
    except RecordError as exc:  # never followed: the model (or an API server) would be sent that file
        image_file, problem = None, problem or str(exc)
    ref = ImageRef.from_path(image_file) if image_file is not None else ImageRef(key=where)
    instruction = instruction_for(None, record.get("label"), etype)
    try:
        if problem:
            raise BadValue(problem)
        if image_file is None:
            raise BadValue(f"'image' is {show(image)}; expected the screenshot's file name in {session}")
        size = _header_size(image_file, sizes)
        if isinstance(size, str):
            raise BadValue(size)
        width, height = size
        click = pixel_click(record.get("click_xy"), width, height)
        box = pixel_box(record.get("bbox"), width, height)
        if not box.contains(click):
            raise BadValue(f"click_xy {show(record.get('click_xy'))} lies outside bbox {show(record.get('bbox'))}; "
                           "the box must be the element that was clicked (both are in pixels)")
    except BadValue as exc:
        return Sample(id=sid, image=ref, instruction=instruction, task="detect", target=Target(), meta=meta,
                      invalid=f"{where} (image {image!r}): {exc}")
    meta["size"] = bucket(box, width, height)
    return Sample(id=sid, image=ref, instruction=instruction, task="detect", target=Target(box=box), meta=meta,
                  click=click)


def load_recorded(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Recorded sessions: one ``detect`` sample per line of the click log.

    Options: ``session`` (the folder of screenshots; default ``.``, relative to
    ``--uiground-data-path`` when given, else to the suite folder), ``clicks`` (the log's file name
    in that folder; default ``clicks.jsonl``) and ``dataset`` (default ``recorded``).
    Sample ids are ``{image stem}.{k}``, ``k`` counting the clicks on that screenshot.
    """
    check_options(options, {"session", "clicks", "dataset"})
    session = resolve_path(options.get("session", "."), ctx, "session")
    clicks = options.get("clicks", DEFAULT_CLICKS)
    if not isinstance(clicks, str) or not clicks:
        raise ValueError(f"loader option clicks: expected a file name, got {clicks!r}")
    dataset = options.get("dataset", RECORDED_DATASET)
    if nonblank(dataset) is None:
        raise ValueError(f"loader option dataset: expected a non-empty name, got {dataset!r}")
    log = session / clicks
    if not log.is_file():
        raise LayoutError(f"recorded session click log {str(log)!r} not found; {base_note(ctx)}. Set [loader.options] "
                          "session to the folder holding the screenshots and clicks.jsonl")
    sizes: dict[Path, tuple[int, int] | str] = {}
    seen: dict[str, int] = {}
    used: set[str] = set()
    lines = jsontext.split_lines(log.read_text(encoding="utf-8"))  # "\n" only: U+2028 may sit inside a line
    return [_recorded_line(session, log, n, line, str(dataset), sizes, seen, used)
            for n, line in enumerate(lines, 1) if line.strip()]
