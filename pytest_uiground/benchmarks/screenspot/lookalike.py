"""Small, deterministic look-alikes of ScreenSpot-v2 and ScreenSpot-Pro.

Why this exists: the real sets are gigabytes of screenshots behind downloads that CI and
air-gapped machines cannot make, yet their loaders, the published layouts and the suites'
metrics must be tested end to end. These writers lay out each set exactly as it is
published (file names, folders, record fields and coordinate conventions) with a few dozen
tiny PNGs, and return what they wrote so a test can compute the expected numbers by hand:

* :func:`write_screenspot_v2` → ``<root>/ScreenSpot-v2/screenspot_{split}_v2.json`` and
  ``screenspotv2_image/`` (or ``images/``); boxes are pixel ``[x, y, w, h]`` and the records
  carry no image size, so each image has its own size to catch a loader that assumes one.
* :func:`write_screenspot_pro` → ``<root>/ScreenSpot-Pro/annotations/{app}_{platform}.json``
  and ``images/{app}_{platform}/``; boxes are pixel ``[x1, y1, x2, y2]`` with ``img_size``.

Determinism: one ``random.Random`` per writer seeded with a string (never ``hash()``, which
is salted per process) and only Pillow's bundled font, so the same arguments give the same
files. Every element is drawn where its box says (a labelled rectangle; icons get a glyph),
boxes never overlap, and coordinates are integers in pixels, so ground truth is exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from pytest_uiground.record.sample import safe_id
from pytest_uiground.suite.lookalike import ICONS, WORDS, Screen, Screens, Written, blank_images, write_json

V2_SPLITS: tuple[str, ...] = ("mobile", "desktop", "web")
_V2_SOURCES = {"mobile": ("ios", "android"), "desktop": ("macos", "windows"), "web": ("shop", "forum", "gitlab")}
_V2_SIZES = {"mobile": ((200, 360), (180, 320)), "desktop": ((400, 250), (320, 200)), "web": ((300, 200), (360, 240))}
DEFAULT_PRO_APPS: tuple[tuple[str, str, str], ...] = (
    ("vscode", "macos", "Dev"), ("photoshop", "windows", "Creative"), ("autocad", "windows", "CAD"),
    ("matlab", "linux", "Scientific"), ("word", "macos", "Office"), ("linux_common", "linux", "OS"),
)



@dataclass(frozen=True)
class ScreenSpotFixture:
    folder: Path
    samples: list[Written]


# -- ScreenSpot-v2 ----------------------------------------------------------------------------------
def write_screenspot_v2(
    root: Path,
    *,
    per_cell: int = 3,
    seed: int = 0,
    splits: Sequence[str] = V2_SPLITS,
    image_dir: str = "screenspotv2_image",
    folder_name: str = "ScreenSpot-v2",
    records: Mapping[str, Sequence[Any]] | None = None,
) -> ScreenSpotFixture:
    """Write ``root/ScreenSpot-v2`` (``folder_name``; ``""`` writes into ``root`` itself).

    Each (split, data_type) cell gets a seeded 1..``per_cell`` records. ``records`` replaces
    the generated records of the splits it names, verbatim (blank images for the
    ``img_filename`` values they name), for malformed-record tests.
    """
    folder = Path(root) / folder_name if folder_name else Path(root)
    images = folder / image_dir
    rng = Random(f"screenspot-v2:{seed}")

    def screen(split: str, n: int) -> Screen:
        size = _V2_SIZES[split][n % 2]
        return Screen(images / f"{split}_{seed}_{n:03d}.png", size, cols=2, rows=2)

    out: list[Written] = []
    screens = Screens(screen)
    for split in splits:
        if records is not None and split in records:
            blank_images(images / r["img_filename"] for r in records[split]
                          if isinstance(r, Mapping) and isinstance(r.get("img_filename"), str))
            write_json(folder / f"screenspot_{split}_v2.json", list(records[split]))
            continue
        recs: list[dict[str, Any]] = []
        for dtype in ("text", "icon"):
            for _ in range(rng.randint(1, per_cell)):
                s = screens.take(split)
                label = rng.choice(WORDS if dtype == "text" else ICONS)
                x0, y0, x1, y1 = s.place(rng, label, dtype)
                rec = {"img_filename": s.path.name, "bbox": [x0, y0, x1 - x0, y1 - y0],
                       "instruction": f"click {label}", "data_type": dtype,
                       "data_source": rng.choice(_V2_SOURCES[split])}
                out.append(Written(f"ssv2-{split}-{len(recs)}", rec, s.path, s.size))
                recs.append(rec)
        write_json(folder / f"screenspot_{split}_v2.json", recs)
    images.mkdir(parents=True, exist_ok=True)
    screens.save()
    return ScreenSpotFixture(folder, out)


# -- ScreenSpot-Pro ---------------------------------------------------------------------------------
def write_screenspot_pro(
    root: Path,
    *,
    apps: Sequence[tuple[str, str, str]] = DEFAULT_PRO_APPS,
    per_app: int = 4,
    seed: int = 0,
    folder_name: str = "ScreenSpot-Pro",
    records: Mapping[str, Sequence[Any]] | None = None,
) -> ScreenSpotFixture:
    """Write ``root/ScreenSpot-Pro``: one ``annotations/{app}_{platform}.json`` per app.

    ``apps`` are ``(application, platform, group)``; each gets a seeded 1..``per_app``
    records of mixed ui_type. Record ids are ``{app}_{platform}_{i}`` as published, so an
    application name with a space yields an id the loader must make safe. ``records`` adds
    (or replaces) annotation files by stem, verbatim, for malformed-record tests.
    """
    folder = Path(root) / folder_name if folder_name else Path(root)
    images = folder / "images"
    rng = Random(f"screenspot-pro:{seed}")
    out: list[Written] = []

    def screen(key: str, n: int) -> Screen:
        size = (480, 270) if n % 2 == 0 else (400, 300)
        return Screen(images / key / f"screenshot_{seed}_{n:03d}.png", size, cols=4, rows=4)

    screens = Screens(screen)
    (folder / "annotations").mkdir(parents=True, exist_ok=True)
    for app, platform, group in apps:
        key = f"{app}_{platform}"
        if records is not None and key in records:
            continue
        recs: list[dict[str, Any]] = []
        for i in range(rng.randint(1, per_app)):
            s = screens.take(key)
            ui_type = "text" if rng.random() < 0.5 else "icon"
            label = rng.choice(WORDS if ui_type == "text" else ICONS)
            x0, y0, x1, y1 = s.place(rng, label, ui_type)
            sid = f"{key}_{i}"
            rec = {"img_filename": f"{key}/{s.path.name}", "bbox": [x0, y0, x1, y1],
                   "instruction": f"click {label}", "instruction_cn": f"点击 {label}", "id": sid,
                   "application": app, "platform": platform, "img_size": list(s.size), "ui_type": ui_type,
                   "group": group}
            recs.append(rec)
            out.append(Written("sspro-" + safe_id(sid), rec, s.path, s.size))
        write_json(folder / "annotations" / f"{key}.json", recs)
    for stem, given in (records or {}).items():
        blank_images(images / r["img_filename"] for r in given
                      if isinstance(r, Mapping) and isinstance(r.get("img_filename"), str))
        write_json(folder / "annotations" / f"{stem}.json", list(given))
    images.mkdir(parents=True, exist_ok=True)
    screens.save()
    return ScreenSpotFixture(folder, out)
