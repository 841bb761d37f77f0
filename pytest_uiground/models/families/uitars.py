"""``uitars``: UI-TARS-1.5, ``click(point='<point>x y</point>')`` in pixels of its resized input."""

from __future__ import annotations

from pytest_uiground.models.families import Family, Generation, Prompt, Resize
from pytest_uiground.models.families.qwen_vl import read_pixels

UITARS_MIN_PIXELS = 100 * 28 * 28
"""bytedance/UI-TARS ``codes/ui_tars/action_parser.py`` ``MIN_PIXELS`` (also MMBench-GUI ``local_uitars.py``)."""
UITARS_MAX_PIXELS = 16384 * 28 * 28
"""bytedance/UI-TARS ``codes/ui_tars/action_parser.py`` ``MAX_PIXELS``."""

UITARS_GROUNDING = (
    "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform "
    "the next action to complete the task. \n\n## Output Format\n\nAction: ...\n\n\n## Action Space\n"
    "click(point='<point>x1 y1</point>'')\n\n## User Instruction\n{instruction}"
)
"""bytedance/UI-TARS ``codes/ui_tars/prompt.py`` ``GROUNDING_DOUBAO``, verbatim (also MMBench-GUI
``models/local_uitars.py``): note the space before ``\\n\\n## Output Format`` and the doubled closing
quote in ``</point>''``, both part of the published prompt."""
_HEADER = UITARS_GROUNDING.split("## Output Format")[0]
_CLICK = "click(point='<point>x1 y1</point>'')"

FAMILY = Family(
    name="uitars",
    frame="pixels-resized",
    prompts={
        "point": Prompt(user=UITARS_GROUNDING, source="bytedance/UI-TARS codes/ui_tars/prompt.py GROUNDING_DOUBAO "
                                                      "(verbatim; the instruction as given, no strip)"),
        "verdict": Prompt(
            user=f"{_HEADER}## Output Format\n\nThought: ...\nAction: ...\n\n\n## Action Space\n{_CLICK}\n\n"
                 "## Note\n- In `Thought`, conclude whether the statement is 'PASSED' or 'FAILED'.\n"
                 "- In `Action`, click the UI element that corresponds to this evaluation.\n\n"
                 "## User Instruction\nEvaluate this statement about the screenshot: '{instruction}'",
            source="project wording in UI-TARS' grounding template (its header and action line, verbatim)"),
    },
    read=read_pixels,
    generation=Generation(400, "bytedance/UI-TARS README_deploy.md: max_tokens=400 (MMBench-GUI's "
                               "config_local_uitars.json uses 512)"),
    resize=Resize(28, UITARS_MIN_PIXELS, UITARS_MAX_PIXELS,
                  "UI-TARS codes/ui_tars/action_parser.py MIN_PIXELS/MAX_PIXELS"),
    sources=("bytedance/UI-TARS codes/ui_tars/prompt.py", "bytedance/UI-TARS codes/ui_tars/action_parser.py"),
)
