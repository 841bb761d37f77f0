"""Helpers for the look-alike dataset writers of each benchmark folder (``benchmarks/<name>/lookalike.py``).

Why this exists: real benchmark sets are gigabytes behind downloads that CI cannot make, so each benchmark ships a
writer of a small copy in its published layout. What those writers share lives here: a screen laid out on a grid
(boxes never overlap, so ground truth is exact), a record of what was written, and deterministic file writers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

APPS = ("calendar", "files", "settings", "mail", "music", "maps")
WORDS = ("Save", "Open", "Share", "Delete", "Search", "Print", "Export", "Help", "Back", "Next", "Send", "Edit",
          "Copy", "Paste", "Undo", "Zoom", "Rename", "Upload")
ICONS = ("close", "plus", "menu", "play", "star", "gear")
DIFFICULTIES = ("easy", "medium", "hard")

@dataclass(frozen=True)
class Written:
    """One sample as written: the sample id the loader must give it, the raw record (for an
    L1 question, the image record and ``group``, the question), its image and its size."""

    sample_id: str
    record: Mapping[str, Any]
    image: Path
    image_size: tuple[int, int]
    group: Mapping[str, Any] = field(default_factory=dict)


# -- drawing ----------------------------------------------------------------------------------------
@dataclass
class Screen:
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


class Screens:
    """Screens per key (platform, split, app), filled in order and saved once at the end."""

    def __init__(self, make: Callable[[str, int], Screen]) -> None:
        self.make = make
        self.open: dict[str, Screen] = {}
        self.count: dict[str, int] = {}
        self.all: list[Screen] = []

    def take(self, key: str) -> Screen:
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


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def blank_images(paths: Iterable[Path], size: tuple[int, int] = (64, 48)) -> None:
    from PIL import Image

    for p in sorted(set(paths)):
        if not p.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", size, (200, 200, 200)).save(p, format="PNG")


