"""The ScreenSpot references' own readers of model outputs, for ``[models.<name>]`` overrides.

Published ScreenSpot numbers were scored by each evaluation script's wrapper parser, not by
the model family's usual one, so the suites name these functions in ``suite.toml``:

* :func:`parse_pro_qwen2vl` -- ScreenSpot-Pro (likaixin2000/ScreenSpot-Pro-GUI-Grounding at
  bd8bbbb4) ``models/qwen2vl.py: Qwen2VLModel.ground_only_positive`` with ``extract_bbox``
  and ``pred_2_point`` (the latter shared by ``uground.py`` and ``osatlas7b.py``). When both
  ``<|box_start|>`` and ``<|box_end|>`` occur: the LAST box written exactly
  ``(int,int),(int,int)``, /1000, its centre; tags with any other content give no point (no
  fallback). Otherwise every number (``-?\\d+\\.?\\d*``) in the whole text: 2 are the point, 4
  a box whose centre is the point, any other count no point; /1000.
* :func:`parse_seeclick` -- SeeClick (njucckevin/SeeClick at 0ef37ac4)
  ``pretrain/screenspot_test.py`` with ``process_utils.py: extract_bbox``/``pred_2_point``,
  the script that scores ScreenSpot v1/v2: when the substring ``box`` occurs anywhere
  (case-sensitive, so "checkbox" too) the FIRST ``<box>(x,y),(x,y)</box>``, centre /1000,
  none is wrong format; otherwise 2 numbers are the point as they are (SeeClick answers
  0..1), 4 a box centre, anything else wrong format.

* :func:`parse_pro_normalized` -- ScreenSpot-Pro with Aguvis' wrapper (the fork that published
  Aguvis-7B's per-sample results, ZeonLap/ScreenSpot-Pro-GUI-Grounding at 7dc793e4,
  ``models/aguvis.py: parse_pyautogui``): the FIRST ``pyautogui.click(x=0.1175, y=0.0725)``
  (or ``pyautogui.click(0.1175, 0.0725)``), both numbers written with a decimal point, read as
  0..1 of the image. Where that wrapper scores an unreadable answer as the point (0, 0), here
  it is a format error (what the official code cannot read is a format error, never a guessed
  click); none of the 1,581 published Aguvis-7B outputs is affected.

Neither reference clips: a point beyond the image is a plain miss ("wrong"), never a format
error; only "no point" is "wrong_format". The points here are left unclipped likewise.
"""

from __future__ import annotations

import re

from pytest_uiground.models.families import ParseContext, Parsed
from pytest_uiground.record.geometry import Point

_NUMBER = re.compile(r"-?\d+\.?\d*")
_QWEN_BOX = re.compile(r"<\|box_start\|>\((\d+),(\d+)\),\((\d+),(\d+)\)<\|box_end\|>")
_PYAUTOGUI_CLICK = re.compile(r"pyautogui\.click\((?:x=)?(\d+\.\d+)(?:,\s*y=|,\s*)(\d+\.\d+)\)")
_SEECLICK_BOX = re.compile(r"<box>\((\d+,\d+)\),\((\d+,\d+)\)</box>")


def pred_2_point(text: str) -> tuple[float, float] | None:
    """``pred_2_point`` of both references: 2 numbers -> the point, 4 -> the box centre."""
    nums = [float(v) for v in _NUMBER.findall(text)]
    if len(nums) == 2:
        return nums[0], nums[1]
    if len(nums) == 4:
        return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    return None


def _point(task: str, xy: tuple[float, float] | None, text: str, why: str) -> Parsed:
    if task != "point":
        raise ValueError(f"this ScreenSpot parser reads point answers, not {task!r} tasks")
    if xy is None:
        return Parsed(format_error=True, note="empty output" if not text.strip() else why)
    return Parsed(point=Point(xy[0], xy[1]))


def parse_pro_qwen2vl(text: str, task: str, ctx: ParseContext) -> Parsed:
    """Override parser: ScreenSpot-Pro's Qwen2-VL wrapper (0..1000), see the module docstring."""
    if "<|box_start|>" in text and "<|box_end|>" in text:
        boxes = _QWEN_BOX.findall(text)
        if not boxes:
            return _point(task, None, text, "box tags without a box written (x1,y1),(x2,y2) in integers "
                                            "(ScreenSpot-Pro qwen2vl.py extract_bbox)")
        x1, y1, x2, y2 = (int(v) / 1000 for v in boxes[-1])
        return _point(task, ((x1 + x2) / 2, (y1 + y2) / 2), text, "")
    xy = pred_2_point(text)
    n = len(_NUMBER.findall(text))
    return _point(task, (xy[0] / 1000, xy[1] / 1000) if xy else None, text,
                  f"{n} numbers in the output; ScreenSpot-Pro's pred_2_point needs 2 (point) or 4 (box)")


def parse_seeclick(text: str, task: str, ctx: ParseContext) -> Parsed:
    """Override parser: SeeClick's ScreenSpot script (0..1 points, ``<box>`` in 0..1000)."""
    if "box" in text:
        corners = [tuple(int(v) for v in c.split(",")) for m in _SEECLICK_BOX.findall(text) for c in m]
        if len(corners) < 2:
            return _point(task, None, text, "'box' occurs but no <box>(x,y),(x,y)</box> follows "
                                            "(SeeClick extract_bbox)")
        (ax, ay), (bx, by) = corners[0], corners[1]
        return _point(task, ((ax + bx) / 2 / 1000, (ay + by) / 2 / 1000), text, "")
    n = len(_NUMBER.findall(text))
    return _point(task, pred_2_point(text), text,
                  f"{n} numbers in the output; SeeClick's pred_2_point needs 2 (point) or 4 (box)")


def parse_pro_normalized(text: str, task: str, ctx: ParseContext) -> Parsed:
    """Override parser: 0..1 ``pyautogui.click`` answers as ScreenSpot-Pro's Aguvis wrapper reads them."""
    # ZeonLap/ScreenSpot-Pro-GUI-Grounding models/aguvis.py: parse_pyautogui (the pattern, first match)
    found = _PYAUTOGUI_CLICK.search(text)
    xy = (float(found.group(1)), float(found.group(2))) if found else None
    return _point(task, xy, text, "no pyautogui.click(x=..., y=...) with two decimal numbers in 0..1 "
                                  "(Aguvis' ScreenSpot-Pro wrapper, parse_pyautogui)")
