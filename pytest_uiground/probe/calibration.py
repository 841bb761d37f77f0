"""The probe's calibration set: generated screens with one target each, at known places.

Why generated: the probe must run before any dataset is read (it is a check of the model's
coordinate contract, not of its skill), with nothing downloaded, and the truth must be exact.
Each screen is a light-grey desktop with a few grey panels (so the target is not the only
thing drawn) and one solid magenta square, the target, named in the instruction. The set
covers what a wrong frame shows up on: targets near each corner and the centre of an
ordinary screen (scale and offset per axis), wide, tall and odd aspect ratios (a frame that
mixes up width and height, or resizes without keeping the aspect ratio), and five screens
above every family's ``max_pixels`` (a server that resizes with other limits than the family
assumes). Thirteen requests in all.

Why five large screens, with their targets far from the top-left corner: a server resize with
another ``max_pixels`` changes the reading of a screen only where the area is above the smaller
of the two limits, and it scales the reading towards (0, 0). With two such screens (the first
set) a server at 2.6 or 4 MP in front of ``qwen-vl`` missed exactly those two, which the two
misses a pass allows swallowed (issue 34). Five of thirteen exceed the allowance, and at 0.6 to
0.9 of a side a limit 5 % off the family's already moves the target out of its square. The wide,
tall and odd aspects each keep one ordinary-sized screen beside a large one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from random import Random
from typing import TYPE_CHECKING

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target

if TYPE_CHECKING:
    from PIL import Image

TARGET_RGB = (255, 0, 255)
INSTRUCTION = "the magenta square"
HIGH_RES = (5120, 2880)
"""14.7 MP: above the Qwen2.5-VL default ``max_pixels`` (12.8 MP) and every family's limit here;
the large wide (16.6 MP), tall (14.1 MP) and odd (15.4 MP) screens are above it too."""


@dataclass(frozen=True)
class Screen:
    name: str
    size: tuple[int, int]
    centre: tuple[float, float]  # the target's centre, normalized


SCREENS: tuple[Screen, ...] = (
    Screen("top-left", (1280, 800), (0.08, 0.1)),
    Screen("top-right", (1280, 800), (0.92, 0.1)),
    Screen("bottom-left", (1280, 800), (0.08, 0.9)),
    Screen("bottom-right", (1280, 800), (0.92, 0.9)),
    Screen("centre", (1280, 800), (0.5, 0.5)),
    Screen("wide-left", (2560, 720), (0.2, 0.3)),
    Screen("wide-right", (7680, 2160), (0.85, 0.75)),
    Screen("tall-top", (720, 1600), (0.7, 0.15)),
    Screen("tall-bottom", (2520, 5600), (0.3, 0.85)),
    Screen("odd-a", (1111, 555), (0.35, 0.65)),
    Screen("odd-b", (5555, 2777), (0.8, 0.6)),
    Screen("hires-a", HIGH_RES, (0.6, 0.9)),
    Screen("hires-b", HIGH_RES, (0.9, 0.6)),
)


def target_box(screen: Screen) -> tuple[int, int, int, int]:
    """The target square in pixels: 4 % of the shorter side (at least 24 px), centred on ``centre``."""
    w, h = screen.size
    side = max(24, round(0.04 * min(w, h)))
    cx, cy = round(screen.centre[0] * w), round(screen.centre[1] * h)
    return cx - side // 2, cy - side // 2, cx - side // 2 + side, cy - side // 2 + side


def draw(screen: Screen) -> Image.Image:
    """The screen: seeded grey panels, then the magenta target over them."""
    from PIL import Image, ImageDraw

    w, h = screen.size
    img = Image.new("RGB", (w, h), (228, 230, 234))
    pen = ImageDraw.Draw(img)
    rng = Random(f"probe:{screen.name}")
    for _ in range(8):
        pw, ph = rng.randrange(w // 10, w // 4), rng.randrange(h // 10, h // 4)
        x, y = rng.randrange(0, w - pw), rng.randrange(0, h - ph)
        shade = rng.randrange(150, 210)
        pen.rectangle((x, y, x + pw, y + ph), fill=(shade, shade, shade + 10), outline=(90, 90, 90))
    pen.rectangle(target_box(screen), fill=TARGET_RGB)
    return img


def samples(screens: Sequence[Screen] = SCREENS) -> list[Sample]:
    """One point sample per screen; the image is drawn when the model asks for it."""
    out = []
    for s in screens:
        x0, y0, x1, y1 = target_box(s)
        w, h = s.size
        out.append(Sample(
            id=f"probe-{s.name}", instruction=INSTRUCTION, task="point",
            image=ImageRef(key=f"probe:{s.name}:{w}x{h}", source=functools.partial(draw, s), size=s.size),
            target=Target(box=Box(x0 / w, y0 / h, x1 / w, y1 / h)), meta={"screen": s.name}))
    return out
