"""Score: the judgement of one prediction against one sample, and the task-kind rules.

Every scorer returns a value in 0..100 (100 for a correct binary answer) so that
metrics can average any task the same way, plus the binary ``correct`` where the task
has one (McNemar and Wilson intervals need it). What metrics and baselines may read is
in ``components`` (named booleans or numbers: ``point_hit``, ``iou``, ...), each with
its own format-error flag; everything else a scorer wants to show goes in ``notes``,
which nothing computes with. The rules here are the built-in ``task`` scorer, chosen
by task kind; a suite may name another scorer (see :mod:`pytest_uiground.scoring.scorer`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_uiground.record.geometry import iou
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

Component = bool | float


@dataclass(slots=True)
class Score:
    """One sample's judgement.

    ``value``: 0..100. ``correct``: the binary outcome, None for graded scores.
    ``format_error``: the output could not be read (scored wrong and counted).
    ``components``: named parts that metrics (``score = "point_hit"``) and baselines read.
    ``component_format_errors``: per component, whether *that* part could not be read
    (a verdict row whose point parsed but whose verdict did not); missing means
    ``format_error``. ``notes``: diagnostics for people (expected/got, judge replies).
    """

    value: float
    correct: bool | None
    format_error: bool = False
    components: dict[str, Component] = field(default_factory=dict)
    component_format_errors: dict[str, bool] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def component(self, name: str) -> Component | None:
        return self.components.get(name)

    def format_error_of(self, name: str | None) -> bool:
        if name is None:
            return self.format_error
        return self.component_format_errors.get(name, self.format_error)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "correct": self.correct, "format_error": self.format_error}
        if self.components:
            out["components"] = dict(self.components)
        if self.component_format_errors:
            out["component_format_errors"] = dict(self.component_format_errors)
        if self.notes:
            out["notes"] = dict(self.notes)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Score:
        return cls(value=float(data.get("value") or 0.0), correct=data.get("correct"),
                   format_error=bool(data.get("format_error", False)),
                   components=dict(data.get("components") or {}),
                   component_format_errors=dict(data.get("component_format_errors") or {}),
                   notes=dict(data.get("notes") or {}))

    @classmethod
    def failed(cls) -> Score:
        """What an errored sample counts as: wrong, value 0."""
        return cls(0.0, False)


def _binary(ok: bool, pred: Prediction, components: dict[str, Component] | None = None,
            format_errors: dict[str, bool] | None = None, **notes: Any) -> Score:
    return Score(100.0 if ok else 0.0, ok, pred.format_error, components or {}, format_errors or {}, notes)


def score_point(sample: Sample, pred: Prediction) -> Score:
    """Hit when the predicted point lies in the target box, edges inclusive.

    No point (the model abstained or its output could not be parsed) is a miss and
    stays in the denominator, as in every reference scorer. ``point_hit`` is the
    component metrics read (see :func:`components`).
    """
    box = sample.target.box
    if box is None:
        raise ValueError(f"sample {sample.id!r}: point task without a target box")
    if pred.point is None:
        # the parser's reason reaches samples.jsonl and the report, not just "no point"
        reason = "refused: the model answered that the element is not there" if pred.refused else (
            f"no point: {pred.note}" if pred.note else "no point")
        return _binary(False, pred, {"point_hit": False}, {"point_hit": pred.format_error}, reason=reason)
    hit = box.contains(pred.point)
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
