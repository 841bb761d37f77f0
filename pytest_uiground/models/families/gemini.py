"""``gemini``: Google Gemini 3.x Pro (API), ``(x,y)`` in 0..1000, the last pair.

Prompted and read as ZJU-REAL/ClawGUI@d990d3e runs it (Google publishes no GUI-grounding reader for it):
``clawgui-eval/inference/gemini_inferencer.py`` (blob a0dd96d3) ``GEMINI_SYSTEM_PROMPT`` as a user
message, then the description, then the image (the original screenshot, no resize); the answer read by
that file's ``parse_coord_from_response`` (every ``(x, y)``, else every bare ``x, y``; the last; 0..1000),
the same two regexes as the judge's ``kimi_parse``. The judge itself (``grounding_judge.py``) has no
``gemini`` branch at that commit (its ``parse_prediction`` raises "Unsupported model_type" for
``gemini_infer``), so the inferencer's reading is the harness's only one.
"""

from __future__ import annotations

from pytest_uiground.models.families import Family, Prompt
from pytest_uiground.models.families.clawgui import (
    DESCRIPTION,
    JUDGE,
    PAIR_PROMPT,
    REPO,
    generation,
    read_last_pair_1000,
)
from pytest_uiground.models.families.reading import Coords, ParseContext

INFERENCER = f"{REPO} clawgui-eval/inference/gemini_inferencer.py (blob a0dd96d3)"
GEMINI_SYSTEM_PROMPT = PAIR_PROMPT  # the inferencer's text, word for word as the other one's


def read_gemini(text: str, ctx: ParseContext) -> Coords:
    """``parse_coord_from_response`` (:func:`~pytest_uiground.models.families.clawgui.read_last_pair_1000`)."""
    return read_last_pair_1000(text, "parse_coord_from_response")


FAMILY = Family(
    name="gemini",
    frame="norm1000",
    prompts={"point": Prompt(user=GEMINI_SYSTEM_PROMPT + "\n" + DESCRIPTION, image_first=False,
                             source=f"{INFERENCER}: GEMINI_SYSTEM_PROMPT (verbatim) and 'The user's element "
                                    "description is: {question}', then the image (three user messages there, "
                                    "one text here)")},
    read=read_gemini,
    generation=generation("gemini_inferencer.py"),
    sources=(INFERENCER, f"{JUDGE} (no gemini branch: the inferencer's parse_coord_from_response)"),
)
