"""``ui-venus``: UI-VENUS-1.5 (inclusionAI), ``[x,y]`` in 0..1000 and ``[-1,-1]`` for "not there"."""

from __future__ import annotations

import ast
import re
from typing import Any

from pytest_uiground.models.families import Family, Generation, Prompt
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame

EVAL = "inclusionAI/UI-Venus@c3a1442 models/grounding/eval_screenspot_pro.py (UIVenusWrapper)"

# UIVenusWrapper.inference (do_not_use_refusal=False), verbatim; the instruction loses one final ".".
GROUNDING_PROMPT = (
    'Output the center point of the position corresponding to the following instruction: \n'
    '{instruction}. \n'
    '\n'
    'The output should just be the coordinates of a point, in the format [x,y]. Additionally, '
    'if the task is infeasible (e.g., the task is not related to the image), the output should '
    'be [-1,-1].'
)

# The same with do_not_use_refusal=True (the "no-refusal" variant): the refusal sentence left out,
# the text ending at "[x,y]." (UIVenusWrapper.inference, same file).
NO_REFUSAL_PROMPT = GROUNDING_PROMPT[:GROUNDING_PROMPT.index(" Additionally, ")]

# _parse_point's three whole-text forms.
_BOX_RE = re.compile(r"\[\s*-?\d+\s*,\s*-?\d+\s*,\s*-?\d+\s*,\s*-?\d+\s*\]")
_POINT_RE = re.compile(r"\[\s*-?\d+\s*,\s*-?\d+\s*\]")
_TWO_POINTS_RE = re.compile(r"\[\s*-?\d+\s*,\s*-?\d+\s*\],\s*\[\s*-?\d+\s*,\s*-?\d+\s*\]")


def _literal(text: str) -> Any:
    """``eval`` of a text one of _parse_point's patterns has just matched (lists of integers) as
    ``ast.literal_eval``: the same value, and the same SyntaxError where eval fails (a leading
    zero ``[012,3]``, digits split by a space ``[1 2,3],[4,5]``, non-ASCII digits ``[１２,3]``)."""
    try:
        return ast.literal_eval(text)
    except (SyntaxError, ValueError):
        return None


def read_venus(text: str, ctx: ParseContext) -> Coords:
    """``UIVenusWrapper._parse_point``, rule by rule (inclusionAI/UI-Venus ``eval_screenspot_pro.py``).

    The stripped text that is exactly a 4-number list is a box (its centre), exactly
    ``[x, y]`` a point, exactly two points (spaces removed) their midpoint, each evaluated as
    Python (``eval``); otherwise ``int()`` of each field between the first ``[`` and the first
    ``]`` (``text.split(']')[0].split('[')[1]``), where anything ``int()`` refuses is
    unreadable. A result equal to ``[-1, -1]`` is "infeasible": a refusal (a third field,
    ``[-1,-1,5]``, makes it a point there). Frame 0..1000.
    """
    text = text.strip()
    point: list[float]
    if _BOX_RE.fullmatch(text):
        box = _literal(text)
        if box is None:
            return Coords(error="the box does not evaluate as a Python list (UI-Venus' eval fails: wrong format)")
        point = [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]
    elif _POINT_RE.fullmatch(text):
        point = _literal(text)
        if point is None:
            return Coords(error="the point does not evaluate as a Python list (UI-Venus' eval fails: wrong format)")
    elif _TWO_POINTS_RE.fullmatch(text.replace(" ", "")):
        pair = _literal("[" + text + "]")
        if pair is None:
            return Coords(error="the two points do not evaluate as Python lists (UI-Venus' eval fails: wrong format)")
        point = [(pair[0][0] + pair[1][0]) / 2, (pair[0][1] + pair[1][1]) / 2]
    else:
        head = text.split("]")[0]
        if "[" not in head:
            return Coords(error="no '[x,y]' answer (UI-Venus' parser returns None: wrong format)")
        try:
            point = [int(f) for f in head.split("[")[1].split(",")]
        except ValueError:
            return Coords(error=f"the first bracket holds {head.split('[')[1]!r}, not integers x, y (UI-Venus' "
                                "parser: int() fails, wrong format)")
        if len(point) < 2:
            return Coords(error=f"the first bracket holds {head.split('[')[1]!r}, not x, y (UI-Venus' parser: "
                                "wrong format)")
    if point == [-1, -1]:
        return Coords(refused=True, note="[-1,-1]: the model reports the task infeasible")
    return in_frame(float(point[0]), float(point[1]), 1000.0, 1000.0, "relative 0..1000")


FAMILY = Family(
    name="ui-venus",
    frame="norm1000",
    prompts={"point": Prompt(user=GROUNDING_PROMPT, image_first=True, drop_final_period=True,
                             source=f"{EVAL}.inference (verbatim; one final '.' of the instruction removed)")},
    variants={"no-refusal": {"point": Prompt(
        user=NO_REFUSAL_PROMPT, image_first=True, drop_final_period=True,
        source=f"{EVAL}.inference(do_not_use_refusal=True) (verbatim; one final '.' of the instruction removed)")}},
    read=read_venus,
    generation=Generation(256, f"{EVAL}: max_new_tokens 256, do_sample False, temperature 0 (bf16)",
                          dtype="bfloat16"),
    refusal="[-1,-1]",
    sources=(EVAL, "inclusionAI/UI-Venus models/grounding/ui_venus1_5_gd.py (same prompt and parser)"),
)
