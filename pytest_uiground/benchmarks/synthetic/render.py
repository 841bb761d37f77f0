"""Drawing synthetic screens from their layouts (:mod:`.layout`) with Pillow's bundled font.

Rendering happens only when a test loads a sample's image; a small LRU cache lets the samples of one screen
share one rendering.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image, ImageDraw, ImageFont

from pytest_uiground.benchmarks.synthetic.layout import _THEME_COLORS, Element, ScreenLayout, _layout_screen


@functools.lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont:
    """The font bundled with Pillow at ``size`` px: never a system font (determinism)."""
    from PIL import ImageFont

    font = ImageFont.load_default(size=size)
    if not isinstance(font, ImageFont.FreeTypeFont):  # Pillow built without FreeType
        raise RuntimeError(
            "the synthetic loader needs Pillow with FreeType support "
            "(ImageFont.load_default(size=...) returned a bitmap font); install the Pillow wheel"
        )
    return font


def _fitted_font(text: str, size: int, max_width: float) -> ImageFont.FreeTypeFont:
    """Largest font <= ``size`` whose text fits ``max_width`` (layout clamps to the cell)."""
    font = _font(size)
    while size > 6 and font.getlength(text) > max_width:
        size -= 1
        font = _font(size)
    return font


def _draw_icon(draw: ImageDraw.ImageDraw, el: Element, colors: Mapping[str, str]) -> None:
    x0, y0, x1, y1 = el.x0, el.y0, el.x1 - 1, el.y1 - 1
    side = el.x1 - el.x0
    draw.rounded_rectangle((x0, y0, x1, y1), radius=max(2, side // 5), fill=colors["icon_bg"])
    fg = colors["fg"]
    lw = max(2, side // 10)
    inset = side * 0.27
    a0, b0, a1, b1 = x0 + inset, y0 + inset, x1 - inset, y1 - inset
    cx, cy = (a0 + a1) / 2, (b0 + b1) / 2
    if el.text == "close":
        draw.line((a0, b0, a1, b1), fill=fg, width=lw)
        draw.line((a0, b1, a1, b0), fill=fg, width=lw)
    elif el.text == "plus":
        draw.line((cx, b0, cx, b1), fill=fg, width=lw)
        draw.line((a0, cy, a1, cy), fill=fg, width=lw)
    elif el.text == "menu":
        for y in (b0 + lw / 2, cy, b1 - lw / 2):
            draw.line((a0, y, a1, y), fill=fg, width=lw)
    elif el.text == "search":
        r = (a1 - a0) * 0.36
        mx, my = a0 + r, b0 + r
        draw.ellipse((mx - r, my - r, mx + r, my + r), outline=fg, width=lw)
        draw.line((mx + r * 0.7, my + r * 0.7, a1, b1), fill=fg, width=lw)
    elif el.text == "play":
        draw.polygon(((a0 + lw / 2, b0), (a1, cy), (a0 + lw / 2, b1)), fill=fg)
    else:  # gear: a toothed ring
        r_out = (a1 - a0) / 2
        r_in = r_out * 0.72
        tooth = max(1.5, r_out * 0.22)
        for k in range(8):
            dx, dy = ((1, 0), (0.7071, 0.7071), (0, 1), (-0.7071, 0.7071))[k % 4]
            sign = 1 if k < 4 else -1
            tx, ty = cx + sign * dx * r_in, cy + sign * dy * r_in
            draw.ellipse((tx - tooth, ty - tooth, tx + tooth, ty + tooth), fill=fg)
        draw.ellipse((cx - r_in, cy - r_in, cx + r_in, cy + r_in), fill=fg)
        hole = r_in * 0.45
        draw.ellipse((cx - hole, cy - hole, cx + hole, cy + hole), fill=colors["icon_bg"])


def _draw_element(draw: ImageDraw.ImageDraw, el: Element, colors: Mapping[str, str], accent: str) -> None:
    x0, y0, x1, y1 = el.x0, el.y0, el.x1 - 1, el.y1 - 1
    w, h = el.x1 - el.x0, el.y1 - el.y0
    cy = (el.y0 + el.y1) / 2
    if el.kind == "icon":
        _draw_icon(draw, el, colors)
    elif el.kind == "button":
        primary = el.style == "primary"
        draw.rounded_rectangle(
            (x0, y0, x1, y1), radius=max(2, h // 5), fill=accent if primary else colors["secondary"]
        )
        font = _fitted_font(el.text, el.font_size, w - 0.6 * el.font_size)
        fg = "#ffffff" if primary else colors["fg"]
        draw.text(((el.x0 + el.x1) / 2, cy), el.text, font=font, fill=fg, anchor="mm")
    elif el.kind == "input":
        draw.rectangle((x0, y0, x1, y1), fill=colors["field"], outline=colors["border"], width=1)
        pad = 0.6 * el.font_size
        font = _fitted_font(el.text, el.font_size, w - 2 * pad)
        draw.text((el.x0 + pad, cy), el.text, font=font, fill=colors["muted"], anchor="lm")
    elif el.kind == "checkbox":
        square = min(round(0.95 * el.font_size), h)
        sy0 = round(cy - square / 2)
        box = (el.x0 + 1, sy0, el.x0 + square, sy0 + square - 1)
        if el.style == "checked":
            draw.rectangle(box, fill=accent, outline=accent)
            lw = max(1, square // 7)
            draw.line(
                (
                    (box[0] + square * 0.2, sy0 + square * 0.5),
                    (box[0] + square * 0.42, sy0 + square * 0.72),
                    (box[0] + square * 0.8, sy0 + square * 0.28),
                ),
                fill="#ffffff",
                width=lw,
            )
        else:
            draw.rectangle(box, fill=colors["field"], outline=colors["border"], width=max(1, square // 10))
        tx = el.x0 + square + 0.5 * el.font_size
        font = _fitted_font(el.text, el.font_size, el.x1 - tx)
        draw.text((tx, cy), el.text, font=font, fill=colors["fg"], anchor="lm")
    else:  # label
        font = _fitted_font(el.text, el.font_size, w - 2)
        draw.text((el.x0 + 2, cy), el.text, font=font, fill=colors["fg"], anchor="lm")


def render_screen(layout: ScreenLayout) -> Image.Image:
    """Draw a screen: same layout and Pillow version give byte-identical pixels."""
    from PIL import Image, ImageDraw

    colors = _THEME_COLORS[layout.theme]
    img = Image.new("RGB", (layout.width, layout.height), colors["bg"])
    draw = ImageDraw.Draw(img)
    for el in layout.elements:
        _draw_element(draw, el, colors, layout.accent)
    return img


@functools.lru_cache(maxsize=8)
def _render_cached(seed: int, index: int, width: int, height: int) -> Image.Image:
    """One rendering per screen per process: the samples of a screen are adjacent in a
    suite, so a small cache turns ~6 renderings per screen into one."""
    return render_screen(_layout_screen(seed, index, width, height))


def _screen_image(seed: int, index: int, width: int, height: int) -> Image.Image:
    """The image source of a sample; a copy, so a caller drawing on it cannot corrupt the cache."""
    return _render_cached(seed, index, width, height).copy()


# ----------------------------------------------------------------------------- loader
