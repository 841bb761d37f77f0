"""An independent re-implementation of the 2026 model families' official output post-processing.

One ``<family>_official`` function per family, written here from the rules of the authors' own
code at the commit named in its docstring (read, then rewritten; no code copied, and nothing
from :mod:`pytest_uiground.models.families`), returning what that
code returns: a point in the official code's units, or the official code's fallback, or the
exception it raises. One ``<family>_ours`` adapter per family turns that into the project's
convention: a point normalized to 0..1 of the original image, :data:`REFUSED`, or
:data:`ERROR` (unreadable: a format error, no point).

Deliberate differences: the adapters map away from the official result in exactly these
cases and no others.

D1 (issue 25: an unreadable answer is a format error): where the official code scores an
   answer it cannot read as a fallback point, the project gives no point (:data:`ERROR`).
   GUI-Owl-1.5's ``ScreenSpotv2.evaluate`` scores ``coord = [0, 0]`` when no pair matches;
   GTA1's ``extract_coordinates`` returns ``(0, 0)`` when nothing matches or ``int()`` fails.
D2 gui-owl: in that no-pair case, a text holding a ``<tool_call>`` whose JSON is an object with
   ``arguments.action == "terminate"`` (the OSWorld-G prompt's refusal, ``infesible_prefix``) is
   :data:`REFUSED` (the official code scores (0, 0), a hit on OSWorld-G's refusal samples only).
D3 qwen3-vl: a first tool call whose ``arguments.action`` is ``"terminate"`` is :data:`REFUSED`
   (the cookbook reads ``['coordinate']`` regardless: a KeyError, or the point when one is given).
D4 qwen3-vl: a text without any ``<tool_call>`` is read by the project's plain 0..1000 reader
   (``point_2d``/``bbox_2d`` JSON, bare ``[x, y]``/``(x, y)``: the ``uground`` family's reading,
   kept for the project's verdict prompt and for outputs of other prompts): :data:`PLAIN`. The
   cookbook raises IndexError there.
(No D5: qwen3-vl's tool call is split exactly as the cookbook splits it, on ``'<tool_call>\\n'`` and
``'\\n</tool_call>'``; a tag without its newline is an error there and here.)

Not differences (the official code itself): UI-Venus ``[-1, -1]`` ("infeasible", its own
result category) is :data:`REFUSED`; an official ``None``/``wrong_format``/exception is
:data:`ERROR`; a point beyond the image stays a point.
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

Point = tuple[float, float]
REFUSED = "refused"
ERROR = "error"
PLAIN = "plain"  # D4: the project's plain 0..1000 reading applies
Reading = Point | str


class OfficialFallback(Exception):
    """The official code took its fallback branch (``except: return 0, 0`` and the like)."""

    def __init__(self, value: object) -> None:
        super().__init__(repr(value))
        self.value = value


# ------------------------------------------------------------------------------------------
# Resize rules (the model-input size of the pixel families), each from its own source
# ------------------------------------------------------------------------------------------


def _check_aspect(height: int, width: int) -> None:
    if max(height, width) > 200 * min(height, width):
        raise ValueError("absolute aspect ratio must be smaller than 200")


def qwen_vl_utils_smart_resize(height: int, width: int, factor: int, min_pixels: int,
                               max_pixels: int) -> tuple[int, int]:
    """QwenLM/Qwen3-VL@96588727e44c78b25ba03ea03b8e12f7e64fd0da
    ``qwen-vl-utils/src/qwen_vl_utils/vision_process.py`` ``smart_resize`` (with
    ``round_by_factor``/``floor_by_factor``/``ceil_by_factor``); GTA1's README imports it."""
    _check_aspect(height, width)
    h, w = (max(factor, round(side / factor) * factor) for side in (height, width))
    if h * w > max_pixels:
        shrink = math.sqrt(height * width / max_pixels)
        h, w = (math.floor(side / shrink / factor) * factor for side in (height, width))
    elif h * w < min_pixels:
        grow = math.sqrt(min_pixels / (height * width))
        h, w = (math.ceil(side * grow / factor) * factor for side in (height, width))
    return h, w


def transformers_smart_resize(height: int, width: int, factor: int = 28, min_pixels: int = 56 * 56,
                              max_pixels: int = 14 * 14 * 4 * 1280) -> tuple[int, int]:
    """transformers ``models/qwen2_vl/image_processing_qwen2_vl.py`` ``smart_resize`` (what
    Holo1.5's quickstart and Qwen3-VL's computer-use cookbook import)."""
    _check_aspect(height, width)
    h, w = (round(side / factor) * factor for side in (height, width))
    if h * w > max_pixels:
        shrink = math.sqrt(height * width / max_pixels)
        h, w = (max(factor, math.floor(side / shrink / factor) * factor) for side in (height, width))
    elif h * w < min_pixels:
        grow = math.sqrt(min_pixels / (height * width))
        h, w = (math.ceil(side * grow / factor) * factor for side in (height, width))
    return h, w


def opencua_smart_resize_qwen25(width: int, height: int, factor: int = 28, min_pixels: int = 3136,
                                max_pixels: int = 12845056) -> tuple[int, int]:
    """xlang-ai/OpenCUA@1d70f20663dcaa01f10c7fed5669887286545866
    ``evaluation/agentnetbench/agent/opencua.py`` ``OpenCUAAgent._smart_resize_qwen25``
    (defaults from its ``smart_resize_kwargs``), returns (new_width, new_height)."""
    w, h = (max(1, round(side / factor)) * factor for side in (width, height))
    if w * h > max_pixels:
        shrink = (width * height / max_pixels) ** 0.5
        w, h = (max(1, int((side / shrink) // factor) * factor) for side in (width, height))
    elif w * h < min_pixels:
        grow = (min_pixels / (width * height)) ** 0.5
        w, h = (int((side * grow + factor - 1) // factor) * factor for side in (width, height))
    return int(w), int(h)


# ------------------------------------------------------------------------------------------
# qwen3-vl
# ------------------------------------------------------------------------------------------


def _cookbook_call(text: str) -> Any:
    """The object between the first '<tool_call>\\n' and the next '\\n</tool_call>' (IndexError where
    there is no such opening, ValueError where the JSON fails), as both cookbooks take it."""
    after = text.split("<tool_call>\n")[1]
    return json.loads(after.split("\n</tool_call>")[0])


def qwen3vl_computer_use_official(output_text: str, width: int, height: int) -> list[float]:
    """QwenLM/Qwen3-VL@96588727 ``cookbooks/computer_use.ipynb`` ``perform_gui_grounding_with_api``
    (read in its unchanged copy Firefly-llm/Qwen3-VL@08254a9479ce9a7946f106150e124b071cd91f2c;
    the original is over the snapshot size limit): the point in pixels of the smart-resized
    image (``smart_resize(factor=32, min_pixels=3136, max_pixels=12845056)``). Raises where
    the cookbook raises."""
    rh, rw = transformers_smart_resize(height, width, factor=32, min_pixels=3136, max_pixels=12845056)
    xy = _cookbook_call(output_text)["arguments"]["coordinate"]
    return [xy[0] / 1000 * rw, xy[1] / 1000 * rh]


def qwen3vl_mobile_official(output_text: str, width: int, height: int) -> list[int] | None:
    """QwenLM/Qwen3-VL@96588727 ``cookbooks/mobile_agent.ipynb`` cells 7/9 and
    ``rescale_coordinates`` (cell 4): only a ``click`` action is turned into a point,
    ``round(x / 999 * width)`` pixels of the original screenshot; other actions draw none."""
    args = _cookbook_call(output_text)["arguments"]
    if args["action"] != "click":
        return None
    xy = args["coordinate"]
    return [round(xy[0] / 999 * width), round(xy[1] / 999 * height)]


def qwen3vl_ours(text: str, width: int, height: int) -> Reading:
    if "<tool_call>" not in text:
        return PLAIN  # D4
    framed = text  # the cookbook's own split, no rewriting of the tags' whitespace
    try:
        action = json.loads(framed.split('<tool_call>\n')[1].split('\n</tool_call>')[0])
    except (ValueError, IndexError):
        return ERROR  # both cookbooks' split or json.loads fails: no point
    args = action.get("arguments") if isinstance(action, dict) else None
    if isinstance(args, dict) and args.get("action") == "terminate":
        return REFUSED  # D3
    try:
        if isinstance(action, dict) and action.get("name") == "mobile_use":
            mobile = qwen3vl_mobile_official(framed, width, height)
            return ERROR if mobile is None else (mobile[0] / width, mobile[1] / height)
        resized_height, resized_width = transformers_smart_resize(height, width, factor=32, min_pixels=3136,
                                                                  max_pixels=12845056)
        x, y = qwen3vl_computer_use_official(framed, width, height)
        return x / resized_width, y / resized_height
    except Exception:
        return ERROR


# ------------------------------------------------------------------------------------------
# gui-owl
# ------------------------------------------------------------------------------------------


_PAREN_PAIR = re.compile(r"\((\d+),\s*(\d+)\)")
_BRACKET_PAIR = re.compile(r"\[(\d+), (\d+)\]")


def gui_owl_official(response: str) -> list[int]:
    """X-PLUG/MobileAgent@11cea575561fb7800b5fb6b6cafa56f7a91de11f
    ``Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py`` ``ScreenSpotv2.evaluate``
    (``use_qwen3vl=True``: ``resized_width, resized_height = 1000, 1000``): ``[x_pred, y_pred]``
    in 0..1000. Its ``coord = [0, 0]`` fallback raises :class:`OfficialFallback`."""
    pairs = _PAREN_PAIR.findall(response) or _BRACKET_PAIR.findall(response)
    kept = [(int(a), int(b)) for a, b in pairs if a and b]
    if not kept:
        raise OfficialFallback([0, 0])
    return list(kept[-1])


def _has_terminate_call(text: str) -> bool:
    """A ``<tool_call>`` block (closed, or running to the end) holding a JSON object whose
    ``arguments.action`` is ``"terminate"``."""
    for block in re.findall(r"<tool_call>(.*?)(?=</tool_call>|\Z)", text, flags=re.DOTALL):
        try:
            call = json.loads(block)
        except ValueError:
            continue
        if isinstance(call, dict) and isinstance(call.get("arguments"), dict) \
                and call["arguments"].get("action") == "terminate":
            return True
    return False


def gui_owl_ours(text: str) -> Reading:
    try:
        x, y = gui_owl_official(text)
    except OfficialFallback:
        return REFUSED if _has_terminate_call(text) else ERROR  # D2, D1
    return x / 1000, y / 1000


# ------------------------------------------------------------------------------------------
# ui-venus
# ------------------------------------------------------------------------------------------


_WHOLE_BOX = re.compile(r"\[\s*-?\d+\s*,\s*-?\d+\s*,\s*-?\d+\s*,\s*-?\d+\s*\]", re.DOTALL)
_WHOLE_POINT = re.compile(r"\[\s*-?\d+\s*,\s*-?\d+\s*\]", re.DOTALL)
_WHOLE_TWO = re.compile(r"\[\s*-?\d+\s*,\s*-?\d+\s*\],\s*\[\s*-?\d+\s*,\s*-?\d+\s*\]", re.DOTALL)


def ui_venus_official(text: str) -> list[float] | None:
    """inclusionAI/UI-Venus@c3a1442c3c4501af18c124458dbbddcbda5c2c6f
    ``models/grounding/eval_screenspot_pro.py`` ``UIVenusWrapper._parse_point``: ``[x, y]``
    in 0..1, ``[-1, -1]`` (infeasible) or ``None`` (wrong_format). Its ``eval`` of a text the
    pattern has just matched (a list of integers) is ``ast.literal_eval`` here: the same
    result and the same SyntaxError (``[012,3]``, ``[1 2,3],[4,5]``)."""
    s = text.strip()
    try:
        if _WHOLE_BOX.fullmatch(s):
            x0, y0, x1, y1 = ast.literal_eval(s)
            xy: Any = [(x0 + x1) / 2, (y0 + y1) / 2]
        elif _WHOLE_POINT.fullmatch(s):
            xy = ast.literal_eval(s)
        elif _WHOLE_TWO.fullmatch(s.replace(" ", "")):
            a, b = ast.literal_eval(f"[{s}]")
            xy = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2]
        else:
            inside = s.split("]")[0].split("[")[1]
            xy = [int(field) for field in inside.split(",")]
        if xy == [-1, -1]:
            return [-1, -1]
        return [float(xy[0] / 1000), float(xy[1] / 1000)]
    except Exception:
        return None


def ui_venus_ours(text: str) -> Reading:
    point = ui_venus_official(text)
    if point is None:
        return ERROR
    if point == [-1, -1]:
        return REFUSED
    return point[0], point[1]


# ------------------------------------------------------------------------------------------
# holo
# ------------------------------------------------------------------------------------------

HOLO_MAX_PIXELS = 2560 * 1440
"""likaixin2000/ScreenSpot-Pro-GUI-Grounding@bd8bbbb ``models/holo1_5.py`` ``Holo1_5Parameters``:
max_pixels 2560*1440, min_pixels 4*28*28, factor 14*2 ("to mimick what will be on Huggingface")."""


def holo_official(result: str, width: int, height: int) -> tuple[int, int, int, int]:
    """hcompai/hai-cookbook@2ba89619bdcfe729d31649d976bdaa7b9551e216
    ``holo1_5/holo_1_5_quickstart.ipynb``: cell 9 ``ClickAbsoluteAction`` (the same pydantic model), cell 14's
    resize (``smart_resize`` with the processor's factor and limits, here Holo1_5Parameters'),
    cell 18's ``ClickAbsoluteAction.model_validate_json(result)`` (pydantic itself: the parse IS
    pydantic's). Returns (x, y, resized_width, resized_height); raises where pydantic does."""
    from typing import Literal

    from pydantic import BaseModel, Field

    class ClickAbsoluteAction(BaseModel):
        """Click at absolute coordinates."""

        action: Literal["click_absolute"] = "click_absolute"
        x: int = Field(description="The x coordinate, number of pixels from the left edge.")
        y: int = Field(description="The y coordinate, number of pixels from the top edge.")

    resized_height, resized_width = transformers_smart_resize(height, width, factor=14 * 2, min_pixels=4 * 28 * 28,
                                                              max_pixels=HOLO_MAX_PIXELS)
    action = ClickAbsoluteAction.model_validate_json(result)
    return action.x, action.y, resized_width, resized_height


def holo_ours(text: str, width: int, height: int) -> Reading:
    try:
        x, y, rw, rh = holo_official(text, width, height)
    except Exception:
        return ERROR
    return x / rw, y / rh


# ------------------------------------------------------------------------------------------
# opencua
# ------------------------------------------------------------------------------------------

_XY = r"x=([\d.]+),\s*y=([\d.]+)"


def opencua_parse_response(response: str, width: int, height: int) -> str | None:
    """xlang-ai/OpenCUA@1d70f20 ``evaluation/agentnetbench/agent/opencua.py``
    ``OpenCUAAgent.parse_response`` with ``_maybe_normalize_coordinates`` (``coord_type='qwen25'``,
    the screenshot of ``width`` x ``height``)."""
    rows = [r.strip() for r in response.split("\n")]
    starting = [r for r in rows if r.startswith(("pyautogui.", "computer."))]
    if starting:
        return "\n".join(_opencua_normalize(starting, width, height))
    found: list[str] = []
    for r in rows:
        for prefix in ("pyautogui.", "computer."):
            if prefix in r:
                found.append(prefix + r.split(prefix)[1].strip())
                break
    found = _opencua_normalize(found, width, height)
    return "\n".join(found) if found else None


def _opencua_normalize(action_lines: list[str], width: int, height: int) -> list[str]:
    """``_maybe_normalize_coordinates`` (same file), for the qwen25 coordinate type."""
    if not action_lines:
        return action_lines
    rw, rh = opencua_smart_resize_qwen25(width, height)
    out: list[str] = []
    for line in action_lines:
        m = re.search(_XY, line) if line.startswith("pyautogui.") else None
        try:
            xy = (float(m.group(1)), float(m.group(2))) if m else None
        except ValueError:
            xy = None
        if xy is not None and xy[0] > 1.0 and xy[1] > 1.0:
            line = re.sub(_XY, f"x={xy[0] / float(rw)}, y={xy[1] / float(rh)}", line, count=1)
        out.append(line)
    return out


def opencua_extract_clicks(action: str | None) -> list[tuple[float, float]]:
    """``OpenCUAAgent.extract_actions`` (same file), the coordinate branches only: the
    ``("click", (x, y))`` actions in order. ``map(float, ...)`` raising ValueError on a
    ``pyautogui.`` or ``computer.triple_click`` line is the official extraction_exception."""
    if not action:
        return []
    clicks: list[tuple[float, float]] = []
    for line in (r.strip() for r in action.strip().split("\n")):
        if line.startswith("computer.terminate") and re.search(r"status=['\"](\w+)['\"]", line):
            continue
        if not line.startswith(("computer.triple_click", "pyautogui.")):
            continue
        m = re.search(_XY, line)
        if m is None:
            continue
        x, y = (float(v) for v in m.groups())  # a malformed number raises here, as the official map(float)
        if line.startswith("pyautogui.") and "click" in line and "doubleClick" not in line \
                and "rightClick" not in line:
            clicks.append((x, y))
    return clicks


def opencua_ours(text: str, width: int, height: int) -> Reading:
    try:
        clicks = opencua_extract_clicks(opencua_parse_response(text, width, height))
    except ValueError:
        return ERROR
    return clicks[0] if clicks else ERROR


# ------------------------------------------------------------------------------------------
# mai-ui
# ------------------------------------------------------------------------------------------


def mai_ui_official(raw_string: str) -> tuple[int, int]:
    """Tongyi-MAI/MAI-UI@4dd07b9e910a294f001452e888514d912b96cc41
    ``evaluation/grounding/eval_server.py`` ``parse_coordinates``: 0..1000, ``(-1, -1)`` for none."""
    first = re.search(r"\[(\d+),(\d+)\]", raw_string)
    return (-1, -1) if first is None else (int(first.group(1)), int(first.group(2)))


def mai_ui_ours(text: str) -> Reading:
    related_x, related_y = mai_ui_official(text)
    if related_x == -1 or related_y == -1:  # process_case: norm_x = None -> 'wrong_format'
        return ERROR
    return related_x / 1000.0, related_y / 1000.0


# ------------------------------------------------------------------------------------------
# gta1
# ------------------------------------------------------------------------------------------

GTA1_MAX_PIXELS = 4096 * 2160  # README: AutoProcessor.from_pretrained(min_pixels=3136, max_pixels=4096 * 2160)


def gta1_extract_coordinates(raw_string: str) -> tuple[int, ...]:
    """Yan98/GTA1@81f0c4c2997cf6ad696d42f47c5480f4c856b73a ``README.md`` "Inference"
    ``extract_coordinates``; its bare ``except: return 0,0`` raises :class:`OfficialFallback`."""
    pairs = re.findall(r"\((-?\d*\.?\d+),\s*(-?\d*\.?\d+)\)", raw_string)
    try:
        converted = [tuple(int(v) for v in pair) for pair in pairs]  # every pair converted first, as there
        return converted[0]
    except (ValueError, IndexError):
        raise OfficialFallback((0, 0)) from None


def gta1_official(output_text: str, width: int, height: int) -> tuple[float, float]:
    """The README's rescale: ``smart_resize(factor=patch_size*merge_size=28, min_pixels=3136,
    max_pixels=4096*2160)``, ``pred_x *= width / resized_width``: original-image pixels."""
    resized_height, resized_width = qwen_vl_utils_smart_resize(height, width, factor=14 * 2, min_pixels=3136,
                                                               max_pixels=GTA1_MAX_PIXELS)
    scale_x, scale_y = width / resized_width, height / resized_height
    pred_x, pred_y = gta1_extract_coordinates(output_text)
    return pred_x * scale_x, pred_y * scale_y


def gta1_ours(text: str, width: int, height: int) -> Reading:
    try:
        x, y = gta1_official(text, width, height)
    except OfficialFallback:
        return ERROR  # D1
    return x / width, y / height
