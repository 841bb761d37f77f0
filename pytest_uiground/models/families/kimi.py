"""``kimi``: Moonshot Kimi K2.5 (API), ``(x,y)`` in 0..1000, the last pair.

Prompted and read as ZJU-REAL/ClawGUI@d990d3e evaluates it (Moonshot publishes no grounding reader):
``clawgui-eval/inference/kimi_inferencer.py`` (blob e788d112) ``KIMI_SYSTEM_PROMPT`` as a user message,
then the description, then the image; the answer read by ``clawgui-eval/judge/grounding_judge.py``
``kimi_parse``: every ``(x, y)``, else every bare ``x, y``; the last; divided by 1000.
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

INFERENCER = f"{REPO} clawgui-eval/inference/kimi_inferencer.py (blob e788d112)"
KIMI_SYSTEM_PROMPT = PAIR_PROMPT  # the inferencer's text, word for word as the other one's


def read_kimi(text: str, ctx: ParseContext) -> Coords:
    """``kimi_parse`` (:func:`~pytest_uiground.models.families.clawgui.read_last_pair_1000`)."""
    return read_last_pair_1000(text, "kimi_parse")


FAMILY = Family(
    name="kimi",
    frame="norm1000",
    prompts={"point": Prompt(user=KIMI_SYSTEM_PROMPT + "\n" + DESCRIPTION, image_first=False,
                             source=f"{INFERENCER}: KIMI_SYSTEM_PROMPT (verbatim) and 'The user's element "
                                    "description is: {question}', then the image (three user messages there, "
                                    "one text here)")},
    read=read_kimi,
    generation=generation("kimi_inferencer.py"),
    sources=(INFERENCER, f"{JUDGE}: kimi_parse"),
)
