"""``seed``: ByteDance Seed 1.8 (API), ``<point>x y</point>`` in 0..1000, the last match.

Prompted and read as ZJU-REAL/ClawGUI@d990d3e evaluates it (the only published grounding harness for
it; ByteDance publishes no grounding reader): ``clawgui-eval/inference/seed_inferencer.py`` (blob
fca996aa) ``SEED_SYSTEM_PROMPT`` (it says "identical to the MAI-UI blog reference implementation"),
sent as a user message, then the description, then the image; the answer read by
``clawgui-eval/judge/grounding_judge.py`` ``seed18_parse``: every ``<point>x y</point>`` (whitespace-
separated numbers, a fraction allowed), the *last* one ("the final answer is typically at the end of the
reasoning chain"), divided by 1000. The prompt itself asks for ``<point>x y<point>`` (no slash); the
judge's regex needs ``</point>``, so an answer that copies the prompt's form is a miss there and a
format error here (the inferencer's own ``_parse_point``, used only for its zoom stage, reads both).
"""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Prompt
from pytest_uiground.models.families.clawgui import DESCRIPTION, JUDGE, REPO, generation
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame

INFERENCER = f"{REPO} clawgui-eval/inference/seed_inferencer.py (blob fca996aa)"
SEED_SYSTEM_PROMPT = (
    "You are an expert UI element locator. Given a GUI image and a user's element description, provide your "
    "reasoning process first, finally provide the coordinates of the specified element as a single <point>x "
    "y<point> point. For elements with area, return the center point.\n\n"
    "Give your reasoning process first, then output the coordinate pair ranging from 0 to 1000 exactly in "
    "format:\n"
    "<point>x y<point>"
)
_POINT = re.compile(r"<point>\s*(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s*</point>")


def read_last_point_tag(text: str, ctx: ParseContext) -> Coords:
    """``seed18_parse``: the last ``<point>x y</point>``, divided by 1000."""
    matches = _POINT.findall(text)
    if not matches:
        return Coords(error="no '<point>x y</point>' (seed18_parse: None, a miss; '<point>x y<point>' as the "
                            "prompt writes it does not match its regex)")
    x, y = matches[-1]
    return in_frame(float(x), float(y), 1000.0, 1000.0, "relative 0..1000")


FAMILY = Family(
    name="seed",
    frame="norm1000",
    prompts={"point": Prompt(user=SEED_SYSTEM_PROMPT + "\n" + DESCRIPTION, image_first=False,
                             source=f"{INFERENCER}: SEED_SYSTEM_PROMPT (verbatim) and 'The user's element "
                                    "description is: {question}', then the image (three user messages there, "
                                    "one text here)")},
    read=read_last_point_tag,
    generation=generation("seed_inferencer.py"),
    sources=(INFERENCER, f"{JUDGE}: seed18_parse"),
)
