"""An independent re-implementation of VenusBench-GD's official scoring, for the parity tests.

Source (read, then written here from its rules; no code copied): ``inclusionAI/UI-Venus`` branch
``VenusBench-GD`` @56b1005 ``eval.py``: ``main`` (one task instance per record, file and
``gt_type``; ``img_size`` from the opened image), ``eval_sample_positive_gt``,
``eval_sample_negative_gt``, ``calc_metric_for_result_list`` and the tables of ``evaluate``
(``fine_grained``, ``seeclick_style``, ``leaderboard_simple_style``, ``leaderboard_detailed_style``,
``overall``). The per-task figure is one ``eval.py`` run per ``--task`` (the same calculation on that
file's records); basic/advanced is the paper's split of the six tasks.

``eval.py`` scores a response dict ``{"result", "point"}`` made by a model wrapper. The wrappers here
turn a family's official reading (:mod:`parity.ref_families`, and :func:`gelato_official` below) into
that dict: a point → ``{"result": "positive", "point": p}``; the family's refusal form →
``{"result": "negative", "point": [-1, -1]}`` (UI-Venus-1.5's own wrapper keeps the ``[-1, -1]``
point, so a refusal on a positive sample is ``wrong``, not ``wrong_format``); unreadable →
``{"result": "wrong_format", "point": None}``.

Nothing here imports ``pytest_uiground``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import ref_families as rf

BASIC = ("element_grounding", "spatial_grounding", "visual_grounding")
NEGATIVE_TASK = "refusal_spatial"


def gelato_official(text: str) -> rf.Reading:
    """mlfoundations/Gelato ``run_grounding_eval.py`` (prompt mode ``gelato-refusal``): the word
    'refusal' in any case is a refusal; else the first ``(int, int)`` pair, in 0..1000."""
    if "refusal" in text.lower():
        return rf.REFUSED
    m = re.search(r"\((\d+),\s*(\d+)\)", text)
    if m is None:
        return rf.ERROR
    return int(m.group(1)) / 1000, int(m.group(2)) / 1000


READERS: dict[str, Callable[[str, tuple[int, int]], rf.Reading]] = {
    "ui-venus": lambda text, size: rf.ui_venus_ours(text),
    "gui-owl": lambda text, size: rf.gui_owl_ours(text),
    "gelato": lambda text, size: gelato_official(text),
    "qwen3-vl": lambda text, size: rf.qwen3vl_ours(text, size[0], size[1]),
}


def response(family: str, text: str, size: tuple[int, int]) -> dict[str, Any]:
    """The model wrapper's response dict for ``text`` (see the module docstring)."""
    reading = READERS[family](text, size)
    if reading == rf.REFUSED:
        return {"result": "negative", "point": [-1, -1]}
    if reading == rf.PLAIN:
        raise ValueError(f"{text!r}: read by the project's plain reader (ref_families D4), outside this reference")
    if reading == rf.ERROR:
        return {"result": "wrong_format", "point": None}
    assert not isinstance(reading, str)
    return {"result": "positive", "point": [reading[0], reading[1]]}


def eval_positive(bbox: Sequence[float], img_size: Sequence[int], resp: Mapping[str, Any]) -> str:
    x1, y1, x2, y2 = bbox[0] / img_size[0], bbox[1] / img_size[1], bbox[2] / img_size[0], bbox[3] / img_size[1]
    p = resp["point"]
    if p is None:
        return "wrong_format"
    return "correct" if x1 <= p[0] <= x2 and y1 <= p[1] <= y2 else "wrong"


def eval_negative(resp: Mapping[str, Any]) -> str:
    return {"negative": "correct", "positive": "wrong"}.get(resp["result"], "wrong_format")


def metrics_of(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``calc_metric_for_result_list``."""
    n = len(results)
    correct = sum(r["correctness"] == "correct" for r in results)
    text = [r for r in results if r.get("ui_type") == "text"]
    icon = [r for r in results if r.get("ui_type") == "icon"]
    return {"num_correct_action": correct, "num_total": n,
            "wrong_format_num": sum(r["correctness"] == "wrong_format" for r in results),
            "action_acc": correct / n if n else 0,
            "text_acc": sum(r["correctness"] == "correct" for r in text) / len(text) if text else 0,
            "text_n": len(text),
            "icon_acc": sum(r["correctness"] == "correct" for r in icon) / len(icon) if icon else 0,
            "icon_n": len(icon)}


def table(results: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """``make_combinations`` over ``keys`` then ``collect_results_to_eval``; empty combinations dropped."""
    values = [sorted({r.get(k) for r in results}, key=str) for k in keys]
    out = {}
    for combo in itertools.product(*values):
        chosen = [r for r in results if all(r.get(k) == v for k, v in zip(keys, combo, strict=True))]
        if chosen:
            out[combo] = metrics_of(chosen)
    return out


def run(files: Mapping[str, Sequence[Mapping[str, Any]]], sizes: Mapping[str, tuple[int, int]],
        texts: Mapping[tuple[str, int], str], family: str, language: str = "en") -> dict[str, Any]:
    """``eval.py`` over every file (``refusal_spatial`` with ``--gt_type negative``, the others positive):
    every table, per task and level, and each record's correctness keyed ``(task, index)``."""
    results: list[dict[str, Any]] = []
    for task, records in files.items():
        gt_type = "negative" if task == NEGATIVE_TASK else "positive"
        for i, rec in enumerate(records):
            size = sizes[rec["img_filename"]]
            resp = response(family, texts[(task, i)], size)
            correctness = eval_negative(resp) if gt_type == "negative" else eval_positive(rec["bbox"], size, resp)
            results.append({"key": (task, i), "group": rec.get("group"), "platform": rec.get("platform"),
                            "application": rec.get("application"), "instruction_style": "instruction",
                            "gt_type": gt_type, "ui_type": rec.get("ui_type"), "task_filename": task,
                            "level": "basic" if task in BASIC else "advanced", "correctness": correctness})
    return {
        "overall": metrics_of(results),
        "fine_grained": table(results, ("platform", "application", "instruction_style", "gt_type")),
        "seeclick_style": table(results, ("platform", "instruction_style", "gt_type")),
        "leaderboard_simple_style": table(results, ("group",)),
        "leaderboard_detailed_style": table(results, ("application",)),
        "per_task": table(results, ("task_filename",)),
        "per_level": table(results, ("level",)),
        "positive_only": metrics_of([r for r in results if r["gt_type"] == "positive"]),
        "correctness": {r["key"]: r["correctness"] for r in results},
    }
