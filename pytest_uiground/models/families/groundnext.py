r"""``groundnext``: GroundNext (ServiceNow, ICLR 2026): a Qwen2.5-VL ``computer_use`` call, pixels of its resized image.

Why its own family: GroundNext is evaluated by ``ServiceNow/GroundCUA`` ``eval/eval.py`` with the
``groundcua`` prompt processor of ``eval/prompts.py`` (``BasicPrompt``, @a28e03b): the client resizes the
screenshot (qwen_vl_utils ``smart_resize``, factor 28, max_pixels 12,845,056) and states its size in the
system prompt's tool description; the user text is "Hover over the UI element '<instruction>'" after the
image. ``BasicPrompt.extract_coordinates`` reads the text between the first ``<tool_call>`` and the
next ``</tool_call>``: its JSON's ``arguments.coordinate`` (exactly two values, each ``int()``:
truncated), or, where that text is not JSON at all, the digit runs ``\d+`` of that text when
there are exactly two (a minus sign is lost there); anything else, or no ``<tool_call>`` at all, raises
or gives None, a miss. ``is_point_inside_element`` scores a refusal sample right when both coordinates
are negative, so a call whose coordinate is negative on both axes is this family's refusal.
"""

from __future__ import annotations

import json
import re

from pytest_uiground.models.families import Family, Generation, Prompt, Resize
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame, model_input_size

PROMPTS = "ServiceNow/GroundCUA@a28e03b eval/prompts.py (BasicPrompt)"
EVAL = "ServiceNow/GroundCUA@a28e03b eval/eval.py (prepare_sample_data, process_response)"

# BasicPrompt.generate_prompt's system_prompt after .format (verbatim); {width}x{height} is the resized
# image's size, as eval.py passes new_width, new_height.
SYSTEM_PROMPT = (
    'You are a helpful assistant.\n'
    '\n'
    '# Tools\n'
    '\n'
    'You may call one or more functions to assist with the user query.\n'
    '\n'
    'You are provided with function signatures within <tools></tools> XML tags:\n'
    '<tools>\n'
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse and '
    'keyboard to interact with a computer, and take screenshots.\n'
    '* This is an interface to a desktop GUI. You do not have access to a terminal or '
    'applications menu. You must click on desktop icons to start applications.\n'
    '* Some applications may take time to start or process actions, so you may need to wait '
    'and take successive screenshots to see the results of your actions. E.g. if you click on '
    "Firefox and a window doesn't open, try wait and taking another screenshot.\n"
    "* The screen's resolution is {width}x{height}.\n"
    '* Whenever you intend to move the cursor to click on an element like an icon, you should '
    'consult a screenshot to determine the coordinates of the element before moving the '
    'cursor.\n'
    '* If you tried clicking on a program or link but it failed to load, even after waiting, '
    'try adjusting your cursor position so that the tip of the cursor visually falls on the '
    'element that you want to click.\n'
    '* Make sure to click any buttons, links, icons, etc with the cursor tip in the center of '
    'the element. Don\'t click boxes on their edges unless asked.", "parameters": '
    '{"properties": {"action": {"description": "The action to perform. The available actions '
    'are:\n'
    '* `key`: Performs key down presses on the arguments passed in order, then performs key '
    'releases in reverse order.\n'
    '* `type`: Type a string of text on the keyboard.\n'
    '* `mouse_move`: Move the cursor to a specified (x, y) pixel coordinate on the screen.\n'
    '* `left_click`: Click the left mouse button.\n'
    '* `left_click_drag`: Click and drag the cursor to a specified (x, y) pixel coordinate on '
    'the screen.\n'
    '* `right_click`: Click the right mouse button.\n'
    '* `middle_click`: Click the middle mouse button.\n'
    '* `double_click`: Double-click the left mouse button.\n'
    '* `scroll`: Performs a scroll of the mouse scroll wheel.\n'
    '* `wait`: Wait specified seconds for the change to happen.\n'
    '* `terminate`: Terminate the current task and report its completion status.", "enum": '
    '["key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", '
    '"middle_click", "double_click", "scroll", "wait", "terminate"], "type": "string"}, '
    '"keys": {"description": "Required only by `action=key`.", "type": "array"}, "text": '
    '{"description": "Required only by `action=type`.", "type": "string"}, "coordinate": '
    '{"description": "(x, y): The x (distance from the left edge) and y (distance from the top '
    'edge) coordinates to move the mouse to. Required only by `action=mouse_move` and '
    '`action=left_click_drag`.", "type": "array"}, "pixels": {"description": "The amount of '
    'scrolling to perform. Positive values scroll up, negative values scroll down. Required '
    'only by `action=scroll`.", "type": "number"}, "time": {"description": "The seconds to '
    'wait. Required only by `action=wait`.", "type": "number"}, "status": {"description": "The '
    'status of the task. Required only by `action=terminate`.", "type": "string", "enum": '
    '["success", "failure"]}, "required": ["action"], "type": "object"}}\n'
    '</tools>\n'
    '\n'
    'For each function call, return a json object with function name and arguments within '
    '<tool_call></tool_call> XML tags:\n'
    '<tool_call>\n'
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    '</tool_call>\n'
)

_DIGITS = re.compile(r"\d+")


def read_tool_call(text: str, ctx: ParseContext) -> Coords:
    """``BasicPrompt.extract_coordinates`` (see the module docstring); pixels of the resized image."""
    if "<tool_call>" not in text:
        return Coords(error="no <tool_call> (GroundNext's extract_coordinates raises IndexError: a miss)")
    body = text.split("<tool_call>")[1].split("</tool_call>")[0].strip()
    try:
        call = json.loads(body)
    except json.JSONDecodeError:  # the official fallback: exactly two digit runs in the call's text
        digits = _DIGITS.findall(body)
        if len(digits) != 2 or any(len(d) > 4300 for d in digits):
            return Coords(error="the tool call is not JSON and does not hold exactly two numbers (a miss)")
        point = [int(d) for d in digits]
    except (ValueError, RecursionError):  # a number int() refuses, nesting past the limit: it raises, a miss
        return Coords(error="the tool call's JSON cannot be read (extract_coordinates raises: a miss)")
    else:
        # .get("arguments").get("coordinate"), len == 2, int() each: anything else raises there (a miss)
        args = call.get("arguments") if isinstance(call, dict) else None
        value = args.get("coordinate") if isinstance(args, dict) else None
        if not isinstance(value, (list, str, dict)) or len(value) != 2:
            return Coords(error="no two-value arguments.coordinate in the tool call (extract_coordinates raises: "
                                "a miss)")
        try:
            point = [int(v) for v in value]
        except (TypeError, ValueError, OverflowError):
            return Coords(error="coordinate values that int() refuses (extract_coordinates raises: a miss)")
    x, y = point
    if x < 0 and y < 0:
        return Coords(refused=True, note="both coordinates negative: GroundCUA's refusal (is_point_inside_element)")
    w, h = model_input_size(ctx, "groundnext")
    return in_frame(float(x), float(y), float(w), float(h), f"pixels of the {w}x{h} model input")


FAMILY = Family(
    name="groundnext",
    frame="pixels-resized",
    prompts={"point": Prompt(system=SYSTEM_PROMPT, user="Hover over the UI element '{instruction}'", image_first=True,
                             source=f"{PROMPTS}: system, then '<image>Hover over the UI element ...' (verbatim)")},
    read=read_tool_call,
    generation=Generation(1024, f"{EVAL}: --max-tokens 1024, --temperature 0.0"),
    resize=Resize(28, 3136, 12845056, f"{EVAL}: smart_resize(factor=28, max_pixels=12845056), qwen_vl_utils' "
                                      "min_pixels"),
    refusal="a computer_use coordinate negative on both axes",
    client_resize=True,
    input_size_known=True,
    sources=(PROMPTS, EVAL),
)
