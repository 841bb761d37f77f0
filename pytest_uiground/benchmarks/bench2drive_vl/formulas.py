"""Bench2Drive-VL's rule-based scores, exactly as its evaluation code computes them.

These functions are pure: the judge has already turned the model's free text into
lists (the objects it names, the control keys it implies, one score per object), and
this module turns those lists into the 0..100 score. Where the project's documentation
and its code disagree, the code wins; each such place is marked "code:" below and
listed in ``suites/bench2drive_vl/README.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ORDER_RATIO = 5.0
EXTRA_RATIO = 2.0

#: Questions that list several objects and then judge each one (F1 x object-score).
MULTI_OBJECT_QIDS: frozenset[int] = frozenset({24, 25, 27, 28, 29, 46, 47})
#: Questions where naming an extra object misleads the driver: a heavier false positive.
HEAVY_FP_QIDS: frozenset[int] = frozenset({28, 29, 46, 47})
HEAVY_FP_WEIGHT = 1.5
LIGHT_FP_WEIGHT = 0.25
RANKED_OBJECTS_QID = 19
CONTROL_KEY_QIDS: frozenset[int] = frozenset({43, 50})
BRAKING_QID = 8
#: code: the speed-limit guidance (overestimating is worse) is attached to Q7; the docs say Q15.
SPEED_LIMIT_QID = 7
STOPPED_SPEED_MPS = 0.5

SPEED_KEYS: tuple[str, ...] = ("KEEP", "ACCELERATE", "DECELERATE", "STOP")
DIRECTION_KEYS: tuple[str, ...] = (
    "FOLLOW_LANE", "GO_STRAIGHT", "TURN_LEFT", "TURN_RIGHT", "CHANGE_LANE_LEFT", "CHANGE_LANE_RIGHT",
)
CONTROL_KEYS: tuple[str, ...] = SPEED_KEYS + DIRECTION_KEYS

#: speed_penalty[ground truth][predicted]; a pair not listed (and the same key) is 1.0.
SPEED_PENALTY: Mapping[str, Mapping[str, float]] = {
    "KEEP": {"ACCELERATE": 1.2, "DECELERATE": 1.1, "STOP": 1.0},
    "ACCELERATE": {"KEEP": 1.0, "DECELERATE": 1.0, "STOP": 1.0},
    "DECELERATE": {"KEEP": 1.0, "ACCELERATE": 0.8, "STOP": 1.0},
    "STOP": {"KEEP": 0.5, "ACCELERATE": 0.25, "DECELERATE": 1.0},
}


@dataclass(frozen=True, slots=True)
class GtObject:
    """One ground-truth object of a question, in the ground truth's order."""

    tag: str
    is_role: bool = False
    is_dangerous: bool = False

    @property
    def base_weight(self) -> float:
        return 3.0 if (self.is_role or self.is_dangerous) else 1.0


@dataclass(frozen=True, slots=True)
class Matching:
    """The answer's objects against the ground truth: matched GT indices in the answer's
    order (first mention counts), and how many named objects are not in the ground truth."""

    matched: tuple[int, ...]
    extras: int


def match_objects(gt: Sequence[GtObject], named: Sequence[str]) -> Matching:
    """Map the judge's list of named tags onto the ground truth.

    A tag named twice counts once (its first position); each distinct name that is not
    a ground-truth tag is one extra (hallucinated) object.
    """
    index = {o.tag: i for i, o in enumerate(gt)}
    matched: list[int] = []
    extra: list[str] = []
    for name in named:
        i = index.get(name)
        if i is None:
            if name not in extra:
                extra.append(name)
        elif i not in matched:
            matched.append(i)
    return Matching(tuple(matched), len(extra))


def weighted_f1(tp: float, fp: float, fn: float) -> float:
    """F1 from summed weights; 0 when nothing was found."""
    if tp <= 0:
        return 0.0
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True, slots=True)
class RankedScore:
    score: float
    ndcg: float
    ndcg_uncapped: float
    f1: float
    weights: tuple[float, ...]
    extra_weight: float


def q19_weights(gt: Sequence[GtObject]) -> tuple[float, ...]:
    """w_i = b_i * p_i with p_i = N*r/(r-1) - i, normalized to sum 1."""
    n = len(gt)
    raw = [o.base_weight * (n * ORDER_RATIO / (ORDER_RATIO - 1) - i) for i, o in enumerate(gt)]
    total = sum(raw)
    return tuple(w / total for w in raw)


def ranked_objects_score(gt: Sequence[GtObject], named: Sequence[str]) -> RankedScore:
    """Q19: 100 * NDCG * weighted F1 over the ranked important objects.

    code: extra objects weigh min(w) / EXTRA_RATIO, the smallest *final* weight (the
    docs say the smallest position weight). code: the ideal DCG sums the ground
    truth's first k weights in the ground truth's order (k = matched objects), not the
    k largest weights, so naming a heavier, lower-ranked object can push NDCG above 1;
    it is capped at 1. DCG runs over the matched objects in the answer's order, with
    extra objects taking no position.
    """
    if not gt:
        # Not defined by the reference (min() of no weights): nothing to find, so an
        # answer naming nothing is right and any named object is wrong.
        ok = not named
        return RankedScore(100.0 if ok else 0.0, float(ok), float(ok), float(ok), (), 0.0)
    w = q19_weights(gt)
    extra_w = min(w) / EXTRA_RATIO
    m = match_objects(gt, named)
    tp = sum(w[i] for i in m.matched)
    fn = sum(w[i] for i in range(len(gt)) if i not in m.matched)
    f1 = weighted_f1(tp, m.extras * extra_w, fn)
    if not m.matched:
        return RankedScore(0.0, 0.0, 0.0, f1, w, extra_w)
    dcg = sum(w[i] / math.log2(k + 2) for k, i in enumerate(m.matched))
    idcg = sum(w[k] / math.log2(k + 2) for k in range(len(m.matched)))
    raw_ndcg = dcg / idcg
    ndcg = min(1.0, raw_ndcg)
    return RankedScore(100.0 * ndcg * f1, ndcg, raw_ndcg, f1, w, extra_w)


@dataclass(frozen=True, slots=True)
class MultiObjectScore:
    score: float
    f1: float
    object_score: float
    fp_weight: float


def false_positive_weight(qid: int) -> float:
    return HEAVY_FP_WEIGHT if qid in HEAVY_FP_QIDS else LIGHT_FP_WEIGHT


def multi_object_score(qid: int, gt: Sequence[GtObject], named: Sequence[str],
                       object_scores: Mapping[str, float]) -> MultiObjectScore:
    """Questions 24, 25, 27, 28, 29, 46, 47: weighted F1 x object-score.

    F1 weighs each ground-truth object by its base weight (3 for role or dangerous,
    else 1) and each extra object by the question's false-positive weight.
    ``object_scores`` holds the judge's 0..100 score for each matched tag;
    object-score = sum(s_i * b_i) / sum(b_i) over the matched objects.
    """
    fp_w = false_positive_weight(qid)
    m = match_objects(gt, named)
    tp = sum(gt[i].base_weight for i in m.matched)
    fn = sum(o.base_weight for i, o in enumerate(gt) if i not in m.matched)
    f1 = weighted_f1(tp, m.extras * fp_w, fn)
    if not m.matched:
        return MultiObjectScore(0.0, f1, 0.0, fp_w)
    den = sum(gt[i].base_weight for i in m.matched)
    obj = sum(clamp_score(object_scores[gt[i].tag]) * gt[i].base_weight for i in m.matched) / den
    return MultiObjectScore(f1 * obj, f1, obj, fp_w)


@dataclass(frozen=True, slots=True)
class ControlScore:
    score: float
    f1: float
    penalty: float
    predicted: tuple[str, ...]


def normalize_keys(keys: Sequence[str]) -> list[str]:
    """Upper-case, spaces to underscores, unknown words dropped, order kept, no repeats."""
    out: list[str] = []
    for k in keys:
        key = "_".join(str(k).strip().upper().replace("-", " ").split())
        if key in CONTROL_KEYS and key not in out:
            out.append(key)
    return out


def control_keys_score(gt_keys: Sequence[str], predicted_keys: Sequence[str]) -> ControlScore:
    """Q43/Q50: 100 * min(1, F1(key sets) * speed penalty).

    A predicted FOLLOW_LANE counts as GO_STRAIGHT when the ground truth has
    GO_STRAIGHT. The penalty is the product of ``SPEED_PENALTY[gt][pred]`` over the
    ground truth's and the prediction's speed keys (1.0 for the same key).
    """
    gt = set(normalize_keys(gt_keys))
    pred = normalize_keys(predicted_keys)
    if "FOLLOW_LANE" in pred and "GO_STRAIGHT" in gt:
        pred = [("GO_STRAIGHT" if k == "FOLLOW_LANE" else k) for k in pred]
    ps = set(pred)
    if not gt and not ps:
        f1 = 1.0
    else:
        tp = len(gt & ps)
        f1 = weighted_f1(float(tp), float(len(ps - gt)), float(len(gt - ps)))
    penalty = 1.0
    for g in (k for k in SPEED_KEYS if k in gt):
        for p in (k for k in SPEED_KEYS if k in ps):
            if g != p:
                penalty *= SPEED_PENALTY[g].get(p, 1.0)
    return ControlScore(100.0 * min(1.0, f1 * penalty), f1, penalty, tuple(sorted(ps)))


def clamp_score(value: float) -> float:
    """A judge's score held to 0..100 (a judge that says 105 means 100)."""
    return max(0.0, min(100.0, float(value)))
