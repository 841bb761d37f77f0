"""A small, deterministic look-alike of OSWorld-G in its published layout (see
:mod:`pytest_uiground.suite.lookalike`).

:func:`write_osworld_g` → ``<root>/benchmark/{OSWorld-G.json, OSWorld-G_refined.json,
classification_result.json, buckets.json, images/}``: bbox records (``[x, y, w, h]`` pixels, float
edges as in the real file), concave L-shaped polygon records (flat pixel vertex lists) and refusal
records (``box_coordinates`` ``[0, 0, 0, 0]``), several per screenshot with ids ``<STEM>-<k>``,
and groups where some records sit in two groups and some in none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from pytest_uiground.suite.lookalike import ICONS, WORDS, Screen, Written, write_json

GROUPS = ("text_matching", "element_recognition", "layout_understanding", "fine_grained_manipulation", "refusal")
SIZE = (480, 270)  # a 1920x1080 screenshot at a quarter of the size, to keep the files small


@dataclass(frozen=True)
class OSWorldGFixture:
    folder: Path
    written: list[Written]
    groups: Mapping[str, list[str]]  # group -> record ids


def l_polygon(x0: int, y0: int, x1: int, y1: int) -> list[float]:
    """An L shape filling the rectangle's left and bottom halves (its top-right quarter is out)."""
    mx, my = (x0 + x1) / 2, (y0 + y1) / 2
    return [x0, y0, mx, y0, mx, my, x1, my, x1, y1, x0, y1]


def write_osworld_g(root: Path, *, records: int | Sequence[Mapping[str, Any]] = 12, seed: int = 0,
                    groups: Mapping[str, Sequence[str]] | None = None,
                    size: tuple[int, int] = SIZE, quirks: bool = False) -> OSWorldGFixture:
    """Write ``root/benchmark`` and return what the loader must produce.

    ``records`` as a number: that many records, box types cycling bbox, bbox, polygon, refusal,
    on screens of ``size`` (default :data:`SIZE`; the real screenshots are 1920x1080). As a list:
    those records written verbatim (a blank image of each
    record's ``image_size`` for its ``image_path``), for parity and malformed-record tests.
    ``groups``: group -> record ids for ``classification_result.json``; by default each record
    gets one or two groups by a seeded draw, every fifth none. ``quirks``: the refined file's first
    record has an empty instruction, as the published ``OSWorld-G_refined.json`` has for record
    ``9bQOfLzvdu-0`` (the runners score it; the loader keeps it, warning).
    """
    folder = Path(root) / "benchmark"
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    rng = Random(f"osworld-g:{seed}")
    written: list[Written] = []
    out: list[dict[str, Any]] = []
    if isinstance(records, int):
        screen: Screen | None = None
        for i in range(records):
            if screen is None or screen.full:
                if screen is not None:
                    screen.save()
                screen = Screen(images / f"OSW{seed}X{len(written) // 12:03d}.png", size, cols=4, rows=3)
            kind = ("bbox", "bbox", "polygon", "refusal")[i % 4]
            k = sum(1 for w in written if w.image == screen.path)
            label = rng.choice(WORDS if kind != "polygon" else ICONS)
            x0, y0, x1, y1 = screen.place(rng, label, "text")
            stem = screen.path.stem
            rec: dict[str, Any] = {"id": f"{stem}-{k}", "image_path": screen.path.name, "image_size": list(size),
                                   "instruction": f"Click {label}", "box_type": kind, "GUI_types": ["Button"]}
            if kind == "bbox":
                dx, dy = rng.choice((0.0, 0.4, 0.9)), rng.choice((0.0, 0.25))
                rec["box_coordinates"] = [x0 + dx, y0 + dy, x1 - x0 - dx, y1 - y0 - dy]
            elif kind == "polygon":
                rec["box_coordinates"] = l_polygon(x0, y0, x1, y1)
            else:
                rec["instruction"] = f"Click the '{label}' button in the ribbon"  # not on this screen
                rec["box_coordinates"] = [0, 0, 0, 0]
                screen.elements.pop()  # nothing drawn: the element is absent
            out.append(rec)
            written.append(Written(f"osworld-g-{rec['id']}", rec, screen.path, size))
        if screen is not None:
            screen.save()
    else:
        from PIL import Image

        for given in records:
            out.append(dict(given))
            path = images / str(given["image_path"])
            if not path.exists():
                w, h = given.get("image_size", SIZE)
                Image.new("RGB", (int(w), int(h)), (230, 230, 230)).save(path, format="PNG")
    if groups is None:
        drawn: dict[str, list[str]] = {g: [] for g in GROUPS}
        for i, rec in enumerate(out):
            if i % 5 == 4:
                continue
            first = "refusal" if rec.get("box_type") == "refusal" else rng.choice(GROUPS[:4])
            drawn[first].append(str(rec["id"]))
            if i % 3 == 0:
                drawn[rng.choice([g for g in GROUPS[:4] if g != first])].append(str(rec["id"]))
        groups = drawn
    write_json(folder / "OSWorld-G.json", out)
    refined = [{**r, "instruction": f"{r['instruction']} (refined: the element described by its look and place)"}
               if isinstance(r.get("instruction"), str) else dict(r) for r in out]
    if quirks and refined:
        refined[0]["instruction"] = ""
    write_json(folder / "OSWorld-G_refined.json", refined)
    write_json(folder / "classification_result.json",
               {"classified": {g: [{"id": rid, "instruction": "..."} for rid in ids] for g, ids in groups.items()}})
    write_json(folder / "buckets.json", {g: ["Button"] for g in groups})
    return OSWorldGFixture(folder, written, {g: list(v) for g, v in groups.items()})
