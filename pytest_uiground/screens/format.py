"""The annotation format for your own screenshots: ``annotations.jsonl`` (or a CSV with the same columns).

Why one module: the loader (:mod:`.loader`), the importers (:mod:`.importers`), ``init --from``,
``validate`` and the browser annotator all read and write the same lines, and a person reads and
types the same boxes; one reader and one atomic writer keep them from drifting apart.

One JSON object per line, UTF-8, beside (or above) the images; lines end at ``\\n`` only (U+2028, U+2029
and U+0085 are written as ``\\u`` escapes and read inside a line: :mod:`pytest_uiground.record.jsontext`),
and a line nested past 500 levels is a bad line like any other:

* ``image`` (required): the screenshot's path relative to the annotation file's folder, POSIX
  separators, never absolute, never containing ``..``;
* ``instruction``: what a user would say ("Open the comments"); required for tasks ``point`` and
  ``refusal`` (a line without one is reported as an invalid sample, naming it);
* ``bbox``: ``[x1, y1, x2, y2]`` in PIXELS of the image (top-left origin, x1 < x2, y1 < y2), or
  ``polygon``: a flat pixel list ``[x1, y1, x2, y2, x3, y3, ...]`` (the bbox is then its bounding box);
* optional ``id`` (a line without one gets the one id rule's, :func:`line_ids`), ``task``
  (``point`` default, ``detect``, ``refusal``), ``element_type`` (``text``, ``icon``...), ``click``
  ``[x, y]`` pixels (an input of ``detect`` samples);
* optional ``instruction_alts``: other wordings of the same instruction (paraphrases, other languages), a list
  of non-empty strings, written by people and never generated; a run asks them as the ``alt`` perturbation
  (:mod:`pytest_uiground.perturb`), the target unchanged. The annotator keeps them on a line it edits but does
  not edit them;
* any other key is metadata: a slice (``"app": "radio"``).

The CSV form has the same columns, the bbox as four columns ``x1, y1, x2, y2``, the click as
``click_x, click_y`` and a polygon or ``instruction_alts`` as its JSON text; empty cells are absent keys.

Pixels wherever a person types or reads a box, labelled, in one form: :func:`box_text` prints
``box [x1, y1, x2, y2] px`` for every message and page that shows a box. Writes are atomic
(:func:`pytest_uiground.record.files.atomic_write_text`): a crash leaves the previous file whole, never half of one.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

from pytest_uiground.record import jsontext
from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.record.sample import safe_id

DEFAULT_FILE: Final = "annotations.jsonl"
TASKS: Final[tuple[str, ...]] = ("point", "detect", "refusal")
KNOWN: Final[tuple[str, ...]] = ("id", "image", "instruction", "instruction_alts", "bbox", "polygon", "task",
                                  "element_type", "click")
"""The keys the format defines, in the order lines are written; any other key is metadata."""
CSV_BOX: Final[tuple[str, ...]] = ("x1", "y1", "x2", "y2")
CSV_CLICK: Final[tuple[str, ...]] = ("click_x", "click_y")
CSV_JSON: Final = {"polygon": "a flat pixel list [x1, y1, x2, y2, x3, y3, ...]",
                   "instruction_alts": 'a list of strings ["Show the comments", "Kommentare öffnen"]'}
"""The CSV columns that hold JSON text, and what each holds (for the message when one is not JSON)."""
IMAGE_SUFFIXES: Final[tuple[str, ...]] = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif")
_LEADING_JUNK: Final = re.compile(r"^[^A-Za-z0-9]+")

PixelBox = tuple[float, float, float, float]


class FormatError(ValueError):
    """The whole file cannot be read (not UTF-8, a CSV without an ``image`` column): names the file and the fix."""


class BadLine(ValueError):
    """One line is malformed; the message names the key, the value and the fix. Becomes an invalid sample."""


@dataclass(frozen=True)
class Line:
    """One line of the file as read: its 1-based number and its object (``None`` with ``problem`` when the
    line is not a JSON object)."""

    number: int
    raw: dict[str, Any] | None
    problem: str | None = None


@dataclass(frozen=True)
class Annotation:
    """One checked line: pixel geometry, before any image is opened."""

    number: int
    id: str | None
    """The line's own id; ``None`` when it has none (:func:`line_ids` gives the id a run reads)."""
    image: str
    instruction: str
    task: str
    bbox: PixelBox
    polygon: tuple[float, ...] | None = None
    element_type: str | None = None
    click: tuple[float, float] | None = None
    meta: dict[str, str] = field(default_factory=dict)
    instruction_alts: tuple[str, ...] = ()


def box_text(box: Sequence[float]) -> str:
    """THE text of a pixel box (issue 39: there were four), wherever a person reads one: messages of the loader,
    ``validate``, the importers and the annotator's store, the terminal review's questions and the annotator's
    page (the server sends it): ``box [x1, y1, x2, y2] px``, whole pixels as integers, others to 0.1 px."""
    return "box " + _numbers_text(box) + " px"


def click_text(point: Sequence[float]) -> str:
    """A click point the same way: ``click [x, y] px``."""
    return "click " + _numbers_text(point) + " px"


def _numbers_text(values: Sequence[float]) -> str:
    return "[" + ", ".join(_num(v) for v in values) + "]"


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.1f}"


def show(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


# -- reading ----------------------------------------------------------------------------------------
def read(path: Path) -> list[Line]:
    """Every line of a JSONL (or ``.csv``) annotation file; blank lines and ``#`` comments are skipped."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: not UTF-8 text ({exc}); save the annotation file as UTF-8") from exc
    if path.suffix.lower() == ".csv":
        return _read_csv(path, text)
    out: list[Line] = []
    for number, line in enumerate(jsontext.split_lines(text), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            raw = jsontext.loads(line)
        except RecursionError:
            out.append(Line(number, None, f"nests JSON deeper than {jsontext.MAX_DEPTH} levels; each line of "
                                          "annotations.jsonl is one flat object (image, instruction, bbox...)"))
            continue
        except json.JSONDecodeError as exc:
            out.append(Line(number, None, f"not a JSON object ({exc.msg} at column {exc.colno}); each line of "
                                          "annotations.jsonl is one object such as {\"image\": \"a.png\", "
                                          "\"instruction\": \"Open the menu\", \"bbox\": [10, 20, 60, 44]}"))
            continue
        except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
            out.append(Line(number, None, f"not readable JSON ({exc}); write pixels as plain numbers"))
            continue
        if not isinstance(raw, dict):
            out.append(Line(number, None, f"is a JSON {type(raw).__name__}, not an object"))
            continue
        out.append(Line(number, raw))
    return out


def _read_csv(path: Path, text: str) -> list[Line]:
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    if "image" not in columns:
        raise FormatError(f"{path}: the CSV has no 'image' column (columns: {columns}); the header row names the "
                          f"columns: image, instruction, {', '.join(CSV_BOX)}, and optionally id, task, "
                          "element_type, click_x, click_y, polygon, then any metadata")
    out: list[Line] = []
    for row in reader:
        number = reader.line_num
        raw: dict[str, Any] = {k: v for k, v in row.items() if k is not None and v not in (None, "")}
        try:
            if any(k in raw for k in CSV_BOX):
                raw["bbox"] = [_csv_number(raw.pop(k, None), k) for k in CSV_BOX]
            if any(k in raw for k in CSV_CLICK):
                raw["click"] = [_csv_number(raw.pop(k, None), k) for k in CSV_CLICK]
            for key, shape in CSV_JSON.items():
                if key in raw:
                    raw[key] = _csv_json(raw[key], key, shape)
        except BadLine as exc:
            out.append(Line(number, None, str(exc)))
            continue
        out.append(Line(number, raw))
    return out


def _csv_json(cell: str, column: str, shape: str) -> Any:
    try:
        return jsontext.loads(cell)
    except json.JSONDecodeError as exc:
        raise BadLine(f"column {column} is {cell[:80]!r}, not JSON ({exc.msg}); write it as {shape}") from None
    except RecursionError:
        raise BadLine(f"column {column} nests JSON deeper than {jsontext.MAX_DEPTH} levels; write it as "
                      f"{shape}") from None


def _csv_number(cell: Any, column: str) -> float:
    try:
        return float(cell)
    except (TypeError, ValueError):
        raise BadLine(f"column {column} is {cell!r}, not a number (pixels)") from None


def clean_id(raw: str) -> str:
    """``raw`` in the sample-id alphabet (other characters become ``_``, a leading non-alphanumeric run
    is dropped); "" when nothing is left."""
    return _LEADING_JUNK.sub("", safe_id(raw.strip()))


def own_id(raw: Mapping[str, Any] | None) -> str:
    """The id a line gives itself as a run reads it (an integer id such as ``3`` included, in the id alphabet:
    :func:`clean_id`); "" when it gives none that is usable."""
    sid = (raw or {}).get("id")
    if not isinstance(sid, (str, int)) or isinstance(sid, bool):
        return ""
    return clean_id(str(sid))


def new_id(image: str, used: Container[str]) -> str:
    """THE id rule (issue 39: there were four): the image's stem and the first free three-digit counter
    (``home-001``, ``home-002``), unique against ``used``. The annotator's server mints the id of every sample the
    page creates with it, the importers the id of every record whose export has none, and the loader the id of a
    hand-written line without one (:func:`line_ids`), so an id reads the same wherever it was made. Written
    into the file by the server and the importers, so removing a line never renumbers the others."""
    stem = clean_id(PurePosixPath(image).stem) or "screen"
    n = 1
    while f"{stem}-{n:03d}" in used:
        n += 1
    return f"{stem}-{n:03d}"


def line_ids(lines: Iterable[Line]) -> dict[int, str]:
    """Every line's id (by line number) as a run reads it: its own (:func:`own_id`), else :func:`new_id` of its
    image against every id the file gives itself and those minted for the lines above it. A line's minted id
    depends on the lines without an id for the same screenshot above it, never on line numbers: stable while
    their order is. Two lines giving themselves one id keep it here (the loader reports the second)."""
    lines = list(lines)
    used = {own_id(line.raw) for line in lines} - {""}
    out: dict[int, str] = {}
    for line in lines:
        sid = own_id(line.raw)
        if not sid:
            image = (line.raw or {}).get("image")
            sid = new_id(image if isinstance(image, str) else "line", used)
            used.add(sid)
        out[line.number] = sid
    return out


def check_image_path(value: Any) -> str:
    """The ``image`` value when it is a relative POSIX path without ``..``; else :class:`BadLine` with the fix."""
    if not isinstance(value, str) or not value.strip():
        raise BadLine(f"'image' is {show(value)}; give the screenshot's path relative to the annotation file")
    if "\\" in value:
        raise BadLine(f"'image' {value!r} uses backslashes; write it with '/' (POSIX separators)")
    p = PurePosixPath(value)
    if p.is_absolute() or re.match(r"^[A-Za-z]:", value):
        raise BadLine(f"'image' {value!r} is absolute; write it relative to the annotation file's folder "
                      "(copy the screenshot beside or below the file)")
    if "\0" in value or any(ord(c) < 32 for c in value):
        raise BadLine(f"'image' {value!r} contains a control character; write the screenshot's file name as it is")
    if value != value.strip():
        raise BadLine(f"'image' {value!r} begins or ends with a space; write the screenshot's file name as it is")
    if ".." in p.parts:
        raise BadLine(f"'image' {value!r} contains '..'; image paths stay inside the annotation file's folder: "
                      "copy the screenshot there (init --from does) and write its path relative to the file")
    return value


def finite(v: Any) -> float | None:
    """``v`` as a finite float, or None: a bool, text, NaN, an infinity (``1e400`` reads as one) or an integer too
    large for a float is no pixel coordinate."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _numbers(value: Any, key: str, n: int | None, hint: str) -> list[float]:
    values = [finite(v) for v in value] if isinstance(value, (list, tuple)) else [None]
    if (n is not None and len(values) != n) or any(v is None for v in values):
        raise BadLine(f"'{key}' is {show(value)[:80]}; expected {hint} (finite numbers)")
    return [v for v in values if v is not None]


def parse(line: Line, *, draft: bool = False) -> Annotation:
    """A checked :class:`Annotation`, or :class:`BadLine` naming the key, the value and the fix. Only what the
    line itself says is checked here; the image's size (a box outside it) is the loader's and validate's.
    ``draft``: the annotator's store saving a sample whose instruction is not typed yet (the loader reads
    such a line as an invalid sample, "has no instruction yet"); everything else is checked alike, so the
    annotator never saves a line the loader refuses for another reason (issue 39: one reader)."""
    if line.raw is None:
        raise BadLine(line.problem or "not an object")
    raw = line.raw
    image = check_image_path(raw.get("image"))
    task = raw.get("task", "point")
    if task not in TASKS:
        raise BadLine(f"'task' is {show(task)}; expected one of {', '.join(TASKS)}")
    instruction = raw.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        raise BadLine(f"'instruction' is {show(instruction)}, not text")
    instruction = (instruction or "").strip()
    if not instruction and task != "detect" and not draft:
        raise BadLine("has no instruction yet; add \"instruction\": what a user would say to reach this element "
                      "(\"Open the comments\")")
    alts = instruction_alts(raw.get("instruction_alts"))
    polygon: tuple[float, ...] | None = None
    if raw.get("polygon") is not None:
        values = _numbers(raw["polygon"], "polygon", None, "a flat pixel list [x1, y1, x2, y2, x3, y3, ...]")
        if len(values) < 6 or len(values) % 2:
            raise BadLine(f"'polygon' has {len(values)} numbers; expected a flat pixel list of at least three "
                          "vertices [x1, y1, x2, y2, x3, y3, ...]")
        polygon = tuple(values)
        xs, ys = values[0::2], values[1::2]
        bbox: PixelBox = (min(xs), min(ys), max(xs), max(ys))
    elif raw.get("bbox") is not None:
        x1, y1, x2, y2 = _numbers(raw["bbox"], "bbox", 4, "[x1, y1, x2, y2] in pixels of the image")
        bbox = (x1, y1, x2, y2)
    elif task == "refusal":
        bbox = (0.0, 0.0, 0.0, 0.0)
    else:
        raise BadLine("has no 'bbox'; add \"bbox\": [x1, y1, x2, y2] in pixels of the image (or a \"polygon\")")
    if task != "refusal" and not (bbox[0] < bbox[2] and bbox[1] < bbox[3]):
        raise BadLine(f"{box_text(bbox)} is degenerate: x1 < x2 and y1 < y2 are needed (corners, not [x, y, w, h]"
                      "; convert a width/height box to x2 = x + w, y2 = y + h)")
    click = None
    if raw.get("click") is not None:
        cx, cy = _numbers(raw["click"], "click", 2, "[x, y] in pixels of the image")
        click = (cx, cy)
    element_type = raw.get("element_type")
    sid = raw.get("id")
    if sid is not None and (not isinstance(sid, (str, int)) or isinstance(sid, bool) or not str(sid).strip()):
        raise BadLine(f"'id' is {show(sid)}; expected a non-empty string")
    meta = {str(k): _meta_text(v) for k, v in raw.items() if k not in KNOWN and _meta_text(v)}
    return Annotation(number=line.number, id=own_id(raw) or None,
                      image=image, instruction=instruction, task=str(task), bbox=bbox, polygon=polygon,
                      element_type=str(element_type) if isinstance(element_type, (str, int)) and str(element_type)
                      else None, click=click, meta=meta, instruction_alts=alts)


def instruction_alts(value: Any) -> tuple[str, ...]:
    """``instruction_alts`` checked: absent or null is none; else a list of non-empty strings (each stripped),
    or :class:`BadLine` naming the value and the fix."""
    if value is None:
        return ()
    fix = ('; expected a list of other wordings of the instruction, e.g. "instruction_alts": '
           '["Show the comments", "Kommentare öffnen"]')
    if not isinstance(value, list):
        raise BadLine(f"'instruction_alts' is {show(value)[:80]}, not a list{fix}")
    out: list[str] = []
    for i, alt in enumerate(value, 1):
        if not isinstance(alt, str) or not alt.strip():
            raise BadLine(f"'instruction_alts' item {i} is {show(alt)[:80]}, not a non-empty string{fix}")
        out.append(alt.strip())
    return tuple(out)


def _meta_text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- writing ----------------------------------------------------------------------------------------
def ordered(record: Mapping[str, Any]) -> dict[str, Any]:
    """A line's keys in the format's order (:data:`KNOWN`), metadata after, so a diff of the file reads well;
    whole-pixel floats are written as integers."""
    out = {k: _tidy(record[k]) for k in KNOWN if k in record and record[k] is not None}
    out.update({k: v for k, v in record.items() if k not in KNOWN and v is not None})
    return out


def _tidy(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (list, tuple)):
        return [_tidy(v) for v in value]
    return value


def dumps(records: Iterable[Mapping[str, Any]]) -> str:
    """The JSONL text of ``records``: one object per line, UTF-8 kept readable (no ``\\u`` escapes but those of
    U+2028, U+2029 and U+0085, which a reader splitting on every line break would split a line at)."""
    return "".join(jsontext.dumps_line(ordered(r), allow_nan=False) + "\n" for r in records)


def write(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Replace ``path`` with ``records``, whole or not at all (a reader never sees half a file)."""
    atomic_write_text(path, dumps(records))


def raw_records(path: Path) -> list[dict[str, Any]]:
    """The file's objects as they are (CSV rows converted), for a writer that edits and writes them back;
    a line that is not an object raises :class:`FormatError` naming it (it would be lost on writing)."""
    out: list[dict[str, Any]] = []
    for line in read(path):
        if line.raw is None:
            raise FormatError(f"{path}:{line.number}: {line.problem}; fix that line first")
        out.append(line.raw)
    return out
