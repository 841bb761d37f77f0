"""Small, deterministic look-alikes of MMBench-GUI, ScreenSpot-v2 and ScreenSpot-Pro.

Why this exists: the real sets are gigabytes of screenshots behind downloads that CI and
air-gapped machines cannot make, yet their loaders, the published layouts and the suites'
metrics must be tested end to end. These writers lay out each set exactly as it is
published (file names, folders, record fields and coordinate conventions) with a few dozen
tiny PNGs, and return what they wrote so a test can compute the expected numbers by hand:

* :func:`write_mmbench_gui` → ``<root>/MMBench-GUI/{L1,L2}_annotations.json`` and
  ``offline_images/os_*/``; ``image_path`` is relative to the platform folder (the
  reference loader prefixes ``{platform}/``); L2 boxes are normalized ``[x1, y1, x2, y2]``.
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

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

MMBENCH_PLATFORMS: tuple[str, ...] = ("os_windows", "os_mac", "os_linux", "os_ios", "os_android", "os_web")
_MMB_SIZES = {"os_windows": (320, 200), "os_mac": (320, 200), "os_linux": (320, 200), "os_ios": (180, 320),
              "os_android": (180, 320), "os_web": (300, 200)}
_APPS = ("calendar", "files", "settings", "mail", "music", "maps")
_WORDS = ("Save", "Open", "Share", "Delete", "Search", "Print", "Export", "Help", "Back", "Next", "Send", "Edit",
          "Copy", "Paste", "Undo", "Zoom", "Rename", "Upload")
_ICONS = ("close", "plus", "menu", "play", "star", "gear")
_DIFFICULTIES = ("easy", "medium", "hard")
V2_SPLITS: tuple[str, ...] = ("mobile", "desktop", "web")
_V2_SOURCES = {"mobile": ("ios", "android"), "desktop": ("macos", "windows"), "web": ("shop", "forum", "gitlab")}
_V2_SIZES = {"mobile": ((200, 360), (180, 320)), "desktop": ((400, 250), (320, 200)), "web": ((300, 200), (360, 240))}
DEFAULT_PRO_APPS: tuple[tuple[str, str, str], ...] = (
    ("vscode", "macos", "Dev"), ("photoshop", "windows", "Creative"), ("autocad", "windows", "CAD"),
    ("matlab", "linux", "Scientific"), ("word", "macos", "Office"), ("linux_common", "linux", "OS"),
)


@dataclass(frozen=True)
class Written:
    """One sample as written: the sample id the loader must give it, the raw record (for an
    L1 question, the image record and ``group``, the question), its image and its size."""

    sample_id: str
    record: Mapping[str, Any]
    image: Path
    image_size: tuple[int, int]
    group: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MMBenchGUIFixture:
    folder: Path
    l1: list[Written]
    l2: list[Written]


@dataclass(frozen=True)
class ScreenSpotFixture:
    folder: Path
    samples: list[Written]


# -- drawing ----------------------------------------------------------------------------------------
@dataclass
class _Screen:
    """A screenshot being laid out: elements take cells of a grid, so none overlap."""

    path: Path
    size: tuple[int, int]
    cols: int = 3
    rows: int = 4
    elements: list[tuple[tuple[int, int, int, int], str, str]] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return len(self.elements) >= self.cols * self.rows

    def place(self, rng: Random, label: str, kind: str) -> tuple[int, int, int, int]:
        """The next free cell's element rectangle ``(x0, y0, x1, y1)`` in pixels (inclusive-exclusive)."""
        w, h = self.size
        n = len(self.elements)
        cw, ch = w // self.cols, h // self.rows
        cx, cy = (n % self.cols) * cw, (n // self.cols) * ch
        bw = rng.randint(cw // 2, cw - 4) if kind == "text" else rng.randint(min(ch, cw) // 2, min(ch, cw) - 4)
        bh = rng.randint(ch // 2, ch - 4) if kind == "text" else bw
        x0 = cx + rng.randint(2, cw - bw - 2)
        y0 = cy + rng.randint(2, ch - bh - 2)
        rect = (x0, y0, x0 + bw, y0 + bh)
        self.elements.append((rect, label, kind))
        return rect

    def save(self) -> None:
        from PIL import Image, ImageDraw, ImageFont

        img = Image.new("RGB", self.size, (238, 240, 244))
        draw = ImageDraw.Draw(img)
        font = ImageFont.load_default()
        for (x0, y0, x1, y1), label, kind in self.elements:
            draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=(255, 255, 255), outline=(60, 90, 160))
            if kind == "icon":
                m = max(2, (x1 - x0) // 4)
                draw.line((x0 + m, y0 + m, x1 - m, y1 - m), fill=(30, 30, 30), width=2)
                draw.line((x0 + m, y1 - m, x1 - m, y0 + m), fill=(30, 30, 30), width=2)
            else:
                draw.text((x0 + 2, y0 + 1), label, fill=(20, 20, 20), font=font)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        img.save(self.path, format="PNG", compress_level=1)


class _Screens:
    """Screens per key (platform, split, app), filled in order and saved once at the end."""

    def __init__(self, make: Callable[[str, int], _Screen]) -> None:
        self.make = make
        self.open: dict[str, _Screen] = {}
        self.count: dict[str, int] = {}
        self.all: list[_Screen] = []

    def take(self, key: str) -> _Screen:
        screen = self.open.get(key)
        if screen is None or screen.full:
            n = self.count.get(key, 0)
            self.count[key] = n + 1
            screen = self.make(key, n)
            self.open[key] = screen
            self.all.append(screen)
        return screen

    def save(self) -> None:
        for s in self.all:
            s.save()


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def _blank_images(paths: Iterable[Path], size: tuple[int, int] = (64, 48)) -> None:
    from PIL import Image

    for p in sorted(set(paths)):
        if not p.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", size, (200, 200, 200)).save(p, format="PNG")


# -- MMBench-GUI ------------------------------------------------------------------------------------
def write_mmbench_gui(
    root: Path,
    *,
    l1_records: int | Sequence[Mapping[str, Any]] = 9,
    l2_records: int | Sequence[Mapping[str, Any]] = 3,
    seed: int = 0,
    platforms: Sequence[str] = MMBENCH_PLATFORMS,
    no_icon: Sequence[str] = (),
    no_text: Sequence[str] = (),
) -> MMBenchGUIFixture:
    """Write ``root/MMBench-GUI`` and return what the L1 and L2 loaders must produce.

    ``l2_records`` as a number is the most records per (platform, grounding_type, data_type)
    cell; each cell gets a seeded 1..n, so cells differ in size and sample-weighted means
    differ from unweighted ones. Platforms in ``no_icon`` (``no_text``) get no icon (text)
    records, the case that divides by zero in the reference scorer. ``l1_records`` as a
    number is the count of image records, each with 1-3 questions (difficulties cycle, 2-6
    options, some with a hint). Either may instead be a list of records written verbatim
    (with a blank image for each ``platform``/``image_path`` they name), for malformed-record
    tests; those return no :class:`Written` entries.
    """
    folder = Path(root) / "MMBench-GUI"
    images = folder / "offline_images"
    rng = Random(f"mmbench-gui:{seed}")

    def screen(platform: str, n: int) -> _Screen:
        return _Screen(images / platform / f"{platform[3:]}_{seed}_{n:03d}.png", _MMB_SIZES.get(platform, (320, 200)))

    for p in platforms:
        (images / p).mkdir(parents=True, exist_ok=True)
    l2: list[Written] = []
    if isinstance(l2_records, int):
        screens = _Screens(screen)
        records: list[dict[str, Any]] = []
        for platform in platforms:
            for gtype in ("basic", "advanced"):
                for dtype in ("icon", "text"):
                    if (dtype == "icon" and platform in no_icon) or (dtype == "text" and platform in no_text):
                        continue
                    for _ in range(rng.randint(1, l2_records)):
                        s = screens.take(platform)
                        label = rng.choice(_WORDS if dtype == "text" else _ICONS)
                        x0, y0, x1, y1 = s.place(rng, label, dtype)
                        w, h = s.size
                        index = len(records)
                        what = f"the '{label}' button" if dtype == "text" else f"the {label} icon"
                        rec = {
                            "index": index,
                            "image_path": s.path.name,
                            "instruction": f"Click {what}" if gtype == "basic" else f"Open what {what} leads to",
                            "bbox": [round(x0 / w, 4), round(y0 / h, 4), round(x1 / w, 4), round(y1 / h, 4)],
                            "image_size": [w, h],
                            "data_type": dtype,
                            "platform": platform,
                            "app_name": rng.choice(_APPS),
                            "grounding_type": gtype,
                        }
                        records.append(rec)
                        l2.append(Written(f"l2-{index}", rec, s.path, s.size))
        screens.save()
        _write_json(folder / "L2_annotations.json", records)
    else:
        _write_verbatim(folder / "L2_annotations.json", images, l2_records)

    l1: list[Written] = []
    if isinstance(l1_records, int):
        records = []
        for i in range(l1_records):
            platform = platforms[i % len(platforms)]
            s = screen(platform, 900 + i)
            s.place(rng, rng.choice(_WORDS), "text")
            s.save()
            groups = []
            for q in range(rng.randint(1, 3)):
                letters = "ABCDEF"[: rng.randint(2, 6)]
                group: dict[str, Any] = {
                    "question": f"What does the screen of app {i} show ({q})?",
                    "options": {k: f"choice {k.lower()} for question {i}.{q}" for k in letters},
                    "answer": rng.choice(letters),
                    "explanation": "generated",
                    "difficulty": _DIFFICULTIES[(i + q) % 3],
                }
                if rng.random() < 0.3:
                    group["hint"] = "Look at the top of the screen."
                groups.append(group)
            rec = {"index": i, "image_path": s.path.name, "image_size": list(s.size), "platform": platform,
                   "app_name": rng.choice(_APPS), "groups": groups}
            records.append(rec)
            for q, group in enumerate(groups):
                l1.append(Written(f"l1-{i}-{q}", rec, s.path, s.size, group))
        _write_json(folder / "L1_annotations.json", records)
    else:
        _write_verbatim(folder / "L1_annotations.json", images, l1_records)
    return MMBenchGUIFixture(folder, l1, l2)


def _write_verbatim(path: Path, images: Path, records: Sequence[Any]) -> None:
    paths = []
    for r in records:
        if isinstance(r, Mapping) and isinstance(r.get("platform"), str) and isinstance(r.get("image_path"), str):
            p = r["image_path"]
            paths.append(images / (p if p.startswith(r["platform"] + "/") else f"{r['platform']}/{p}"))
    _blank_images(paths)
    _write_json(path, list(records))


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

    def screen(split: str, n: int) -> _Screen:
        size = _V2_SIZES[split][n % 2]
        return _Screen(images / f"{split}_{seed}_{n:03d}.png", size, cols=2, rows=2)

    out: list[Written] = []
    screens = _Screens(screen)
    for split in splits:
        if records is not None and split in records:
            _blank_images(images / r["img_filename"] for r in records[split]
                          if isinstance(r, Mapping) and isinstance(r.get("img_filename"), str))
            _write_json(folder / f"screenspot_{split}_v2.json", list(records[split]))
            continue
        recs: list[dict[str, Any]] = []
        for dtype in ("text", "icon"):
            for _ in range(rng.randint(1, per_cell)):
                s = screens.take(split)
                label = rng.choice(_WORDS if dtype == "text" else _ICONS)
                x0, y0, x1, y1 = s.place(rng, label, dtype)
                rec = {"img_filename": s.path.name, "bbox": [x0, y0, x1 - x0, y1 - y0],
                       "instruction": f"click {label}", "data_type": dtype,
                       "data_source": rng.choice(_V2_SOURCES[split])}
                out.append(Written(f"ssv2-{split}-{len(recs)}", rec, s.path, s.size))
                recs.append(rec)
        _write_json(folder / f"screenspot_{split}_v2.json", recs)
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

    def screen(key: str, n: int) -> _Screen:
        size = (480, 270) if n % 2 == 0 else (400, 300)
        return _Screen(images / key / f"screenshot_{seed}_{n:03d}.png", size, cols=4, rows=4)

    screens = _Screens(screen)
    (folder / "annotations").mkdir(parents=True, exist_ok=True)
    for app, platform, group in apps:
        key = f"{app}_{platform}"
        if records is not None and key in records:
            continue
        recs: list[dict[str, Any]] = []
        for i in range(rng.randint(1, per_app)):
            s = screens.take(key)
            ui_type = "text" if rng.random() < 0.5 else "icon"
            label = rng.choice(_WORDS if ui_type == "text" else _ICONS)
            x0, y0, x1, y1 = s.place(rng, label, ui_type)
            sid = f"{key}_{i}"
            rec = {"img_filename": f"{key}/{s.path.name}", "bbox": [x0, y0, x1, y1],
                   "instruction": f"click {label}", "instruction_cn": f"点击 {label}", "id": sid,
                   "application": app, "platform": platform, "img_size": list(s.size), "ui_type": ui_type,
                   "group": group}
            recs.append(rec)
            out.append(Written("sspro-" + re.sub(r"[^A-Za-z0-9_.:+\-]", "_", sid), rec, s.path, s.size))
        _write_json(folder / "annotations" / f"{key}.json", recs)
    for stem, given in (records or {}).items():
        _blank_images(images / r["img_filename"] for r in given
                      if isinstance(r, Mapping) and isinstance(r.get("img_filename"), str))
        _write_json(folder / "annotations" / f"{stem}.json", list(given))
    images.mkdir(parents=True, exist_ok=True)
    screens.save()
    return ScreenSpotFixture(folder, out)
