"""Bench2Drive-VL's scoring rules against values worked out by hand in each test."""

from __future__ import annotations

import math

import pytest

from pytest_uiground.benchmarks.bench2drive_vl import formulas as f
from pytest_uiground.benchmarks.bench2drive_vl.formulas import GtObject

A = GtObject("A", is_role=True)
B = GtObject("B")
C = GtObject("C", is_dangerous=True)


def _f1(tp: float, fp: float, fn: float) -> float:
    p, r = tp / (tp + fp), tp / (tp + fn)
    return 2 * p * r / (p + r)


def test_q19_weights_are_base_times_position_normalized() -> None:
    # N = 3, ORDER_RATIO 5: p = 3.75 - i -> 3.75, 2.75, 1.75; b = 3, 1, 3.
    raw = [3 * 3.75, 1 * 2.75, 3 * 1.75]
    assert f.q19_weights([A, B, C]) == pytest.approx([w / sum(raw) for w in raw])


def test_q19_perfect_answer_scores_100() -> None:
    assert f.ranked_objects_score([A, B, C], ["A", "B", "C"]).score == pytest.approx(100.0)


def test_q19_missing_object_and_wrong_order() -> None:
    raw = [11.25, 2.75, 5.25]
    w = [x / 19.25 for x in raw]
    # Named C then A; B missed; no extras.
    f1 = _f1(w[2] + w[0], 0.0, w[1])
    dcg = w[2] / 1 + w[0] / math.log2(3)
    idcg = w[0] / 1 + w[1] / math.log2(3)  # the ground truth's first two weights, in its order
    got = f.ranked_objects_score([A, B, C], ["C", "A"])
    assert got.f1 == pytest.approx(f1)
    assert got.ndcg == pytest.approx(dcg / idcg)
    assert got.score == pytest.approx(100 * f1 * dcg / idcg)
    assert got.score == pytest.approx(87.78, abs=0.01)


def test_q19_ndcg_above_one_is_capped() -> None:
    x, y = GtObject("X"), GtObject("Y", is_role=True)
    # N = 2: p = 2.5, 1.5; w = 2.5, 4.5 (sum 7). Naming only the heavier, later Y:
    w = [2.5 / 7, 4.5 / 7]
    got = f.ranked_objects_score([x, y], ["Y"])
    assert got.ndcg_uncapped == pytest.approx(w[1] / w[0])  # 1.8
    assert got.ndcg == 1.0
    assert got.score == pytest.approx(100 * _f1(w[1], 0.0, w[0]))  # 78.26
    assert got.score == pytest.approx(78.26, abs=0.01)


def test_q19_extra_objects_weigh_half_the_smallest_weight() -> None:
    w = [x / 19.25 for x in (11.25, 2.75, 5.25)]
    extra = min(w) / 2
    got = f.ranked_objects_score([A, B, C], ["A", "ghost", "B", "C", "ghost"])  # one distinct extra
    assert got.extra_weight == pytest.approx(extra)
    assert got.ndcg == pytest.approx(1.0)  # extras take no position
    assert got.score == pytest.approx(100 * _f1(1.0, extra, 0.0))  # 96.55
    two = f.ranked_objects_score([A, B, C], ["A", "B", "C", "ghost", "phantom"])
    assert two.score == pytest.approx(100 * _f1(1.0, 2 * extra, 0.0))


def test_q19_nothing_matched_or_nothing_named_scores_zero() -> None:
    assert f.ranked_objects_score([A, B], []).score == 0.0
    assert f.ranked_objects_score([A, B], ["ghost"]).score == 0.0


def test_q19_without_ground_truth_objects() -> None:
    assert f.ranked_objects_score([], []).score == 100.0
    assert f.ranked_objects_score([], ["ghost"]).score == 0.0


def test_multi_object_heavy_false_positive_question() -> None:
    # Q28: one dangerous object (b = 3), one extra at 1.5, object score 80.
    got = f.multi_object_score(28, [C], ["C", "x"], {"C": 80.0})
    assert got.fp_weight == 1.5
    assert got.f1 == pytest.approx(_f1(3.0, 1.5, 0.0))  # 0.8
    assert got.score == pytest.approx(0.8 * 80.0)


def test_multi_object_light_false_positive_and_missed_object() -> None:
    # Q24: A (b 3) found with score 50, C (b 3) missed, one extra at 0.25.
    got = f.multi_object_score(24, [A, C], ["A", "x"], {"A": 50.0})
    f1 = _f1(3.0, 0.25, 3.0)
    assert got.f1 == pytest.approx(f1)
    assert got.object_score == pytest.approx(50.0)
    assert got.score == pytest.approx(f1 * 50.0)
    assert got.score == pytest.approx(32.43, abs=0.01)


def test_multi_object_score_weighs_objects_by_base_weight() -> None:
    # A (b 3) scores 100, B (b 1) scores 0: object-score = (300 + 0) / 4 = 75.
    got = f.multi_object_score(25, [A, B], ["B", "A"], {"A": 100.0, "B": 0.0})
    assert got.f1 == pytest.approx(1.0)
    assert got.object_score == pytest.approx(75.0)
    assert got.score == pytest.approx(75.0)
    for qid in (28, 29, 46, 47):
        assert f.false_positive_weight(qid) == 1.5
    for qid in (24, 25, 27):
        assert f.false_positive_weight(qid) == 0.25


def test_control_keys_speed_penalty_and_follow_lane_rule() -> None:
    # GT KEEP + GO_STRAIGHT; FOLLOW_LANE counts as GO_STRAIGHT; ACCELERATE for KEEP: x1.2.
    got = f.control_keys_score(["KEEP", "GO_STRAIGHT"], ["accelerate", "follow lane"])
    assert got.f1 == pytest.approx(0.5)
    assert got.penalty == pytest.approx(1.2)
    assert got.score == pytest.approx(60.0)
    # Without GO_STRAIGHT in the ground truth, FOLLOW_LANE stays itself.
    assert f.control_keys_score(["KEEP", "TURN_LEFT"], ["KEEP", "FOLLOW_LANE"]).score == pytest.approx(50.0)


def test_control_keys_stop_versus_accelerate_is_the_heaviest_penalty() -> None:
    got = f.control_keys_score(["STOP", "FOLLOW_LANE"], ["ACCELERATE", "FOLLOW_LANE"])
    assert got.score == pytest.approx(100 * 0.5 * 0.25)


def test_control_keys_product_above_one_is_clamped() -> None:
    directions = ["GO_STRAIGHT", "TURN_LEFT", "TURN_RIGHT", "CHANGE_LANE_LEFT", "CHANGE_LANE_RIGHT"]
    got = f.control_keys_score(["KEEP", *directions], ["ACCELERATE", "DECELERATE", *directions])
    f1 = _f1(5.0, 2.0, 1.0)  # 0.769
    assert got.f1 == pytest.approx(f1)
    assert got.penalty == pytest.approx(1.2 * 1.1)
    assert f1 * 1.2 * 1.1 > 1.0
    assert got.score == 100.0


def test_control_keys_exact_and_empty() -> None:
    assert f.control_keys_score(["DECELERATE", "FOLLOW_LANE"], ["FOLLOW_LANE", "DECELERATE"]).score == 100.0
    assert f.control_keys_score(["KEEP"], []).score == 0.0
    assert f.normalize_keys(["keep", "Go straight", "fly", "KEEP"]) == ["KEEP", "GO_STRAIGHT"]
