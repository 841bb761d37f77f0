"""Independent re-implementations of the answer reading of GELab-Zero (Step-GUI) and duvo-eye, for the
family tests (read, then rewritten; no code copied; nothing from :mod:`pytest_uiground`).

* ``gelab_zero_official``: ``stepfun-ai/gelab-zero@19465cf`` ``copilot_tools/parser_0920_summary.py``
  ``Parser0920Summary.str2action`` (tag normalisation, the ``</THINK>`` split with its IndexError
  fallback, tab-separated ``key:value`` pairs, a key containing ``point`` parsed as two ``int``s after
  ``,`` → space, raising otherwise) and ``copilot_front_end/mobile_action_helper.py`` (the CLICK's
  ``point`` divided by 1000). Returns the normalized point, or raises where the parser raises, or
  ``None`` where a CLICK would have no ``point`` (``action2action`` asserts).
* ``groundnext_official``: ``ServiceNow/GroundCUA@a28e03b`` ``eval/prompts.py`` ``BasicPrompt.extract_coordinates``
  (the first ``<tool_call>`` ... ``</tool_call>``, ``json.loads``, ``.get("arguments").get("coordinate")``,
  ``assert len == 2``, ``int()`` each; on ``JSONDecodeError``/``KeyError`` the ``\\d+`` runs when exactly
  two) and ``is_point_inside_element``'s refusal (both coordinates negative). Raises where it raises.
* ``seed18_official``: ``ZJU-REAL/ClawGUI@d990d3e`` ``clawgui-eval/judge/grounding_judge.py`` ``seed18_parse``
  (``re.findall`` of ``<point>`` two whitespace-separated numbers ``</point>``, the last, over 1000).
* ``kimi_official``: the same file's ``kimi_parse`` (``re.findall`` of ``(x, y)``, else of a bare ``x, y``;
  the last; over 1000); ``gemini_inferencer.py``'s ``parse_coord_from_response`` has the same two
  regexes in the same order, so ``gemini_official`` is the same function (both read).
* ``duvo_eye_official``: the duvo-eye-1.5 model card's output (``{"x": int, "y": int}`` in [0, 1000]);
  ``json.loads`` of the answer, integer ``x`` and ``y``; anything else is a parse failure (a miss).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from typing import Any


def gelab_zero_str2action(command_str: str) -> dict[str, Any]:
    command_str = command_str.strip()
    for a, b in (("<TINK>", "<THINK>"), ("</TINK>", "</THINK>"), ("<think>", "<THINK>"), ("</think>", "</THINK>")):
        command_str = command_str.replace(a, b)
    command_str = re.sub(r"<\s*/?THINK\s*>", lambda m: "</THINK>" if "/" in m.group() else "<THINK>",
                         command_str, flags=re.IGNORECASE)
    try:
        command_str.split("<THINK>")[1].split("</THINK>")[0]
        kv_part = command_str.split("</THINK>")[1].strip()
    except IndexError:
        kv_part = command_str
    action: dict[str, Any] = OrderedDict()
    for kv in [k.strip() for k in kv_part.split("\t") if k.strip()]:
        if ":" not in kv:
            continue
        key, value = kv.split(":", 1)[0].strip(), kv.split(":", 1)[1].strip()
        if "point" in key:
            coords = value.replace(",", " ").split()
            if len(coords) < 2:
                raise ValueError("Expected 2 coordinates")
            action[key] = [int(coords[0]), int(coords[1])]
        else:
            action[key] = value
    return action


def gelab_zero_official(text: str) -> tuple[float, float] | None:
    action = gelab_zero_str2action(text)
    point = action.get("point")
    if point is None:
        return None
    return float(point[0]) / 1000, float(point[1]) / 1000


def duvo_eye_official(text: str) -> tuple[float, float] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    x, y = value.get("x"), value.get("y")
    if type(x) is not int or type(y) is not int:
        return None
    return x / 1000, y / 1000


def groundnext_official(response: str) -> list[int] | None:
    json_str = response.split("<tool_call>")[1].split("</tool_call>")[0].strip()
    try:
        json_response = json.loads(json_str)
        click_point = json_response.get("arguments").get("coordinate")
        assert len(click_point) == 2
        click_point = [int(x) for x in click_point]
    except (json.JSONDecodeError, KeyError):
        found = re.findall(r"\d+", json_str)
        click_point = [int(x) for x in found] if len(found) == 2 else None
    return click_point  # type: ignore[no-any-return]


def seed18_official(text: str) -> tuple[float, float] | None:
    if not text:
        return None
    found = re.findall(r"<point>\s*(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s*</point>", text)
    if not found:
        return None
    return float(found[-1][0]) / 1000.0, float(found[-1][1]) / 1000.0


def kimi_official(text: str) -> tuple[float, float] | None:
    if not text:
        return None
    for pattern in (r"\(\s*(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*\)", r"(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)"):
        found = re.findall(pattern, text)
        if found:
            return float(found[-1][0]) / 1000.0, float(found[-1][1]) / 1000.0
    return None


gemini_official = kimi_official
