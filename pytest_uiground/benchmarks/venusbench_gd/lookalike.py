"""A small, deterministic look-alike of VenusBench-GD in its published layout (see
:mod:`pytest_uiground.suite.lookalike`).

:func:`write_venusbench_gd` → ``<root>/VenusBench-GD/{instruction/<task>.json, images/{web,mobile,desktop}/,
meta.json}``: records with the fields the official ``eval.py`` reads (``img_filename`` relative to
``images/``, ``bbox`` ``[x1, y1, x2, y2]`` pixels, ``instruction``, ``instruction_zh``, ``platform``,
``application``, ``ui_type``, ``group``, ``id``) and no image size (``eval.py`` opens the image), so
each platform's screens have their own size. ``refusal_spatial.json`` records describe an element
that is not drawn (the box they carry is where it would be; the scorer never reads it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from pytest_uiground.suite.lookalike import ICONS, WORDS, Screen, Screens, Written, blank_images, write_json

TASKS = ("element_grounding", "spatial_grounding", "visual_grounding", "reasoning_grounding",
         "functional_grounding", "refusal_spatial")
PLATFORMS = {"web": (("amazon", "Shopping"), ("github", "Development")),
             "mobile": (("wechat", "Social"), ("alipay", "Finance")),
             "desktop": (("vscode", "Development"), ("excel", "Office"))}
SIZES = {"web": (480, 300), "mobile": (180, 360), "desktop": (400, 250)}


@dataclass(frozen=True)
class VenusFixture:
    folder: Path
    written: list[Written]


def write_venusbench_gd(root: Path, *, per_task: int = 4, seed: int = 0, tasks: Sequence[str] = TASKS,
                        records: Mapping[str, Sequence[Any]] | None = None, ids: bool = True,
                        folder_name: str = "VenusBench-GD") -> VenusFixture:
    """Write ``root/VenusBench-GD`` and return what the loader must produce (English samples).

    ``per_task`` records per task file, cycling the platforms. ``records`` replaces the named task
    files' records, verbatim (blank images for the ``img_filename`` values they name), for parity and
    malformed-record tests. ``ids=False`` writes records without ``id`` (index ids).
    """
    folder = Path(root) / folder_name if folder_name else Path(root)
    images = folder / "images"
    rng = Random(f"venusbench-gd:{seed}")
    written: list[Written] = []

    def screen(platform: str, n: int) -> Screen:
        return Screen(images / platform / f"{platform}_{seed}_{n:03d}.png", SIZES[platform], cols=3, rows=3)

    screens = Screens(screen)
    meta: list[dict[str, Any]] = []
    for task in tasks:
        if records is not None and task in records:
            given = list(records[task])
            blank_images(images / r["img_filename"] for r in given
                         if isinstance(r, Mapping) and isinstance(r.get("img_filename"), str))
            write_json(folder / "instruction" / f"{task}.json", given)
            continue
        out: list[dict[str, Any]] = []
        for i in range(per_task):
            platform = tuple(PLATFORMS)[i % 3]
            app, group = PLATFORMS[platform][rng.randrange(2)]
            s = screens.take(platform)
            ui_type = "text" if rng.random() < 0.6 else "icon"
            label = rng.choice(WORDS if ui_type == "text" else ICONS)
            x0, y0, x1, y1 = s.place(rng, label, ui_type)
            if task == "refusal_spatial":
                s.elements.pop()  # nothing drawn: the element is absent
            rid = f"{task[:3]}{seed}_{i:04d}"
            rec = {"id": rid, "img_filename": f"{platform}/{s.path.name}", "bbox": [x0, y0, x1, y1],
                   "instruction": f"click {label}", "instruction_zh": f"点击 {label}", "platform": platform,
                   "application": app, "ui_type": ui_type, "group": group}
            if not ids:
                del rec["id"]
            out.append(rec)
            sid = f"venusbench-{task}-{rid}" if ids else f"venusbench-{task}-{i}"
            written.append(Written(sid, rec, s.path, s.size))
            meta.append({"task": task, **{k: rec[k] for k in ("img_filename", "platform", "application")}})
        write_json(folder / "instruction" / f"{task}.json", out)
    images.mkdir(parents=True, exist_ok=True)
    screens.save()
    write_json(folder / "meta.json", meta)
    return VenusFixture(folder, written)
