"""``opencua``: OpenCUA-7B/32B (xlang-ai), ``pyautogui.click(x=…, y=…)`` in pixels of the
Qwen2.5-VL-resized image (values <= 1 are already relative: the OpenCUA-Qwen2 convention)."""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt, Resize
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame, model_input_size

README = "xlang-ai/OpenCUA@1d70f20 model/README.md"
AGENT = "xlang-ai/OpenCUA@1d70f20 evaluation/agentnetbench/agent/opencua.py"

# create_grounding_messages: the system prompt (verbatim); the user message is the image, then
# the instruction as the whole text.
SYSTEM_PROMPT = (
    'You are a GUI agent. You are given a task and a screenshot of the screen. You need to '
    'perform a series of pyautogui actions to complete the task.'
)

_XY_RE = re.compile(r"x=([\d.]+),\s*y=([\d.]+)")


def _action_lines(text: str) -> list[str]:
    """``parse_response``: lines starting with ``pyautogui.``/``computer.``; else the part from
    such a prefix found anywhere in a line."""
    lines = [raw.strip() for raw in text.split("\n")]
    found = [line for line in lines if line.startswith(("pyautogui.", "computer."))]
    if found:
        return found
    for line in lines:
        for prefix in ("pyautogui.", "computer."):
            if prefix in line:
                found.append(prefix + line.split(prefix)[1].strip())
                break
    return found


def _bad_number(line: str) -> bool:
    """A line whose first ``x=…, y=…`` does not read as two floats (``x=1.2.3``, ``x=.``), on a
    ``pyautogui.`` or ``computer.triple_click`` line: ``extract_actions``' ``map(float, ...)``
    raises there, and AgentNetBench records the whole answer as an extraction_exception."""
    if not line.startswith(("pyautogui.", "computer.triple_click")):
        return False
    m = _XY_RE.search(line)
    if m is None:
        return False
    try:
        float(m.group(1)), float(m.group(2))
    except ValueError:
        return True
    return False


def read_pyautogui(text: str, ctx: ParseContext) -> Coords:
    """The first single click, as OpenCUA's AgentNetBench agent reads it (``parse_response``,
    ``_maybe_normalize_coordinates``, ``extract_actions``).

    Action lines in order; the first ``pyautogui.`` line with ``click`` that is not a
    ``doubleClick``/``rightClick`` and has ``x=…, y=…``. When both values exceed 1 they are
    pixels of the smart-resized image (``qwen25``: divided by its size, README
    ``qwen25_smart_resize_to_absolute``); otherwise they are already relative. An unreadable
    number in *any* action line's ``x=…, y=…`` fails the whole extraction, as it does there.
    """
    lines = _action_lines(text)
    if any(_bad_number(line) for line in lines):
        return Coords(error="an action line's x=..., y=... is not a number (OpenCUA's extract_actions raises: "
                            "extraction_exception)")
    for line in lines:
        if not line.startswith("pyautogui.") or "click" not in line or "doubleClick" in line or "rightClick" in line:
            continue
        m = _XY_RE.search(line)
        if m is None:
            continue
        x, y = float(m.group(1)), float(m.group(2))
        if x > 1.0 and y > 1.0:
            w, h = model_input_size(ctx, "opencua")
            return in_frame(x, y, float(w), float(h), f"pixels of the {w}x{h} model input")
        return in_frame(x, y, 1.0, 1.0, "relative 0..1")
    return Coords(error="no pyautogui click line with x=..., y=... (OpenCUA's parser finds no click)")


FAMILY = Family(
    name="opencua",
    frame="pixels-resized",
    prompts={"point": Prompt(system=SYSTEM_PROMPT, user="{instruction}", image_first=True,
                             source=f"{README} create_grounding_messages (verbatim)")},
    read=read_pyautogui,
    generation=Generation(512, f"{README} run_inference: max_new_tokens=512, temperature=0"),
    resize=Resize(28, 3136, 12845056, f"{README} qwen25_smart_resize_to_absolute: smart_resize(factor=28, "
                                      "min_pixels=3136, max_pixels=12845056)"),
    input_size_known=True,
    sources=(README, AGENT, "xlang-ai/OpenCUA model/inference/huggingface_inference.py"),
)
