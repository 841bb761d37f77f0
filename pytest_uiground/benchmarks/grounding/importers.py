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
  ``/data/local-files/?d=PATH`` or a URL whose file name is found beside the export;
* ``cvat``: "CVAT for images 1.1" XML (``<image name width height>`` holding ``<box xtl ytl xbr ybr
  label>`` and ``<polygon points="x,y;x,y">``, pixels), with an ``instruction`` ``<attribute>``
  (docs.cvat.ai, "CVAT for images export");
* ``openadapt``: the OpenAdapt annotation JSON the ``openadapt`` loader reads (either form), one
  ``detect`` line per element with the same sample ids (read by that loader, imported by name so the
  two folders never import each other).

Every written ``image`` resolves relative to the output file: an image found outside the output's
folder is copied into ``images/`` beside it (the format allows no ``..``), and one the importer cannot
find is an error naming where it looked and ``--images DIR``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Final

from pytest_uiground.benchmarks.grounding import format as fmt

FORMATS: Final = ("coco", "label-studio", "cvat", "openadapt")


class ImportFailed(Exception):
    """The export cannot be imported; the message names the file, the value and the fix."""


class Images:
    """Finds an export's images and makes them paths relative to the output file (copying strays)."""

    def __init__(self, export: Path, out: Path, extra: Path | None) -> None:
        self.export, self.out_dir, self.extra = export, out.parent.resolve(), extra
        self.copied = 0

    def find(self, name: str) -> Path:
        name = name.replace("\\", "/")
        base = PurePosixPath(name).name
        roots = [r for r in (self.extra, self.export.parent, self.out_dir) if r is not None]
        tried: list[Path] = []
        for root in roots:
            for cand in (root / name, root / "images" / name, root / base, root / "images" / base):
                if cand not in tried:
                    tried.append(cand)
                if cand.is_file():
                    return cand
        for root in roots:  # a layout of the tool's own (images/default/NAME): search below the roots
            for found in sorted(root.rglob(base)) if root.is_dir() else []:
                if found.is_file():
                    return found
        raise ImportFailed(f"image {name!r} not found (looked in {', '.join(str(t) for t in tried[:4])} and below "
                           f"{', '.join(map(str, roots))}); pass --images DIR, the folder holding the screenshots")

    def relative(self, name: str) -> str:
        found = self.find(name).resolve()
        try:
            return found.relative_to(self.out_dir).as_posix()
        except ValueError:
            dest = self.out_dir / "images" / found.name
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(found, dest)
                self.copied += 1
            elif dest.read_bytes() != found.read_bytes():
                raise ImportFailed(f"{dest} exists and differs from {found}; two screenshots share the name "
                                   f"{found.name!r}: rename one, or write --out beside the images") from None
            return dest.relative_to(self.out_dir).as_posix()


def _line(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v not in (None, "")}


def _round(values: Sequence[float]) -> list[float]:
    return [round(float(v), 2) for v in values]


# -- COCO ----------------------------------------------------------------------------------------------
def from_coco(path: Path, images: Images) -> list[dict[str, Any]]:
    data = _json(path)
    if not isinstance(data, dict) or not isinstance(data.get("images"), list) or \
            not isinstance(data.get("annotations"), list):
        raise ImportFailed(f"{path}: not a COCO file (expected an object with 'images' and 'annotations' lists)")
    by_id = {im.get("id"): im for im in data["images"] if isinstance(im, dict)}
    cats = {c.get("id"): c.get("name") for c in data.get("categories", []) if isinstance(c, dict)}
    out = []
    for k, ann in enumerate(data["annotations"]):
        where = f"{path}: annotations[{k}]"
        if not isinstance(ann, dict):
            raise ImportFailed(f"{where} is not an object")
        im = by_id.get(ann.get("image_id"))
        if im is None or not isinstance(im.get("file_name"), str):
            raise ImportFailed(f"{where}: image_id {ann.get('image_id')!r} names no entry of 'images' with a "
                               "file_name")
        bbox = ann.get("bbox")
        if not (isinstance(bbox, list) and len(bbox) == 4 and all(isinstance(v, (int, float)) for v in bbox)):
            raise ImportFailed(f"{where}: bbox {bbox!r} is not [x, y, w, h] in pixels")
        x, y, w, h = bbox
        attrs: dict[str, Any] = ann["attributes"] if isinstance(ann.get("attributes"), dict) else {}
        extra = {str(k): v for k, v in attrs.items() if k not in ("instruction", "occluded", "rotation", "task",
                                                                 "id") and isinstance(v, (str, int, float))}
        sid = attrs.get("id") or f"{PurePosixPath(im['file_name']).stem}-{ann.get('id', k)}"
        out.append(_line(id=fmt.clean_id(str(sid)), image=images.relative(im["file_name"]),
                         instruction=str(attrs.get("instruction") or ""), bbox=_round([x, y, x + w, y + h]),
                         task=attrs.get("task") if attrs.get("task") in fmt.TASKS else None,
                         element_type=cats.get(ann.get("category_id")), **extra))
    return out


# -- Label Studio --------------------------------------------------------------------------------------
def _ls_image(value: Any) -> str:
    """The file an exported task's image names: ``/data/local-files/?d=PATH`` is PATH; an upload or a URL
    is its file name (Label Studio prefixes uploads with 8 hex characters and '-', kept: that is the file)."""
    if not isinstance(value, str) or not value:
        raise ImportFailed(f"task data image is {value!r}, not a file or URL")
    parsed = urllib.parse.urlparse(value)
    query = urllib.parse.parse_qs(parsed.query)
    if "d" in query:
        return query["d"][0]
    return PurePosixPath(urllib.parse.unquote(parsed.path)).name


def from_label_studio(path: Path, images: Images) -> list[dict[str, Any]]:
    data = _json(path)
    if not isinstance(data, list):
        raise ImportFailed(f"{path}: not a Label Studio JSON export (expected a list of tasks; JSON-MIN and CSV "
                           "exports are not read: export as 'JSON')")
    out = []
    for t, task in enumerate(data):
        if not isinstance(task, dict):
            raise ImportFailed(f"{path}: task #{t} is not an object")
        source: dict[str, Any] = task["data"] if isinstance(task.get("data"), dict) else {}
        image_key = next((k for k in ("image", "img", "screenshot") if k in source), next(iter(source), None))
        image = images.relative(_ls_image(source.get(image_key) if image_key else None))
        meta = {str(k): v for k, v in source.items() if k != image_key and isinstance(v, (str, int, float))}
        annotations = task.get("annotations") or task.get("completions") or []
        results = [r for a in annotations if isinstance(a, dict) and not a.get("was_cancelled")
                   for r in a.get("result", []) if isinstance(r, dict)]
        texts: dict[str, str] = {}
        for r in results:
            if r.get("type") == "textarea" and r.get("from_name") == "instruction":
                value = (r.get("value") or {}).get("text")
                texts[str(r.get("id"))] = " ".join(value) if isinstance(value, list) else str(value or "")
        for r in results:
            if r.get("type") != "rectanglelabels":
                continue
            v = r.get("value") or {}
            ow, oh = r.get("original_width"), r.get("original_height")
            if not all(isinstance(n, (int, float)) for n in (ow, oh, v.get("x"), v.get("y"), v.get("width"),
                                                              v.get("height"))):
                raise ImportFailed(f"{path}: task {task.get('id', t)} region {r.get('id')!r}: needs original_width, "
                                   "original_height and value x, y, width, height (percent of the image)")
            if v.get("rotation"):
                raise ImportFailed(f"{path}: task {task.get('id', t)} region {r.get('id')!r} is rotated "
                                   f"({v['rotation']} degrees); boxes are axis-aligned: redraw it unrotated")
            x1, y1 = v["x"] * ow / 100, v["y"] * oh / 100
            x2, y2 = x1 + v["width"] * ow / 100, y1 + v["height"] * oh / 100
            labels = v.get("rectanglelabels") or []
            out.append(_line(id=fmt.clean_id(f"{PurePosixPath(image).stem}-{r.get('id')}"), image=image,
                             instruction=texts.get(str(r.get("id")), ""), bbox=_round([x1, y1, x2, y2]),
                             element_type=labels[0] if labels else None, **meta))
    return out


# -- CVAT for images -----------------------------------------------------------------------------------
def from_cvat(path: Path, images: Images) -> list[dict[str, Any]]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ImportFailed(f"{path}: not XML ({exc}); export the task as 'CVAT for images 1.1'") from exc
    if root.tag != "annotations":
        raise ImportFailed(f"{path}: the root element is <{root.tag}>, not <annotations> (CVAT for images 1.1)")
    out = []
    for im in root.iter("image"):
        name = im.get("name")
        if not name:
            raise ImportFailed(f"{path}: an <image> without a name (id {im.get('id')!r})")
        image = images.relative(name)
        stem = PurePosixPath(image).stem
        for k, shape in enumerate(s for s in im if s.tag in ("box", "polygon")):
            attrs = {a.get("name"): (a.text or "") for a in shape.iter("attribute")}
            extra = {str(n): v for n, v in attrs.items() if n not in ("instruction", "id", "task") and n and v}
            geometry: dict[str, Any]
            if shape.tag == "box":
                try:
                    geometry = {"bbox": _round([float(shape.get(c, "")) for c in ("xtl", "ytl", "xbr", "ybr")])}
                except ValueError:
                    raise ImportFailed(f"{path}: image {name!r} box #{k}: xtl, ytl, xbr, ybr must be numbers") \
                        from None
            else:
                try:
                    pts = [float(v) for pair in (shape.get("points") or "").split(";") for v in pair.split(",")]
                except ValueError:
                    raise ImportFailed(f"{path}: image {name!r} polygon #{k}: points must read 'x,y;x,y;...'") \
                        from None
                geometry = {"polygon": _round(pts)}
            out.append(_line(id=fmt.clean_id(attrs.get("id") or f"{stem}-{k + 1}"), image=image,
                             instruction=attrs.get("instruction", ""), **geometry,
                             task=attrs.get("task") if attrs.get("task") in fmt.TASKS else None,
                             element_type=shape.get("label"), **extra))
    return out


# -- OpenAdapt -----------------------------------------------------------------------------------------
def from_openadapt(path: Path, images: Images) -> list[dict[str, Any]]:
    """Through the ``openadapt`` loader itself (so the samples, their ids and their boxes are that loader's);
    imported by name: that folder may import this one (its annotator writes this format)."""
    loader = importlib.import_module("pytest_uiground.benchmarks.openadapt.loader")
    try:
        samples = loader.samples_from_annotations(path, loader.read_annotation_file(path), root=Path(os.sep))
    except ValueError as exc:
        raise ImportFailed(str(exc)) from exc
    out = []
    for s in samples:
        if s.invalid is not None:
            raise ImportFailed(f"{s.invalid}; fix it in {path} first")
        assert s.image.path is not None and s.target.box is not None
        w, h = s.image.dimensions()
        b = s.target.box
        meta = {k: v for k, v in s.meta.items() if k not in ("form", "size", "element_type")}
        out.append(_line(id=s.id, image=images.relative(str(s.image.path)), instruction=s.instruction,
                         bbox=_round(b.to_pixels(w, h)), task="detect",
                         element_type=s.meta.get("element_type"),
                         click=_round([s.click.x * w, s.click.y * h]) if s.click is not None else None, **meta))
    return out


IMPORTERS: Final = {"coco": from_coco, "label-studio": from_label_studio, "cvat": from_cvat,
                    "openadapt": from_openadapt}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFailed(f"{path}: not JSON text ({exc})") from exc


def convert(kind: str, source: Path, out: Path, images_dir: Path | None = None) -> tuple[list[dict[str, Any]], int]:
    """The lines of ``source`` (an export of ``kind``) with images relative to ``out``, and how many images
    were copied beside it. Nothing is written here."""
    images = Images(source, out, images_dir)
    lines = IMPORTERS[kind](source, images)
    return lines, images.copied


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pytest_uiground import",
                                description="Convert a labelling tool's export into annotations.jsonl (pixels) "
                                            "for the grounding loader.")
    p.add_argument("kind", choices=FORMATS, help="the export's format")
    p.add_argument("file", type=Path, help="the export file")
    p.add_argument("--out", type=Path, default=Path(fmt.DEFAULT_FILE), help="the JSONL to write (default: "
                   f"{fmt.DEFAULT_FILE}); images outside its folder are copied into images/ beside it")
    p.add_argument("--images", type=Path, default=None, help="where the screenshots are, when not beside the export")
    p.add_argument("--force", action="store_true", help="replace --out when it exists")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.file.is_file():
        print(f"import: {args.file} does not exist", file=sys.stderr)
        return 2
    if args.out.exists() and not args.force:
        print(f"import: --out {args.out} exists; pass --force to replace it, or choose another --out", file=sys.stderr)
        return 2
    try:
        lines, copied = convert(args.kind, args.file, args.out, args.images)
    except ImportFailed as exc:
        print(f"import: {exc}", file=sys.stderr)
        return 1
    fmt.write(args.out, lines)
    missing = sum(1 for line in lines if not line.get("instruction") and line.get("task", "point") != "detect")
    print(f"wrote {len(lines)} samples to {args.out}" + (f" ({copied} images copied into "
          f"{args.out.parent / 'images'})" if copied else ""))
    if missing:
        print(f"{missing} samples have no instruction yet (they fail as invalid until given one): python -m "
              f"pytest_uiground annotate {args.out.parent}")
    return 0
