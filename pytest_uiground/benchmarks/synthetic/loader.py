"""Deterministic synthetic UI screens with exact ground truth (loader ``synthetic``).

Why this exists: real grounding datasets cannot be downloaded everywhere (CI, air-gapped
machines), yet a regression suite needs *some* screenshots whose ground truth is exact.
This module draws plausible UI screens (buttons, labels, input fields, checkboxes and
icon-only buttons) from a seed, so a suite is reproducible anywhere without data files.

Design rules, each with its reason:

* **Determinism.** Every screen has its own ``random.Random`` seeded from
  ``(seed, screen index)`` with integer arithmetic (never ``hash()`` of a string, which
  is salted per process, and never the global ``random`` state, which other code may
  touch). The only font is the one bundled with Pillow (``ImageFont.load_default``), so
  no system font can change the pixels. Layout does not even depend on FreeType: text
  widths come from an embedded advance table of that font, so ground-truth boxes depend
  only on the seed and this file.
* **Cheap collection.** Layout is pure arithmetic with grid-cell placement (no
  rejection loops, elements never overlap). Pixels are drawn only when a test loads the
  sample's image, and a small LRU cache lets the several samples of one screen share one
  rendering.
* **Unambiguous ground truth.** Texts are unique within a screen, the vocabularies of the
  element types are disjoint, and no text uses the words that describe icons, so every
  instruction names exactly one element.
* **Sliceable.** Every sample's ``meta`` holds ``difficulty``, ``theme``,
  ``element_type`` and ``size`` (the size bucket, see :func:`size_bucket`), so a report
  can say *where* a model regressed.
"""


from __future__ import annotations

import functools
import gc
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pytest_uiground.record.geometry import Box, size_bucket
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import LoaderContext

if TYPE_CHECKING:
    pass

# Re-exported: the loader module is the benchmark's public face (tests and perf scripts use these names).
from pytest_uiground.benchmarks.synthetic.layout import (  # noqa: F401
    _MAX_SCREENS,
    _MAX_SIDE,
    _MAX_TARGETS,
    _MIN_HEIGHT,
    _MIN_SIDE,
    _OPTIONS,
    BUTTON_TEXTS,
    CHECKBOX_TEXTS,
    DEFAULT_HEIGHT,
    DEFAULT_SCREENS,
    DEFAULT_SEED,
    DEFAULT_TARGETS_PER_SCREEN,
    DEFAULT_WIDTH,
    DIFFICULTIES,
    ELEMENT_TYPES,
    ICON_DESCRIPTIONS,
    INPUT_PLACEHOLDERS,
    LABEL_TEXTS,
    THEMES,
    Element,
    ScreenLayout,
    _check_int,
    _layout_screen,
    generate_layouts,
)
from pytest_uiground.benchmarks.synthetic.render import _render_cached, _screen_image, render_screen  # noqa: F401


def _samples(layouts: Iterable[ScreenLayout], targets_per_screen: int, task: str = "point") -> list[Sample]:
    """Samples for the first ``targets_per_screen`` elements of each layout (no pixels).

    ``task = "detect"``: find the element's box from the click at its centre (what a
    recorded click gives), with the instruction as a hint for grounders.
    """
    samples: list[Sample] = []
    append = samples.append
    for layout in layouts:
        seed, index, width, height = layout.seed, layout.index, layout.width, layout.height
        image = ImageRef(  # the size declared: a perturbation's map or a replay never renders the screen for it
            key=f"synthetic:{seed}:{index:05d}:{width}x{height}",
            source=functools.partial(_screen_image, seed, index, width, height),
            size=(width, height),
        )
        difficulty, theme = layout.difficulty, layout.theme
        for j, el in enumerate(layout.elements[:targets_per_screen]):
            x0, y0, x1, y1 = el.x0, el.y0, el.x1, el.y1
            box = Box(x0 / width, y0 / height, x1 / width, y1 / height)
            append(
                Sample(
                    id=f"syn-{seed}-{index:05d}-{j:02d}",
                    image=image,
                    instruction=el.instruction,
                    task="detect" if task == "detect" else "point",
                    target=Target(box=box),
                    meta={
                        "difficulty": difficulty,
                        "theme": theme,
                        "element_type": el.kind,
                        "size": size_bucket(x1 - x0, y1 - y0),
                        **({"dataset": "synthetic"} if task == "detect" else {}),
                    },
                    click=box.center if task == "detect" else None,
                )
            )
    return samples


def load(options: Mapping[str, Any], ctx: LoaderContext) -> list[Sample]:
    """Loader entry point: options ``seed``, ``screens``, ``width``, ``height``, ``targets_per_screen``.

    With the defaults (50 screens of 800x600, 6 targets per screen) this yields about
    280 samples covering every difficulty, theme, element type and size bucket. Each
    sample's image is rendered only when a test loads it.
    """
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ValueError(
            f"suite {ctx.suite_name!r}: unknown synthetic loader option(s) {unknown}; "
            f"allowed: {sorted(_OPTIONS)}"
        )
    seed = _check_int("seed", options.get("seed", DEFAULT_SEED), 0, 2**63 - 1)
    screens = _check_int("screens", options.get("screens", DEFAULT_SCREENS), 1, _MAX_SCREENS)
    width = _check_int("width", options.get("width", DEFAULT_WIDTH), _MIN_SIDE, _MAX_SIDE)
    height = _check_int("height", options.get("height", DEFAULT_HEIGHT), _MIN_HEIGHT, _MAX_SIDE)
    task = options.get("task", "point")
    if task not in ("point", "detect"):
        raise ValueError(f"synthetic loader option 'task': {task!r} is not 'point' or 'detect'")
    targets = _check_int(
        "targets_per_screen", options.get("targets_per_screen", DEFAULT_TARGETS_PER_SCREEN), 1, _MAX_TARGETS
    )
    # Collection builds a few objects per sample and no reference cycles; pausing the
    # cyclic GC avoids repeated full passes over the growing list (~30% of the time).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        layouts = (_layout_screen(seed, i, width, height, targets) for i in range(screens))
        return _samples(layouts, targets, task)
    finally:
        if gc_was_enabled:
            gc.enable()
