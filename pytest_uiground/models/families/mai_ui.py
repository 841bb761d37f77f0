"""``mai-ui``: MAI-UI (Tongyi-MAI), ``<answer>{"coordinate": [x,y]}</answer>`` in 0..1000."""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt, Resize
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame

EVAL = "Tongyi-MAI/MAI-UI@4dd07b9 evaluation/grounding/eval_server.py"

# SYSTEM_PROMPT, verbatim (the space after "agent.", two spaces after "instructions,", a final newline).
SYSTEM_PROMPT = (
    'You are a GUI grounding agent. \n'
    '## Task\n'
    "Given a screenshot and the user's grounding instruction. Your task is to accurately locate "
    "a UI element based on the user's instructions.\n"
    "First, you should carefully examine the screenshot and analyze the user's instructions, "
    " translate the user's instruction into a effective reasoning process, and then provide "
    'the final coordinate.\n'
    '## Output Format\n'
    'Return a json object with a reasoning process in <grounding_think></grounding_think> '
    'tags, a [x,y] format coordinate within <answer></answer> XML tags:\n'
    '<grounding_think>...</grounding_think>\n'
    '<answer>\n'
    '{"coordinate": [x,y]}\n'
    '</answer>\n'
    '## Input instruction\n'
)

# parse_coordinates: re.findall(r'\[(\d+),(\d+)\]', ...)[0] — no space allowed inside.
_PAIR_RE = re.compile(r"\[(\d+),(\d+)\]")


def read_first_pair(text: str, ctx: ParseContext) -> Coords:
    """``parse_coordinates`` of the official evaluation: the first ``[x,y]`` (no spaces) anywhere,
    divided by 1000; none is wrong_format."""
    m = _PAIR_RE.search(text)
    if m is None:
        return Coords(error="no '[x,y]' (without spaces) found: MAI-UI's parse_coordinates returns -1, -1")
    return in_frame(float(m.group(1)), float(m.group(2)), 1000.0, 1000.0, "relative 0..1000")


FAMILY = Family(
    name="mai-ui",
    frame="norm1000",
    prompts={"point": Prompt(system=SYSTEM_PROMPT, user="{instruction}\n", image_first=False,
                             source=f"{EVAL} process_case: system SYSTEM_PROMPT; user text instruction + "
                                    "'\\n', then the image")},
    read=read_first_pair,
    generation=Generation(256, f"{EVAL}: temperature=0.0, max_tokens=256"),
    resize=Resize(32, 16 * 16 * 4, 6553600, f"{EVAL} pil_to_base64: smart_resize(factor=32, min_pixels=1024, "
                                            "max_pixels=6553600), PNG"),
    client_resize=True,
    input_size_known=True,
    sources=(EVAL, "Tongyi-MAI/MAI-UI evaluation/grounding/models/MAI_UI.py", "evaluation/grounding/README.md"),
)
