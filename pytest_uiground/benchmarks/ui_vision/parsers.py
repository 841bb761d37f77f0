"""How UI-Vision reads UGround-V1's answer, for ``[models.uground]``.

``uivision/UI-Vision`` @2b79355 ``eval/grounding/models/uground.py: UGroundV1Model.ground_only_positive``
(``--model_type uground-v1``): the stripped text is evaluated as a Python expression, unpacked into
``x, y`` and divided by 1000; any exception means no point (the script's "wrong_format"). The point
is not clipped (``eval_uivision.py: eval_sample_positive_gt`` tests it as it is), so 1001 on a box
touching the right edge is a miss and a negative value a miss, not a format error.

Written here from that rule with :func:`ast.literal_eval` in place of ``eval`` (which would run
whatever the model wrote). The two agree on every literal; they differ on arithmetic such as
``500+20, 3`` (``eval``: a point, here: a format error) and on complex numbers (``eval``: the
reference's hit test then raises; here: a format error). Both are listed in the suite's README.
"""

from __future__ import annotations

import ast
from typing import Any

from pytest_uiground.models.families import ParseContext, Parsed
from pytest_uiground.record.geometry import Point


def read_point(text: str) -> tuple[float, float] | str:
    """``(x / 1000, y / 1000)``, or why the reference would find no point."""
    try:
        value: Any = ast.literal_eval(text.strip())
        x, y = value
        px, py = x / 1000, y / 1000
    except Exception as exc:  # the reference catches every exception alike
        return f"{type(exc).__name__}: {exc}"[:200]
    if isinstance(px, complex) or isinstance(py, complex):
        return "complex coordinates"
    return float(px), float(py)


def parse_uground_v1(text: str, task: str, ctx: ParseContext) -> Parsed:
    """Override parser: UGround-V1's ``(x, y)`` in 0..1000 as UI-Vision reads it (module docstring)."""
    if task != "point":
        raise ValueError(f"the UI-Vision UGround-V1 parser reads point answers, not {task!r} tasks")
    read = read_point(text)
    if isinstance(read, str):
        note = "empty output" if not text.strip() else f"not a literal (x, y) pair: {read}"
        return Parsed(format_error=True, note=note)
    return Parsed(point=Point(*read))
