"""OpenAdapt grounding annotations (loader ``openadapt``): element detection at a click
location, on curated screenshots.

Why this exists: OpenAdapt's evaluation plan asks "can we find the element the user
clicked?" on curated screenshots and on recorded sessions. Each annotated element becomes
one ``detect`` sample whose ``click`` (an input) is where the user clicked and whose target
is the element's normalized box, so a detector is scored on finding that box. Recorded
sessions (loader ``recorded_sessions``) are read by :mod:`.recorded`; ``load_recorded`` is
re-exported here so the entry point's older path ``openadapt.loader:load_recorded`` still
resolves.

**Two annotation forms.** OpenAdapt's code and its docs disagree, and files of both kinds
exist, so both are read:

* ``code`` form (what ``openadapt_grounding.eval.dataset.schema`` reads and writes):
  ``{name, version, metadata, samples: [{id, image_path, width, height, elements: [{id,
  bbox [x, y, w, h], text, element_type, instruction}], metadata {difficulty, theme}}]}``;
  the click is the box centre (its ``click_point`` property).
* ``docs`` form (what its evaluation docs print): ``{version, dataset, samples: [{id,
  image, width, height, elements: [{id, bbox [x0, y0, x1, y1], text, type,
  click_point [x, y]}]}]}``; the click is the stored point (the centre when absent).

All coordinates are normalized 0..1. The form is decided per file from its keys
(``image_path``/``element_type`` versus ``image``/``type``/``click_point``) and recorded in
``meta["form"]``, so a report says which reading was applied. A file that mixes the two is
refused: the box layouts ``[x, y, w, h]`` and ``[x0, y0, x1, y1]`` cannot be told apart by
their values, and guessing would silently score against the wrong boxes.

**Failures stay local.** A malformed element (a box outside 0..1, a zero-area box, a click
outside its box, a missing ``bbox``) or a malformed screenshot entry (no size, a missing
image file) becomes ``invalid`` samples naming the file, the sample and element ids, the
bad value and the fix; the other elements run. Only file-level problems (not JSON, no
``samples`` list, an unknown ``version``, mixed forms) raise, as collection errors.

Images are never decoded here: samples hold lazy :class:`~pytest_uiground.record.image.ImageRef`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

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
from pytest_uiground.benchmarks.openadapt.recorded import load_recorded as load_recorded
from pytest_uiground.record import jsontext
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import LayoutError, LoaderContext, RecordError, check_options, inside

Form = Literal["code", "docs"]

VERSIONS: Final[tuple[str, ...]] = ("1.0",)
DEFAULT_ANNOTATIONS: Final = "annotations.json"
DEFAULT_DATASET: Final = "curated"
SLOP: Final = 1e-6  # float noise tolerated at the 0..1 edges (x + w can land at 1.0000000000000002)

# Keys that only one form uses: a sample's image key and an element's type / click keys.
_CODE_KEYS: Final = (("sample", "image_path"), ("element", "element_type"))
_DOCS_KEYS: Final = (("sample", "image"), ("element", "type"), ("element", "click_point"))
_LAYOUT: Final[dict[str, str]] = {"code": "[x, y, w, h]", "docs": "[x0, y0, x1, y1]"}
_IMAGE_KEY: Final[dict[str, str]] = {"code": "image_path", "docs": "image"}
_TYPE_KEY: Final[dict[str, str]] = {"code": "element_type", "docs": "type"}
_SLICE_KEYS: Final = ("difficulty", "theme")


def _positive_size(value: Any) -> int | None:
    """A whole positive pixel count (``1920`` or ``1920.0``), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    return int(value) if float(value).is_integer() else None



def _clip(v: float) -> float:
    return min(1.0, max(0.0, v))


# -- the annotation file ---------------------------------------------------------------------------
def read_annotation_file(path: Path) -> dict[str, Any]:
    """The parsed file, after the checks that concern the whole file (raise ``ValueError``)."""
    try:
        data = jsontext.loads(path.read_text(encoding="utf-8"))
    except RecursionError as exc:  # jsontext.TooDeep, naming the line
        raise ValueError(f"{path}: {exc}; fix the file or regenerate it") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); fix the file or regenerate it") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc}); is this the annotation JSON?") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object with a 'samples' list, got a {type(data).__name__}")
    if not isinstance(data.get("samples"), list):
        raise ValueError(f"{path}: expected a 'samples' list (OpenAdapt annotation format), "
                         f"got {show(data.get('samples'))[:80]}")
    version = data.get("version")
    if not _known_version(version):
        raise ValueError(f"{path}: unknown annotation version {show(version)}; this loader reads version "
                         f"{', '.join(VERSIONS)} (set \"version\": \"1.0\" if the file follows that format)")
    return data


def _known_version(version: Any) -> bool:
    """``"1.0"``; a bare number 1 / 1.0 is the same version written without quotes."""
    if isinstance(version, str):
        return version in VERSIONS
    return isinstance(version, (int, float)) and not isinstance(version, bool) and version == 1


def _sample_name(raw: Any, i: int) -> str:
    sid = raw.get("id") if isinstance(raw, dict) else None
    return f"sample {str(sid)!r}" if isinstance(sid, (str, int)) and str(sid) else f"sample #{i}"


def _form_keys(raw: Mapping[str, Any], table: Sequence[tuple[str, str]]) -> list[str]:
    value = raw.get("elements")
    elements: list[Any] = value if isinstance(value, list) else []
    found = [key for where, key in table if where == "sample" and key in raw]
    found += [key for where, key in table if where == "element"
              and any(isinstance(e, dict) and key in e for e in elements)]
    return found


def detect_form(path: Path, samples: Sequence[Any]) -> Form | None:
    """``"code"`` or ``"docs"`` from the keys the file uses; ``None`` when no sample says.

    Raises ``ValueError`` naming the sample when one sample uses keys of both forms, or
    when two samples disagree.
    """
    form: Form | None = None
    first = ""
    for i, raw in enumerate(samples):
        if not isinstance(raw, dict):
            continue
        code, docs = _form_keys(raw, _CODE_KEYS), _form_keys(raw, _DOCS_KEYS)
        name = _sample_name(raw, i)
        if code and docs:
            raise ValueError(
                f"{path}: {name} mixes the two annotation forms: code-form keys {code} and docs-form keys "
                f"{docs}. Use one form per file: code = image_path, element_type, bbox [x, y, w, h]; "
                "docs = image, type, click_point, bbox [x0, y0, x1, y1]")
        this: Form | None = "code" if code else "docs" if docs else None
        if this is None:
            continue
        if form is None:
            form, first = this, name
        elif this != form:
            raise ValueError(
                f"{path}: {name} is in the {this} form ({', '.join(code or docs)}) but {first} is in the {form} "
                f"form; one file must use one form (their bbox layouts differ: code {_LAYOUT['code']}, docs "
                f"{_LAYOUT['docs']}). Convert {name} or split the file")
    return form


@dataclass
class _Screen:
    """A screenshot entry's shared fields, checked once for all its elements."""

    name: str  # "sample 'x'" for messages
    id_part: str
    image: ImageRef
    width: int = 0
    height: int = 0
    problem: str | None = None
    meta: dict[str, str] = field(default_factory=dict)


def _screen_meta(raw: Mapping[str, Any]) -> dict[str, str]:
    """``difficulty``/``theme`` from the sample's ``metadata`` (code form) or the sample itself."""
    nested = raw.get("metadata")
    sources: list[Mapping[str, Any]] = [nested if isinstance(nested, dict) else {}, raw]
    meta: dict[str, str] = {}
    for key in _SLICE_KEYS:
        for src in sources:
            value = src.get(key)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value):
                meta[key] = str(value)
                break
    return meta


def _screen(path: Path, form: Form, i: int, raw: Any, exists: dict[Path, bool], root: Path | None = None
            ) -> _Screen:
    name = _sample_name(raw, i)
    if not isinstance(raw, dict):
        return _Screen(name, f"sample{i}", ImageRef(key=f"{path}#{i}"),
                       problem=f"the sample is a {type(raw).__name__}, not an object")
    sid = raw.get("id")
    id_part = str(sid) if isinstance(sid, (str, int)) and str(sid) else f"sample{i}"
    key = _IMAGE_KEY[form]
    image_value = raw.get(key)
    outside: str | None = None
    image_path: Path | None = None
    if isinstance(image_value, str) and image_value:
        try:
            image_path = inside(root or path.parent, image_value, key, start=path.parent)
        except RecordError as exc:  # never followed: the model (or an API server) would be sent that file
            outside = str(exc)
    screen = _Screen(name, id_part, ImageRef.from_path(image_path) if image_path else ImageRef(key=f"{path}#{i}"),
                     meta=_screen_meta(raw))
    width, height = _positive_size(raw.get("width")), _positive_size(raw.get("height"))
    if not (isinstance(sid, (str, int)) and str(sid)):
        screen.problem = "the sample has no 'id'; give every sample a unique id"
    elif outside is not None:
        screen.problem = outside
    elif image_path is None:
        screen.problem = f"the sample has no {key!r}; add the screenshot's path, relative to {path.parent}"
    elif width is None or height is None:
        bad = "width" if width is None else "height"
        screen.problem = (f"sample {bad} {show(raw.get(bad))} is not a positive whole number of pixels; set it "
                          "to the screenshot's pixel size (it converts boxes to pixels for the size slices)")
    else:
        screen.width, screen.height = width, height
        if image_path not in exists:
            exists[image_path] = image_path.is_file()
        if not exists[image_path]:
            screen.problem = (f"image {str(image_path)!r} ({key} {image_value!r}) does not exist; image "
                              f"paths are relative to the annotation file's folder {path.parent}: copy the "
                              f"screenshot there or fix {key}")
    return screen


def element_box(form: Form, value: Any) -> Box:
    """The normalized xyxy box of an element, or :class:`BadValue` with the fix.

    Values within :data:`SLOP` of the 0..1 edges are clipped (float noise); anything
    further out is an error, because it usually means pixels were written where a
    fraction belongs.
    """
    layout = _LAYOUT[form]
    if value is None:
        raise BadValue(f"has no 'bbox'; add \"bbox\": {layout} normalized 0..1 (the element's ground-truth box)")
    nums = finite_numbers(value, 4, "bbox", hint=f"{layout} normalized 0..1")
    if any(v < -SLOP or v > 1 + SLOP for v in nums):
        raise BadValue(f"bbox {show(value)} is outside 0..1: boxes are normalized; divide pixel values by "
                       "width/height")
    if form == "code":
        x, y, w, h = nums
        if w <= 0 or h <= 0:
            raise BadValue(f"bbox {show(value)} has zero or negative area (w={w:g}, h={h:g}); the code form's "
                           "bbox is [x, y, w, h], so w and h must be positive")
        x0, y0, x1, y1 = x, y, x + w, y + h
        if x1 > 1 + SLOP or y1 > 1 + SLOP:
            raise BadValue(f"bbox {show(value)} ends at x+w={x1:g}, y+h={y1:g}, outside 0..1: the code form's bbox "
                           "is [x, y, w, h] normalized; if these are corners [x0, y0, x1, y1], use the docs form")
    else:
        x0, y0, x1, y1 = nums
        if x1 <= x0 or y1 <= y0:
            raise BadValue(f"bbox {show(value)} has zero or negative area: the docs form's bbox is [x0, y0, x1, "
                           "y1] with x1 > x0 and y1 > y0; if it is [x, y, w, h], use the code form")
    return Box(_clip(x0), _clip(y0), _clip(x1), _clip(y1))


def click_point(form: Form, raw: Mapping[str, Any], box: Box) -> Point:
    """The stored ``click_point`` (docs form) or the box centre; a click must hit its box."""
    value = raw.get("click_point") if form == "docs" else None
    if value is None:
        return box.center
    x, y = finite_numbers(value, 2, "click_point", hint="[x, y] normalized 0..1")
    if not (-SLOP <= x <= 1 + SLOP and -SLOP <= y <= 1 + SLOP):
        raise BadValue(f"click_point {show(value)} is outside 0..1: points are normalized; divide pixel values by "
                       "width/height")
    point = Point(_clip(x), _clip(y))
    grown = Box(box.x0 - SLOP, box.y0 - SLOP, box.x1 + SLOP, box.y1 + SLOP)
    if not grown.contains(point):
        raise BadValue(f"click_point {show(value)} lies outside the element's bbox {show(raw.get('bbox'))}; the "
                       "click must land on the element (the box centre is the usual choice)")
    return point


def _element(path: Path, form: Form, screen: _Screen, j: int, raw: Any, dataset: str, used: set[str]) -> Sample:
    eid = raw.get("id") if isinstance(raw, dict) else None
    id_ok = isinstance(eid, (str, int)) and str(eid) != ""
    el_part = str(eid) if id_ok else str(j)
    sid = unique_id(f"{screen.id_part}.{el_part}", used, fallback=f"sample.{j}")
    where = f"{path}: {screen.name}, element {str(eid) if id_ok else f'#{j}'!r}"
    element = raw if isinstance(raw, dict) else {}
    etype = nonblank(element.get(_TYPE_KEY[form])) or UNKNOWN_TYPE
    meta = {"dataset": dataset, "element_type": etype, "form": form, **screen.meta}
    instruction = instruction_for(element.get("instruction"), element.get("text"), etype)

    def invalid(reason: str) -> Sample:
        return Sample(id=sid, image=screen.image, instruction=instruction, task="detect", target=Target(),
                      meta=meta, invalid=reason)

    if screen.problem:
        return invalid(f"{where}: {screen.problem}")
    if not isinstance(raw, dict):
        return invalid(f"{where}: is a {type(raw).__name__}, not an object")
    if not id_ok:
        return invalid(f"{where}: has no 'id'; give every element an id, unique within its sample")
    try:
        box = element_box(form, raw.get("bbox"))
        click = click_point(form, raw, box)
    except BadValue as exc:
        return invalid(f"{where}: {exc}")
    meta["size"] = bucket(box, screen.width, screen.height)
    return Sample(id=sid, image=screen.image, instruction=instruction, task="detect", target=Target(box=box),
                  meta=meta, click=click)


def samples_from_annotations(path: Path, data: Mapping[str, Any], dataset: str | None = None,
                             root: Path | None = None) -> list[Sample]:
    """One ``detect`` sample per element of an already-parsed annotation file. Image paths
    must stay inside ``root`` (default: the file's folder)."""
    raw_samples: list[Any] = list(data["samples"])
    form = detect_form(path, raw_samples)
    if form is None:
        if any(isinstance(s, dict) and s.get("elements") for s in raw_samples):
            raise ValueError(f"{path}: cannot tell the annotation form: no sample has 'image_path' or "
                             "'element_type' (code form) nor 'image', 'type' or 'click_point' (docs form)")
        return []
    name = dataset or nonblank(data.get("dataset")) or nonblank(data.get("name")) or DEFAULT_DATASET
    exists: dict[Path, bool] = {}
    used: set[str] = set()
    out: list[Sample] = []
    for i, raw in enumerate(raw_samples):
        screen = _screen(path, form, i, raw, exists, root)
        elements = raw.get("elements") if isinstance(raw, dict) else None
        if not isinstance(elements, list):
            if screen.problem is None:
                screen.problem = f"the sample's 'elements' is {show(elements)[:60]}, not a list of elements"
            elements = [None]
        out.extend(_element(path, form, screen, j, el, name, used) for j, el in enumerate(elements))
    return out


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """OpenAdapt annotations: one ``detect`` sample per element, either annotation form.

    Options: ``annotations`` (the JSON file; default ``annotations.json``, relative to
    ``--uiground-data-path`` when given, else to the suite folder) and ``dataset`` (the
    ``meta["dataset"]`` value; default the file's ``dataset`` or ``name``, else
    ``curated``).
    """
    check_options(options, {"annotations", "dataset"})
    path = resolve_path(options.get("annotations", DEFAULT_ANNOTATIONS), ctx, "annotations")
    dataset = options.get("dataset")
    if dataset is not None and nonblank(dataset) is None:
        raise ValueError(f"loader option dataset: expected a non-empty name, got {dataset!r}")
    if not path.is_file():
        raise LayoutError(f"OpenAdapt annotations {str(path)!r} not found; {base_note(ctx)}. Set [loader.options] "
                          "annotations to the annotations.json of the dataset (or create one with "
                          "`python -m pytest_uiground annotate SCREENSHOTS --out annotations.json`)")
    # Image paths may lead out of the annotation file's folder but not out of the dataset root.
    base = os.path.normpath(ctx.data_path if ctx.data_path is not None else ctx.suite_dir)
    root = Path(base) if os.path.commonpath([base, os.path.normpath(path)]) == base else path.parent
    return samples_from_annotations(path, read_annotation_file(path), dataset, root)
