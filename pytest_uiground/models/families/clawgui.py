"""What the API families Seed 1.8, Kimi K2.5 and Gemini 3.x share in their only published grounding harness.

Why one module for the three: none of the three makers publishes a grounding prompt or reader; the
one public harness that evaluates them on GUI grounding, ZJU-REAL/ClawGUI@d990d3e ``clawgui-eval``,
asks each for a point in 0..1000 with the same prompt skeleton (the prompt text as a user message,
then ``The user's element description is: {question}``, then the image: "Input Order ``tv``" in its
README's table), greedy (``temperature 0.0``, ``max_completion_tokens 32768``), and reads the answer
with a regex, the last match winning. Each family module (``seed.py``, ``kimi.py``, ``gemini.py``)
cites its own inferencer and reader; the shared pieces are here.
"""

from __future__ import annotations

import re

from pytest_uiground.models.families import Generation
from pytest_uiground.models.families.reading import Coords, in_frame

REPO = "ZJU-REAL/ClawGUI@d990d3e"
JUDGE = f"{REPO} clawgui-eval/judge/grounding_judge.py (blob 422d9902)"
DESCRIPTION = "The user's element description is: {instruction}"
PAIR_PROMPT = (
    "You are an expert UI element locator. Given a GUI image and a user's element description, provide your "
    "reasoning process first, finally provide the coordinates of the specified element as a single point. For "
    "elements with area, return the center point.\n\n"
    "Give your reasoning process first, then output the coordinate pair ranging from 0 to 1000 exactly in "
    "format:\n"
    "(x,y)"
)
"""``KIMI_SYSTEM_PROMPT`` of ``kimi_inferencer.py`` and ``GEMINI_SYSTEM_PROMPT`` of ``gemini_inferencer.py``
(verbatim): the two files state the same text, so the ``kimi`` and ``gemini`` families share it."""
GENERATION_NOTE = "temperature 0.0, max_completion_tokens 32768 (an API call; greedy here)"

# kimi_parse (grounding_judge.py) and parse_coord_from_response (gemini_inferencer.py), the same two regexes:
# every "(x, y)" (spaces allowed), else every bare "x, y"; the last match; numbers may have a fraction.
_PAREN = re.compile(r"\(\s*(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*\)")
_BARE = re.compile(r"(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)")


def generation(inferencer: str) -> Generation:
    return Generation(32768, f"{REPO} clawgui-eval/inference/{inferencer}: {GENERATION_NOTE}")


def read_last_pair_1000(text: str, what: str) -> Coords:
    """The last ``(x, y)``, else the last bare ``x, y``, divided by 1000 (no match: the harness's None, a miss)."""
    matches = _PAREN.findall(text) or _BARE.findall(text)
    if not matches:
        return Coords(error=f"no '(x, y)' and no 'x, y' pair ({what}: None, a miss)")
    x, y = matches[-1]
    return in_frame(float(x), float(y), 1000.0, 1000.0, "relative 0..1000")
