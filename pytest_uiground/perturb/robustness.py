"""What a perturbation costs: each perturbed answer paired with the same model's unperturbed answer in the same run.

The gate compares each ``perturb=<spec>`` slice with the baseline (a regression against the accepted model);
this module answers the other question, the robustness of *this* model: on the samples that ran both ways,
accuracy before and after, the drop with its paired exact McNemar p-value (the gate's own
:func:`pytest_uiground.gate.stats.mcnemar_exact`), the consistency rate (of the samples right unperturbed,
the share still right perturbed) and, for point answers under a geometric perturbation, whether the answer
moved with the element: the perturbed answer mapped back through the inverse transform lands in the
original target (a model that reads coordinates in the wrong frame fails this even where a large target
forgives it). Samples a perturbation left out (target out of view) are counted, not scored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pytest_uiground.gate.stats import mcnemar_exact
from pytest_uiground.perturb.derive import PerturbedImage, matrix_for, original_id
from pytest_uiground.perturb.transforms import inverse
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import MULTI_VALUE_SEP, PERTURB_KEY, Sample
from pytest_uiground.scoring.rules import score_point

if TYPE_CHECKING:
    from pytest_uiground.gate.outcome import SuiteOutcome


@dataclass(frozen=True)
class Row:
    """One perturbation (or one perturbation within one slice): its paired figures, percentages."""

    spec: str
    n: int  # samples that ran unperturbed and perturbed
    before: float
    after: float
    broke: int  # right before, wrong after
    mended: int  # wrong before, right after
    p_value: float
    consistency: float | None  # of the right-before samples, the share right after; None when none was right
    moved: float | None = None  # share of perturbed point answers that map back into the original target
    left_out: int = 0  # original samples this perturbation could not ask (target out of view)
    slices: Mapping[str, Row] = field(default_factory=dict)

    @property
    def drop(self) -> float:
        return self.before - self.after

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "before": round(self.before, 4), "after": round(self.after, 4),
                               "drop": round(self.drop, 4), "broke": self.broke, "mended": self.mended,
                               "mcnemar_p": round(self.p_value, 6), "consistency": _r(self.consistency),
                               "moved_with_element": _r(self.moved), "left_out": self.left_out}
        if self.slices:
            out["slices"] = {k: {"n": r.n, "before": round(r.before, 4), "after": round(r.after, 4),
                                 "drop": round(r.drop, 4)} for k, r in self.slices.items()}
        return out


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def measure(samples: Sequence[Sample], results: Iterable[SampleResult], slice_keys: Sequence[str] = ()) -> list[Row]:
    """One row per perturbation that ran, in the order first met, each with a row per slice of ``slice_keys``."""
    ran = {r.id: r for r in results}
    by_id = {s.id: s for s in samples}
    pairs: dict[str, list[tuple[SampleResult, SampleResult]]] = defaultdict(list)
    for r in ran.values():
        spec = r.meta.get(PERTURB_KEY)
        base = ran.get(original_id(r.id)) if spec else None
        if spec and base is not None:
            pairs[spec].append((base, r))
    plain = [r.id for r in ran.values() if PERTURB_KEY not in r.meta]
    rows = []
    for spec in sorted(pairs):
        got = sorted(pairs[spec], key=lambda p: p[0].id)
        asked = {b.id for b, _ in got}
        moved = [_moved(by_id.get(r.id), by_id.get(b.id), r) for b, r in got]
        known = [m for m in moved if m is not None]
        row = _row(spec, got)
        by_slice: dict[str, list[tuple[SampleResult, SampleResult]]] = defaultdict(list)
        for b, r in got:
            for key in slice_keys:
                for value in dict.fromkeys(b.meta.get(key, "").split(MULTI_VALUE_SEP)) if key in b.meta else ():
                    by_slice[f"{key}={value}"].append((b, r))
        rows.append(replace(row, moved=100.0 * sum(known) / len(known) if known else None,
                            left_out=sum(1 for i in plain if i not in asked),
                            slices={k: _row(spec, v) for k, v in sorted(by_slice.items())}))
    return rows


def of_outcome(o: SuiteOutcome) -> list[Row]:
    """A suite's rows after its run, by the slices its metrics declare (none when no perturbation ran)."""
    keys = tuple(dict.fromkeys(k for m in o.loaded.config.metrics for k in m.slices if k != PERTURB_KEY))
    return measure(o.loaded.samples, o.results, keys)


def _row(spec: str, got: Sequence[tuple[SampleResult, SampleResult]]) -> Row:
    n = len(got)
    before = sum(b.right for b, _ in got)
    after = sum(r.right for _, r in got)
    kept = sum(b.right and r.right for b, r in got)
    broke = sum(b.right and not r.right for b, r in got)
    mended = sum(r.right and not b.right for b, r in got)
    return Row(spec=spec, n=n, before=100.0 * before / n, after=100.0 * after / n, broke=broke, mended=mended,
               p_value=mcnemar_exact(broke, mended), consistency=100.0 * kept / before if before else None)


def _moved(perturbed: Sample | None, original: Sample | None, r: SampleResult) -> bool | None:
    """Whether the perturbed point answer, mapped back, lands in the original target (None: not a point
    answer, not a geometric perturbation, or the samples are unknown)."""
    if perturbed is None or original is None or r.prediction is None or r.prediction.point is None:
        return None
    image = perturbed.image
    if not isinstance(image, PerturbedImage) or image.perturbation is None or not image.perturbation.geometric:
        return None
    if original.task != "point" or original.target.refusal:
        return None
    try:
        m = matrix_for(original, image.perturbation)
    except Exception:  # an unreadable image: the sample's own error says so
        return None
    x, y = inverse(m, *r.prediction.point)
    return bool(score_point(original, Prediction(point=Point(x, y))).correct)
