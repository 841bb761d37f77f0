"""``gelab-zero``: Step-GUI / GELab-Zero (StepFun), ``action:CLICK\\tpoint:x,y`` in 0..1000.

Why its own family: the answer is GELab-Zero's tab-separated ``key:value`` action line, read by its
own parser, not any bracketed pair: ``copilot_tools/parser_0920_summary.py`` ``str2action`` (the text
after ``</THINK>``, split on tabs; a key containing ``point`` holds ``x,y`` or ``x y``, each ``int()``,
fewer than two numbers or a non-integer raises) and ``copilot_front_end/mobile_action_helper.py``
(``float(point[0]) / 1000``: the frame is 0..1000, as the prompt says, "取值范围均为 0-1000"). The
grounding click is the ``point`` key (a repeated key: the last, as the parser's dict keeps it).
Issue 41 described the grid as 0..999 divided by 999; GELab-Zero's code at the commit below divides
by 1000 (the two differ by under 0.1%), so this family follows the code.
"""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt
from pytest_uiground.models.families.reading import Coords, ParseContext, brief, in_frame

REPO = "stepfun-ai/gelab-zero@19465cf"
_THINK_TAG = re.compile(r"<\s*/?THINK\s*>", re.IGNORECASE)
PARSER = f"{REPO} copilot_tools/parser_0920_summary.py (str2action)"
HELPER = f"{REPO} copilot_front_end/mobile_action_helper.py (point / 1000)"

# Project wording: GELab-Zero publishes an agent prompt (parser_0920_summary.py, Chinese, with a task
# history and a summary), no grounding prompt; this one asks for its CLICK line in its 0..1000 frame.
POINT_PROMPT = (
    "The screen's coordinates run from 0 to 1000 on both axes, origin at the top left, x to the right, "
    "y down. Click the element described below. Answer with one line in the form\n"
    "action:CLICK\tpoint:x,y\n"
    "Element: {instruction}"
)


def _kv_part(text: str) -> str:
    """``str2action``'s split: tag spellings normalised as it does, then the text after the first
    ``</THINK>`` when both tags are there (its ``split(...)[1]``), else the whole text (its IndexError path)."""
    s = text.strip()
    for wrong, right in (("<TINK>", "<THINK>"), ("</TINK>", "</THINK>"), ("<think>", "<THINK>"),
                         ("</think>", "</THINK>")):
        s = s.replace(wrong, right)
    s = _THINK_TAG.sub(lambda m: "</THINK>" if "/" in m.group() else "<THINK>", s)
    if "<THINK>" in s and "</THINK>" in s:
        return s.split("</THINK>")[1].strip()
    return s


def read_point_line(text: str, ctx: ParseContext) -> Coords:
    """The ``point`` key of the tab-separated action line, two integers, divided by 1000."""
    point: str | None = None
    for kv in (k.strip() for k in _kv_part(text).split("\t")):
        if ":" not in kv:
            continue
        key, value = kv.split(":", 1)
        if key.strip() == "point":
            point = value.strip()
    if point is None:
        return Coords(error="no tab-separated 'point:x,y' key (GELab-Zero's str2action reads keys split on tabs)")
    coords = point.replace(",", " ").split()
    if len(coords) < 2:
        return Coords(error=f"point {brief(point)}: expected 2 coordinates (str2action raises)")
    try:
        x, y = int(coords[0]), int(coords[1])
    except ValueError:
        return Coords(error=f"point {brief(point)}: expected whole numbers, at most 4,300 digits (str2action's int() "
                            "raises)")
    return in_frame(float(x), float(y), 1000.0, 1000.0, "relative 0..1000")


FAMILY = Family(
    name="gelab-zero",
    frame="norm1000",
    prompts={"point": Prompt(user=POINT_PROMPT, source="project wording (GELab-Zero's CLICK line, its 0..1000 frame; "
                                                       f"no grounding prompt is published: {PARSER})")},
    read=read_point_line,
    generation=Generation(256, "project: GELab-Zero's local server sets no limit for one action line"),
    sources=(PARSER, HELPER),
)
