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

Parsing builds a syntax tree whose size grows with the number of tokens: one 2 MB answer
("[1, 1, 1, ...]") took the peak memory from 74 MB to 1,002 MB (issue 34 item 7). The text is
therefore tokenized first, streaming, and read only if it has at most :data:`MAX_TOKENS`
tokens (a comment or a string is one): an ``(x, y)`` pair is 5, and a longer text can unpack
into two numbers only when padded with hundreds of redundant signs or parentheses (``eval``
refuses more than 200 nested parentheses anyway), which no model writes. A longer text is a
format error saying so.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from pytest_uiground.models.families import ParseContext, Parsed
from pytest_uiground.record.geometry import Point

MAX_TOKENS = 1000
"""Tokens beyond which an answer is not parsed (module docstring): ample for any ``(x, y)``."""
# A rough, linear tokenizer: a run of word characters and dots (a number, a name), a comment, a
# string (escapes ignored), or any other non-space character. Only single-character repeats, so
# the regex engine keeps no per-character state: the standard library's tokenize module, whose
# number pattern repeats a group, took 1.2 GB on one 2 MB number. Near the limit its count may
# differ from Python's by a few; a real answer is ~5 tokens, far from it.
_ROUGH_TOKEN = re.compile(r"[\w.]+|#[^\n]*|'[^'\n]*'?|\"[^\"\n]*\"?|\S")


def too_long(text: str, limit: int = MAX_TOKENS) -> str:
    """Why ``text`` is not parsed (more than ``limit`` tokens), or ``""``; counts lazily and stops
    at the limit, so memory stays flat whatever the text."""
    for count, _ in enumerate(_ROUGH_TOKEN.finditer(text), start=1):
        if count > limit:
            return f"more than {limit} tokens: not an (x, y) literal (not parsed, to bound memory)"
    return ""


def read_point(text: str) -> tuple[float, float] | str:
    """``(x / 1000, y / 1000)``, or why the reference would find no point."""
    if why := too_long(text.strip()):
        return why
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
