"""OSWorld-G's scorer: the point rules plus the benchmark's own refusal rule, for every family.

The official ``GroundingEval._eval`` (``xlang-ai/OSWorld-G evaluation/eval.py``, see
``suites/osworld_g/README.md``) scores a refusal sample right when the click's coordinates are
**both negative**, whatever produced them. Families read their own refusal forms (UI-Venus
``[-1, -1]``, a ``terminate`` call) into ``Prediction.refused``; a family that answers with a
plain negative point keeps it as a point (an out-of-range point stays a point), so the benchmark's
rule is applied here: such a point is a refusal, right on a refusal sample and a miss elsewhere,
as in the official code. A point with one negative coordinate stays a point (a miss).
"""

from __future__ import annotations

from dataclasses import replace

from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample
from pytest_uiground.record.score import Score
from pytest_uiground.scoring.rules import score_point


def score(sample: Sample, prediction: Prediction) -> Score:
    """:func:`~pytest_uiground.scoring.rules.score_point` after OSWorld-G's negative-click rule."""
    p = prediction.point
    if p is not None and not prediction.refused and p.x < 0 and p.y < 0:
        prediction = replace(prediction, point=None, refused=True)
    return score_point(sample, prediction)
