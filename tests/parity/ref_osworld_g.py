"""An independent re-implementation of OSWorld-G's reference scoring, for the parity tests.

Sources (read, then written here from their rules; no code copied):

* ``xlang-ai/OSWorld-G`` ``evaluation/eval.py: GroundingEval._eval`` (the official repository could
  not be fetched; its body is preserved verbatim in a VLMEvalKit-style ``OSWorldG`` dataset class in
  public code, and called with the same signature by ``Onifin/Holo3.1-OSWorld-G`` @0fbdd89045f2
  ``evaluation/holo_osworld_g.py``) -> :func:`official_eval`;
* the runners' aggregation (``BenchmarkRunner.evaluate`` of that fork; the same loop in the
  VLMEvalKit-style copy's ``evaluate``) -> :func:`runner_evaluate`;
* ``ZJU-REAL/ClawGUI`` @d990d3e ``clawgui-eval/judge/osworld_g_judge.py: _is_refusal_output,
  qwen3vl_parse`` (the published reader of a 0..1000 family) -> :func:`clawgui_qwen3vl_parse`.

Nothing here imports ``pytest_uiground``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

REFUSAL = (-1, -1)
_NUM = re.compile(r"-?\d+\.?\d*")


def clawgui_refusal(text: str) -> bool:
    if not text:
        return False
    if '"action": "terminate"' in text or "'action': 'terminate'" in text:
        return True
    found = _NUM.findall(text)
    return len(found) >= 2 and float(found[0]) == -1 and float(found[1]) == -1


def clawgui_qwen3vl_parse(text: str, image_size: Sequence[int]) -> tuple[int, int] | None:
    """The click in pixels, ``REFUSAL``, or None (ClawGUI: ``if pred is None: return False``)."""
    if not text:
        return None
    if clawgui_refusal(text):
        return REFUSAL
    values: list[float] | None = None
    if "<tool_call>" in text and "</tool_call>" in text:
        inner = text[text.find("<tool_call>") + 11:text.find("</tool_call>")].strip()
        try:
            obj = json.loads(inner)
            if "arguments" in obj and "coordinate" in obj["arguments"]:
                c = obj["arguments"]["coordinate"]
                if isinstance(c, list) and len(c) >= 2:
                    values = [float(c[0]), float(c[1])]
        except (ValueError, KeyError, TypeError, AttributeError):
            values = None
    if values is None:
        values = [float(n) for n in _NUM.findall(text)] or None
    if not values:
        return None
    w, h = image_size
    if len(values) == 2:
        return int(values[0] / 1000 * w), int(values[1] / 1000 * h)
    if len(values) >= 4:
        return int(values[0] / 999 * w), int(values[1] / 999 * h)
    return None


def _in_polygon(px: float, py: float, poly: Sequence[float]) -> bool:
    count = len(poly) // 2
    inside = False
    for i in range(count):
        j = (i - 1) % count
        xi, yi, xj, yj = poly[2 * i], poly[2 * i + 1], poly[2 * j], poly[2 * j + 1]
        if ((yi > py) != (yj > py)) and px < (xj - xi) * (py - yi) / (yj - yi) + xi:
            inside = not inside
    return inside


def official_eval(coordinate: Sequence[float], boxes_type: str, boxes_size: Sequence[float],
                  boxes_coordinate: Sequence[float], image_size: Sequence[float]) -> bool | None:
    """``GroundingEval._eval``: the centre of ``[x1, y1, x2, y2]`` against the record's target."""
    coords = list(coordinate)
    if all(0 <= c <= 1 for c in coords):  # the relative-coordinate guess
        coords = [c * image_size[k % 2] for k, c in enumerate(coords)]
    cx, cy = (coords[0] + coords[2]) / 2, (coords[1] + coords[3]) / 2
    if boxes_type == "bbox":
        x0, y0 = boxes_coordinate[0], boxes_coordinate[1]
        x1, y1 = x0 + boxes_size[0], y0 + boxes_size[1]
        return x0 <= cx <= x1 and y0 <= cy <= y1
    if boxes_type == "polygon":
        return _in_polygon(cx, cy, boxes_coordinate)
    if boxes_type == "refusal":
        return cx < 0 and cy < 0
    return None


def sample_correct(record: Mapping[str, Any], text: str) -> bool:
    """ClawGUI's parse, then the official ``_eval`` (a point is ``[x, y, x, y]``; None is a miss)."""
    pred = clawgui_qwen3vl_parse(text, record["image_size"])
    if pred is None:
        return False
    coords = [pred[0], pred[1], pred[0], pred[1]]
    box = record["box_coordinates"]
    if record["box_type"] == "bbox":
        return bool(official_eval(coords, "bbox", box[2:], box[:2], record["image_size"]))
    return bool(official_eval(coords, record["box_type"], record["image_size"], box, record["image_size"]))


def runner_evaluate(records: Sequence[Mapping[str, Any]], texts: Sequence[str],
                    classified: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The runner's figures: total, correct, accuracy (a fraction), per group; plus per-sample verdicts."""
    groups_of: dict[str, list[str]] = {}
    for group, entries in classified.items():
        for e in entries:
            groups_of.setdefault(e["id"], []).append(group)
    per_group: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, bool] = {}
    correct = 0
    for rec, text in zip(records, texts, strict=True):
        names = groups_of.get(rec["id"]) or ["unclassified"]
        ok = sample_correct(rec, text)
        verdicts[rec["id"]] = ok
        correct += ok
        for g in names:
            slot = per_group.setdefault(g, {"total": 0, "correct": 0})
            slot["total"] += 1
            slot["correct"] += ok
    for slot in per_group.values():
        slot["accuracy"] = slot["correct"] / slot["total"]
    return {"total": len(records), "correct": correct, "accuracy": correct / len(records),
            "accuracy_dict_group": per_group, "verdicts": verdicts}
