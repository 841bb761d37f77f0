"""Writers of tiny datasets in the benchmarks' PUBLISHED on-disk layouts (tests write them
into ``tmp_path``; nothing is downloaded). Images are small solid PNGs of the declared size.

* MMBench-GUI: ``<root>/MMBench-GUI/{L1_annotations.json, L2_annotations.json,
  offline_images/os_*/<image_path>}`` (``image_path`` relative to the platform folder; the
  reference dataloader prefixes ``{platform}/``).
* ScreenSpot-v2: ``<root>/screenspot_{mobile,desktop,web}_v2.json`` + ``<root>/screenspotv2_image/``.
* ScreenSpot-Pro: ``<root>/annotations/{app}_{platform}.json`` + ``<root>/images/``.

``DEMO_*`` are small hand-made record sets with every slice the references print (each
platform/level/type, an empty cell where a reference has a bug about it) for parity tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image


def write_png(path: Path, size: Sequence[int], color: tuple[int, int, int] = (200, 200, 200)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (int(size[0]), int(size[1])), color).save(path)
    return path


def _dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


# -- MMBench-GUI -------------------------------------------------------------------------


def write_mmbench_gui(root: Path, l1: Sequence[Mapping[str, Any]] | None = None,
                      l2: Sequence[Mapping[str, Any]] | None = None) -> Path:
    """Write ``root/MMBench-GUI`` with the given L1/L2 records and one PNG per distinct
    ``{platform}/{image_path}`` at the record's ``image_size``; returns the folder."""
    folder = root / "MMBench-GUI"
    (folder / "offline_images").mkdir(parents=True, exist_ok=True)
    for name, records in (("L1_annotations.json", l1), ("L2_annotations.json", l2)):
        if records is None:
            continue
        _dump(folder / name, list(records))
        for rec in records:
            img = folder / "offline_images" / rec["platform"] / rec["image_path"]
            if not img.exists():
                write_png(img, rec["image_size"])
    return folder


def l2_record(index: int, platform: str, grounding_type: str, data_type: str, bbox: Sequence[float],
              image_size: Sequence[int] = (1280, 720), app: str = "app") -> dict[str, Any]:
    return {
        "index": index, "image_path": f"{platform}_{index // 4}.png", "instruction": f"element {index}",
        "bbox": list(bbox), "image_size": list(image_size), "data_type": data_type, "platform": platform,
        "app_name": app, "grounding_type": grounding_type,
    }


def l1_record(index: int, platform: str, groups: Iterable[Mapping[str, Any]],
              image_size: Sequence[int] = (1080, 1920), app: str = "app") -> dict[str, Any]:
    return {"index": index, "image_path": f"q{index}.png", "image_size": list(image_size), "platform": platform,
            "app_name": app, "groups": [dict(g) for g in groups]}


def l1_group(answer: str, difficulty: str, letters: str = "ABCDE", hint: str | None = None) -> dict[str, Any]:
    g: dict[str, Any] = {"question": f"Which one ({difficulty})?", "options": {k: f"option {k}" for k in letters},
                         "answer": answer, "explanation": "because", "difficulty": difficulty}
    if hint:
        g["hint"] = hint
    return g


# 8 L2 records, 1280x720: os_windows has both types at both levels; os_ios basic has icons
# only (the reference divides by zero there) -- use DEMO_L2_FULL when the reference must run.
DEMO_L2_FULL = [
    l2_record(0, "os_windows", "basic", "icon", [0.10, 0.10, 0.20, 0.20]),
    l2_record(1, "os_windows", "basic", "text", [0.50, 0.50, 0.60, 0.60]),
    l2_record(2, "os_windows", "advanced", "icon", [0.00, 0.00, 0.10, 0.10]),
    l2_record(3, "os_windows", "advanced", "text", [0.90, 0.90, 1.00, 1.00]),
    l2_record(4, "os_ios", "basic", "icon", [0.40, 0.40, 0.50, 0.50], image_size=(1179, 2556)),
    l2_record(5, "os_ios", "basic", "text", [0.10, 0.80, 0.30, 0.85], image_size=(1179, 2556)),
    l2_record(6, "os_ios", "advanced", "icon", [0.25, 0.25, 0.75, 0.75], image_size=(1179, 2556)),
    l2_record(7, "os_ios", "advanced", "text", [0.60, 0.10, 0.90, 0.20], image_size=(1179, 2556)),
]
DEMO_L2_EMPTY_TEXT = DEMO_L2_FULL[:5] + DEMO_L2_FULL[6:]  # os_ios basic: icon only

DEMO_L1 = [
    l1_record(10, "os_windows", [l1_group("A", "easy"), l1_group("C", "medium"), l1_group("F", "hard", "ABCDEF")]),
    l1_record(11, "os_android", [l1_group("B", "easy", "ABCD", hint="Look at the top bar"),
                                 l1_group("D", "medium")]),  # no hard question on os_android
]

# -- ScreenSpot-v2 -----------------------------------------------------------------------

V2_SPLITS = ("mobile", "desktop", "web")


def write_screenspot_v2(root: Path, splits: Mapping[str, Sequence[Mapping[str, Any]]],
                        image_sizes: Mapping[str, Sequence[int]]) -> Path:
    """``root/screenspot_{split}_v2.json`` and ``root/screenspotv2_image/<img_filename>``
    (the records carry no image size: ``image_sizes`` maps file name -> (w, h))."""
    root.mkdir(parents=True, exist_ok=True)
    for split, records in splits.items():
        _dump(root / f"screenspot_{split}_v2.json", list(records))
    for name, size in image_sizes.items():
        write_png(root / "screenspotv2_image" / name, size)
    return root


def v2_record(img: str, bbox: Sequence[float], data_type: str, source: str = "ios") -> dict[str, Any]:
    return {"img_filename": img, "bbox": list(bbox), "instruction": f"tap {img}:{bbox[0]}",
            "data_type": data_type, "data_source": source}


DEMO_V2_SIZES = {"m.png": (400, 800), "d.png": (1000, 500), "w.png": (800, 600)}
DEMO_V2 = {
    "mobile": [v2_record("m.png", [100, 200, 100, 100], "text"), v2_record("m.png", [0, 0, 40, 40], "icon"),
               v2_record("m.png", [300, 700, 100, 100], "icon")],
    "desktop": [v2_record("d.png", [500, 250, 100, 50], "text", "windows"),
                v2_record("d.png", [900, 0, 100, 50], "icon", "macos")],
    "web": [v2_record("w.png", [0, 0, 800, 60], "text", "shop"),
            v2_record("w.png", [380, 280, 40, 40], "icon", "forum")],
}

# -- ScreenSpot-Pro ----------------------------------------------------------------------


def write_screenspot_pro(root: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    """``root/annotations/{application}_{platform}.json`` grouping the records, and
    ``root/images/<img_filename>`` at each record's ``img_size``."""
    files: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        files.setdefault(f"{rec['application']}_{rec['platform']}.json", []).append(rec)
        img = root / "images" / rec["img_filename"]
        if not img.exists():
            write_png(img, rec["img_size"])
    for name, recs in files.items():
        _dump(root / "annotations" / name, recs)
    return root


def pro_record(i: int, app: str, platform: str, group: str, ui_type: str, bbox: Sequence[float],
               img_size: Sequence[int] = (3840, 2160)) -> dict[str, Any]:
    return {"img_filename": f"{app}_{platform}/{i}.png", "bbox": list(bbox), "instruction": f"find {i}",
            "instruction_cn": f"找到 {i}", "id": f"{app}_{platform}_{i}", "application": app,
            "platform": platform, "img_size": list(img_size), "ui_type": ui_type, "group": group}


DEMO_PRO = [
    pro_record(0, "vscode", "windows", "Dev", "text", [384, 216, 768, 432]),  # 0.1..0.2
    pro_record(1, "vscode", "windows", "Dev", "icon", [0, 0, 38, 21]),
    pro_record(2, "vscode", "macos", "Dev", "icon", [1920, 1080, 2304, 1296]),  # 0.5..0.6
    pro_record(3, "photoshop", "windows", "Creative", "text", [3456, 1944, 3840, 2160]),  # 0.9..1.0
    pro_record(4, "photoshop", "windows", "Creative", "icon", [1920, 0, 2304, 216]),
    pro_record(5, "autocad", "windows", "CAD", "text", [0, 1296, 256, 1440], img_size=(2560, 1440)),  # 0..0.1, 0.9..1.0
]
