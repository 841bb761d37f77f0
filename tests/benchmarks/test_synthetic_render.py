"""pytest_uiground.benchmarks.synthetic.render: screens drawn from layouts, inside their boxes."""

from __future__ import annotations

import numpy as np
from PIL import ImageColor

from pytest_uiground.benchmarks.synthetic.layout import _THEME_COLORS, generate_layouts
from pytest_uiground.benchmarks.synthetic.render import _screen_image, render_screen

LAYOUTS = generate_layouts(seed=1, n_screens=6, width=640, height=480)  # every difficulty in both themes


def test_rendering_is_deterministic_and_sized_by_the_layout() -> None:
    for layout in LAYOUTS[:2]:
        a, b = render_screen(layout), render_screen(layout)
        assert a.size == (640, 480) and a.mode == "RGB"
        assert a.tobytes() == b.tobytes()


def test_everything_drawn_lies_inside_a_ground_truth_box_and_every_box_shows_something() -> None:
    for layout in LAYOUTS:
        pixels = np.asarray(render_screen(layout))
        background = ImageColor.getrgb(_THEME_COLORS[layout.theme]["bg"])
        drawn = (pixels != background).any(axis=2)
        inside = np.zeros(drawn.shape, dtype=bool)
        for e in layout.elements:
            inside[e.y0:e.y1, e.x0:e.x1] = True
            assert drawn[e.y0:e.y1, e.x0:e.x1].any(), (layout.index, e)
        assert not (drawn & ~inside).any(), f"screen {layout.index}: pixels drawn outside every element box"


def test_the_screen_image_is_a_private_copy() -> None:
    layout = LAYOUTS[0]
    first = _screen_image(layout.seed, layout.index, layout.width, layout.height)
    first.paste((255, 0, 255), (0, 0, 640, 480))  # a caller drawing on its image
    again = _screen_image(layout.seed, layout.index, layout.width, layout.height)
    assert again.tobytes() == render_screen(layout).tobytes()
