"""Bench2Drive-VL's scoring rules against values worked out by hand in each test.

Several expectations changed when the rules were re-checked against the reference code
(Thinklab-SJTU/Bench2Drive-VL @5896a851 ``evaluator.py``/``math_utils.py``); each such
test says "was ..." with the old, wrong number.
"""

from __future__ import annotations

import math

import pytest

from pytest_uiground.benchmarks.bench2drive_vl import formulas as f
from pytest_uiground.benchmarks.bench2drive_vl.objects import colour_hint, focus_text, parse_objects

# name -> tag, in ground-truth order; infos give the base weights.
GT = {"A": "<a>", "B": "<b>", "C": "<c>"}
INFOS = {"<a>": {"is_role": True, "is_dangerous": False}, "<b>": {"is_role": False, "is_dangerous": False},
         "<c>": {"is_role": False, "is_dangerous": True}}
PLAIN = {"<a>": {}, "<b>": {}, "<c>": {}}


def _f1(tp: float, fp: float, fn: float) -> float:
    p, r = tp / (tp + fp), tp / (tp + fn)
    return 2 * p * r / (p + r)


def test_objects_are_read_from_nested_tags_and_repeated_names_numbered() -> None:
    text = ("The black car that is to the front of the ego vehicle(<c1<CAM_FRONT,812.4,502.9>>), "
            "the black car that is to the front of the ego vehicle(<c2<CAM_FRONT,900.0,500.0><CAM_BACK,1.0,2.0>>) "
            "and the sign(<c3<CAM_FRONT,1.0,1.0>>).")
    assert parse_objects(text) == {
        "The black car that is to the front of the ego vehicle": "<c1<CAM_FRONT,812.4,502.9>>",
        "The black car that is to the front of the ego vehicle 2": "<c2<CAM_FRONT,900.0,500.0><CAM_BACK,1.0,2.0>>",
        "And the sign": "<c3<CAM_FRONT,1.0,1.0>>",  # the reference keeps the words since the last object
    }
    assert parse_objects("no objects here (really)") == {"No objects here": "really"}


def test_colour_hint_and_focus_are_the_reference_text() -> None:
    assert colour_hint("the navy car") == "Tolerable mistakes: Color 'navy' might be mistaken for '['blue']'. "
    assert focus_text("the red car", "<c1>") == "the red car<c1>"
    assert focus_text("the olive car", "<c2>").endswith(
        "(Tolerable mistakes: Color 'olive' might be mistaken for '['orange', 'yellow']'. )")


def test_q19_weights_are_base_times_position_normalized() -> None:
    # N = 3, ORDER_RATIO 5: p = 3.75 - i -> 3.75, 2.75, 1.75; b = 3, 1, 3.
    raw = [3 * 3.75, 1 * 2.75, 3 * 1.75]
    w, extra = f.q19_weights(GT, INFOS)
    assert list(w.values()) == pytest.approx([x / sum(raw) for x in raw])
    assert extra == pytest.approx(min(raw) / sum(raw) / 2)


def test_q19_perfect_answer_scores_100() -> None:
    assert f.ranked_objects_score(GT, INFOS, ["A", "B", "C"]).score == pytest.approx(100.0)


def test_q19_ideal_dcg_uses_the_matched_objects_own_weights() -> None:
    # All plain: w = 3.75, 2.75, 1.75 / 8.25. Only C named: DCG = IDCG = w_C -> NDCG 1;
    # F1 = 2 * 1 * w_C / (1 + w_C) = 0.35. Was 16.33 (IDCG from the GT's first weight).
    assert f.ranked_objects_score(GT, PLAIN, ["C"]).score == pytest.approx(35.0)
    # [B, C]: NDCG 1, F1 = 2 * (4.5/8.25) / (1 + 4.5/8.25) = 0.7059. Was 49.6.
    assert f.ranked_objects_score(GT, PLAIN, ["B", "C"]).score == pytest.approx(70.59, abs=0.01)


def test_q19_missing_object_and_wrong_order() -> None:
    w = [x / 19.25 for x in (11.25, 2.75, 5.25)]
    # Named C then A; B missed: IDCG over A, C in GT order.
    dcg = w[2] + w[0] / math.log2(3)
    idcg = w[0] + w[2] / math.log2(3)
    got = f.ranked_objects_score(GT, INFOS, ["C", "A"])
    assert got.ndcg == pytest.approx(dcg / idcg)
    assert got.score == pytest.approx(100 * dcg / idcg * _f1(w[0] + w[2], 0.0, w[1]))


def test_q19_a_repeated_mention_counts_again_and_ndcg_is_capped() -> None:
    # All plain, [A, A]: DCG = w_A (1 + 1/log2 3) > IDCG = w_A -> capped at 100; TP = 2 w_A.
    w_a = 3.75 / 8.25
    got = f.ranked_objects_score(GT, PLAIN, ["A", "A"])
    assert got.ndcg > 1.0
    assert got.score == pytest.approx(100 * _f1(2 * w_a, 0.0, 1 - w_a))  # 76.92; was 62.5
    assert got.score == pytest.approx(76.92, abs=0.01)


def test_q19_extra_objects_weigh_half_the_smallest_weight_per_mention() -> None:
    _, extra = f.q19_weights(GT, INFOS)
    got = f.ranked_objects_score(GT, INFOS, ["A", "ghost", "B", "C", "ghost"])
    assert got.score == pytest.approx(100 * _f1(1.0, 2 * extra, 0.0))  # each mention of the extra counts


def test_q19_no_ground_truth_object_scores_zero() -> None:
    # ndcg() is 0 without an ideal gain; was 100 for an empty answer.
    assert f.ranked_objects_score({}, {}, []).score == 0.0
    assert f.ranked_objects_score({}, {}, ["ghost"]).score == 0.0
    assert f.ranked_objects_score(GT, INFOS, ["ghost"]).score == 0.0


def test_listed_heavy_false_positive_question() -> None:
    # Q28: C (dangerous, 3) named plus one extra at 1.5: F1 0.8, judged 80.
    gt = {"C": "<c>"}
    got = f.multi_object_score(28, gt, ["C", "x"], f.listed_weights(["<c>"], INFOS), {"<c>": 80.0})
    assert got.f1 == pytest.approx(0.8)
    assert got.score == pytest.approx(64.0)


def test_listed_repeated_mention_counts_again() -> None:
    # GT a, b (weight 1); named a, a, b; judge a 100, b 0. TP 3, F1 1; object score
    # (100 + 100 + 0) / 3. Was 50.0 (a counted once).
    gt = {"a": "<a>", "b": "<b>"}
    got = f.multi_object_score(24, gt, ["a", "a", "b"], {"<a>": 1.0, "<b>": 1.0}, {"<a>": 100.0, "<b>": 0.0})
    assert got.score == pytest.approx(66.67, abs=0.01)


def test_listed_object_scores_are_not_clamped_only_the_result() -> None:
    # Two equal objects judged 150 and 50: (150 + 50) / 2 = 100 -> 100. Was 75.0 (150 clamped to 100).
    gt = {"a": "<a>", "b": "<b>"}
    got = f.multi_object_score(24, gt, ["a", "b"], {"<a>": 1.0, "<b>": 1.0}, {"<a>": 150.0, "<b>": 50.0})
    assert got.score == pytest.approx(100.0)
    over = f.multi_object_score(24, gt, ["a", "b"], {"<a>": 1.0, "<b>": 1.0}, {"<a>": 300.0, "<b>": 300.0})
    assert over.object_score == pytest.approx(300.0) and over.score == 100.0


def test_listed_gt_object_outside_object_tags_weighs_only_in_the_denominator() -> None:
    # GT text names A and B, object_tags [A]; both named; judge A = 100. TP 1 (A), no FP/FN,
    # object score 100 / (1 + 0.25) = 80. Was 88.89 (B counted as an extra).
    gt = {"A": "<a>", "B": "<b>"}
    got = f.multi_object_score(24, gt, ["A", "B"], {"<a>": 1.0}, {"<a>": 100.0})
    assert got.f1 == pytest.approx(1.0)
    assert got.score == pytest.approx(80.0)


def test_listed_without_ground_truth_objects_scores_zero() -> None:
    assert f.multi_object_score(24, {}, [], {"<a>": 1.0}, {"<a>": 100.0}).score == 0.0


def test_control_keys_speed_penalty_and_follow_lane_rule() -> None:
    got = f.control_keys_score(["GO_STRAIGHT", "KEEP"], ["FOLLOW_LANE", "ACCELERATE"])
    assert (got.f1, got.penalty, got.score) == (pytest.approx(0.5), pytest.approx(1.2), pytest.approx(60.0))
    assert f.control_keys_score(["TURN_LEFT", "KEEP"], ["FOLLOW_LANE", "KEEP"]).score == pytest.approx(50.0)
    got = f.control_keys_score(["FOLLOW_LANE", "STOP"], ["FOLLOW_LANE", "ACCELERATE"])
    assert got.score == pytest.approx(100 * 0.5 * 0.25)


def test_control_keys_know_deviate_and_score_empty_sets_zero() -> None:
    # Was 66.67: DEVIATE_LEFT was dropped as unknown.
    assert f.control_keys_score(["DEVIATE_LEFT", "KEEP"], ["FOLLOW_LANE", "KEEP"]).score == pytest.approx(50.0)
    assert f.control_keys_score([], []).score == 0.0  # was 100
    assert f.control_keys_score(["KEEP"], []).score == 0.0


def test_control_keys_repeated_predicted_speed_key_penalises_twice() -> None:
    got = f.control_keys_score(["GO_STRAIGHT", "STOP"], ["GO_STRAIGHT", "KEEP", "KEEP"])
    assert got.penalty == pytest.approx(0.25)
    assert got.score == pytest.approx(100 * _f1(1, 1, 1) * 0.25)


def test_q43_unspecified_lane_change_averages_two_scores() -> None:
    # As is: {CHANGE_LANE, KEEP} vs {CHANGE_LANE_LEFT, KEEP} -> F1 0.5; with the GT's side -> 1. Was 66.67.
    value, parts = f.q43_score(["CHANGE_LANE_LEFT", "KEEP"], ["CHANGE_LANE", "KEEP"])
    assert value == pytest.approx(75.0) and len(parts) == 2


def test_q50_keys_are_case_sensitive_whole_words_anywhere() -> None:
    gt = f.extract_keys("DEVIATE_RIGHT, DECELERATE")
    said = f.extract_keys("I would not FOLLOW_LANE; DEVIATE_RIGHT and DECELERATE")
    assert said == ["FOLLOW_LANE", "DEVIATE_RIGHT", "DECELERATE"]
    assert f.control_keys_score(gt, said).score == pytest.approx(80.0)
    assert f.extract_keys("follow_lane, keep") == []
    assert f.extract_keys("CHANGE_LANE_LEFTISH, KEEPING") == []
