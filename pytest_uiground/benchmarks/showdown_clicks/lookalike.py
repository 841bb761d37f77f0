"""A small, deterministic look-alike of showdown-clicks-dev in its published layout (see
:mod:`pytest_uiground.suite.lookalike`).

:func:`write_showdown_clicks` → ``<root>/showdown-clicks-dev/{data.csv, frames/<recording>/<n>.png}``: the
CSV's columns as ``clicks/README.md`` lists them (``id, recording_id, instruction, image, x1, y1, x2, y2,
width, height``; ``image`` relative to ``showdown-clicks-dev/``), boxes in whole pixels, screens at the
two sizes the card names (WXGA 1280×800 and WSXGA+ 1680×1050, drawn small: 320×200 and 420×262 keep the
aspect and the test fast). ``rows`` replaces the generated rows verbatim (blank images for the paths
they name), for parity and malformed-row tests.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

from pytest_uiground.suite.lookalike import WORDS, Screen, Screens, Written, blank_images

COLUMNS = ("id", "recording_id", "instruction", "image", "x1", "y1", "x2", "y2", "width", "height")
SIZES = {"wxga": (320, 200), "wsxga": (420, 262)}


@dataclass(frozen=True)
class ShowdownFixture:
    folder: Path
    written: list[Written]


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] = COLUMNS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in columns})


def write_showdown_clicks(root: Path, *, n: int = 8, seed: int = 0, rows: Sequence[Mapping[str, Any]] | None = None,
                          sizes: Mapping[str, tuple[int, int]] | None = None,
                          columns: Sequence[str] = COLUMNS) -> ShowdownFixture:
    """Write ``root/showdown-clicks-dev`` and return what the loader must produce. ``sizes`` (image
    path → size) sizes the blank images of given ``rows``."""
    folder = Path(root) / "showdown-clicks-dev"
    if rows is not None:
        given = [dict(r) for r in rows]
        for path, size in (sizes or {}).items():
            blank_images([folder / path], size)
        blank_images(folder / str(r["image"]) for r in given if isinstance(r.get("image"), str) and r["image"])
        write_csv(folder / "data.csv", given, columns)
        return ShowdownFixture(folder, [Written(f"showdown-{r.get('id')}", r, folder / str(r.get("image")), (0, 0))
                                        for r in given])
    rng = Random(f"showdown:{seed}")
    written: list[Written] = []
    out: list[dict[str, Any]] = []

    def screen(key: str, k: int) -> Screen:
        return Screen(folder / "frames" / f"rec{seed}{key}" / f"{k:04d}.png", SIZES[key], cols=3, rows=2)

    screens = Screens(screen)
    for i in range(n):
        key = tuple(SIZES)[i % 2]
        s = screens.take(key)
        label = rng.choice(WORDS)
        x0, y0, x1, y1 = s.place(rng, label, "text")
        w, h = s.size
        rid = f"c{seed}{i:04d}"
        row = {"id": rid, "recording_id": f"rec{seed}{key}", "instruction": f"click {label}",
               "image": str(s.path.relative_to(folder)), "x1": x0, "y1": y0, "x2": x1 - 1, "y2": y1 - 1,
               "width": w, "height": h}
        out.append(row)
        written.append(Written(f"showdown-{rid}", row, s.path, s.size))
    screens.save()
    write_csv(folder / "data.csv", out, columns)
    return ShowdownFixture(folder, written)
