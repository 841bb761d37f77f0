"""``gui-owl``: GUI-Owl-1.5 (Mobile-Agent-v3.5), a ``computer_use`` tool call in 0..1000.

Prompted and read as the authors' grounding evaluation does
(X-PLUG/MobileAgent@11cea57 ``Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py``):
the ``only_two_action_system_prompt`` system text, then the image (resized by the client with
``update_image_size_``: factor 32, 1..9800 tokens of 32x32 pixels), then the instruction.
"""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt, Resize
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame, is_terminate, tool_calls

EVAL = "X-PLUG/MobileAgent@11cea57 Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py"

# only_two_action_system_prompt (ScreenSpot-v2/Pro, MMBench-GUI L2), verbatim with its final newline.
ONLY_TWO_ACTION_SYSTEM = (
    '# Tools\n'
    '\n'
    'You may call one or more functions to assist with the user query.\n'
    '\n'
    'You are provided with function signatures within <tools></tools> XML tags:\n'
    '<tools>\n'
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse '
    'to interact with a computer.\n'
    "* The screen's resolution is 1000x1000.\n"
    '* Make sure to click any buttons, links, icons, etc with the cursor tip in the center '
    "of the element. Don't click boxes on their edges unless asked.\n"
    "* don't use any other computer use tool like type, key, scroll, left_click_drag and so "
    'on.\n'
    '* you can only use the left_click and mouse_move action to interact with the computer. '
    'if you can\'t find the element, you should terminate the task and report the failure.", '
    '"parameters": {"properties": {"action": {"description": "The action to perform. The available '
    'actions are:\n'
    '* `mouse_move`: Move the cursor to a specified (x, y) pixel coordinate on the screen.\n'
    '* `left_click`: Click the left mouse button with coordinate (x, y) pixel coordinate on '
    'the screen.", "enum": ["mouse_move", "left_click"], "type": "string"}, "coordinate": '
    '{"description": "(x, y): The x (pixels from the left edge) and y (pixels from the top '
    'edge) coordinates to move the mouse to. Required only by `action=mouse_move` and `action=left_click`.", '
    '"type": "array"}}, "required": ["action"], "type": "object"}}}\n'
    '</tools>\n'
    '\n'
    'For each function call, return a json object with function name and arguments within '
    '<tool_call></tool_call> XML tags:\n'
    '<tool_call>\n'
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    '</tool_call>\n'
)
# infesible_prefix: OSWorld-G's system text is ONLY_TWO_ACTION_SYSTEM + "\n" + INFEASIBLE_PREFIX
# (OSWORLD_G_SYSTEM), the family's "osworld-g" prompt variant: the OSWorld-G suite picks it with
# [models.gui-owl] variant = "osworld-g" (its refusal samples need the terminate action offered).
INFEASIBLE_PREFIX = (
    'Additionally, if you think the task is infeasible (e.g., the task is not related to the '
    'image), return <tool_call>\n'
    '{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}\n'
    '</tool_call>'
)
OSWORLD_G_SYSTEM = ONLY_TWO_ACTION_SYSTEM + "\n" + INFEASIBLE_PREFIX

# ScreenSpotv2.evaluate: all "(x, y)" pairs; only without one, all "[x, y]" with exactly one space.
_PAREN_RE = re.compile(r"\((\d+),\s*(\d+)\)")
_BRACKET_RE = re.compile(r"\[(\d+), (\d+)\]")


def read_last_pair(text: str, ctx: ParseContext) -> Coords:
    """The official evaluation's reading (``ScreenSpotv2.evaluate``, ``use_qwen3vl=True``).

    Every ``(x, y)`` match anywhere (the thinking included); only when there is none, every
    ``[x, y]`` (one space after the comma, as the tool call's JSON writes it); the *last*
    match wins; 0..1000 (``resized_width, resized_height = 1000, 1000``). With no match the
    official code scores the point (0, 0); here that is a format error, except for a
    ``terminate`` tool call (the OSWorld-G prompt's refusal), which is a refusal.
    """
    matches = _PAREN_RE.findall(text) or _BRACKET_RE.findall(text)
    if matches:
        x, y = matches[-1]
        return in_frame(float(x), float(y), 1000.0, 1000.0, "relative 0..1000")
    if any(is_terminate(call) for call in tool_calls(text)):
        return Coords(refused=True, note="computer_use terminate: the model reports the element is not there")
    return Coords(error="no '(x, y)' and no '[x, y]' pair (the official evaluation scores the point (0, 0))")


FAMILY = Family(
    name="gui-owl",
    frame="norm1000",
    prompts={"point": Prompt(system=ONLY_TWO_ACTION_SYSTEM, user="{instruction}", image_first=True,
                             source=f"{EVAL}: only_two_action_system_prompt (verbatim), image then instruction")},
    variants={"osworld-g": {"point": Prompt(
        system=OSWORLD_G_SYSTEM, user="{instruction}", image_first=True,
        source=f"{EVAL}: OSWorld-G's system text, only_two_action_system_prompt + '\\n' + infesible_prefix "
               "(verbatim), image then instruction")}},
    read=read_last_pair,
    generation=Generation(
        2048, f"{EVAL} call_model: max_new_tokens=2048, top_p 0.01, top_k 1, temperature 0.01, repetition_penalty "
              "1.0 (greedy in effect), bf16",
        dtype="bfloat16", decoding={"do_sample": False, "num_beams": 1, "repetition_penalty": 1.0}),
    resize=Resize(32, 32 * 32, 9800 * 32 * 32, f"{EVAL}: update_image_size_(max_tokens=9800, patch_size=16, "
                                                "merge_base=2, min_tokens=1)"),
    client_resize=True,
    input_size_known=True,
    refusal='a computer_use tool call {"action": "terminate", "status": "failure"} (OSWorld-G prompt)',
    sources=(EVAL, "X-PLUG/MobileAgent Mobile-Agent-v3.5/grounding_and_kb/run_grounding.sh"),
)
