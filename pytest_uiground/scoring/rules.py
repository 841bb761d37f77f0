"""The built-in ``task`` scorer: one rule per task kind, each returning a :class:`Score`.

Every rule returns 0..100 (100 for a correct binary answer) and the binary ``correct`` where
the task has one; what metrics and baselines read goes in the score's ``components``. A suite may
name another scorer (see :mod:`pytest_uiground.scoring.scorer`); a benchmark with rules of its
own keeps them in its folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pytest_uiground.record.geometry import iou, point_in_polygon, to_frame
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Component, Score


def _binary(ok: bool, pred: Prediction, components: dict[str, Component] | None = None,
            format_errors: dict[str, bool] | None = None, **notes: Any) -> Score:
    return Score(100.0 if ok else 0.0, ok, pred.format_error, components or {}, format_errors or {}, notes)


def score_point(sample: Sample, pred: Prediction) -> Score:
    """Hit when the predicted point lies in the target, edges inclusive for boxes.

    The target is a box, a pixel polygon (even-odd ray casting in its own frame, see
    :func:`~pytest_uiground.record.geometry.point_in_polygon`) or a refusal. An explicit
    refusal (``pred.refused``) is right on a refusal sample and a plain miss elsewhere,
    never a format error: the model answered, and "not there" was wrong. Any point on a
    refusal sample is a miss. No point (the output could not be parsed) is a miss and
    stays in the denominator, as in every reference scorer, with the parser's reason. A
    point beyond the image stays a point (a miss on any target inside it) with the parser's
    note. ``point_hit`` is the component metrics read; ``refused`` records the refusal (on a
    refusal sample always, true or false, so reports know the suite asks for refusals).
    """
    t = sample.target
    if t.box is None and t.polygon is None and not t.refusal:
        raise ValueError(f"sample {sample.id!r}: point task without a target box, polygon or refusal")
    if t.refusal:
        reason = {} if pred.refused else {"reason": "the element is absent: only a refusal is right"}
        return _binary(pred.refused, pred, {"point_hit": pred.refused, "refused": pred.refused},
                       {"point_hit": pred.format_error and not pred.refused}, **reason)
    if pred.refused:
        return _binary(False, pred, {"point_hit": False, "refused": True}, {"point_hit": False},
                       reason="refused, but the element is on the screen")
    if pred.point is None:
        # the parser's reason reaches samples.jsonl and the report, not just "no point"
        why = f"no point: {pred.note}" if pred.note else "no point"
        return _binary(False, pred, {"point_hit": False}, {"point_hit": pred.format_error}, reason=why)
    if t.polygon is not None and t.frame is not None:
        hit = point_in_polygon(to_frame(pred.point.x, t.frame[0]), to_frame(pred.point.y, t.frame[1]), t.polygon)
    else:
        assert t.box is not None
        hit = t.box.contains(pred.point)
    notes = {"note": pred.note} if pred.note else {}  # e.g. a point beyond the image: a miss, and why
    return _binary(hit, pred, {"point_hit": hit}, {"point_hit": False}, **notes)


def score_verdict(sample: Sample, pred: Prediction) -> Score:
    """Verdict match, plus the pointing sub-task when the sample has a box.

    An unreadable verdict is wrong (the card's rule). With a target box the sample is
    right only when both the verdict and the point are right; metrics read either
    part through the ``verdict_correct`` and ``point_hit`` components.
    """
    want = (sample.target.verdict or "").lower()
    got = (pred.verdict or "").lower()
    ok = bool(got) and got == want
    components: dict[str, Component] = {"verdict_correct": ok}
    format_errors = {"verdict_correct": not got}
    box = sample.target.box
    if box is not None:
        hit = pred.point is not None and box.contains(pred.point)
        components["point_hit"] = hit
        format_errors["point_hit"] = pred.point is None
        ok = ok and hit
    return _binary(ok, pred, components, format_errors, expected=want, got=got or None)


def score_option(sample: Sample, pred: Prediction) -> Score:
    want = (sample.target.option or "").upper()
    got = (pred.option or "").upper()
    return _binary(bool(got) and got == want, pred, expected=want, got=got or None)


_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text.strip().lower()).strip(" .")


def score_answer(sample: Sample, pred: Prediction) -> Score:
    """Normalized exact match; judged suites replace this with their judge."""
    want = _norm(sample.target.answer or "")
    got = _norm(pred.answer or "")
    return _binary(bool(got) and got == want, pred)


#: A detected box matches the element when their IoU reaches this (the usual detection threshold).
IOU_MATCH = 0.5


def score_detect(sample: Sample, pred: Prediction) -> Score:
    """Element detection at a click: did the model find *this* element, and how well?

    A returned box matches when IoU >= :data:`IOU_MATCH`; a model that returns only a
    point (a grounder) matches when the point lies in the element's box. Anything
    returned that does not match is a false positive: the model found *an* element,
    not the one clicked (OpenAdapt's harness counts any returned box as detected).
    Components: ``detected`` (the value), ``found``, ``false_positive``, ``boxed`` (a
    box came back), ``iou`` (x100) and ``iou_over_50`` for boxes, and ``attempts``
    (model calls a search strategy made).
    """
    box = sample.target.box
    if box is None:
        raise ValueError(f"sample {sample.id!r}: detect task without a target box")
    c: dict[str, Component] = {"attempts": pred.attempts or 1}
    if pred.box is not None:
        iou_pct = 100.0 * iou(box, pred.box)
        hit = iou_pct >= 100.0 * IOU_MATCH
        c.update(found=True, boxed=True, iou=round(iou_pct, 4), iou_over_50=hit)
    elif pred.point is not None:
        hit = box.contains(pred.point)
        c.update(found=True, boxed=False)
    else:
        hit = False
        c.update(found=False, boxed=False)
    c.update(detected=hit, false_positive=bool(c["found"]) and not hit)
    return _binary(hit, pred, c, {"detected": pred.format_error})


def score_vqa_unjudged(sample: Sample, pred: Prediction) -> Score:
    raise ValueError(f"sample {sample.id!r}: a free-text (vqa) answer needs a judged scorer; name one in the "
                     "suite's [scorer] table (e.g. name = \"bench2drive_vl\")")


SCORERS: dict[str, Callable[[Sample, Prediction], Score]] = {
    "point": score_point,
    "verdict": score_verdict,
    "option": score_option,
    "answer": score_answer,
    "detect": score_detect,
    "vqa": score_vqa_unjudged,
}


def score(sample: Sample, pred: Prediction) -> Score:
    return SCORERS[sample.task](sample, pred)
