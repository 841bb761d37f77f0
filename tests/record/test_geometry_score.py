"""Tests for the coordinate convention (geometry) and the per-sample scorers (score).

Edge-inclusive hit tests and exact IoU values are where grounding harnesses most
often disagree with the reference scorers, so each expectation here is computed by
hand rather than taken from the code under test.
"""

from __future__ import annotations

import pytest

from pytest_uiground.record.geometry import (
    Box,
    Point,
    box_from_pixels_xywh,
    box_from_pixels_xyxy,
    clip_point,
    iou,
    make_box,
)
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample, Target, TaskKind
from pytest_uiground.record.score import Score
from pytest_uiground.scoring.rules import (
    SCORERS,
    score,
    score_answer,
    score_option,
    score_point,
    score_verdict,
)

BOX = Box(0.2, 0.3, 0.6, 0.7)


def _sample(task: TaskKind, **target: object) -> Sample:
    return Sample(
        id="s-1",
        image=ImageRef(key="unused.png"),
        instruction="click the thing",
        task=task,
        target=Target(**target),  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- Box basics


def test_box_properties() -> None:
    # width 0.6 - 0.2 = 0.4, height 0.7 - 0.3 = 0.4, area 0.16, centre (0.4, 0.5)
    assert BOX.width == pytest.approx(0.4)
    assert BOX.height == pytest.approx(0.4)
    assert BOX.area == pytest.approx(0.16)
    assert BOX.center == pytest.approx(Point(0.4, 0.5))


@pytest.mark.parametrize(
    "point",
    [
        Point(0.2, 0.5),  # left edge
        Point(0.6, 0.5),  # right edge
        Point(0.4, 0.3),  # top edge
        Point(0.4, 0.7),  # bottom edge
        Point(0.2, 0.3),  # top-left corner
        Point(0.6, 0.3),  # top-right corner
        Point(0.2, 0.7),  # bottom-left corner
        Point(0.6, 0.7),  # bottom-right corner
        Point(0.4, 0.5),  # centre
    ],
)
def test_contains_is_edge_inclusive(point: Point) -> None:
    assert BOX.contains(point)


EPS = 1e-9


@pytest.mark.parametrize(
    "point",
    [
        Point(0.2 - EPS, 0.5),
        Point(0.6 + EPS, 0.5),
        Point(0.4, 0.3 - EPS),
        Point(0.4, 0.7 + EPS),
        Point(0.2 - EPS, 0.3 - EPS),
        Point(0.6 + EPS, 0.7 + EPS),
        Point(0.0, 0.0),
        Point(1.0, 1.0),
    ],
)
def test_contains_just_outside_is_a_miss(point: Point) -> None:
    assert not BOX.contains(point)


def test_zero_area_box_contains_its_own_point() -> None:
    # A degenerate box (a point target) still hits on its exact coordinates.
    b = Box(0.5, 0.5, 0.5, 0.5)
    assert b.area == 0.0
    assert b.contains(Point(0.5, 0.5))
    assert not b.contains(Point(0.5, 0.5 + EPS))


# --------------------------------------------------------------------------- IoU


def test_iou_hand_computed() -> None:
    # Intersection [0.25, 0.25, 0.5, 0.5]: 0.25 * 0.25 = 0.0625.
    # Union: 0.25 + 0.25 - 0.0625 = 0.4375. IoU = 0.0625 / 0.4375 = 1/7.
    a = Box(0.0, 0.0, 0.5, 0.5)
    b = Box(0.25, 0.25, 0.75, 0.75)
    assert iou(a, b) == pytest.approx(1 / 7)
    assert iou(b, a) == pytest.approx(1 / 7)


def test_iou_contained_box() -> None:
    # Inner [0.25, 0.25, 0.75, 0.75] (area 0.25) inside the unit box: 0.25 / 1 = 0.25.
    assert iou(Box(0.0, 0.0, 1.0, 1.0), Box(0.25, 0.25, 0.75, 0.75)) == pytest.approx(0.25)


def test_iou_identical_is_one() -> None:
    assert iou(BOX, BOX) == pytest.approx(1.0)


def test_iou_disjoint_and_touching_are_zero() -> None:
    assert iou(Box(0.0, 0.0, 0.2, 0.2), Box(0.5, 0.5, 0.9, 0.9)) == 0.0
    # Sharing only an edge: intersection has zero width.
    assert iou(Box(0.0, 0.0, 0.5, 0.5), Box(0.5, 0.0, 1.0, 0.5)) == 0.0


def test_iou_zero_area() -> None:
    point_box = Box(0.4, 0.5, 0.4, 0.5)
    assert iou(point_box, point_box) == 0.0  # no union: defined as 0, not a ZeroDivisionError
    assert iou(point_box, BOX) == 0.0  # inside BOX but has no area to overlap with
    assert iou(Box(0.2, 0.3, 0.2, 0.7), BOX) == 0.0  # a line on BOX's left edge


# --------------------------------------------------------------------------- make_box


def test_make_box_accepts_a_normalized_box() -> None:
    assert make_box([0, 0.25, "0.5", 1]) == Box(0.0, 0.25, 0.5, 1.0)
    assert make_box((0.1, 0.1, 0.1, 0.1)) == Box(0.1, 0.1, 0.1, 0.1)


@pytest.mark.parametrize(
    "values",
    [
        [0.1, 0.2, 0.3],  # too few
        [0.1, 0.2, 0.3, 0.4, 0.5],  # too many
        None,  # not iterable
        [0.1, "x", 0.3, 0.4],  # not a number
    ],
)
def test_make_box_shape_errors_name_the_thing(values: object) -> None:
    with pytest.raises(ValueError, match=r"^sample s-1 target box: expected four numbers"):
        make_box(values, what="sample s-1 target box")


@pytest.mark.parametrize(
    "values",
    [
        [0.5, 0.1, 0.4, 0.2],  # x0 > x1
        [0.1, 0.5, 0.2, 0.4],  # y0 > y1
        [-0.1, 0.1, 0.2, 0.2],  # negative
        [0.1, 0.1, 1.2, 0.2],  # > 1: pixel coordinates passed by mistake
        [10, 20, 300, 400],  # pixels
        [float("nan"), 0.1, 0.2, 0.2],
    ],
)
def test_make_box_range_errors_name_the_thing(values: object) -> None:
    with pytest.raises(ValueError, match=r"^row 7 bbox: .* is not a normalized \[x0, y0, x1, y1\] box"):
        make_box(values, what="row 7 bbox")


def test_make_box_default_name() -> None:
    with pytest.raises(ValueError, match=r"^box: "):
        make_box([2, 2, 3, 3])


# --------------------------------------------------------------------------- pixels


def test_box_from_pixels_xyxy() -> None:
    # 1000 x 500 image: x / 1000, y / 500
    assert box_from_pixels_xyxy(100, 50, 400, 250, 1000, 500) == pytest.approx(Box(0.1, 0.1, 0.4, 0.5))


def test_box_from_pixels_xywh_and_round_trip() -> None:
    # xywh (10, 20, 30, 40) on 200 x 100 -> xyxy pixels (10, 20, 40, 60)
    # -> normalized (0.05, 0.2, 0.2, 0.6)
    b = box_from_pixels_xywh(10, 20, 30, 40, 200, 100)
    assert b == pytest.approx(Box(0.05, 0.2, 0.2, 0.6))
    assert b.to_pixels(200, 100) == pytest.approx((10.0, 20.0, 40.0, 60.0))
    # and xyxy pixels -> normalized -> pixels is the identity
    assert box_from_pixels_xyxy(13, 7, 1900, 1070, 1920, 1080).to_pixels(1920, 1080) == pytest.approx(
        (13.0, 7.0, 1900.0, 1070.0)
    )


# --------------------------------------------------------------------------- clip_point


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        (Point(0.5, 0.5), Point(0.5, 0.5)),
        (Point(-0.2, 0.5), Point(0.0, 0.5)),
        (Point(0.5, 1.7), Point(0.5, 1.0)),
        (Point(-1.0, 2.0), Point(0.0, 1.0)),
        (Point(0.0, 1.0), Point(0.0, 1.0)),
    ],
)
def test_clip_point(point: Point, expected: Point) -> None:
    assert clip_point(point) == expected


# --------------------------------------------------------------------------- score_point


def test_score_point_hit_on_edge_and_miss() -> None:
    s = _sample("point", box=BOX)
    hit = score_point(s, Prediction(point=Point(0.6, 0.7)))  # bottom-right corner
    assert (hit.value, hit.correct) == (100.0, True)
    miss = score_point(s, Prediction(point=Point(0.61, 0.7)))
    assert (miss.value, miss.correct) == (0.0, False)


def test_score_point_without_point_is_a_miss_and_keeps_format_error() -> None:
    s = _sample("point", box=BOX)
    r = score_point(s, Prediction(point=None, raw="I cannot find it", format_error=True))
    assert (r.value, r.correct) == (0.0, False)
    assert r.format_error is True
    assert (r.components, r.component_format_errors) == ({"point_hit": False}, {"point_hit": True})
    assert r.notes == {"reason": "no point"}


def test_score_point_needs_a_target_box() -> None:
    with pytest.raises(ValueError, match="s-1"):
        score_point(_sample("point"), Prediction(point=Point(0.5, 0.5)))


# --------------------------------------------------------------------------- verdict / option / answer


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ("passed", "passed", True),
        ("passed", "PASSED", True),
        ("Failed", "failed", True),
        ("passed", "failed", False),
        ("passed", "", False),
        ("passed", None, False),
        ("", "", False),  # empty verdict is wrong even against an empty target
    ],
)
def test_score_verdict(want: str, got: str | None, ok: bool) -> None:
    r = score_verdict(_sample("verdict", verdict=want), Prediction(verdict=got))
    assert r.correct is ok
    assert r.value == (100.0 if ok else 0.0)
    assert r.notes["expected"] == want.lower()
    assert r.notes["got"] == (got.lower() if got else None)


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ("B", "B", True),
        ("b", "B", True),  # case-insensitive both ways
        ("B", "b", True),
        ("B", "C", False),
        ("B", None, False),
        ("", "", False),  # empty option is wrong even against an empty target
    ],
)
def test_score_option(want: str, got: str | None, ok: bool) -> None:
    r = score_option(_sample("option", option=want), Prediction(option=got))
    assert r.correct is ok


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ("Settings", "settings", True),
        ("Open  the\tfile menu", "open the file menu", True),  # whitespace collapsed
        ("Wi-Fi", "  wi-fi.  ", True),  # surrounding space and a trailing period stripped
        ("42", "42.", True),
        ("Settings", "Setting", False),
        ("Settings", "", False),
        ("Settings", None, False),
        ("", "", False),
        ("", " . ", False),  # normalises to empty: still wrong
    ],
)
def test_score_answer_normalisation(want: str, got: str | None, ok: bool) -> None:
    r = score_answer(_sample("answer", answer=want), Prediction(answer=got))
    assert r.correct is ok


# --------------------------------------------------------------------------- dispatch and serialisation


def test_score_dispatches_on_task_kind() -> None:
    assert set(SCORERS) == {"point", "verdict", "option", "answer", "vqa", "detect"}
    assert score(_sample("point", box=BOX), Prediction(point=Point(0.2, 0.3))).correct is True
    assert score(_sample("verdict", verdict="failed"), Prediction(verdict="FAILED")).correct is True
    assert score(_sample("option", option="a"), Prediction(option="A")).correct is True
    assert score(_sample("answer", answer="OK"), Prediction(answer="ok.")).correct is True
    with pytest.raises(ValueError, match="needs a judged scorer"):
        score(_sample("vqa", answer="OK"), Prediction(answer="ok"))


def test_score_to_json() -> None:
    r = score_verdict(_sample("verdict", verdict="passed"), Prediction(verdict="Passed"))
    assert r.to_json() == {
        "value": 100.0,
        "correct": True,
        "format_error": False,
        "components": {"verdict_correct": True},
        "component_format_errors": {"verdict_correct": False},
        "notes": {"expected": "passed", "got": "passed"},
    }
    assert Score.from_json(r.to_json()) == r


def test_verdict_with_a_box_needs_both_parts_and_reports_each() -> None:
    s = _sample("verdict", box=BOX, verdict="failed")
    both = score_verdict(s, Prediction(verdict="failed", point=BOX.center))
    assert (both.correct, both.components["verdict_correct"], both.components["point_hit"]) == (True, True, True)
    no_point = score_verdict(s, Prediction(verdict="failed"))
    assert no_point.correct is False and no_point.components["verdict_correct"] is True
    assert no_point.components["point_hit"] is False and no_point.component_format_errors["point_hit"] is True
    wrong = score_verdict(s, Prediction(verdict="passed", point=BOX.center))
    assert wrong.correct is False and wrong.components["point_hit"] is True and wrong.value == 0.0


# -- polygons and refusals (OSWorld-G) --------------------------------------------------------------
# An L-shaped (concave) polygon in a 100 x 50 pixel frame: the square 0..40 x 0..40 minus its
# top-right quarter 20..40 x 0..20. Vertices listed clockwise from the origin.
L_SHAPE = (0.0, 0.0, 20.0, 0.0, 20.0, 20.0, 40.0, 20.0, 40.0, 40.0, 0.0, 40.0)
FRAME = (100, 50)


@pytest.mark.parametrize(("x", "y", "inside"), [
    (10, 10, True), (30, 30, True),        # both arms
    (30, 10, False),                       # inside the bounding box, in the notch: a miss
    (0, 10, True), (10, 0, True),          # left and top edges count inside (as the reference)
    (40, 30, False), (10, 40, False),      # right and bottom edges outside
    (20, 10, False),                       # the notch's left wall is a right edge of the polygon
    (50, 10, False), (-1, -1, False),
])
def test_point_in_polygon_even_odd_edges(x: float, y: float, inside: bool) -> None:
    from pytest_uiground.record.geometry import point_in_polygon

    assert point_in_polygon(x, y, L_SHAPE) is inside


def test_point_in_polygon_slanted_edge_uses_its_own_frame() -> None:
    """A triangle with a slanted edge: points just either side of it, in pixels."""
    from pytest_uiground.record.geometry import point_in_polygon

    tri = (0.0, 0.0, 30.0, 0.0, 0.0, 30.0)  # hypotenuse x + y = 30
    assert point_in_polygon(14, 15.5, tri) and not point_in_polygon(15, 15.5, tri)


def test_to_frame_recovers_whole_pixels() -> None:
    from pytest_uiground.record.geometry import to_frame

    assert 1 / 49 * 49 != 1  # the float round trip that would move an on-edge click
    assert to_frame(1 / 49, 49) == 1.0
    assert to_frame(0.25, 10) == 2.5


def _poly_sample() -> Sample:
    return _sample("point", polygon=L_SHAPE, frame=FRAME)


def test_score_point_polygon_uses_pixel_frame() -> None:
    s = _poly_sample()
    assert score_point(s, Prediction(point=Point(10 / 100, 10 / 50))).correct is True
    notch = score_point(s, Prediction(point=Point(30 / 100, 10 / 50)))
    assert notch.correct is False and notch.format_error is False
    assert score_point(s, Prediction(point=Point(0.0, 0.2))).correct is True  # left edge, x = 0 px


def test_polygon_target_rejects_odd_lists_and_missing_frame() -> None:
    with pytest.raises(ValueError, match="three"):
        Target(polygon=(1.0, 2.0, 3.0, 4.0, 5.0), frame=FRAME)
    with pytest.raises(ValueError, match="frame"):
        Target(polygon=L_SHAPE)


def test_refusal_scoring_rules() -> None:
    refusal = _sample("point", refusal=True)
    said_no = Prediction(refused=True, raw="[-1, -1]")
    hit = score_point(refusal, said_no)
    assert (hit.correct, hit.format_error, hit.components["refused"]) == (True, False, True)
    clicked = score_point(refusal, Prediction(point=Point(0.5, 0.5)))
    assert clicked.correct is False and clicked.format_error is False and clicked.components["refused"] is False
    garbled = score_point(refusal, Prediction(format_error=True, raw="??"))
    assert garbled.correct is False and garbled.format_error is True
    # On a normal sample a refusal is a miss, never a format error.
    for s in (_sample("point", box=BOX), _poly_sample()):
        miss = score_point(s, said_no)
        assert (miss.correct, miss.format_error, miss.components["refused"]) == (False, False, True)
        assert miss.format_error_of("point_hit") is False


def test_refusal_count_only_where_refusals_mean_something() -> None:
    from pytest_uiground.record.score import refusals

    refusal, box = _sample("point", refusal=True), _sample("point", box=BOX)
    plain = [score_point(box, Prediction(point=Point(0.3, 0.4)))]
    assert refusals(plain) is None  # no refusal asked for, none given: no figure
    asked = [*plain, score_point(refusal, Prediction(point=Point(0.3, 0.4)))]
    assert refusals(asked) == 0
    assert refusals([*asked, score_point(box, Prediction(refused=True)),
                     score_point(refusal, Prediction(refused=True))]) == 2


def test_point_task_needs_some_target() -> None:
    with pytest.raises(ValueError, match="box, polygon or refusal"):
        score_point(_sample("point"), Prediction(point=Point(0.5, 0.5)))
