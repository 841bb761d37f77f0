"""Element detection: the scorer, the metrics it feeds, and the cropping strategies."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from PIL import Image

from pytest_uiground.gate.checks import build_checks
from pytest_uiground.gate.metrics import compute_all
from pytest_uiground.models.cropping import FULL, CroppingModel, fixed_tiles, quadrants, window
from pytest_uiground.models.offline.ocr import OcrItem, detect_at
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.scoring.rules import score_detect
from pytest_uiground.suite.config import load_suite_config

ROOT = Path(__file__).parents[2]
GT = Box(0.40, 0.40, 0.60, 0.50)


def _sample(box: Box = GT, sid: str = "s1", click: Point | None = None) -> Sample:
    img = Image.new("RGB", (400, 200), "white")
    return Sample(id=sid, image=ImageRef.from_source(f"img:{sid}", lambda: img), instruction="Save",
                  task="detect", target=Target(box=box), click=click or box.center)


# --- the scorer ------------------------------------------------------------------------------------

def test_box_detection_iou_and_match() -> None:
    # Pred 0.45..0.65 x 0.40..0.50: intersection 0.15 x 0.10, union 0.25 x 0.10 -> IoU 0.6.
    s = score_detect(_sample(), Prediction(box=Box(0.45, 0.40, 0.65, 0.50)))
    assert s.components["iou"] == pytest.approx(60.0)
    assert (s.correct, s.components["detected"], s.components["false_positive"], s.components["boxed"]) == (True, True,
                                                                                                   False, True)
    # IoU 0.4 (0.48..0.68 -> inter 0.12, union 0.28 -> 0.4286): found but not this element.
    miss = score_detect(_sample(), Prediction(box=Box(0.48, 0.40, 0.68, 0.50)))
    assert miss.components["iou"] == pytest.approx(100 * 0.12 / 0.28)
    assert (miss.correct, miss.components["found"], miss.components["false_positive"]) == (False, True, True)


def test_point_only_and_nothing_found() -> None:
    hit = score_detect(_sample(), Prediction(point=Point(0.5, 0.45), attempts=3))
    assert (hit.correct, hit.components["boxed"], hit.components["attempts"]) == (True, False, 3)
    assert "iou" not in hit.components
    none = score_detect(_sample(), Prediction(raw="nothing"))
    assert (none.correct, none.components["found"], none.components["false_positive"]) == (False, False, False)


# --- metrics: IoU over detections, lower-is-better rates, attempts ---------------------------------

def _result(sid: str, size: str, pred: Prediction, box: Box = GT, latency: float = 10.0) -> SampleResult:
    s = score_detect(_sample(box, sid), pred)
    return SampleResult(suite="detection", id=sid, task="detect", meta={"size": size}, score=s, latency_ms=latency)


def test_detection_metrics_by_hand() -> None:
    config = load_suite_config(ROOT / "suites" / "detection" / "suite.toml")
    results = [
        _result("a", "lt32", Prediction(box=Box(0.45, 0.40, 0.65, 0.50))),             # IoU 60, detected
        _result("b", "lt32", Prediction(box=Box(0.0, 0.0, 0.1, 0.1)), latency=30.0),  # IoU 0, false positive
        _result("c", "gt100", Prediction(point=Point(0.5, 0.45), attempts=3)),         # grounder hit, 3 calls
        _result("d", "gt100", Prediction()),                                            # nothing
    ]
    m = {r.spec.name: r for r in compute_all(config.metrics, results)}
    assert m["detection_rate"].overall.value == pytest.approx(50.0)
    assert m["mean_iou"].overall.value == pytest.approx(30.0) and m["mean_iou"].overall.n == 2  # boxes only
    assert m["iou_over_50"].overall.value == pytest.approx(50.0)
    assert m["false_positive_rate"].overall.value == pytest.approx(25.0)
    assert m["attempts_to_success"].overall.value == pytest.approx(2.0)  # (1 + 3) / 2 over detected
    assert m["latency_ms"].overall.value == pytest.approx(15.0)
    assert m["detection_rate"].slices["size=lt32"].value == pytest.approx(50.0)
    assert m["false_positive_rate"].slices["size=gt100"].value == pytest.approx(0.0)


def test_lower_is_better_metrics_regress_when_they_rise() -> None:
    from pytest_uiground.gate.baseline import Baseline, BaselineEntry

    config = load_suite_config(ROOT / "suites" / "detection" / "suite.toml")
    before = [_result(f"s{i}", "lt32", Prediction(box=GT)) for i in range(10)]
    base = Baseline(path=Path("x"),
                    entries={r.id: BaselineEntry(r.right, r.value, dict(r.score.components)) for r in before})
    # Now 3 of 10 come back as the wrong element: detection drops 30, false positives rise 30.
    now = before[:7] + [_result(f"s{i}", "lt32", Prediction(box=Box(0, 0, 0.1, 0.1))) for i in range(7, 10)]
    checks = {c.label: c for c in build_checks(config, compute_all(config.metrics, now), now, base, partial=False,
                                               updating=False, suite_file="suite.toml")}
    fp = checks["false_positive_rate"]
    assert fp.paired is not None and fp.paired.delta == pytest.approx(30.0)
    assert fp.verdict == "FAIL" and "rose (lower is better)" in fp.problems()[0]
    assert fp.paired.regressed == 3 and fp.paired.fixed == 0  # McNemar counts samples that got a false positive
    assert checks["detection_rate"].verdict == "FAIL"
    improved = {c.label: c for c in build_checks(config, compute_all(config.metrics, before), before,
                                                 Baseline(Path("x"), {r.id: BaselineEntry(r.right, r.value,
                                                                                          dict(r.score.components))
                                                                      for r in now}),
                                                 partial=False, updating=False, suite_file="suite.toml")}
    assert improved["false_positive_rate"].verdict == "improved"
    assert json.loads(json.dumps(fp.snapshot_data()))["lower_is_better"] is True


# --- cropping --------------------------------------------------------------------------------------

class Scripted:
    """A grounder whose answer on each call comes from ``answer(call_index, sample)``."""

    name = "scripted"

    def __init__(self, answer: Callable[[int, Sample], Prediction]) -> None:
        self.answer, self.calls, self.seen = answer, 0, []  # type: ignore[var-annotated]

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        out = []
        for s in samples:
            self.seen.append(s)
            out.append(self.answer(self.calls, s))
            self.calls += 1
        return out

    def fingerprint(self) -> dict[str, str]:
        return {"model": "scripted"}


def _always(p: Point) -> Callable[[int, Sample], Prediction]:
    return lambda i, s: Prediction(point=p)


def test_crops_follow_the_model_and_never_see_the_ground_truth() -> None:
    runs = []
    for gt in (GT, Box(0.05, 0.05, 0.10, 0.10)):  # two very different ground truths
        inner = Scripted(_always(Point(0.8, 0.3)))
        model = CroppingModel(inner, "screenseeker", depth=3)
        model.predict([_sample(gt)])
        assert all(s.target == Target() and s.target.box is None for s in inner.seen)
        assert all(dict(s.meta) == {} for s in inner.seen)
        runs.append([r for _, r in model.log])
    assert runs[0] == runs[1]  # the ground truth changed nothing
    inner = Scripted(_always(Point(0.2, 0.7)))
    other = CroppingModel(inner, "screenseeker", depth=3)
    other.predict([_sample(GT)])
    assert [r for _, r in other.log] != runs[0]  # the model's answer changed everything
    assert runs[0][1] == window(Point(0.8, 0.3), 0.5, FULL)


def test_screenseeker_zooms_until_the_depth_and_maps_answers_back() -> None:
    # The model always answers the middle of whatever it is shown.
    inner = Scripted(_always(Point(0.5, 0.5)))
    model = CroppingModel(inner, "screenseeker", depth=3)
    (pred,) = model.predict([_sample()])
    regions = [r for _, r in model.log]
    assert regions[0] == FULL
    # The middle of each crop maps back to the screen centre, so the answer never moves: stop after one zoom.
    assert pred.point == pytest.approx(Point(0.5, 0.5)) and pred.attempts == 2
    # An answer that keeps moving uses every level: full screen + 3 zooms, each half the size.
    moving = Scripted(lambda i, s: Prediction(point=Point(0.3 + 0.1 * (i % 2), 0.5)))
    deep = CroppingModel(moving, "screenseeker", depth=3)
    (pred,) = deep.predict([_sample()])
    sizes = [round(r.x1 - r.x0, 4) for _, r in deep.log]
    assert sizes == [1.0, 0.5, 0.25, 0.125] and pred.attempts == 4


def test_screenseeker_searches_quadrants_when_the_screen_gives_nothing() -> None:
    # Nothing on the full screen and the first quadrant; an answer in the second quadrant's crop.
    inner = Scripted(lambda i, s: Prediction(point=Point(0.5, 0.5)) if i >= 2 else Prediction(raw="?"))
    model = CroppingModel(inner, "screenseeker", depth=1)
    (pred,) = model.predict([_sample()])
    assert [r for _, r in model.log] == [FULL, quadrants()[0], quadrants()[1]]
    assert pred.point == pytest.approx(Point(0.75, 0.25)) and pred.attempts == 3


def test_fixed_crops_pick_the_tile_nearest_the_answer() -> None:
    inner = Scripted(_always(Point(0.9, 0.9)))
    model = CroppingModel(inner, "fixed")
    (pred,) = model.predict([_sample()])
    assert [r for _, r in model.log] == [FULL, fixed_tiles()[-1]]
    assert pred.attempts == 2
    # 0.9 inside the bottom-right tile (0.5..1.0) -> 0.5 + 0.9 * 0.5 = 0.95.
    assert pred.point == pytest.approx(Point(0.95, 0.95))


def test_crops_are_real_zoomed_pixels() -> None:
    img = Image.new("RGB", (400, 200), "white")
    img.paste((255, 0, 0), (300, 0, 400, 100))  # the top-right quadrant's right half is red
    sample = Sample(id="z", image=ImageRef.from_source("z", lambda: img), instruction="x", task="detect",
                    target=Target(box=GT), click=Point(0.9, 0.1))
    from pytest_uiground.models.cropping import blind

    crop = blind(sample, quadrants()[1])
    pixels = crop.image.load()
    assert pixels.size == (400, 200)  # a half-size region, zoomed x2
    assert pixels.getpixel((390, 10)) == (255, 0, 0) and pixels.getpixel((10, 10)) == (255, 255, 255)
    assert crop.click == pytest.approx(Point(0.8, 0.2))
    assert blind(sample, quadrants()[0]).click is None  # the click is outside that crop


def test_ocr_detects_the_text_line_under_the_click() -> None:
    items = [OcrItem("Save", 0.9, Box(0.1, 0.1, 0.2, 0.15)), OcrItem("Save all files", 0.9, Box(0.1, 0.1, 0.5, 0.15))]
    got = detect_at(items, Point(0.15, 0.12))
    assert got.box == Box(0.1, 0.1, 0.2, 0.15)  # the smallest box under the click
    assert detect_at(items, Point(0.9, 0.9)).box is None  # an icon: no text, no box
    assert detect_at(items, Point(0.203, 0.12)).box is not None  # a hair outside still counts


# --- end to end: the user's commands ---------------------------------------------------------------

@pytest.mark.slow
def test_detection_suite_runs_reports_and_compares(pytester: pytest.Pytester) -> None:
    from pytest_uiground.report.compare import main as compare_main

    suite = (ROOT / "suites" / "detection" / "suite.toml").read_text()
    suite = suite.replace("screens = 40", "screens = 2").replace("targets_per_screen = 6", "targets_per_screen = 3")
    (pytester.path / "suites" / "detection").mkdir(parents=True)
    (pytester.path / "suites" / "detection" / "suite.toml").write_text(suite)
    pytester.makeini("[pytest]\n")
    base = ("suites/detection", "--model", "ocr", "-p", "no:cacheprovider", "-p", "no:randomly")
    (pytester.path / "b-crop").mkdir()  # each setting gated against its own baseline (a suite fails without one)
    cropped = (*base, "--uiground-cropping", "fixed", "--uiground-baselines", "b-crop")
    assert pytester.runpytest_subprocess(*base, "--snapshot-update").ret == 0
    assert pytester.runpytest_subprocess(*cropped, "--snapshot-update").ret == 0
    plain = pytester.runpytest_subprocess(*base, "--uiground-report", "out/ocr")
    crop = pytester.runpytest_subprocess(*cropped, "--uiground-report", "out/ocr-fixed")
    assert plain.ret == 0 and crop.ret == 0
    docs = [json.loads((pytester.path / "out" / d / "summary.json").read_text()) for d in ("ocr", "ocr-fixed")]
    for doc in docs:
        assert set(doc["metrics"]) == {"detection_rate", "mean_iou", "iou_over_50", "false_positive_rate",
                                       "attempts_to_success", "latency_ms"}
        assert doc["n_samples"] == 6
        assert any(k.startswith("size=") for k in doc["metrics"]["detection_rate"]["slices"])
    def records(run: str) -> list[dict]:
        text = (pytester.path / "out" / run / "samples.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines()]

    assert {r["score"]["components"]["attempts"] for r in records("ocr")} == {1}
    assert max(r["score"]["components"]["attempts"] for r in records("ocr-fixed")) == 2  # the screen, then one tile
    assert docs[1]["model_fingerprint"]["cropping"] == "fixed"
    # Zoom-in is labelled as the model cards label it: the setting in the summary, the terminal and compare.
    assert [d["provenance"]["setting"] for d in docs] == ["native", "zoom-in (fixed, depth 3)"]
    assert "(model ocr, zoom-in (fixed, depth 3), 6 samples)" in crop.stdout.str()
    assert "(model ocr, 6 samples)" in plain.stdout.str()
    assert (pytester.path / "out" / "ocr" / "report.html").is_file()
    assert "zoom-in (fixed, depth 3)" in (pytester.path / "out" / "ocr-fixed" / "report.html").read_text()
    html = pytester.path / "comparison.html"
    assert compare_main([str(pytester.path / "out" / "ocr"), str(pytester.path / "out" / "ocr-fixed"),
                         "--html", str(html)]) == 0
    page = html.read_text()
    assert page.count("<svg class=\"plot\"") >= 7  # a chart per metric (6) and latency vs accuracy
    assert "ocr zoom-in (fixed, depth 3)" in page, "native and zoom-in side by side, each named"


def test_snapshot_match_follows_the_metric_direction() -> None:
    from pytest_uiground.gate.snapshot import matches

    stored = {"value": 2.0, "samples": "x", "lower_is_better": True}

    def cur(v: float) -> dict[str, object]:
        return {"value": v, "samples": "x", "lower_is_better": True}

    assert matches(cur(2.4), stored, 0.5)  # worse, within tolerance
    assert not matches(cur(2.6), stored, 0.5)  # more attempts: worse
    assert matches(cur(1.0), stored, 0.5)  # fewer attempts: better
