"""GUI-Owl-1.5's OSWorld-G figure as its authors' script computes it: an opt-in scorer, not the suite's rule.

Why it exists: GUI-Owl-1.5's published OSWorld-G figure comes from its own evaluation,
X-PLUG/MobileAgent@11cea57 ``Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py``
(blob eb47f752), ``ScreenSpotv2.evaluate`` (``OSWorldG`` inherits it), which differs from OSWorld-G's
own rules (``suites/osworld_g/README.md``):

* an answer with no ``(x, y)`` pair (and, failing that, no ``[x, y]``) becomes the point ``(0, 0)``
  (``coord = [0, 0]``), and a refusal sample is right iff the point is ``(0, 0)``
  (``correct = all(center_point[i] == 0 ...)``): the ``terminate`` call the prompt offers has no pair,
  so it counts as a refusal, and so does *any* unreadable answer (a parse failure on a refusal sample
  is a correct refusal), as does an explicit ``(0, 0)``. Negative pairs never match ``\\d+``: ``(-1, -1)``
  is unreadable too, hence a refusal;
* the box is compared in the 1000x1000 grid with its edges floored and ceiled
  (``math.floor(x1 * scale_x)`` .. ``math.ceil(x2 * scale_x)``), which widens it by up to one grid unit;
  the polygon's ray casting runs on the grid point against the polygon scaled by ``1000 / size``.

This scorer applies those rules to the ``gui-owl`` family's reading of the answer (the same last pair
of the same regexes, stored as ``v / 1000``; an unreadable answer is a format error, a ``terminate``
call a refusal: both are the script's ``(0, 0)``). It is exact for that family's answers only; it is
chosen in a copy of the suite (``[scorer] name = "pytest_uiground.benchmarks.osworld_g.gui_owl_published:score"``),
never by default. ``tests/benchmarks/test_gui_owl_as_published.py`` checks it against the script's
logic on a small constructed run.
"""

from __future__ import annotations

import math

from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score

GRID = 1000  # use_qwen3vl: resized_width, resized_height = 1000, 1000
_EPS = 1e-9  # the box is stored as pixels / size: undo the division's rounding before floor and ceil


def grid_point(prediction: Prediction) -> tuple[int, int]:
    """The script's ``coord``: the family's pair back on the 1000 grid, or ``(0, 0)`` where it read none."""
    p = prediction.point
    if p is None:
        return 0, 0
    return round(p.x * GRID), round(p.y * GRID)


def score(sample: Sample, prediction: Prediction) -> Score:
    """``ScreenSpotv2.evaluate``'s verdict on the family's reading (module docstring)."""
    t = sample.target
    x, y = grid_point(prediction)
    if t.refusal:
        ok = (x, y) == (0, 0)
    elif t.polygon is not None and t.frame is not None:
        sx, sy = GRID / t.frame[0], GRID / t.frame[1]
        poly = t.polygon
        n = len(poly) // 2
        ok, j = False, n - 1
        for i in range(n):
            xi, yi, xj, yj = poly[2 * i] * sx, poly[2 * i + 1] * sy, poly[2 * j] * sx, poly[2 * j + 1] * sy
            if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
                ok = not ok
            j = i
    elif t.box is not None:
        b = t.box
        ok = (math.floor(b.x0 * GRID + _EPS) <= x <= math.ceil(b.x1 * GRID - _EPS)
              and math.floor(b.y0 * GRID + _EPS) <= y <= math.ceil(b.y1 * GRID - _EPS))
    else:
        raise ValueError(f"sample {sample.id!r}: point task without a target box, polygon or refusal")
    notes = {"as_published": "GUI-Owl-1.5's script: no pair read is the point (0, 0), a refusal on a refusal "
                             "sample"} if prediction.point is None else {}
    return Score(100.0 if ok else 0.0, ok, prediction.format_error,
                 {"point_hit": ok, **({"refused": (x, y) == (0, 0)} if t.refusal else {})},
                 {"point_hit": False}, notes)
