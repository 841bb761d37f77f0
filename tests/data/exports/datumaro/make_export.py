"""Make the committed CVAT and COCO exports with datumaro (run once; its output is committed).

Why: the importers were tested only on exports the tests wrote by hand (issue 42). CVAT itself is a server
that does not install from the package index; datumaro (OpenVINO's dataset converter, on PyPI) writes the same
"CVAT for images 1.1" XML that CVAT's export is built on, and COCO instances JSON with each annotation's
``attributes`` (where CVAT's COCO export writes them), so both importers meet a tool's own writer.

Run with the interpreter of a separate environment holding ``datumaro`` (never the project's venv)::

    python3 -m venv /tmp/dmvenv && /tmp/dmvenv/bin/pip install datumaro
    /tmp/dmvenv/bin/python tests/data/exports/datumaro/make_export.py

It draws two screenshots, builds a datumaro ``Dataset`` holding the shapes of ``boxes.json`` (boxes and a
polygon, each with an ``instruction`` attribute declared on its label) and exports it with ``save_media``
as ``cvat`` (``cvat/default.xml``, ``cvat/images/``) and ``coco_instances``
(``coco/annotations/instances_default.json``, ``coco/images/default/``).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from datumaro.components.annotation import AnnotationType, Bbox, LabelCategories, Polygon
from datumaro.components.dataset import Dataset
from datumaro.components.dataset_base import DatasetItem
from datumaro.components.media import Image as MediaImage
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent


def screenshot(path: Path, size: tuple[int, int], shapes: list[dict]) -> None:
    """A plain screen with the shapes drawn in, so a human looking at the file sees what was labelled."""
    img = Image.new("RGB", size, (245, 246, 248))
    draw = ImageDraw.Draw(img)
    for shape in shapes:
        if "bbox" in shape:
            draw.rectangle([round(v) for v in shape["bbox"]], fill=(66, 133, 244), outline=(20, 20, 20))
        else:
            pts = shape["polygon"]
            draw.polygon([(round(pts[i]), round(pts[i + 1])) for i in range(0, len(pts), 2)], fill=(219, 68, 55))
    img.save(path, optimize=True)


def main() -> int:
    spec = json.loads((HERE / "boxes.json").read_text(encoding="utf-8"))
    labels = sorted({s["label"] for screen in spec["screens"] for s in screen["shapes"]})
    categories = LabelCategories(attributes={"instruction"})
    for name in labels:
        categories.add(name)
    work = Path(tempfile.mkdtemp(prefix="dmmake-"))
    items = []
    for screen in spec["screens"]:
        path = work / screen["source"]
        screenshot(path, tuple(screen["size"]), screen["shapes"])
        anns = []
        for s in screen["shapes"]:
            common = {"label": labels.index(s["label"]), "id": s["id"], "attributes": {"instruction": s["instruction"]}}
            if "bbox" in s:
                x1, y1, x2, y2 = s["bbox"]
                anns.append(Bbox(x1, y1, x2 - x1, y2 - y1, **common))
            else:
                anns.append(Polygon(s["polygon"], **common))
        items.append(DatasetItem(id=Path(screen["source"]).stem, subset="default",
                                 media=MediaImage.from_file(str(path)), annotations=anns))
    dataset = Dataset.from_iterable(items, categories={AnnotationType.label: categories})
    for fmt, folder in (("cvat", "cvat"), ("coco_instances", "coco")):
        shutil.rmtree(HERE / folder, ignore_errors=True)
        dataset.export(str(HERE / folder), fmt, save_media=True)
    shutil.rmtree(work, ignore_errors=True)
    (HERE / "VERSION").write_text(json.dumps({"datumaro": metadata.version("datumaro"),
                                              "python": sys.version.split()[0]}, indent=1) + "\n")
    print(f"datumaro {metadata.version('datumaro')}: wrote {HERE / 'cvat'} and {HERE / 'coco'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
