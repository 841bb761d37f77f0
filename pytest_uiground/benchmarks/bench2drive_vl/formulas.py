"""Bench2Drive-VL's rule-based scores, as the reference's evaluation code computes them.

Reference: Thinklab-SJTU/Bench2Drive-VL @5896a851, ``B2DVL_Adapter/evaluator.py``
(``important_obj_eval``, ``listed_eval``, ``compute_weighted_f1_score``, ``extract_keys``,
``spd_dir_key_eval_43/_50``) and ``math_utils.py`` (``ndcg``, ``dcg``). These functions are
pure: the judge has already turned the answer into lists (the object names it mentions,
the control keys, one score per object) and this module turns the lists into 0..100.

Lists are taken as the judge gives them: every mention counts, so an object named twice
adds to the true positives (and to the DCG) twice, as in the reference.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ORDER_RATIO = 5.0
EXTRA_RATIO = 2.0
HEAVY_WEIGHT = 3.0  # is_role or is_dangerous

RANKED_OBJECTS_QID = 19
#: evaluator.py: evaluate_question sends these to listed_eval (F1 x per-object score).
MULTI_OBJECT_QIDS: frozenset[int] = frozenset({24, 25, 27, 28, 29, 46, 47})
#: listed_eval's FP_WEIGHT: naming an object that is not there weighs 1.5 here, else 0.25.
HEAVY_FP_QIDS: frozenset[int] = frozenset({28, 29, 46, 47})
HEAVY_FP_WEIGHT = 1.5
LIGHT_FP_WEIGHT = 0.25
TRAJECTORY_QID = 42
JUDGED_KEYS_QID = 43
REGEX_KEYS_QID = 50
BRAKING_QID = 8
SPEED_LIMIT_QID = 7
#: future_acceptable_eval: the system prompt without the example.
NO_EXAMPLE_QIDS: frozenset[int] = frozenset({2, 3, 4, 15})
LANE_COUNT_QIDS: frozenset[int] = frozenset({30, 31})
LOW_SPEED_MPS = 0.5
DEFAULT_EGO_SPEED = 4.0  # brake_eval, when the annotation file is missing
SCORE_DIGITS = 2  # evaluator.py: SCORE_ROUND_DIGIT

SPEED_KEYS: tuple[str, ...] = ("KEEP", "ACCELERATE", "DECELERATE", "STOP")
DIRECTION_KEYS: tuple[str, ...] = (
    "FOLLOW_LANE", "CHANGE_LANE_LEFT", "CHANGE_LANE_RIGHT", "DEVIATE_LEFT", "DEVIATE_RIGHT", "GO_STRAIGHT",
    "TURN_LEFT", "TURN_RIGHT",
)
#: evaluator.py: extract_keys: whole words, case-sensitive (``keep`` is not a key).
KEY_WORD = re.compile(r"\b(" + "|".join(sorted(DIRECTION_KEYS + SPEED_KEYS, key=len, reverse=True)) + r")\b")

#: speed_penalty[ground truth][predicted]; a pair not listed (and the same key) is 1.0.
SPEED_PENALTY: Mapping[str, Mapping[str, float]] = {
    "KEEP": {"ACCELERATE": 1.2, "DECELERATE": 1.1, "STOP": 1.0},
    "ACCELERATE": {"KEEP": 1.0, "DECELERATE": 1.0, "STOP": 1.0},
    "DECELERATE": {"KEEP": 1.0, "ACCELERATE": 0.8, "STOP": 1.0},
    "STOP": {"KEEP": 0.5, "ACCELERATE": 0.25, "DECELERATE": 1.0},
}


def f1_of(tp: float, fp: float, fn: float) -> float:
    """F1 from summed weights, each ratio 0 when its denominator is 0 (as the reference)."""
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(rank + 2) for rank, g in enumerate(gains))


def _heavy(info: Any) -> bool:
    return isinstance(info, Mapping) and bool(info.get("is_role") or info.get("is_dangerous"))


@dataclass(frozen=True, slots=True)
class RankedScore:
    score: float
    ndcg: float
    f1: float
    weights: dict[str, float]
    extra_weight: float


def q19_weights(gt: Mapping[str, str], infos: Mapping[str, Any]) -> tuple[dict[str, float], float]:
    """Name → weight for the ground truth's objects, and the weight of an extra object.

    Base 3 when the tag's ``key_object_infos`` entry is a role or dangerous object (1
    otherwise, also for a tag not in ``key_object_infos``), times the position weight
    N·r/(r−1) − i (r = 5), normalised by max(sum, 1). An extra object weighs half the
    smallest normalised weight (with no ground-truth object the reference's start value
    100 stands in for the smallest).
    """
    n = len(gt)
    raw = {name: (HEAVY_WEIGHT if _heavy(infos.get(tag)) else 1.0) * (n * ORDER_RATIO / (ORDER_RATIO - 1) - i)
           for i, (name, tag) in enumerate(gt.items())}
    total = max(sum(raw.values()), 1.0)
    smallest = min([100.0, *raw.values()])
    return {k: v / total for k, v in raw.items()}, smallest / total / EXTRA_RATIO


def ranked_objects_score(gt: Mapping[str, str], infos: Mapping[str, Any], named: Sequence[str]) -> RankedScore:
    """Q19: min(100·NDCG, 100) · F1.

    DCG: the weights of the answer's ground-truth mentions in the answer's order
    (repeats included). Ideal DCG: the weights of those same objects, each once, in the
    ground truth's order (math_utils.py: ndcg); so NDCG can exceed 1 (a heavier object
    named first, or an object named twice), hence the cap. F1: every mention adds its
    weight to TP (an extra adds the extra weight to FP), unmentioned GT objects to FN.
    No ground-truth object gives NDCG 0, so the score is 0.
    """
    weights, extra_w = q19_weights(gt, infos)
    mentioned = [o for o in named if o in weights]
    ideal = dcg([weights[o] for o in gt if o in mentioned])
    ndcg = dcg([weights[o] for o in mentioned]) / ideal if ideal > 0 else 0.0
    tp = sum(weights[o] for o in mentioned)
    fp = extra_w * sum(1 for o in named if o not in weights)
    fn = sum(w for o, w in weights.items() if o not in named)
    f1 = f1_of(tp, fp, fn)
    return RankedScore(min(ndcg * 100.0, 100.0) * f1, ndcg, f1, weights, extra_w)


@dataclass(frozen=True, slots=True)
class MultiObjectScore:
    score: float
    f1: float
    object_score: float
    fp_weight: float


def false_positive_weight(qid: int) -> float:
    return HEAVY_FP_WEIGHT if qid in HEAVY_FP_QIDS else LIGHT_FP_WEIGHT


def listed_weights(object_tags: Sequence[str], infos: Mapping[str, Any]) -> dict[str, float]:
    """listed_eval: tag → 3 for a role or dangerous object, else 1 (not normalised)."""
    return {tag: HEAVY_WEIGHT if _heavy(infos.get(tag)) else 1.0 for tag in object_tags}


def multi_object_score(qid: int, gt: Mapping[str, str], named: Sequence[str], weights: Mapping[str, float],
                       object_scores: Mapping[str, float]) -> MultiObjectScore:
    """Questions 24, 25, 27, 28, 29, 46, 47: min(F1 · object score, 100).

    ``gt`` is name → tag parsed from the ground-truth text; ``weights`` and
    ``object_scores`` (the judge's score per tag, as given: not clamped) cover the
    question's ``object_tags``. A mention of a GT object whose tag is an object_tag adds
    its weight to TP (every mention); a mention outside the GT list adds the question's
    false-positive weight to FP; an unmentioned GT object that is an object_tag adds its
    weight to FN. Object score: Σ s·w / max(1, Σ w) over GT mentions, where a GT object
    that is not an object_tag weighs the false-positive weight in the denominator only.
    """
    fp_w = false_positive_weight(qid)
    hits = [gt[o] for o in named if o in gt]
    tp = sum(weights[t] for t in hits if t in weights)
    fp = fp_w * sum(1 for o in named if o not in gt)
    fn = sum(weights[t] for o, t in gt.items() if o not in named and t in weights)
    f1 = f1_of(tp, fp, fn)
    den = max(1.0, sum(weights.get(t, fp_w) for t in hits))
    obj = sum(object_scores[t] * weights[t] for t in hits if t in weights and t in object_scores) / den
    return MultiObjectScore(min(f1 * obj, 100.0), f1, obj, fp_w)


@dataclass(frozen=True, slots=True)
class ControlScore:
    score: float
    f1: float
    penalty: float
    gt: tuple[str, ...]
    predicted: tuple[str, ...]


def extract_keys(text: str) -> list[str]:
    """Q50: every key word in the text, once each (direction keys first, then speed keys)."""
    found = set(KEY_WORD.findall(text))
    return [k for k in DIRECTION_KEYS + SPEED_KEYS if k in found]


def control_keys_score(gt: Sequence[str], predicted: Sequence[str]) -> ControlScore:
    """Q43/Q50: 100 · min(1, F1(key sets) · speed penalty).

    A predicted FOLLOW_LANE counts as GO_STRAIGHT when the ground truth has GO_STRAIGHT.
    Both sets empty scores 0. The penalty multiplies ``SPEED_PENALTY[g][p]`` over every
    ground-truth speed key g and every predicted label p, as listed (a label the judge
    repeats counts again). Labels are compared as given: no case folding.
    """
    pred = ["GO_STRAIGHT" if p == "FOLLOW_LANE" else p for p in predicted] if "GO_STRAIGHT" in gt else list(predicted)
    gs, ps = set(gt), set(pred)
    f1 = f1_of(float(len(gs & ps)), float(len(ps - gs)), float(len(gs - ps)))
    penalty = 1.0
    for g in gt:
        table = SPEED_PENALTY.get(g)
        if table is not None:
            for p in pred:
                penalty *= table.get(p, 1.0)
    return ControlScore(100.0 * min(1.0, f1 * penalty), f1, penalty, tuple(gt), tuple(pred))


def q43_score(gt: Sequence[str], predicted: Sequence[str]) -> tuple[float, list[ControlScore]]:
    """spd_dir_key_eval_43: when the ground truth changes lane to a side and the answer
    says only CHANGE_LANE, the mean of the score as is and with the ground truth's side."""
    first = control_keys_score(gt, predicted)
    side = next((k for k in ("CHANGE_LANE_LEFT", "CHANGE_LANE_RIGHT") if k in gt), None)
    if side is None or "CHANGE_LANE" not in predicted:
        return first.score, [first]
    second = control_keys_score(gt, [side if p == "CHANGE_LANE" else p for p in predicted])
    return (first.score + second.score) / 2.0, [first, second]
