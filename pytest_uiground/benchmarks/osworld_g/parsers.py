"""How OSWorld-G reads a 0..1000 family's answer (Qwen3-VL, GUI-Owl), for ``[models.qwen3-vl]``.

No official OSWorld-G runner reads a 0..1000 family. The one published reader that does, and that
also reads refusals, is ClawGUI's (``ZJU-REAL/ClawGUI`` @d990d3e ``clawgui-eval/judge/osworld_g_judge.py``:
``_is_refusal_output`` and ``qwen3vl_parse``); its point is then scored by the official rules
(``xlang-ai/OSWorld-G evaluation/eval.py: GroundingEval._eval``, from the copies cited in
``suites/osworld_g/README.md``). Written here from those rules:

1. empty text: nothing (a format error, a miss);
2. a refusal when the text holds ``"action": "terminate"`` / ``'action': 'terminate'`` (that
   spacing exactly) or the first two numbers (``-?\\d+\\.?\\d*``) both equal -1;
3. else the ``coordinate`` of a ``<tool_call>{...}</tool_call>`` JSON, else every number;
4. 2 numbers: ``int(v / 1000 * size)`` per axis; 4 or more: the first pair, ``int(v / 999 * size)``
   (ClawGUI's rule: a box answer clicks its top-left corner); 1 or 3: nothing;
5. the official ``_eval`` on the click ``[X, Y, X, Y]``: when all four lie in 0..1 they are taken
   as relative and multiplied by the image size (so (1, 0) clicks (W, 0)); the click is a refusal
   when both coordinates are negative (``all(c < 0)``), else a point, never clipped (a click
   beyond the image is a plain miss).

Where ClawGUI's code would raise (a tool call nested past the recursion limit; ``int()`` of a
coordinate that is not finite: a 400-digit number, ``NaN``, ``1e999``) its sample is lost, a miss;
here it is a format error naming why (issue 34 item 6), so one such answer never becomes a
sample *error* that blocks ``--snapshot-update``.

The point is stored normalized, ``X / W``; :func:`pytest_uiground.record.geometry.to_frame` brings
it back to whole pixels for the polygon test.
"""

from __future__ import annotations

import json
import math
import re

from pytest_uiground.models.families import ParseContext, Parsed
from pytest_uiground.record.geometry import Point

_NUMBER = re.compile(r"-?\d+\.?\d*")
_TERMINATE = ('"action": "terminate"', "'action': 'terminate'")


def is_refusal_text(text: str) -> bool:
    """ClawGUI's refusal forms (rule 2 of the module docstring)."""
    if not text:
        return False
    if any(t in text for t in _TERMINATE):
        return True
    nums = _NUMBER.findall(text)
    return len(nums) >= 2 and all(float(n) == -1 for n in nums[:2])


class Unreadable(ValueError):
    """An answer the reference's code would crash on; the message says why (a format error here)."""


def _tool_call_coordinate(text: str) -> list[float] | None:
    if "<tool_call>" not in text or "</tool_call>" not in text:
        return None
    body = text[text.find("<tool_call>") + len("<tool_call>"):text.find("</tool_call>")].strip()
    try:
        call = json.loads(body)
        coordinate = call["arguments"]["coordinate"] if "coordinate" in call.get("arguments", {}) else None
        if isinstance(coordinate, list) and len(coordinate) >= 2:
            return [float(coordinate[0]), float(coordinate[1])]
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    except RecursionError:
        raise Unreadable("the <tool_call> JSON nests too deeply to parse (the reference's json.loads raises "
                         "RecursionError)") from None
    return None


def click_pixels(text: str, size: tuple[int, int]) -> tuple[int, int] | None:
    """Rules 3-4: the click in whole pixels of the screenshot, or None."""
    coords = _tool_call_coordinate(text)
    if coords is None:
        coords = [float(n) for n in _NUMBER.findall(text)] or None
    if not coords:
        return None
    used = coords[:2] if len(coords) == 2 or len(coords) >= 4 else []  # what the reference converts with int()
    if bad := [v for v in used if not math.isfinite(v)]:
        raise Unreadable(f"coordinate {bad[0]!r} is not a finite number (too many digits, NaN or 1e999): the "
                         "reference's int() of it raises")
    w, h = size
    if len(coords) == 2:
        return int(coords[0] / 1000 * w), int(coords[1] / 1000 * h)
    if len(coords) >= 4:
        return int(coords[0] / 999 * w), int(coords[1] / 999 * h)
    return None


def parse_qwen3vl(text: str, task: str, ctx: ParseContext) -> Parsed:
    """Override parser: a Qwen3-VL / GUI-Owl answer as OSWorld-G scores it (module docstring)."""
    if task != "point":
        raise ValueError(f"the OSWorld-G parser reads point answers, not {task!r} tasks")
    if not text:
        return Parsed(format_error=True, note="empty output")
    if is_refusal_text(text):
        return Parsed(refused=True, note="refusal ([-1, -1] or a terminate action)")
    try:
        click = click_pixels(text, ctx.image_size)
    except Unreadable as exc:
        return Parsed(format_error=True, note=str(exc))
    if click is None:
        n = len(_NUMBER.findall(text))
        return Parsed(format_error=True, note=f"{n} numbers and no tool-call coordinate; a point needs 2 (or 4+)")
    w, h = ctx.image_size
    x, y = float(click[0]), float(click[1])
    if 0 <= x <= 1 and 0 <= y <= 1:  # _eval's relative-coordinate guess on [X, Y, X, Y]
        x, y = x * w, y * h
    if x < 0 and y < 0:
        return Parsed(refused=True, note="both coordinates negative: OSWorld-G's refusal")
    return Parsed(point=Point(x / w, y / h))
