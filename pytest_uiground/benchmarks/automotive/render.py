"""Drawing the AutomotiveUI look-alike's screens with Pillow, from a plan (:mod:`.plan`).

Elements are drawn at ``round(fraction * size)``, within half a pixel of the stored box; the only font is
Pillow's bundled one, so the same plan gives the same bytes with the same Pillow/zlib.
"""

from __future__ import annotations

import functools
import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import ImageDraw, ImageFont


from pytest_uiground.benchmarks.automotive.plan import _DIM, _STYLES, _TEXT, NBox, _rgb, _Screen

# --------------------------------------------------------------------------- drawing


@functools.lru_cache(maxsize=32)
def _font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's bundled font only: a system font would make pixels depend on the machine."""
    from PIL import ImageFont

    font = ImageFont.load_default(size=max(6, size))
    if not isinstance(font, ImageFont.FreeTypeFont):  # Pillow built without FreeType
        raise RuntimeError("the fixture needs Pillow with FreeType (ImageFont.load_default(size=...))")
    return font


def _fit(text: str, size: int, max_width: float) -> ImageFont.FreeTypeFont:
    """The largest font at most ``size`` whose rendering of ``text`` fits ``max_width`` pixels."""
    font = _font(size)
    width = font.getlength(text)
    if width > max_width > 0:
        font = _font(int(size * max_width / width))
    return font


def _px(box: NBox, w: int, h: int) -> tuple[int, int, int, int]:
    """Pixel rectangle (inclusive corners) covering the normalized box, within half a pixel."""
    x0, y0, x1, y1 = box
    return round(x0 * w), round(y0 * h), max(round(x0 * w), round(x1 * w) - 1), max(round(y0 * h), round(y1 * h) - 1)


def _centered_text(draw: ImageDraw.ImageDraw, rect: tuple[int, int, int, int], text: str, size: int,
                   fill: tuple[int, int, int]) -> None:
    x0, y0, x1, y1 = rect
    font = _fit(text, size, (x1 - x0) * 0.9)
    draw.text(((x0 + x1) / 2, (y0 + y1) / 2), text, font=font, fill=fill, anchor="mm")


def _render(screen: _Screen, width: int, height: int) -> bytes:
    """Draw the screen (status bar, tile grid, dock) and return PNG bytes (``compress_level=1``)."""
    from PIL import Image, ImageDraw

    accent, background, tile_colour, radius_frac = _STYLES[screen.style]
    img = Image.new("RGB", (width, height), background)
    draw = ImageDraw.Draw(img)
    unit = min(height, width * 9 / 16)  # text scales with the shorter side of a 16:9 frame

    # Status bar: clock pill (a target), brand, outside temperature and signal bars (decoration).
    bar_h = round(0.08 * height)
    draw.rectangle((0, 0, width - 1, bar_h - 1), fill=_rgb(tuple(max(0, c - 4) for c in background)))
    clock = _px(screen.clock.box, width, height)
    draw.rounded_rectangle(clock, radius=(clock[3] - clock[1]) // 2, fill=tile_colour)
    _centered_text(draw, clock, screen.clock.label, round(unit * 0.035), _TEXT)
    draw.text((width / 2, bar_h / 2), screen.brand.upper(), font=_fit(screen.brand.upper(), round(unit * 0.032),
              width * 0.3), fill=_DIM, anchor="mm")
    draw.text((width * 0.86, bar_h / 2), screen.outside, font=_font(round(unit * 0.03)), fill=_DIM, anchor="rm")
    for i in range(4):
        bx = round(width * (0.9 + 0.012 * i))
        top = round(bar_h * (0.7 - 0.12 * i))
        draw.rectangle((bx, top, bx + max(1, round(width * 0.006)), round(bar_h * 0.75)), fill=_TEXT if i < 3 else _DIM)
    draw.line((0, bar_h, width, bar_h), fill=tile_colour, width=max(1, round(unit * 0.002)))

    # Tiles: an icon-like glyph above the label; the highlighted one is filled with the accent colour.
    for i, tile in enumerate(screen.tiles):
        rect = _px(tile.box, width, height)
        x0, y0, x1, y1 = rect
        radius = max(0, round((y1 - y0) * radius_frac))
        selected = i == screen.highlighted
        draw.rounded_rectangle(rect, radius=radius, fill=accent if selected else tile_colour,
                               outline=None if selected else _rgb(tuple(min(255, c + 18) for c in tile_colour)),
                               width=max(1, round(unit * 0.002)))
        cx, cy, r = (x0 + x1) / 2, y0 + (y1 - y0) * 0.38, (y1 - y0) * 0.14
        glyph = _TEXT if selected else accent
        shape = sum(map(ord, tile.key)) % 3
        if shape == 0:
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=glyph, width=max(1, round(r * 0.25)))
        elif shape == 1:
            draw.rounded_rectangle((cx - r, cy - r * 0.8, cx + r, cy + r * 0.8), radius=r * 0.3, fill=glyph)
        else:
            draw.polygon(((cx, cy - r), (cx + r, cy + r * 0.8), (cx - r, cy + r * 0.8)), fill=glyph)
        label_rect = (x0, round(y0 + (y1 - y0) * 0.62), x1, round(y0 + (y1 - y0) * 0.86))
        _centered_text(draw, label_rect, tile.label, round(unit * 0.04), _TEXT)

    # Dock buttons.
    for button in screen.dock:
        rect = _px(button.box, width, height)
        draw.rounded_rectangle(rect, radius=(rect[3] - rect[1]) // 3, fill=tile_colour)
        _centered_text(draw, rect, button.label, round(unit * 0.032), _TEXT)

    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


