"""The robustness measure pairs each perturbed answer with the same model's unperturbed one
(pytest_uiground.perturb.robustness), and the report draws it (pytest_uiground.report.robustness);
the gate keeps a perturbed sample out of the headline and the other slices (gate.metrics)."""

from __future__ import annotations

from PIL import Image

from pytest_uiground.gate.metrics import compute, slice_labels
from pytest_uiground.perturb.derive import derive
from pytest_uiground.perturb.robustness import measure
from pytest_uiground.perturb.transforms import parse_list
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import PERTURB_KEY, Sample, Target
from pytest_uiground.report import robustness as report
from pytest_uiground.scoring.rules import score_point
from pytest_uiground.suite.config import MetricSpec


def _samples() -> list[Sample]:
    img = Image.new("RGB", (400, 300), (240, 240, 240))
    ref = ImageRef(key="screen", source=lambda: img, size=(400, 300))
    return [Sample(id=f"s{i}", image=ref, instruction="x", task="point",
                   target=Target(box=Box(0.1 * i, 0.4, 0.1 * i + 0.08, 0.5)),
                   meta={"theme": "light" if i < 3 else "dark"})
            for i in range(6)]


def _result(s: Sample, point: Point) -> SampleResult:
    pred = Prediction(point=point)
    return SampleResult(suite="t", id=s.id, task="point", meta=dict(s.meta), score=score_point(s, pred),
                        prediction=pred)


def test_drop_consistency_and_moved_with_the_element() -> None:
    plain = _samples()
    variants = derive(plain, parse_list("scale:0.5,invert")).samples
    results = [_result(s, s.target.box.center) for s in plain]  # right on all 6 unperturbed
    for v in variants:
        if v.meta[PERTURB_KEY] == "scale:0.5":
            # a fixed-resolution reader: the point twice as far from the corner, off every target
            c = v.target.box.center
            results.append(_result(v, Point(min(1.0, c.x * 2), min(1.0, c.y * 2))))
        else:
            results.append(_result(v, v.target.box.center if v.meta["theme"] == "dark" else Point(0.99, 0.01)))
    rows = {r.spec: r for r in measure([*plain, *variants], results, ["theme"])}
    scale, invert = rows["scale:0.5"], rows["invert"]
    assert (scale.n, scale.before, scale.after, scale.broke, scale.mended) == (6, 100.0, 0.0, 6, 0)
    assert scale.moved == 0.0 and scale.consistency == 0.0 and scale.p_value < 0.05
    assert (invert.after, invert.drop, invert.consistency, invert.moved) == (50.0, 50.0, 50.0, None)
    assert invert.slices["theme=light"].after == 0.0 and invert.slices["theme=dark"].after == 100.0
    lines = report.terminal_lines(list(rows.values()))
    assert lines[1].split()[:5] == ["perturbation", "n", "before", "after", "drop"]
    assert lines[2].split()[:5] == ["invert", "6", "100.0", "50.0", "50.0"]
    md = report.markdown_lines(list(rows.values()))
    assert "| scale:0.5 | 6 | 100.0 | 0.0 | 100.0 | 6/0 |" in "\n".join(md)
    html = report.html_section(report.to_json(list(rows.values())))
    assert "<th>theme=dark</th>" in html and "rgba(217,48,37,0.60)" in html
    assert report.terminal_lines([]) == [] and report.html_section(None) == ""


def test_a_perturbed_sample_counts_in_its_perturb_slice_only() -> None:
    plain = _samples()
    variants = derive(plain[:2], parse_list("invert")).samples
    assert slice_labels(variants[0].meta, ["theme"]) == ["perturb=invert"]
    results = [_result(s, s.target.box.center) for s in plain] + [_result(v, Point(0.99, 0.99)) for v in variants]
    m = compute(MetricSpec(name="acc", slices=("theme",)), results)
    assert (m.overall.value, m.overall.n) == (100.0, 6)  # the headline is the unperturbed suite's
    assert m.slices["theme=light"].n == 3 and m.slices["perturb=invert"].value == 0.0
