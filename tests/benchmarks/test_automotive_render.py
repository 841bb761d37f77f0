"""pytest_uiground.benchmarks.automotive.render: screens drawn from their plan, where the plan says."""

from __future__ import annotations

import io

from PIL import Image

from pytest_uiground.benchmarks.automotive import plan
from pytest_uiground.benchmarks.automotive.render import _px, _render

SCREEN = plan._plan_screen(0, 0, plan.DEFAULT_BRANDS)


def test_render_is_a_deterministic_png_of_the_asked_size() -> None:
    data = _render(SCREEN, 320, 180)
    assert data.startswith(b"\x89PNG") and data == _render(SCREEN, 320, 180)
    with Image.open(io.BytesIO(data)) as img:
        assert img.size == (320, 180)


def test_pixel_rectangles_are_within_half_a_pixel_of_the_box() -> None:
    for w, h in ((320, 180), (1000, 563)):
        for el in (*SCREEN.tiles, *SCREEN.dock, SCREEN.clock):
            x0, y0, x1, y1 = _px(el.box, w, h)
            assert abs(x0 - el.box[0] * w) <= 0.5 and abs(y0 - el.box[1] * h) <= 0.5
            assert abs(x1 + 1 - el.box[2] * w) <= 0.5 and abs(y1 + 1 - el.box[3] * h) <= 0.5


def test_only_the_highlighted_tile_is_filled_with_the_accent_colour() -> None:
    w, h = 640, 360
    accent, _background, tile_colour, _radius = plan._STYLES[SCREEN.style]
    with Image.open(io.BytesIO(_render(SCREEN, w, h))) as img:
        rgb = img.convert("RGB")
        for i, tile in enumerate(SCREEN.tiles):
            x0, y0, x1, y1 = _px(tile.box, w, h)
            fill = rgb.getpixel(((x0 + x1) // 2, y0 + (y1 - y0) // 10))  # above the glyph and the label
            assert fill == (accent if i == SCREEN.highlighted else tile_colour), (i, tile.label)
