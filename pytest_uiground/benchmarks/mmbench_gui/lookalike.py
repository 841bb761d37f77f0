"""A small, deterministic look-alike of MMBench-GUI in its published layout
(see :mod:`pytest_uiground.suite.lookalike`).

:func:`write_mmbench_gui` → ``<root>/MMBench-GUI/{L1,L2}_annotations.json`` and ``offline_images/os_*/``;
``image_path`` is relative to the platform folder (the reference loader prefixes ``{platform}/``); L2 boxes are
normalized ``[x1, y1, x2, y2]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from pytest_uiground.suite.lookalike import (
    APPS,
    DIFFICULTIES,
    ICONS,
    WORDS,
    Screen,
    Screens,
    Written,
    blank_images,
    write_json,
)

MMBENCH_PLATFORMS: tuple[str, ...] = ("os_windows", "os_mac", "os_linux", "os_ios", "os_android", "os_web")
_MMB_SIZES = {"os_windows": (320, 200), "os_mac": (320, 200), "os_linux": (320, 200), "os_ios": (180, 320),
              "os_android": (180, 320), "os_web": (300, 200)}

@dataclass(frozen=True)
class MMBenchGUIFixture:
    folder: Path
    l1: list[Written]
    l2: list[Written]


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
    quirks: bool = False,
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

    def screen(key: str, n: int) -> Screen:
        platform = key.removesuffix("_d41d8cd9")  # a quirk screen's name carries the md5 of the empty string
        name = f"{platform[3:]}_{seed}_{n:03d}{key[len(platform):]}.png"
        return Screen(images / platform / name, _MMB_SIZES.get(platform, (320, 200)))

    for p in platforms:
        (images / p).mkdir(parents=True, exist_ok=True)
    l2: list[Written] = []
    if isinstance(l2_records, int):
        screens = Screens(screen)
        records: list[dict[str, Any]] = []
        for platform in platforms:
            for gtype in ("basic", "advanced"):
                for dtype in ("icon", "text"):
                    if (dtype == "icon" and platform in no_icon) or (dtype == "text" and platform in no_text):
                        continue
                    for _ in range(rng.randint(1, l2_records)):
                        quirk = quirks and not any(r["grounding_type"] == gtype for r in records)
                        s = screens.take(f"{platform}_d41d8cd9" if quirk else platform)
                        label = rng.choice(WORDS if dtype == "text" else ICONS)
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
                            "app_name": "" if quirk else rng.choice(APPS),
                            "grounding_type": gtype,
                        }
                        records.append(rec)
                        l2.append(Written(f"l2-{index}", rec, s.path, s.size))
        screens.save()
        write_json(folder / "L2_annotations.json", records)
    else:
        _write_verbatim(folder / "L2_annotations.json", images, l2_records)

    l1: list[Written] = []
    if isinstance(l1_records, int):
        records = []
        for i in range(l1_records):
            platform = platforms[i % len(platforms)]
            s = screen(platform, 900 + i)
            s.place(rng, rng.choice(WORDS), "text")
            s.save()
            groups = []
            for q in range(rng.randint(1, 3)):
                letters = "ABCDEF"[: rng.randint(2, 6)]
                group: dict[str, Any] = {
                    "question": f"What does the screen of app {i} show ({q})?",
                    "options": {k: f"choice {k.lower()} for question {i}.{q}" for k in letters},
                    "answer": rng.choice(letters),
                    "explanation": "generated",
                    "difficulty": DIFFICULTIES[(i + q) % 3],
                }
                if rng.random() < 0.3:
                    group["hint"] = "Look at the top of the screen."
                groups.append(group)
            rec = {"index": i, "image_path": s.path.name, "image_size": list(s.size), "platform": platform,
                   "app_name": rng.choice(APPS), "groups": groups}
            records.append(rec)
            for q, group in enumerate(groups):
                l1.append(Written(f"l1-{i}-{q}", rec, s.path, s.size, group))
        write_json(folder / "L1_annotations.json", records)
    else:
        _write_verbatim(folder / "L1_annotations.json", images, l1_records)
    return MMBenchGUIFixture(folder, l1, l2)


def _write_verbatim(path: Path, images: Path, records: Sequence[Any]) -> None:
    paths = []
    for r in records:
        if isinstance(r, Mapping) and isinstance(r.get("platform"), str) and isinstance(r.get("image_path"), str):
            p = r["image_path"]
            paths.append(images / (p if p.startswith(r["platform"] + "/") else f"{r['platform']}/{p}"))
    blank_images(paths)
    write_json(path, list(records))


