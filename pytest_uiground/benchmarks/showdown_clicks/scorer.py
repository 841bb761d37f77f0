"""Showdown-clicks' scorer: the click in whole pixels inside the pixel box, edges inclusive.

Why its own rule: ``generalagents/showdown`` scores ``is_point_in_bbox(pred_x, pred_y, x1, y1, x2, y2)``
(``clicks/src/clicks/evaluate/utils.py``) on integers: ``EvaluationResult.pred_x`` is an ``int`` and
the box is the CSV's whole pixels, so a click at x = 120.7 with ``x2 = 120`` is a hit there and a
miss for the normalized comparison of :func:`~pytest_uiground.scoring.rules.score_point`. The
harness's clients turn a model's answer into that integer in their own way (the Molmo and
OmniParser clients truncate with ``int(...)``, the Qwen client rounds); here the point becomes the
pixel it falls in, ``int(x * width)`` (truncation, as ``int`` does), a project choice stated in
``suites/showdown_clicks/README.md``. No point, or a refusal, is a miss (``is_point_in_bbox`` of
``None`` is False), kept in the denominator.
"""

from __future__ import annotations

from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score
from pytest_uiground.scoring.rules import score_point


def pixel_box(sample: Sample) -> tuple[int, int, int, int] | None:
    """The CSV's ``x1, y1, x2, y2`` back from the normalized target (exact: the loader divided whole pixels)."""
    box, size = sample.target.box, sample.image.size
    if box is None or size is None:
        return None
    w, h = size
    return round(box.x0 * w), round(box.y0 * h), round(box.x1 * w), round(box.y1 * h)


def score(sample: Sample, prediction: Prediction) -> Score:
    """``is_point_in_bbox`` on the click's pixel; anything without a point goes to ``score_point`` (a miss)."""
    box = pixel_box(sample)
    p = prediction.point
    if box is None or p is None or prediction.refused:
        return score_point(sample, prediction)
    assert sample.image.size is not None
    w, h = sample.image.size
    px, py = int(p.x * w), int(p.y * h)
    x1, y1, x2, y2 = box
    hit = x1 <= px <= x2 and y1 <= py <= y2
    notes: dict[str, object] = {"click_px": [px, py]}
    if prediction.note:
        notes["note"] = prediction.note
    return Score(100.0 if hit else 0.0, hit, prediction.format_error, {"point_hit": hit}, {"point_hit": False}, notes)
