"""The importers on exports written by the tools themselves (issue 42), not by the tests.

Why: every other import test writes its export by hand, so a field the real tool writes differently (percent
floats such as 13.333333333333334, an upload's ``/data/upload/1/<hex>-a.png``, datumaro's ``images/default/``
layout, CVAT's ``<meta>`` holding ``<attribute>`` elements of its own) would pass them all. The exports under
``tests/data/exports`` were made once by the tools (Label Studio's server and export API; datumaro's CVAT and
COCO writers), each folder holding its ``make_export.py`` and ``VERSION``; their ``boxes.json`` is what was
given to the tool, in pixels, and is what the import must give back. COCO is also checked against pycocotools'
own reading, on datumaro's export and on a dataset pycocotools builds itself. No test reaches the network.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pytest_uiground.benchmarks.grounding.loader import load
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens import importers
from pytest_uiground.suite.loading import LoaderContext

EXPORTS = Path(__file__).resolve().parents[1] / "data" / "exports"
NEEDS_COCO = "needs pycocotools, in the [dev] extra (pip install -e '.[dev]')"


def copied(tmp_path: Path, tool: str) -> Path:
    """The committed export copied, so the import's writes and copies never touch the repository."""
    dest = tmp_path / tool
    shutil.copytree(EXPORTS / tool, dest)
    return dest


def spec(folder: Path) -> list[dict[str, Any]]:
    return list(json.loads((folder / "boxes.json").read_text(encoding="utf-8"))["screens"])


def imported(kind: str, export: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code = importers.main([kind, str(export), "--out", str(out)])
    got = capsys.readouterr()
    assert code == 0, got.err
    assert f"wrote {len(fmt.read(out))} samples to {out}" in got.out
    return [line.raw for line in fmt.read(out) if line.raw is not None]


def one_id_rule(lines: list[dict[str, Any]]) -> None:
    """The export's own region/annotation ids are not sample ids: every imported line gets the one id rule
    (``format.new_id``: the screenshot's stem and a free three-digit counter), unique in the file."""
    ids = [line["id"] for line in lines]
    assert len(set(ids)) == len(ids)
    for line in lines:
        stem, _, counter = line["id"].rpartition("-")
        assert stem == fmt.new_id(line["image"], set()).rpartition("-")[0] and len(counter) == 3 and counter.isdigit()


def loads_clean(out: Path) -> None:
    """Every imported line is a valid sample whose screenshot opens, with its box inside the image."""
    samples = load({"warnings": False, "annotations": out.name}, LoaderContext("real", out.parent))
    assert samples and [s.invalid for s in samples] == [None] * len(samples)
    for line in fmt.read(out):
        assert line.raw is not None
        with Image.open(out.parent / line.raw["image"]) as img:
            w, h = img.size
        xs = (line.raw.get("bbox") or line.raw["polygon"])[0::2]
        ys = (line.raw.get("bbox") or line.raw["polygon"])[1::2]
        assert 0 <= min(xs) and max(xs) <= w and 0 <= min(ys) and max(ys) <= h, line.raw


def key(image: str, label: str, instruction: str, geometry: str, values: list[float]) -> tuple[Any, ...]:
    return Path(image).name, label, instruction, geometry, tuple(round(float(v), 2) for v in values)


def from_lines(lines: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(key(line["image"], line["element_type"], line["instruction"], "bbox" if "bbox" in line
                      else "polygon", line.get("bbox") or line["polygon"]) for line in lines)


def extent(points: list[float]) -> list[float]:
    return [min(points[0::2]), min(points[1::2]), max(points[0::2]), max(points[1::2])]


# -- Label Studio ------------------------------------------------------------------------------------------------
def test_label_studio_s_own_export_imports_to_the_pixel_boxes_it_was_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = copied(tmp_path, "label-studio")
    export = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    version = json.loads((folder / "VERSION").read_text(encoding="utf-8"))
    assert version["label-studio"] and version["label-studio-sdk"]
    # the export exercises what a hand-written one did not: an upload and a local file, percent floats
    images = sorted(task["data"]["image"] for task in export)
    assert images[0].startswith("/data/local-files/?d=") and images[1].startswith("/data/upload/"), images
    percents = [r["value"][k] for task in export for a in task["annotations"] for r in a["result"]
                for k in ("x", "y", "width", "height")]
    assert any(p != round(p, 2) for p in percents), "no percent needing the pixel rounding"
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    lines = imported("label-studio", folder / "export.json", out, capsys)
    # the upload keeps the name Label Studio stored it under (8 hex characters and '-' before a.png)
    upload = Path(next(task["data"]["image"] for task in export if task["data"]["image"].startswith("/data/upload/")))
    assert upload.name.endswith("-a.png") and upload.name != "a.png"
    given = [{**screen, "source": upload.name if screen["how"] == "upload" else screen["source"]}
             for screen in spec(folder)]
    expected = sorted(key(screen["source"], b["label"], b["instruction"], "bbox", b["bbox"])
                      for screen in given for b in screen["boxes"])
    assert from_lines(lines) == expected
    assert {line["image"] for line in lines} == {f"images/{upload.name}", "images/b.png"}
    one_id_rule(lines)
    loads_clean(out)


def test_an_upload_kept_under_its_own_name_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A user who kept the file they uploaded (``a.png``), not Label Studio's copy (``4434e27d-a.png``)."""
    folder = copied(tmp_path, "label-studio")
    stored = next(folder.glob("*-a.png"))
    stored.rename(folder / "a.png")
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    lines = imported("label-studio", folder / "export.json", out, capsys)
    assert {line["image"] for line in lines} == {"images/a.png", "images/b.png"}
    loads_clean(out)
    (folder / "a.png").unlink()  # neither name there: the error names the export's own
    out2 = tmp_path / "suite2" / fmt.DEFAULT_FILE
    assert importers.main(["label-studio", str(folder / "export.json"), "--out", str(out2)]) == 1
    assert f"image {stored.name!r} not found" in capsys.readouterr().err


def test_label_studio_s_json_min_export_is_refused_naming_the_fix(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = copied(tmp_path, "label-studio")
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    assert importers.main(["label-studio", str(folder / "export-min.json"), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "task 1 has no 'data' object" in err and "JSON-MIN" in err and "export the project as 'JSON'" in err
    assert "nothing was written" in err and not out.parent.exists()


# -- datumaro: CVAT for images 1.1 and COCO ----------------------------------------------------------------------
def test_datumaro_s_cvat_export_imports_boxes_and_polygons_in_pixels(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder = copied(tmp_path, "datumaro")
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    lines = imported("cvat", folder / "cvat" / "default.xml", out, capsys)
    expected = sorted(key(screen["source"], s["label"], s["instruction"], "bbox" if "bbox" in s else "polygon",
                          s.get("bbox") or s["polygon"]) for screen in spec(folder) for s in screen["shapes"])
    assert from_lines(lines) == expected
    loads_clean(out)


def test_datumaro_s_coco_export_imports_as_pycocotools_reads_it(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pycocotools", reason=NEEDS_COCO)
    from pycocotools.coco import COCO

    folder = copied(tmp_path, "datumaro")
    export = folder / "coco" / "annotations" / "instances_default.json"
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    lines = imported("coco", export, out, capsys)
    assert from_lines(lines) == read_with_pycocotools(COCO(str(export)))
    # and both equal what was given to datumaro (a COCO bbox of a polygon is its extent)
    assert from_lines(lines) == sorted(key(screen["source"], s["label"], s["instruction"], "bbox",
                                           s.get("bbox") or extent(s["polygon"]))
                                       for screen in spec(folder) for s in screen["shapes"])
    loads_clean(out)


def read_with_pycocotools(coco: Any) -> list[tuple[Any, ...]]:
    """What pycocotools reads from a COCO file, as the import's lines would say it (bbox as x1, y1, x2, y2)."""
    rows = []
    for ann in coco.loadAnns(coco.getAnnIds()):
        image = coco.loadImgs(ann["image_id"])[0]["file_name"]
        label = coco.loadCats(ann["category_id"])[0]["name"]
        x, y, w, h = ann["bbox"]
        rows.append(key(image, label, ann["attributes"]["instruction"], "bbox", [x, y, x + w, y + h]))
    return sorted(rows)


def test_a_dataset_pycocotools_builds_imports_as_pycocotools_reads_it(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Boxes computed by pycocotools (``mask.toBbox`` of drawn masks) and its results structure (``loadRes``:
    ids, areas, segmentations of its own), written, imported, and compared with pycocotools reading the file."""
    pytest.importorskip("pycocotools", reason=NEEDS_COCO)
    import numpy as np
    from pycocotools import mask as masks
    from pycocotools.coco import COCO

    sizes = {"home.png": (320, 200), "settings.png": (480, 270)}
    export = tmp_path / "export"
    export.mkdir()
    gt = COCO()
    gt.dataset = {"images": [{"id": k + 1, "file_name": name, "width": w, "height": h}
                             for k, (name, (w, h)) in enumerate(sizes.items())],
                  "categories": [{"id": 1, "name": "button"}, {"id": 2, "name": "toggle"}], "annotations": []}
    gt.createIndex()
    drawn = [(1, 1, (12, 150, 60, 41)), (1, 2, (250, 7, 31, 18)), (2, 1, (401, 230, 70, 33)), (2, 2, (0, 0, 9, 9))]
    detections = []
    for k, (image_id, cat, (x, y, w, h)) in enumerate(drawn):
        name = gt.loadImgs(image_id)[0]["file_name"]
        width, height = sizes[name]
        mask = np.zeros((height, width), dtype=np.uint8, order="F")
        mask[y:y + h, x:x + w] = 1
        box = [float(v) for v in masks.toBbox(masks.encode(mask))]
        assert box == [x, y, w, h]  # pycocotools' extent of the drawn pixels
        detections.append({"image_id": image_id, "category_id": cat, "bbox": box, "score": 1.0,
                           "attributes": {"instruction": f"Press control {k}"}})
    detections.append({"image_id": 2, "category_id": 1, "bbox": [33.25, 40.5, 20.125, 10.75], "score": 0.5,
                       "attributes": {"instruction": "Press the half-pixel one"}})  # sub-pixel, as tools write
    built = gt.loadRes(detections)
    path = export / "instances.json"
    path.write_text(json.dumps(built.dataset), encoding="utf-8")
    for name, size in sizes.items():
        Image.new("RGB", size, "white").save(export / name)
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    lines = imported("coco", path, out, capsys)
    reread = read_with_pycocotools(COCO(str(path)))
    assert len(reread) == len(detections) and from_lines(lines) == reread
    one_id_rule(lines)
    loads_clean(out)
