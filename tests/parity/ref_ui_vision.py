"""An independent re-implementation of UI-Vision's element-grounding scoring, for the parity tests.

Source: ``uivision/UI-Vision`` @2b79355f962a2db1402ce0ad3d261aa9cb74b855, read and written here from
its rules (no code copied): ``eval/grounding/eval_uivision.py`` (``eval_sample_positive_gt``,
``calc_metric_for_result_list_simple``, ``process_element_eval``: one run per setting file),
``eval/grounding/models/uground.py: UGroundV1Model.ground_only_positive`` (the reader),
``README.md`` (Final Avg = the mean of the three settings) and ``mapdict_cat2platform.json`` (the
paper's domain table, computed by no published code). Nothing here imports ``pytest_uiground``.

The reader ``eval``s the model's text; :func:`uground_v1_point` uses ``ast.literal_eval``, which gives
the same result on every literal (the parity outputs are literals or not Python at all); where
``eval`` would differ (arithmetic) the deviation test states the reference's result by hand.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

SETTINGS = ("basic", "functional", "spatial")


def uground_v1_point(text: str) -> list[float] | None:
    try:
        x, y = ast.literal_eval(text.strip())
        return [x / 1000, y / 1000]
    except Exception:
        return None


def correctness(sample: Mapping[str, Any], point: Sequence[float] | None) -> str:
    b = list(sample["bbox"])
    if b[0] > b[2]:
        b[0], b[2] = b[2], b[0]
    if b[1] > b[3]:
        b[1], b[3] = b[3], b[1]
    w, h = sample["image_size"]
    b = [b[0] / w, b[1] / h, b[2] / w, b[3] / h]
    if point is None:
        return "wrong_format"
    return "correct" if b[0] <= point[0] <= b[2] and b[1] <= point[1] <= b[3] else "wrong"


def run_setting(samples: Sequence[Mapping[str, Any]], texts: Sequence[str]) -> dict[str, Any]:
    """One script run over one setting file: ``overall_simple`` and the per-sample details."""
    details = [{"platform": s["platform"], "correctness": correctness(s, uground_v1_point(t))}
               for s, t in zip(samples, texts, strict=True)]
    n = len(details)
    right = sum(d["correctness"] == "correct" for d in details)
    return {"overall_simple": {"num_correct_action": right, "num_total": n,
                               "wrong_format_num": sum(d["correctness"] == "wrong_format" for d in details),
                               "action_acc": right / n if n else 0},
            "details": details}


def final_avg(runs: Mapping[str, Mapping[str, Any]]) -> float:
    return sum(runs[s]["overall_simple"]["action_acc"] for s in SETTINGS) / len(SETTINGS)


def domain_table(runs: Mapping[str, Mapping[str, Any]], cat2platform: Mapping[str, Sequence[str]]
                 ) -> dict[str, dict[str, float]]:
    """The paper's setting x domain accuracy, from the script's per-sample details."""
    out: dict[str, dict[str, float]] = {}
    for setting, run in runs.items():
        for domain, apps in cat2platform.items():
            rows = [d for d in run["details"] if d["platform"] in apps]
            if rows:
                out.setdefault(setting, {})[domain] = sum(d["correctness"] == "correct" for d in rows) / len(rows)
    return out
