"""``qwen3-vl``: Qwen3-VL, in relative 0..1000.

The grounding prompt is the ``computer_use`` tool of Qwen3-VL's cookbook (system text, then
the image, then the instruction as the whole user text); the answer is a tool call on a
1000x1000 "screen", ``{"name": "computer_use", "arguments": {"action": "left_click",
"coordinate": [x, y]}}`` between a ``<tool_call>`` line and a ``</tool_call>`` line, read
exactly as the cookbook splits it. Plain answers (``point_2d``/``bbox_2d`` JSON, a bare
``[x, y]`` or ``(x, y)``) are still read as before, for the project's own verdict prompt and
for outputs made with other prompts.
"""

from __future__ import annotations

from pytest_uiground.models.families import Family, Generation, Prompt, reading
from pytest_uiground.models.families.qwen_vl import VERDICT
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame, is_terminate
from pytest_uiground.models.families.uground import read_norm1000

COOKBOOK = ("QwenLM/Qwen3-VL@96588727 cookbooks/computer_use.ipynb (perform_gui_grounding_with_api) and "
            "cookbooks/utils/agent_function_call.py (ComputerUse, display 1000x1000)")

# The system message the notebook prints: "You are a helpful assistant." and qwen_agent's
# NousFnCallPrompt text for the computer_use tool, as the chat template renders them (verbatim).
COMPUTER_USE_SYSTEM = (
    'You are a helpful assistant.\n'
    '\n'
    '# Tools\n'
    '\n'
    'You may call one or more functions to assist with the user query.\n'
    '\n'
    'You are provided with function signatures within <tools></tools> XML tags:\n'
    '<tools>\n'
    '{"type": "function", "function": {"name": "computer_use", "description": "Use a mouse '
    'and keyboard to interact with a computer, and take screenshots.\\n* This is an interface '
    'to a desktop GUI. You do not have access to a terminal or applications menu. You must '
    'click on desktop icons to start applications.\\n* Some applications may take time to start '
    'or process actions, so you may need to wait and take successive screenshots to see the '
    "results of your actions. E.g. if you click on Firefox and a window doesn't open, try "
    "wait and taking another screenshot.\\n* The screen's resolution is 1000x1000.\\n* Whenever "
    'you intend to move the cursor to click on an element like an icon, you should consult '
    'a screenshot to determine the coordinates of the element before moving the cursor.\\n* '
    'If you tried clicking on a program or link but it failed to load, even after waiting, '
    'try adjusting your cursor position so that the tip of the cursor visually falls on the '
    'element that you want to click.\\n* Make sure to click any buttons, links, icons, etc '
    'with the cursor tip in the center of the element. Don\'t click boxes on their edges.", '
    '"parameters": {"properties": {"action": {"description": "The action to perform. The available '
    'actions are:\\n* `key`: Performs key down presses on the arguments passed in order, then '
    'performs key releases in reverse order.\\n* `type`: Type a string of text on the keyboard.\\n* '
    '`mouse_move`: Move the cursor to a specified (x, y) pixel coordinate on the screen.\\n* '
    '`left_click`: Click the left mouse button at a specified (x, y) pixel coordinate on the '
    'screen.\\n* `left_click_drag`: Click and drag the cursor to a specified (x, y) pixel coordinate '
    'on the screen.\\n* `right_click`: Click the right mouse button at a specified (x, y) pixel '
    'coordinate on the screen.\\n* `middle_click`: Click the middle mouse button at a specified '
    '(x, y) pixel coordinate on the screen.\\n* `double_click`: Double-click the left mouse '
    'button at a specified (x, y) pixel coordinate on the screen.\\n* `triple_click`: Triple-click '
    'the left mouse button at a specified (x, y) pixel coordinate on the screen (simulated '
    "as double-click since it's the closest action).\\n* `scroll`: Performs a scroll of the "
    'mouse scroll wheel.\\n* `hscroll`: Performs a horizontal scroll (mapped to regular scroll).\\n* '
    '`wait`: Wait specified seconds for the change to happen.\\n* `terminate`: Terminate the '
    'current task and report its completion status.\\n* `answer`: Answer a question.", "enum": '
    '["key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click", '
    '"double_click", "triple_click", "scroll", "hscroll", "wait", "terminate", "answer"], '
    '"type": "string"}, "keys": {"description": "Required only by `action=key`.", "type": '
    '"array"}, "text": {"description": "Required only by `action=type` and `action=answer`.", '
    '"type": "string"}, "coordinate": {"description": "(x, y): The x (pixels from the left '
    'edge) and y (pixels from the top edge) coordinates to move the mouse to.", "type": "array"}, '
    '"pixels": {"description": "The amount of scrolling to perform. Positive values scroll '
    'up, negative values scroll down. Required only by `action=scroll` and `action=hscroll`.", '
    '"type": "number"}, "time": {"description": "The seconds to wait. Required only by `action=wait`.", '
    '"type": "number"}, "status": {"description": "The status of the task. Required only by '
    '`action=terminate`.", "type": "string", "enum": ["success", "failure"]}}, "required": '
    '["action"], "type": "object"}}}\n'
    '</tools>\n'
    '\n'
    'For each function call, return a json object with function name and arguments within '
    '<tool_call></tool_call> XML tags:\n'
    '<tool_call>\n'
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    '</tool_call>'
)


def read_tool_call_or_plain(text: str, ctx: ParseContext) -> Coords:
    """The cookbook's reading where the answer is a tool call, else the plain reading.

    Cookbook: ``json.loads(text.split('<tool_call>\\n')[1].split('\\n</tool_call>')[0])`` and
    ``arguments['coordinate'] / 1000``: the *first* call wins, and a call that is not valid
    JSON (cut off) gives no point, so it is a format error here, never read by the plain
    fallback. A ``terminate`` action (the tool's way to give up) is a refusal. A
    ``mobile_use`` call (the mobile cookbook's tool, whose "screen's resolution is 999x999")
    is read in 0..999, as that cookbook reads it, and only for its ``click`` action.
    """
    if "<tool_call>" not in text:
        return read_norm1000(text, ctx)
    # The cookbook's split, exactly: the first "<tool_call>\n" opens the call and the first "\n</tool_call>"
    # after it closes it, so a tag without its newline is no call there (IndexError, or the JSON fails).
    if "<tool_call>\n" not in text:
        return Coords(error="no '<tool_call>' followed by a newline: the cookbook reads "
                            "text.split('<tool_call>\\n')[1] and finds no call")
    try:
        first = reading.loads(text.split("<tool_call>\n")[1].split("\n</tool_call>")[0])
    except ValueError:
        first = None
    except RecursionError:  # the cookbook's json.loads raises too: its sample is lost, a format error here
        return Coords(error="the first <tool_call> nests JSON too deeply to parse (json.loads raises "
                            "RecursionError)")
    if not isinstance(first, dict):
        return Coords(error="the first <tool_call> is not valid JSON (cut off, or '</tool_call>' without the "
                            "newline before it): the cookbook's json.loads fails")
    if is_terminate(first):
        return Coords(refused=True, note="computer_use terminate: the model reports the element is not there")
    args = first.get("arguments")
    coordinate = args.get("coordinate") if isinstance(args, dict) else None
    # perform_gui_grounding_with_api reads coordinate_relative[0] and [1] / 1000 whatever the list's
    # length (a third value is ignored) and whatever the action; JSON true/false divide as 1/0 there.
    if not (isinstance(coordinate, list) and len(coordinate) >= 2
            and all(isinstance(v, int | float) for v in coordinate[:2])):
        return Coords(error=f"the first tool call has no 'coordinate': [x, y] (arguments: {args!r})")
    if first.get("name") == "mobile_use":
        # QwenLM/Qwen3-VL@96588727 cookbooks/mobile_agent.ipynb: MobileUse is built for a 999x999
        # screen and rescale_coordinates() reads a point as round(x / 999 * width); cells 7 and 9 make
        # a point of a "click" action only (a long_press or swipe draws none there).
        action = args.get("action") if isinstance(args, dict) else None
        if action != "click":
            return Coords(error=f"mobile_use action {action!r} is not 'click' (the mobile cookbook reads a point "
                                "from a click only)")
        return in_frame(float(coordinate[0]), float(coordinate[1]), 999.0, 999.0, "relative 0..999 (mobile_use)")
    return in_frame(float(coordinate[0]), float(coordinate[1]), 1000.0, 1000.0, "relative 0..1000")


FAMILY = Family(
    name="qwen3-vl",
    frame="norm1000",
    prompts={
        "point": Prompt(system=COMPUTER_USE_SYSTEM, user="{instruction}", image_first=True,
                        source=f"{COOKBOOK} (verbatim)"),
        "verdict": VERDICT,
    },
    read=read_tool_call_or_plain,
    # The cookbook sets none (API defaults); greedy with room for a Thought before the call.
    generation=Generation(256, "project: the cookbook sets no generation settings; greedy, as ClawGUI-Eval "
                               "reproduces the official numbers with temperature 0"),
    refusal='a computer_use tool call with "action": "terminate"',
    sources=(COOKBOOK, "ZJU-REAL/ClawGUI clawgui-eval (third-party comparison)"),
)
