"""Independent re-implementation of the ScreenSpot reference scoring.

* ScreenSpot-Pro: github.com/likaixin2000/ScreenSpot-Pro-GUI-Grounding at
  bd8bbbb470fbc4fda2a4fa9ec90bd2572507794e (2025-10-27), ``eval_screenspot_pro.py`` and the
  model wrappers ``models/qwen2vl.py`` (Qwen2-VL), ``models/osatlas7b.py``.
* ScreenSpot v1/v2: github.com/njucckevin/SeeClick at 0ef37ac4d7aaf37ba7b990e3e3c3ca77e1fb8f93
  (2025-07-13), ``pretrain/screenspot_test.py`` and ``pretrain/process_utils.py``. The v2
  files (``screenspot_{split}_v2.json``, OS-Copilot) are scored with the same script.

Pure functions; reference bugs reproduced, each with an ``intended_*`` twin where it matters.
Parsers return a normalized point (x, y) or None (None = the reference's "wrong format").
Accuracies are fractions 0..1, as both references print them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Point = tuple[float, float]

# --------------------------------------------------------------------------------------
# Parsers
# --------------------------------------------------------------------------------------


def pred_2_point(s: str) -> list[float] | None:
    """models/qwen2vl.py ``pred_2_point`` (same in uground.py, osatlas7b.py): every match of
    ``-?\\d+\\.?\\d*`` in the whole text ("1." and "-3" count; ".5" is "5"); 2 numbers -> the
    point, 4 -> the box centre, anything else -> None."""
    nums = [float(v) for v in re.findall(r"-?\d+\.?\d*", s)]
    if len(nums) == 2:
        return nums
    if len(nums) == 4:
        return [(nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2]
    return None


_QWEN_BOX = re.compile(r"<\|box_start\|\>\((\d+),(\d+)\),\((\d+),(\d+)\)<\|box_end\|\>")


def qwen2vl_parse(text: str) -> Point | None:
    """models/qwen2vl.py ``Qwen2VLModel.ground_only_positive`` (+ ``extract_bbox``).

    If the text contains both ``<|box_start|>`` and ``<|box_end|>``: the LAST box written
    exactly ``(int,int),(int,int)`` (no spaces, no decimals), /1000, its centre; a tag pair
    with any other content gives None WITHOUT falling back to the numbers. Otherwise
    :func:`pred_2_point` on the whole text, /1000. Never clipped (1001 -> 1.001, a miss)."""
    if "<|box_start|>" in text and "<|box_end|>" in text:
        boxes = _QWEN_BOX.findall(text)
        if not boxes:
            return None
        x1, y1, x2, y2 = (int(v) / 1000 for v in boxes[-1])
        return (x1 + x2) / 2, (y1 + y2) / 2
    p = pred_2_point(text)
    return (p[0] / 1000, p[1] / 1000) if p else None


def qwen2vl_negative_result(text: str) -> str:
    """models/qwen2vl.py ``ground_allow_negative``: "positive" when a point/box was read,
    else "negative" when "target does not exist" occurs (case-insensitive), else
    "wrong_format". (Only for gt_type=negative, which the leaderboard does not report.)"""
    if qwen2vl_parse(text) is not None:
        return "positive"
    return "negative" if "target does not exist" in text.lower() else "wrong_format"


_SEECLICK_BOX = re.compile(r"<box>\((\d+,\d+)\),\((\d+,\d+)\)</box>")


def seeclick_parse(text: str) -> Point | None:
    """SeeClick pretrain/screenspot_test.py's try-block with process_utils ``extract_bbox`` /
    ``pred_2_point``. If the substring ``box`` occurs anywhere (case-sensitive, so
    "checkbox" too): the corners of the FIRST ``<box>(x,y),(x,y)</box>`` (matches are
    flattened and [0], [1] taken), centre /1000; none -> IndexError -> wrong format.
    Else 2 numbers -> the point AS IS (SeeClick answers 0..1), 4 -> box centre AS IS,
    otherwise UnboundLocalError -> wrong format (None here). No clipping."""
    if "box" in text:
        corners = [tuple(int(v) for v in c.split(",")) for m in _SEECLICK_BOX.findall(text) for c in m]
        if len(corners) < 2:
            return None
        return (corners[0][0] + corners[1][0]) / 2 / 1000, (corners[0][1] + corners[1][1]) / 2 / 1000
    nums = [float(v) for v in re.findall(r"-?\d+\.?\d*", text)]
    if len(nums) == 2:
        return nums[0], nums[1]
    if len(nums) == 4:
        return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    return None


# --------------------------------------------------------------------------------------
# ScreenSpot-Pro
# --------------------------------------------------------------------------------------


def pro_correctness(record: Mapping[str, Any], point: Point | None) -> str:
    """eval_screenspot_pro.py ``eval_sample_positive_gt``: bbox [x1,y1,x2,y2] pixels divided by
    the record's ``img_size`` (not the opened image); None -> "wrong_format"; edges inclusive."""
    w, h = record["img_size"]
    x1, y1, x2, y2 = record["bbox"]
    if point is None:
        return "wrong_format"
    inside = x1 / w <= point[0] <= x2 / w and y1 / h <= point[1] <= y2 / h
    return "correct" if inside else "wrong"


def pro_results(records: Sequence[Mapping[str, Any]], outputs: Sequence[str],
                parse: Callable[[str], Point | None] = qwen2vl_parse,
                inst_style: str = "instruction", gt_type: str = "positive",
                language: str = "en") -> list[dict[str, Any]]:
    """eval_screenspot_pro.py ``main``: the per-sample result dicts ``evaluate`` reads
    (positive ground truth only). ``group`` is None when the record has none."""
    out = []
    for rec, text in zip(records, outputs, strict=True):
        out.append({
            "id": rec["id"], "group": rec.get("group"), "platform": rec["platform"],
            "application": rec["application"], "lang": language, "instruction_style": inst_style,
            "gt_type": gt_type, "ui_type": rec["ui_type"],
            "correctness": pro_correctness(rec, parse(text)),
        })
    return out


def calc_metric(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """eval_screenspot_pro.py ``calc_metric_for_result_list``: counts and fractions; an
    empty text/icon (or total) subset gives 0, not an error. ui_type must be exactly
    "text"/"icon" to count in text_acc/icon_acc (action_acc counts everything)."""
    def acc(rs: Sequence[Mapping[str, Any]]) -> float:
        return sum(r["correctness"] == "correct" for r in rs) / len(rs) if rs else 0

    text = [r for r in results if r.get("ui_type") == "text"]
    icon = [r for r in results if r.get("ui_type") == "icon"]
    return {
        "num_correct_action": sum(r["correctness"] == "correct" for r in results),
        "num_total": len(results),
        "wrong_format_num": sum(r["correctness"] == "wrong_format" for r in results),
        "action_acc": acc(results),
        "text_acc": acc(text),
        "icon_acc": acc(icon),
    }


def _table(results: Sequence[Mapping[str, Any]], keys: Sequence[str], label: Callable[[dict[str, Any]], str]) -> dict:
    """``make_combinations`` (the product of each key's values seen) + ``collect_results_to_eval``;
    empty combinations are skipped."""
    values = [sorted({r.get(k) for r in results}, key=str) for k in keys]
    table = {}
    for combo in itertools.product(*values):
        c = dict(zip(keys, combo, strict=False))
        rs = [r for r in results if all(r.get(k) == v for k, v in c.items())]
        if rs:
            table[label(c)] = calc_metric(rs)
    return table


def score_screenspot_pro(records: Sequence[Mapping[str, Any]], outputs: Sequence[str],
                         parse: Callable[[str], Point | None] = qwen2vl_parse) -> dict[str, Any]:
    """eval_screenspot_pro.py ``evaluate``: the "metrics" object written to --log_path.

    * ``fine_grained``: platform x application x instruction_style x gt_type,
      key ``"plat:{p} app:{a} inst_style:{s} gt_type:{g}"``;
    * ``seeclick_style``: platform x instruction_style x gt_type, ``"plat:{p} inst_style:{s} gt_type:{g}"``;
    * ``leaderboard_simple_style``: group, ``"group:{g}"``;
    * ``leaderboard_detailed_style``: application, ``"app:{a}"``;
    * ``overall``: all results.
    Each entry: num_correct_action, num_total, wrong_format_num, action_acc, text_acc, icon_acc.
    The reference's combinations never include ui_type or group x application.
    """
    res = pro_results(records, outputs, parse)
    return {
        "fine_grained": _table(res, ["platform", "application", "instruction_style", "gt_type"],
                               lambda c: f"plat:{c['platform']} app:{c['application']} "
                                         f"inst_style:{c['instruction_style']} gt_type:{c['gt_type']}"),
        "seeclick_style": _table(res, ["platform", "instruction_style", "gt_type"],
                                 lambda c: f"plat:{c['platform']} inst_style:{c['instruction_style']} "
                                           f"gt_type:{c['gt_type']}"),
        "leaderboard_simple_style": _table(res, ["group"], lambda c: f"group:{c['group']}"),
        "leaderboard_detailed_style": _table(res, ["application"], lambda c: f"app:{c['application']}"),
        "overall": calc_metric(res),
    }


# --------------------------------------------------------------------------------------
# ScreenSpot v1 / v2 (SeeClick script)
# --------------------------------------------------------------------------------------


def v2_code(record: Mapping[str, Any], output: str, image_size: tuple[int, int],
            parse: Callable[[str], Point | None] = seeclick_parse) -> str:
    """screenspot_test.py per-sample: bbox [x, y, w, h] -> [x, y, x+w, y+h] (no -1), divided by
    the OPENED image's size; "correct" / "wrong" / "wrong_format" (None or exception)."""
    x, y, bw, bh = record["bbox"]
    w, h = image_size
    box = [x / w, y / h, (x + bw) / w, (y + bh) / h]
    try:
        p = parse(output)
        inside = box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]  # type: ignore[index]
    except Exception:
        return "wrong_format"
    return "correct" if inside else "wrong"


def score_screenspot_v2(splits: Mapping[str, Sequence[Mapping[str, Any]]], outputs: Mapping[str, Sequence[str]],
                        image_sizes: Mapping[str, tuple[int, int]],
                        parse: Callable[[str], Point | None] = seeclick_parse) -> dict[str, Any]:
    """screenspot_test.py: per task (split) it logs "Action Acc", "Total num", "Wrong format
    num", "Text Acc", "Icon Acc" and finally ``tasks_result`` = [[text_acc, icon_acc], ...] in
    task order. A wrong-format sample is a 0 in its text/icon list; anything whose data_type
    is not exactly "text" counts as icon; an empty list gives 0. ``image_sizes`` maps
    img_filename -> (w, h). The script prints no average: ``paper_average`` (the unweighted
    mean of the six cells, what papers report) is added here and marked as not printed."""
    per_task: dict[str, dict[str, Any]] = {}
    tasks_result = []
    for split, records in splits.items():
        codes = [v2_code(r, o, image_sizes[r["img_filename"]], parse)
                 for r, o in zip(records, outputs[split], strict=True)]
        text = [c == "correct" for r, c in zip(records, codes, strict=False) if r["data_type"] == "text"]
        icon = [c == "correct" for r, c in zip(records, codes, strict=False) if r["data_type"] != "text"]
        text_acc = sum(text) / len(text) if text else 0
        icon_acc = sum(icon) / len(icon) if icon else 0
        per_task[split] = {
            "Action Acc": codes.count("correct") / len(codes),  # ZeroDivisionError on an empty split
            "Total num": len(codes),
            "Wrong format num": codes.count("wrong_format"),
            "Text Acc": text_acc,
            "Icon Acc": icon_acc,
        }
        tasks_result.append([text_acc, icon_acc])
    cells = [v for pair in tasks_result for v in pair]
    return {"per_task": per_task, "tasks_result": tasks_result,
            "paper_average (not printed by the script)": sum(cells) / len(cells) if cells else None}
