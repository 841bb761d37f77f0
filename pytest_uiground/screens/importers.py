"""``python -m pytest_uiground import coco|label-studio|cvat|openadapt FILE --out annotations.jsonl``.

Why: teams that already label screenshots do it in a labelling tool; re-typing those boxes would be
the slowest and most error-prone step of building a suite. Each importer reads the tool's documented
export and writes the one format the ``grounding`` loader reads (:mod:`.format`), in pixels:

* ``coco``: COCO object detection JSON (``images``, ``annotations``, ``categories``); ``bbox`` is
  ``[x, y, w, h]`` in pixels (cocodataset.org/#format-data), the instruction is the annotation's
  ``attributes.instruction`` (where CVAT's COCO export writes a box's attributes), the category's
  name its ``element_type``;
* ``label-studio``: Label Studio's JSON export (a list of tasks); a ``rectanglelabels`` region's
  ``x, y, width, height`` are percent of ``original_width``/``original_height``, and the
  ``textarea`` result named ``instruction`` with the same region ``id`` holds its instruction
  (labelstud.io/guide/export.html: "Label Studio JSON format of annotated tasks"); images named
  ``/data/local-files/?d=PATH`` or a URL whose file name is found beside the export (a JSON-MIN export, whose
  tasks have no ``data`` and whose instructions name no box, is refused naming the fix); tested on a real
  export of Label Studio 1.23.2 (``tests/data/exports/label-studio``);
* ``cvat``: "CVAT for images 1.1" XML (``<image name width height>`` holding ``<box xtl ytl xbr ybr
  label>`` and ``<polygon points="x,y;x,y">``, pixels), with an ``instruction`` ``<attribute>``
  (docs.cvat.ai, "CVAT for images export"); tested, like ``coco``, on datumaro's exports
  (``tests/data/exports/datumaro``: CVAT is a server, not a package) and COCO on pycocotools' reading;
* ``openadapt``: the OpenAdapt annotation JSON the ``openadapt`` loader reads (either form), one
  ``detect`` line per element with the same sample ids (read by that loader, imported by name so the
  two folders never import each other).

An id the export gives a record (an ``id`` attribute) is kept; every other record gets the one id rule's
(:func:`pytest_uiground.screens.format.new_id`, the annotator's: ``home-001``), unique in the suite written to.

Every written ``image`` resolves relative to the output file: an image found outside the output's
folder is copied into ``images/`` beside it (the format allows no ``..``), and one the importer cannot
find is an error naming where it looked and ``--images DIR``.

**What an export may name (issue 38).** Only screenshots under the export's folder (the one above it for an
export in ``annotations/``, COCO's layout), ``--images DIR`` or the output's folder are read: a ``file_name``
that is absolute or climbs with ``../`` (or a Label Studio ``?d=../../...``) to a file outside them is refused
naming the record, and so is a file that is not an image. **One bad record, no import**: a record with a
non-finite, overflowing or boolean number, a degenerate box, or an id used twice is an error naming the
record, and nothing is written: the lines and the screenshots are checked first, then the screenshots copied
and the file replaced (copies removed again when that fails). ``--append`` adds to an existing
``annotations.jsonl`` (issue 39: imports join a suite that is being annotated): its lines are kept byte for
byte, and an id it already has, or a box it already has on the same screenshot, is refused, naming both.
"""

from __future__ import annotations

import argparse
import filecmp
import glob
import re
import shutil
import sys
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Final

from pytest_uiground import registry
from pytest_uiground.record import jsontext
from pytest_uiground.record.files import atomic_write_text
from pytest_uiground.screens import format as fmt


class ImportFailed(Exception):
    """The export cannot be imported; the message names the file, the record, the value and the fix."""


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class Images:
    """Finds an export's images (only under the export's folder, ``--images`` or the output's folder) and makes
    them paths relative to the output file; the copies of strays are planned in :attr:`copies`, made by
    :func:`commit` once every record is known good."""

    def __init__(self, export: Path, out: Path, extra: Path | None) -> None:
        self.export, self.out_dir, self.extra = export, out.parent.resolve(), extra
        self.home = export.parent.parent if export.parent.name == "annotations" else export.parent
        """The export's folder; for ``annotations/instances_default.json`` the folder above it, where COCO's
        layout (and datumaro's and CVAT's COCO export: ``images/default/NAME``) keeps the screenshots."""
        self.roots = [r.resolve() for r in (extra, self.home) if r is not None] + [self.out_dir]
        self.copies: dict[Path, Path] = {}
        """Destination under the output's ``images/`` → the screenshot to copy there."""
        self._checked: dict[Path, str | None] = {}
        self._there: dict[Path, Path | None] = {}

    def find(self, name: str, where: str) -> Path:
        """The screenshot ``name`` (as the export writes it) resolved, inside the allowed folders."""
        name = name.replace("\\", "/")
        base = PurePosixPath(name).name
        roots = [r for r in (self.extra, self.home, self.out_dir) if r is not None]
        tried: list[Path] = []
        outside: list[Path] = []
        for root in roots:
            for cand in (root / name, root / "images" / name, root / base, root / "images" / base):
                if cand not in tried:
                    tried.append(cand)
                if cand.is_file():
                    found = cand.resolve()
                    if any(_inside(found, r) for r in self.roots):
                        return self._image(found, name, where)
                    outside.append(found)
        for root in roots:  # a layout of the tool's own (images/default/NAME): search below the roots
            for found in sorted(root.rglob(glob.escape(base))) if root.is_dir() and base else []:
                if found.is_file() and any(_inside(found.resolve(), r) for r in self.roots):
                    return self._image(found.resolve(), name, where)
        if outside:
            also = f" and --images {self.extra}" if self.extra else ""
            raise ImportFailed(f"{where}: image {name!r} is {outside[0]}, outside the export's folder "
                               f"{self.home.resolve()}{also}; only screenshots under them are imported: "
                               "copy it there, or pass --images DIR, the folder holding the screenshots")
        looked = ", ".join(str(t) for t in tried[:4])
        raise ImportFailed(f"{where}: image {name!r} not found (looked in {looked} and below "
                           f"{', '.join(map(str, roots))}); pass --images DIR, the folder holding the screenshots")

    def _image(self, path: Path, name: str, where: str) -> Path:
        """``path`` when it is an image (its header read, never its pixels), else the record's error."""
        if path not in self._checked:
            from PIL import Image, UnidentifiedImageError

            try:
                with Image.open(path) as img:
                    img.size  # noqa: B018  (the header is read by open)
                self._checked[path] = None
            except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError) as exc:
                self._checked[path] = f"{type(exc).__name__}: {exc}"
        problem = self._checked[path]
        if problem is not None:
            raise ImportFailed(f"{where}: image {name!r} ({path}) is not an image ({problem}); name a screenshot "
                               f"({', '.join(fmt.IMAGE_SUFFIXES)})")
        return path

    def _already_there(self, found: Path) -> Path | None:
        """The copy of ``found`` (same name, same bytes) already under the output's folder, if any: an export of
        screenshots a suite holds (``init --from`` copied them into ``screens/``) names them, not a second copy."""
        if found not in self._there:
            self._there[found] = next((p for p in sorted(self.out_dir.rglob(glob.escape(found.name)))
                                       if p.is_file() and filecmp.cmp(p, found, shallow=False)), None)
        return self._there[found]

    def relative(self, name: str, where: str) -> str:
        found = self.find(name, where)
        try:
            return found.relative_to(self.out_dir).as_posix()
        except ValueError:
            pass
        same = self._already_there(found)
        if same is not None:
            return same.relative_to(self.out_dir).as_posix()
        dest = self.out_dir / "images" / found.name
        planned = self.copies.get(dest)
        if planned is None and dest.exists():
            if not dest.is_file() or not filecmp.cmp(dest, found, shallow=False):
                raise ImportFailed(f"{where}: {dest} exists and differs from {found}; two screenshots share the name "
                                   f"{found.name!r}: rename one, or write --out beside the images")
        elif planned is None:
            self.copies[dest] = found
        elif planned != found and not filecmp.cmp(planned, found, shallow=False):
            raise ImportFailed(f"{where}: {found} and {planned} differ but share the name {found.name!r} (both would "
                               "be copied to images/): rename one, or write --out beside the images")
        return dest.relative_to(self.out_dir).as_posix()


class Records:
    """The imported lines, each checked as it is added (:meth:`add` raises :class:`ImportFailed` naming the
    record): the format's checks (a line without an instruction yet passes: the annotator adds it), ids
    unique, and with ``existing`` lines (``--append``) no id and no box on the same screenshot twice."""

    def __init__(self, existing: Iterable[fmt.Line] = (), existing_name: str = "") -> None:
        self.lines: list[dict[str, Any]] = []
        self.ids: dict[str, str] = {}
        self.boxes: dict[tuple[str, tuple[float, ...]], str] = {}
        existing = list(existing)
        ids = fmt.line_ids(existing)  # the ids a run reads, minted ones included: a new id never takes one
        for line in existing:
            where = f"{existing_name}:{line.number}"
            self.ids.setdefault(ids[line.number], where)
            if line.raw is None:
                continue
            try:
                ann = _parsed(line.raw)
            except fmt.BadLine:
                continue  # the loader reports it; an import does not mend it
            if ann.task != "refusal":
                self.boxes.setdefault(_box_key(ann), where)

    def add(self, where: str, line: dict[str, Any]) -> None:
        try:
            ann = _parsed(line)
        except fmt.BadLine as exc:
            raise ImportFailed(f"{where}: {exc}") from None
        if ann.task != "refusal" and _box_key(ann) in self.boxes:
            raise ImportFailed(f"{where}: {ann.image} {fmt.box_text(ann.bbox)} is already a sample "
                               f"({self.boxes[_box_key(ann)]}); import only the records that are new (nothing was "
                               "written)")
        if line.get("id"):
            sid = str(line["id"])
        else:  # the export gives this record no id: the one id rule's (the annotator's), unique in the suite
            sid = line["id"] = fmt.new_id(ann.image, self.ids)
        if sid in self.ids:
            raise ImportFailed(f"{where}: id {sid!r} is also the id of {self.ids[sid]}; ids must be unique: give the "
                               "record another id (nothing was written)")
        self.ids[sid] = where
        self.lines.append(line)  # its box is not added to the overlap check: two instructions may name one
        # element (validate warns about a box used twice, naming both lines)


def _parsed(line: Mapping[str, Any]) -> fmt.Annotation:
    probe = dict(line)
    if not probe.get("instruction"):
        probe["instruction"] = "-"  # no instruction yet: the annotator adds it
    return fmt.parse(fmt.Line(0, probe))


def _box_key(ann: fmt.Annotation) -> tuple[str, tuple[float, ...]]:
    return ann.image, tuple(round(v, 2) for v in (ann.polygon or ann.bbox))


def line_of(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v not in (None, "")}


def _pixels(values: Any, n: int | None, where: str, what: str) -> list[float]:
    """``values`` as finite floats, or the record's error: NaN, an infinity (``1e400`` reads as one), an integer
    beyond a float, a boolean or text is no pixel."""
    numbers = [fmt.finite(v) for v in values] if isinstance(values, list) else [None]
    if (n is not None and len(numbers) != n) or any(v is None for v in numbers):
        raise ImportFailed(f"{where}: {what} is {_show(values)}; expected finite numbers (pixels)")
    return [v for v in numbers if v is not None]


def _show(value: Any) -> str:
    text = fmt.show(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _meta(values: Mapping[Any, Any], skip: Iterable[str] = ()) -> dict[str, Any]:
    """The scalar values of ``values`` worth keeping as metadata (finite numbers, text)."""
    skipped = set(skip)
    return {str(k): v for k, v in values.items() if str(k) not in skipped and (
        isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool) and fmt.finite(v) is not None))}


def _key(value: Any) -> Any:
    """``value`` when it can be a dict key read from JSON (an id), else None (a list is no id)."""
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def rounded(values: Sequence[float]) -> list[float]:
    return [round(float(v), 2) for v in values]


# -- COCO ----------------------------------------------------------------------------------------------
def from_coco(path: Path, images: Images, records: Records) -> None:
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("images"), list) or \
            not isinstance(data.get("annotations"), list):
        raise ImportFailed(f"{path}: not a COCO file (expected an object with 'images' and 'annotations' lists)")
    by_id = {_key(im.get("id")): im for im in data["images"] if isinstance(im, dict)}
    categories = data.get("categories")
    cats = {_key(c.get("id")): c.get("name") for c in (categories if isinstance(categories, list) else [])
            if isinstance(c, dict)}
    for k, ann in enumerate(data["annotations"]):
        where = f"{path}: annotations[{k}]"
        if not isinstance(ann, dict):
            raise ImportFailed(f"{where} is not an object")
        if _key(ann.get("id")) is not None:
            where += f" (id {_show(ann['id'])})"
        im = by_id.get(_key(ann.get("image_id")))
        if im is None or not isinstance(im.get("file_name"), str):
            raise ImportFailed(f"{where}: image_id {_show(ann.get('image_id'))} names no entry of 'images' with a "
                               "file_name")
        x, y, w, h = _pixels(ann.get("bbox"), 4, where, "bbox [x, y, w, h]")
        attrs: dict[str, Any] = ann["attributes"] if isinstance(ann.get("attributes"), dict) else {}
        extra = _meta(attrs, ("instruction", "occluded", "rotation", "task", "id", *fmt.KNOWN))
        own = _key(attrs.get("id"))
        instruction = attrs.get("instruction")
        records.add(where, line_of(id=fmt.clean_id(str(own)) if own is not None else None,
                                 image=images.relative(im["file_name"], where),
                                 instruction=instruction if isinstance(instruction, str) else None,
                                 bbox=rounded([x, y, x + w, y + h]),
                                 task=attrs.get("task") if attrs.get("task") in fmt.TASKS else None,
                                 element_type=_text(cats.get(_key(ann.get("category_id")))), **extra))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- Label Studio --------------------------------------------------------------------------------------
def _ls_image(value: Any, where: str) -> str:
    """The file an exported task's image names: ``/data/local-files/?d=PATH`` is PATH; an upload or a URL
    is its file name (Label Studio prefixes uploads with 8 hex characters and '-', kept: that is the file)."""
    if not isinstance(value, str) or not value:
        raise ImportFailed(f"{where}: data image is {_show(value)}, not a file or URL")
    parsed = urllib.parse.urlparse(value)
    query = urllib.parse.parse_qs(parsed.query)
    if "d" in query:
        return query["d"][0]
    return PurePosixPath(urllib.parse.unquote(parsed.path)).name


_UPLOAD_PREFIX: Final = re.compile(r"^[0-9a-f]{8}-(?=.)")
"""Label Studio's prefix on an uploaded file's name (``4434e27d-a.png`` for ``a.png``)."""


def _ls_found(images: Images, name: str, where: str) -> str:
    """The screenshot of an uploaded task: the export names Label Studio's copy (``4434e27d-a.png``); a user
    who kept only the file they uploaded (``a.png``) has it under its own name, taken when the copy is
    absent. The error, when neither is there, is the one for the name the export gives."""
    try:
        return images.relative(name, where)
    except ImportFailed:
        own = PurePosixPath(name)
        if not _UPLOAD_PREFIX.match(own.name):
            raise
        try:
            return images.relative(str(own.with_name(_UPLOAD_PREFIX.sub("", own.name))), where)
        except ImportFailed:
            pass
        raise


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def from_label_studio(path: Path, images: Images, records: Records) -> None:
    data = _json(path)
    if not isinstance(data, list):
        raise ImportFailed(f"{path}: not a Label Studio JSON export (expected a list of tasks; JSON-MIN and CSV "
                           "exports are not read: export as 'JSON')")
    for t, task in enumerate(data):
        if not isinstance(task, dict):
            raise ImportFailed(f"{path}: task #{t} is not an object")
        name = f"{path}: task {_show(_key(task.get('id')) or t)}"
        if not isinstance(task.get("data"), dict):  # JSON-MIN is a list too, its tasks flat (no 'data', no regions)
            fields = ", ".join(sorted(map(str, task))[:6])
            raise ImportFailed(f"{name} has no 'data' object (its fields: {fields}); a JSON-MIN export looks like "
                               "this and does not say which instruction belongs to which box: export the project as "
                               "'JSON' (Label Studio JSON)")
        source = _dict(task.get("data"))
        image_key = next((k for k in ("image", "img", "screenshot") if k in source), next(iter(source), None))
        image = _ls_found(images, _ls_image(source.get(image_key) if image_key else None, name), name)
        meta = _meta({k: v for k, v in source.items() if k != image_key}, fmt.KNOWN)
        annotations = _list(task.get("annotations")) or _list(task.get("completions"))
        results = [r for a in annotations if isinstance(a, dict) and not a.get("was_cancelled")
                   for r in _list(a.get("result")) if isinstance(r, dict)]
        texts: dict[str, str] = {}
        for r in results:
            if r.get("type") == "textarea" and r.get("from_name") == "instruction":
                value = _dict(r.get("value")).get("text")
                texts[str(r.get("id"))] = (" ".join(str(v) for v in value) if isinstance(value, list)
                                           else value if isinstance(value, str) else "")
        for r in results:
            if r.get("type") != "rectanglelabels":
                continue
            where = f"{name} region {_show(r.get('id'))}"
            v = _dict(r.get("value"))
            ow, oh, x, y, w, h = _pixels([r.get("original_width"), r.get("original_height"), v.get("x"), v.get("y"),
                                          v.get("width"), v.get("height")], 6, where,
                                         "[original_width, original_height, x, y, width, height] (x..height in percent "
                                         "of the image)")
            if v.get("rotation"):
                raise ImportFailed(f"{where} is rotated ({_show(v['rotation'])} degrees); boxes are axis-aligned: "
                                   "redraw it unrotated")
            x1, y1 = x * ow / 100, y * oh / 100
            x2, y2 = x1 + w * ow / 100, y1 + h * oh / 100
            labels = _list(v.get("rectanglelabels"))
            records.add(where, line_of(image=image,
                                     instruction=texts.get(str(r.get("id")), ""), bbox=rounded([x1, y1, x2, y2]),
                                     element_type=_text(labels[0]) if labels else None, **meta))


# -- CVAT for images -----------------------------------------------------------------------------------
def from_cvat(path: Path, images: Images, records: Records) -> None:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ImportFailed(f"{path}: not XML ({exc}); export the task as 'CVAT for images 1.1'") from exc
    if root.tag != "annotations":
        raise ImportFailed(f"{path}: the root element is <{root.tag}>, not <annotations> (CVAT for images 1.1)")
    for im in root.iter("image"):
        name = im.get("name")
        if not name:
            raise ImportFailed(f"{path}: an <image> without a name (id {im.get('id')!r})")
        image = images.relative(name, f"{path}: image {name!r}")
        for k, shape in enumerate(s for s in im if s.tag in ("box", "polygon")):
            where = f"{path}: image {name!r} {shape.tag} #{k + 1}"
            attrs = {a.get("name"): (a.text or "") for a in shape.iter("attribute")}
            extra = {str(n): v for n, v in attrs.items() if n not in ("instruction", "id", "task", *fmt.KNOWN) and n
                     and v}
            geometry: dict[str, Any]
            if shape.tag == "box":
                corners = [_float(shape.get(c)) for c in ("xtl", "ytl", "xbr", "ybr")]
                geometry = {"bbox": rounded(_pixels(corners, 4, where, "xtl, ytl, xbr, ybr"))}
            else:
                pts = [_float(v) for pair in (shape.get("points") or "").split(";") for v in pair.split(",")]
                geometry = {"polygon": rounded(_pixels(pts, None, where, "points 'x,y;x,y;...'"))}
            records.add(where, line_of(id=fmt.clean_id(attrs.get("id") or ""), image=image,
                                     instruction=attrs.get("instruction", ""), **geometry,
                                     task=attrs.get("task") if attrs.get("task") in fmt.TASKS else None,
                                     element_type=shape.get("label"), **extra))


def _float(text: str | None) -> float | str | None:
    """An XML attribute's number (``nan``, ``inf`` and ``1e400`` read as themselves, refused by :func:`_pixels`)."""
    try:
        return float(text) if text is not None else None
    except ValueError:
        return text


IMPORTERS: Final = {"coco": from_coco, "label-studio": from_label_studio, "cvat": from_cvat}
"""The labelling tools' exports this module reads itself; a benchmark's own format (``openadapt``) registers its
importer under the ``pytest_uiground.importers`` entry-point group (the core knows no benchmark, issue 39)."""


def importer(kind: str) -> Any:
    """The importer of ``kind``: one of :data:`IMPORTERS`, else the one registered under that name."""
    if kind in IMPORTERS:
        return IMPORTERS[kind]
    return registry.resolve(registry.IMPORTER_GROUP, kind, what="import format", option="import KIND")


def formats() -> list[str]:
    """Every format ``import`` reads: the tools' (:data:`IMPORTERS`) and the registered ones."""
    return [*IMPORTERS, *sorted(k for k in registry.known(registry.IMPORTER_GROUP) if k not in IMPORTERS)]


def _json(path: Path) -> Any:
    try:
        return jsontext.loads(path.read_text(encoding="utf-8-sig"))
    except RecursionError as exc:  # jsontext.TooDeep: names the line
        raise ImportFailed(f"{path}: {exc}; this is not a labelling tool's export") from None
    except (UnicodeDecodeError, ValueError) as exc:  # ValueError: JSONDecodeError, an integer of 5,000 digits
        raise ImportFailed(f"{path}: not JSON text ({exc})") from None


def convert(kind: str, source: Path, out: Path, images_dir: Path | None = None,
            existing: Iterable[fmt.Line] = ()) -> tuple[list[dict[str, Any]], dict[Path, Path]]:
    """The checked lines of ``source`` (an export of ``kind``) with images relative to ``out``, and the copies
    they need (destination → screenshot; :func:`commit` makes them). Nothing is written here; the first bad
    record raises :class:`ImportFailed` naming it. ``existing``: the lines already in ``out`` (``--append``)."""
    images = Images(source, out, images_dir)
    records = Records(existing, out.name)
    importer(kind)(source, images, records)
    return records.lines, images.copies


def commit(out: Path, text: str, copies: Mapping[Path, Path]) -> None:
    """Copy the screenshots, then replace ``out`` with ``text`` (atomically); on any failure the copies and
    the folders made for them are removed again, so a failed import leaves nothing behind."""
    made: list[Path] = []
    try:
        for folder in (out.parent, *{d.parent for d in copies}):
            for p in reversed([folder, *folder.parents]):
                if not p.exists():
                    p.mkdir()
                    made.append(p)
        for dest, src in copies.items():
            if dest.exists():
                raise ImportFailed(f"{dest} appeared during the import; run it again")
            made.append(dest)
            shutil.copy2(src, dest)
        atomic_write_text(out, text)
    except BaseException:
        for p in reversed(made):
            try:
                p.rmdir() if p.is_dir() else p.unlink(missing_ok=True)
            except OSError:
                pass
        raise


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pytest_uiground import",
                                description="Convert a labelling tool's export into annotations.jsonl (pixels) "
                                            "for the grounding loader. Nothing is written unless every record "
                                            "imports.")
    p.add_argument("kind", choices=formats(), help="the export's format")
    p.add_argument("file", type=Path, help="the export file")
    p.add_argument("--out", type=Path, default=Path(fmt.DEFAULT_FILE), help="the JSONL to write (default: "
                   f"{fmt.DEFAULT_FILE}); images outside its folder are copied into images/ beside it")
    p.add_argument("--images", type=Path, default=None, help="where the screenshots are, when not beside the export")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--append", action="store_true", help="add to --out when it exists (a suite being annotated): "
                      "its lines are kept; an id or a box on the same screenshot it already has is refused")
    mode.add_argument("--force", action="store_true", help="replace --out when it exists (what it holds is lost)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    out: Path = args.out
    if not args.file.is_file():
        print(f"import: {args.file} does not exist" + (" (it is a folder; pass the export file)"
              if args.file.is_dir() else ""), file=sys.stderr)
        return 2
    if out.is_dir():
        print(f"import: --out {out} is a folder; pass the file to write: --out {out / fmt.DEFAULT_FILE}",
              file=sys.stderr)
        return 2
    if out.suffix.lower() == ".csv":
        print(f"import: --out {out} is a CSV; the import writes JSON lines: --out {out.with_suffix('.jsonl')}",
              file=sys.stderr)
        return 2
    if args.images is not None and not args.images.is_dir():
        print(f"import: --images {args.images} is not a folder; pass the folder holding the screenshots",
              file=sys.stderr)
        return 2
    if out.exists() and not (args.force or args.append):
        print(f"import: --out {out} exists; pass --append to add these samples to it, --force to replace it, or "
              "choose another --out", file=sys.stderr)
        return 2
    before = ""
    existing: list[fmt.Line] = []
    try:
        if args.append and out.exists():
            before = out.read_bytes().decode("utf-8")  # byte for byte: CRLF lines stay CRLF
            existing = fmt.read(out)
        lines, copies = convert(args.kind, args.file, out, args.images, existing)
        text = before + ("\n" if before and not before.endswith("\n") else "") + fmt.dumps(lines)
        commit(out, text, copies)
    except (ImportFailed, fmt.FormatError) as exc:
        print(f"import: {exc}" + ("" if "nothing was written" in str(exc) else " (nothing was written)"),
              file=sys.stderr)
        return 1
    except UnicodeDecodeError as exc:
        print(f"import: --out {out}: not UTF-8 text ({exc}); nothing was written", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"import: could not write {exc.filename or out}: {exc.strerror or exc} (nothing was written)",
              file=sys.stderr)
        return 1
    missing = sum(1 for line in lines if not line.get("instruction") and line.get("task", "point") != "detect")
    print(f"{'added' if existing else 'wrote'} {len(lines)} samples to {out}" + (f" ({len(copies)} images copied "
          f"into {out.parent / 'images'})" if copies else "") + (f", after its {len(existing)} lines" if existing
                                                                 else ""))
    if missing:
        print(f"{missing} samples have no instruction yet (they fail as invalid until given one): python -m "
              f"pytest_uiground annotate {out.parent}")
    return 0
