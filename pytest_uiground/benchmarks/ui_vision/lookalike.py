"""A small, deterministic look-alike of UI-Vision element grounding in the Hub dataset's layout
(see :mod:`pytest_uiground.suite.lookalike`).

:func:`write_ui_vision` → ``<root>/ui-vision/annotations/element_grounding/element_grounding_{basic,
functional,spatial}.json`` and ``images/element_grounding/*.png``; ``image_path`` is relative to
``images/`` (``element_grounding/<file>.png``), ``bbox`` is ``[x1, y1, x2, y2]`` pixels (some written
with reversed corners, as the reference tolerates), ``platform`` names apps of every domain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from pytest_uiground.suite.lookalike import ICONS, WORDS, Screen, Screens, Written, write_json

from .loader import SETTINGS, annotation

#: Apps of all six domains, two of one domain, so that domain cells differ in size.
PLATFORMS = ("VSCode", "Code::Blocks", "VLC Media Player", "draw.io", "7-Zip", "GIMP", "Anki", "Brave")
SIZE = (400, 250)
CATEGORIES = ("Button", "Input Elements", "Menu")


@dataclass(frozen=True)
class UIVisionFixture:
    folder: Path
    written: list[Written]


def write_ui_vision(root: Path, *, per_setting: int | Mapping[str, Sequence[Mapping[str, Any]]] = 8,
                    seed: int = 0, size: tuple[int, int] = SIZE) -> UIVisionFixture:
    """Write ``root/ui-vision`` and return what the loader must produce.

    ``per_setting`` as a number: that many records in each setting's file, platforms cycling
    through :data:`PLATFORMS`. As a mapping setting → records: those records written verbatim
    (a blank image of each record's ``image_size``), for parity and malformed-record tests.
    """
    folder = Path(root) / "ui-vision"
    images = folder / "images"
    rng = Random(f"ui-vision:{seed}")
    written: list[Written] = []
    if not isinstance(per_setting, int):
        from PIL import Image

        for setting in SETTINGS:
            given = [dict(r) for r in per_setting.get(setting, [])]
            for r in given:
                path = images / str(r["image_path"])
                if not path.exists():
                    path.parent.mkdir(parents=True, exist_ok=True)
                    w, h = r.get("image_size", SIZE)
                    Image.new("RGB", (int(w), int(h)), (230, 230, 230)).save(path, format="PNG")
            write_json(folder / annotation(setting), given)
        return UIVisionFixture(folder, written)
    screens = Screens(lambda key, n: Screen(images / "element_grounding" / f"{key.replace(' ', '_').replace(':', '')}"
                                            f"_{seed}_{n:02d}.png", size))
    for setting in SETTINGS:
        recs: list[dict[str, Any]] = []
        for i in range(per_setting):
            platform = PLATFORMS[(i + SETTINGS.index(setting)) % len(PLATFORMS)]
            kind = ("text", "icon")[i % 2]
            s = screens.take(platform)
            label = rng.choice(WORDS if kind == "text" else ICONS)
            x0, y0, x1, y1 = s.place(rng, label, kind)
            bbox = [x1, y0, x0, y1] if i % 5 == 3 else [x0, y0, x1, y1]  # reversed corners, swapped on reading
            prompt = {"basic": f"{label}", "functional": f"The control that does '{label}'",
                      "spatial": f"The element right of the one before '{label}'"}[setting]
            rec = {"image_path": f"element_grounding/{s.path.name}", "image_size": list(size), "bbox": bbox,
                   "prompt_to_evaluate": prompt, "platform": platform, "element_type": kind,
                   "category": CATEGORIES[i % 3]}
            recs.append(rec)
            written.append(Written(f"ui-vision-{setting}-{i}", rec, s.path, size))
        write_json(folder / annotation(setting), recs)
    screens.save()
    return UIVisionFixture(folder, written)
