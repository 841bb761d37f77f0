"""Self-checks of tests/parity/ref_bench2drive.py (the re-implementation of Bench2Drive-VL's
scoring) on cases worked out by hand, plus the published-layout writer.

Run alone: python -m pytest tests/parity/test_b2d_ref_selfcheck.py -q -p no:cacheprovider -p no:uiground
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from . import published_b2d as pub
from . import ref_bench2drive as ref

# sha256 of the reference's prompt strings (prompt_utils.py at commit 5896a851, f-strings expanded).
PROMPT_SHA256 = {
    "COLOR_PROMPT": "fe05217244a7d0c5b582abc7e9ac8a1539d512fd7c35e99ee473be63d76c223e",
    "SYSTEM_PROMPT": "cc9adc47bff92286570b6a01032c9c18476b7327fd976132fb3ca8b9e15347ef",
    "NORMAL_EXAMPLE": "3f20be9ef68d2f16f39be71184137dda5490c9635be7d720fc7e057386227ba8",
    "LISTED_PROMPT": "1fa65e29bcff65404c918f346d7de07a1ae9bd59c00a3f760be6e806bc83e8ef",
    "LISTED_EXAMPLE": "9a8b076917e11a7834eb5671d1632fb496e5410e9414f7cd8c938c6eda225630",
    "FUTURE_PROMPT": "00a1241faf1a8df1c786c47a30b657715de9ea2da52f3897e490c1ddad5c98de",
    "IMPORTANT_OBJECT_PROMPT1": "b73408d708616ec4efea183749fa1d8d03d85e03f8356570cd9e17f2e8051553",
    "IMPORTANT_OBJECT_PROMPT2": "4cae013cbde6c43c7e2298c117ef56b0734d3b2186f4ec734c7f581a075d74ff",
    "KEY_43_GT_PROMPT": "6698c8e4ced5d73bcf471556a255bafdef444d0949ad120dc986d79dbfa8d54b",
    "KEY_43_A_PROMPT": "943f5c1d1dc2d50eb0deb287a1156ad5ded24e16d3c0bf6279a17f8ed95c2c2d",
}


class Scripted:
    """A judge that answers from a list and records every request."""

    def __init__(self, *replies: str | None) -> None:
        self.replies = list(replies)
        self.requests: list[list[dict[str, str]]] = []

    def __call__(self, messages: list[dict[str, str]]) -> str | None:
        self.requests.append(messages)
        return self.replies.pop(0)


def score_reply(score: Any, reason: str = "ok") -> str:
    return json.dumps({"reason": reason, "score": score})


def objects(*names: str) -> dict[str, str]:
    """A ground-truth dict desc -> tag, all tags unknown to key_object_infos (base weight 1)."""
    return {n: f"<c{i}<CAM_FRONT,1.0,2.0>>" for i, n in enumerate(names)}


# ---------------------------------------------------------------------------- prompts

def test_prompts_are_the_reference_strings() -> None:
    got = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in ref.PROMPTS.items()}
    assert got == PROMPT_SHA256
    assert ref.SYSTEM_PROMPT == (
        "\nYou're evaluating answers about autonomous driving given by other visual-language models. \n"
        "The question, its ground truth and anwser to be reviewed will be given below.\n"
        "Rate the answer whith a score in 0-100, and give reasons. use JSON output.\n" + ref.COLOR_PROMPT + "\n")


def test_system_prompt_per_question() -> None:
    plain = ref.SYSTEM_PROMPT + ref.NORMAL_EXAMPLE
    assert ref.system_prompt_for(12) == plain
    assert ref.system_prompt_for(7) == ref.SYSTEM_PROMPT + ref.Q7_APPENDIX          # no example
    for qid in (2, 3, 4, 15):
        assert ref.system_prompt_for(qid) == ref.SYSTEM_PROMPT                         # no example, no note
    assert ref.system_prompt_for(30) == plain + ref.Q30_APPENDIX
    assert ref.system_prompt_for(31) == plain + ref.Q31_APPENDIX
    assert ref.system_prompt_for(8, speed=0.2).endswith("low speed (0.20 m/s), it is reasonable for the VLM to omit "
                                                         "braking, even if the ground truth indicates deceleration "
                                                         "or stopping.")
    assert ref.system_prompt_for(8, speed=0.5) == plain
    assert ref.system_prompt_for(8) == plain                                           # 4.0 m/s default


def test_color_hint() -> None:
    assert ref.color_hint("the navy car<c1<CAM_FRONT,1,2>>") == (
        "Tolerable mistakes: Color 'navy' might be mistaken for '['blue']'. ")
    assert ref.color_hint("the black car") == ""


# ---------------------------------------------------------------------------- objects

def test_parse_objects_published_form() -> None:
    text = ("The construction warning sign(<c14757<CAM_FRONT,1095.6,496.6>>), the black car that is to the front of "
            "the ego vehicle(<c14785<CAM_FRONT,800.0,513.9>>).")
    assert ref.parse_objects(text) == {
        "The construction warning sign": "<c14757<CAM_FRONT,1095.6,496.6>>",
        "The black car that is to the front of the ego vehicle": "<c14785<CAM_FRONT,800.0,513.9>>",
    }


def test_parse_objects_numbers_repeats_and_ignores_plain_text() -> None:
    text = "the car(<c1<CAM_FRONT,1.0,2.0>>), the car(<c2<CAM_FRONT,3.0,4.0>>), the car(<c3<CAM_BACK,5.0,6.0>>)."
    assert list(ref.parse_objects(text)) == ["The car", "The car 2", "The car 3"]
    assert ref.parse_objects("There is no important object in the scene.") == {}


# ---------------------------------------------------------------------------- Q19

def test_q19_weights() -> None:
    # n = 3: positions 3.75, 2.75, 1.75 (sum 8.25); the second is a role object (x3).
    gt = objects("a", "b", "c")
    infos = {gt["b"]: {"is_role": True, "is_dangerous": False}}
    w, extra = ref.q19_weights(gt, infos)
    total = 3.75 + 3 * 2.75 + 1.75
    assert w == pytest.approx({"a": 3.75 / total, "b": 8.25 / total, "c": 1.75 / total})
    assert extra == pytest.approx(1.75 / total / 2)


def test_q19_only_last_object_named() -> None:
    # Ideal DCG uses the matched object's own weight: NDCG = 1. F1: P = 1, R = 1.75/8.25 = 7/33 -> F1 = 0.35.
    judge = Scripted(json.dumps({"list": ["C"]}))
    gt = "A(<c1<CAM_FRONT,1.0,2.0>>), b(<c2<CAM_FRONT,1.0,2.0>>), c(<c3<CAM_FRONT,1.0,2.0>>)."
    score, why = ref.score_question(19, "Q?", gt, "the c", judge=judge, key_object_infos={})
    assert score == 35.0
    assert why["ndcg_score"] == 100.0
    assert judge.requests == [[
        {"role": "system", "content": ref.IMPORTANT_OBJECT_PROMPT2},
        {"role": "user", "content": '{"list": ["A", "B", "C"], "sentence": "the c"}'},
    ]]


def test_q19_reversed_order() -> None:
    # n = 2: weights 2.5/4, 1.5/4. DCG = .375 + .625/log2(3); IDCG = .625 + .375/log2(3).
    ndcg = (0.375 + 0.625 / math.log2(3)) / (0.625 + 0.375 / math.log2(3))
    assert ndcg == pytest.approx(0.892911, abs=1e-6)
    score, _ = ref.q19_from_lists(objects("A", "B"), ["B", "A"], {})
    assert round(score, 2) == 89.29


def test_q19_extra_object() -> None:
    # extra weighs .375/2; P = .625/(.625+.1875) = 10/13, R = 5/8 -> F1 = 100/145.
    score, why = ref.q19_from_lists(objects("A", "B"), ["A", "the road"], {})
    assert round(score, 2) == 68.97
    assert why["weights"]["the road"] == pytest.approx(0.1875)


def test_q19_heavier_later_object_first_is_capped() -> None:
    # A normal (2.5), B role (3 x 1.5 = 4.5): naming B first beats the GT order; NDCG capped at 100.
    gt = objects("A", "B")
    infos = {gt["B"]: {"is_role": False, "is_dangerous": True}}
    assert ref.q19_from_lists(gt, ["B", "A"], infos)[0] == 100.0
    assert ref.q19_from_lists(gt, ["A", "B"], infos)[0] == 100.0


def test_q19_repeated_mention_counts_twice() -> None:
    # GT A, B, C (weights 15/33, 11/33, 7/33); ["A", "A"]: TP = 30/33, FN = 18/33 -> R = 5/8, F1 = 10/13;
    # NDCG > 1 -> capped. Score 76.92.
    assert round(ref.q19_from_lists(objects("A", "B", "C"), ["A", "A"], {})[0], 2) == 76.92


def test_q19_without_ground_truth_objects_is_zero() -> None:
    judge = Scripted(json.dumps({"list": []}))
    assert ref.score_question(19, "Q", "There is no important object in the scene.", "None.", judge=judge,
                              key_object_infos={})[0] == 0


def test_q19_unparseable_judge_is_zero() -> None:
    judge = Scripted('```json\n{"list": ["A"]}\n```')
    assert ref.score_question(19, "Q", "A(<c1<CAM_FRONT,1.0,2.0>>).", "A", judge=judge,
                              key_object_infos={})[0] == 0


# ---------------------------------------------------------------------------- multi-object

CAR, NAVY = "<c5<CAM_FRONT,1.0,2.0>>", "<c6<CAM_FRONT,3.0,4.0>>"
INFOS = {CAR: {"Detailed_description": "the black car", "is_role": True, "is_dangerous": False},
         NAVY: {"Detailed_description": "the navy car", "is_role": False, "is_dangerous": False}}
GT24 = f"The black car({CAR}) is stopped. The navy car({NAVY}) is moving."


def test_listed_gt_descriptions_carry_the_text_before_them() -> None:
    # parse_objects takes everything since the previous object as the next description.
    assert list(ref.parse_objects(GT24)) == ["The black car", "Is stopped. The navy car"]


def test_listed_object_score_and_requests() -> None:
    # Both named; F1 = 1; object score = (80 * 3 + 40 * 1) / 4 = 70.
    judge = Scripted(json.dumps({"list": ["The black car", "Is stopped. The navy car"]}), score_reply(80),
                     score_reply(40))
    score, _ = ref.score_question(24, "Q?", GT24, "ans", judge=judge, key_object_infos=INFOS,
                                  object_tags=[CAR, NAVY])
    assert score == 70.0
    assert len(judge.requests) == 3
    assert judge.requests[1] == [
        {"role": "system", "content": ref.LISTED_PROMPT + ref.LISTED_EXAMPLE},
        {"role": "user", "content": f"question: Q?\ngt: {GT24}\nanswer from VLM: ansfocus: the black car{CAR}"},
    ]
    assert judge.requests[2][1]["content"].endswith(
        f"focus: the navy car{NAVY} (Tolerable mistakes: Color 'navy' might be mistaken for '['blue']'. )")


def test_listed_judges_every_tag_even_unnamed() -> None:
    # Only the navy car is named: TP 1, FN 3 -> F1 = 2*(1*.25)/1.25 = .4; object score 40/1 -> 16.
    judge = Scripted(json.dumps({"list": ["Is stopped. The navy car"]}), score_reply(90), score_reply(40))
    assert ref.score_question(24, "Q", GT24, "a", judge=judge, key_object_infos=INFOS,
                              object_tags=[CAR, NAVY])[0] == 16.0
    assert len(judge.requests) == 3


@pytest.mark.parametrize(("qid", "expected"), [(28, 80.0), (47, 80.0), (24, 96.0), (27, 96.0)])
def test_listed_false_positive_weight(qid: int, expected: float) -> None:
    # GT: the black car (weight 3) + one extra; FP 1.5 -> P = 2/3, F1 = .8; FP .25 -> P = 12/13, F1 = .96.
    gt = f"The black car({CAR})."
    score, _ = ref.listed_from_lists(qid, ref.parse_objects(gt), ["The black car", "a tree"], {CAR: 3.0},
                                     {CAR: 100})
    assert round(score, 2) == expected


def test_listed_gt_object_outside_object_tags_dilutes() -> None:
    # GT names A and B, object_tags only A (weight 1). Both named: F1 = 1; denominator max(1, 1 + .25) -> 100/1.25.
    gt = f"A({CAR}), b({NAVY})."
    score, _ = ref.listed_from_lists(24, ref.parse_objects(gt), ["A", "B"], {CAR: 1}, {CAR: 100})
    assert score == 80.0


def test_listed_scores_are_not_clamped_but_the_result_is() -> None:
    gt = f"A({CAR}), b({NAVY})."
    both = {CAR: 1, NAVY: 1}
    assert ref.listed_from_lists(24, ref.parse_objects(gt), ["A", "B"], both, {CAR: 150, NAVY: 50})[0] == 100.0
    assert ref.listed_from_lists(24, ref.parse_objects(gt), ["A", "B"], both, {CAR: 150, NAVY: 10})[0] == 80.0
    with pytest.raises(ref.ReferenceCrash):
        ref.listed_from_lists(24, ref.parse_objects(gt), ["A"], both, {CAR: "90", NAVY: 10})


def test_listed_without_objects_is_zero() -> None:
    judge = Scripted(json.dumps({"list": ["something"]}))
    assert ref.score_question(28, "Q", "No vehicle overlaps.", "a car", judge=judge, key_object_infos={},
                              object_tags=[])[0] == 0


# ---------------------------------------------------------------------------- Q43 / Q50

@pytest.mark.parametrize(("gt", "pred", "expected"), [
    (["GO_STRAIGHT", "KEEP"], ["GO_STRAIGHT", "KEEP"], 100.0),
    (["GO_STRAIGHT", "KEEP"], ["FOLLOW_LANE", "KEEP"], 100.0),           # FOLLOW_LANE counts as GO_STRAIGHT
    (["FOLLOW_LANE", "KEEP"], ["GO_STRAIGHT", "KEEP"], 50.0),            # ... only that way round
    (["GO_STRAIGHT", "KEEP"], ["FOLLOW_LANE", "ACCELERATE"], 60.0),      # F1 .5 x 1.2
    (["FOLLOW_LANE", "STOP"], ["FOLLOW_LANE", "KEEP"], 25.0),            # F1 .5 x .5
    (["FOLLOW_LANE", "STOP"], ["FOLLOW_LANE", "ACCELERATE"], 12.5),      # F1 .5 x .25
    (["FOLLOW_LANE", "DECELERATE"], ["FOLLOW_LANE", "ACCELERATE"], 40.0),  # F1 .5 x .8
    (["FOLLOW_LANE", "KEEP"], ["FOLLOW_LANE", "KEEP", "DECELERATE"], 88.0),  # F1 .8 x 1.1
    # F1 6/7 x 1.2 > 1 -> capped at 1
    (["FOLLOW_LANE", "DEVIATE_LEFT", "KEEP"], ["FOLLOW_LANE", "DEVIATE_LEFT", "KEEP", "ACCELERATE"], 100.0),
    (["KEEP"], ["ACCELERATE"], 0.0),
    ([], [], 0.0),                                                        # nothing to compare: F1 0
])
def test_control_keys(gt: list[str], pred: list[str], expected: float) -> None:
    assert round(ref.spd_dir_key_eval(gt, pred)[0], 2) == expected


def test_q50_regex_keys() -> None:
    assert ref.extract_keys("Direction Key = DEVIATE_RIGHT, Speed Key = STOP") == ["DEVIATE_RIGHT", "STOP"]
    assert ref.extract_keys("follow_lane, keep; the STOP_SIGN; XKEEP") == []           # case-sensitive, whole words
    assert ref.score_question(50, "Q", "FOLLOW_LANE, KEEP", "Direction Key = follow_lane, Speed Key = keep",
                              judge=Scripted(), key_object_infos={})[0] == 0
    # every key word counts: {FOLLOW_LANE, DEVIATE_RIGHT, DECELERATE} vs {DEVIATE_RIGHT, DECELERATE} -> F1 .8
    assert ref.score_question(50, "Q", "DEVIATE_RIGHT, DECELERATE",
                              "Not FOLLOW_LANE: DEVIATE_RIGHT and DECELERATE.", judge=Scripted(),
                              key_object_infos={})[0] == 80.0


def test_q43_judge_keys_and_unspecified_lane_change() -> None:
    # GT {CHANGE_LANE_LEFT, KEEP}; answer {CHANGE_LANE, KEEP}: as is F1 .5 -> 50; as CHANGE_LANE_LEFT -> 100; mean 75.
    judge = Scripted(json.dumps({"direction_key": "CHANGE_LANE_LEFT", "speed_key": "KEEP"}),
                     json.dumps({"Direction_key": "CHANGE_LANE", "Speed_key": "KEEP"}))
    score, _ = ref.score_question(43, "Q", "Change to the left lane.", "Change lanes.", judge=judge,
                                  key_object_infos={})
    assert score == 75.0
    assert judge.requests == [
        [{"role": "system", "content": ref.KEY_43_GT_PROMPT},
         {"role": "user", "content": '"Change to the left lane."'}],
        [{"role": "system", "content": ref.KEY_43_A_PROMPT}, {"role": "user", "content": '"Change lanes."'}],
    ]


def test_q43_unparseable_reply_crashes_the_reference() -> None:
    with pytest.raises(ref.ReferenceCrash):
        ref.score_question(43, "Q", "gt", "a", judge=Scripted("['GO_STRAIGHT', 'KEEP']", "{}"), key_object_infos={})
    # an object without the expected fields is an empty key list: F1 0
    assert ref.score_question(43, "Q", "gt", "a", judge=Scripted('{"keys": ["KEEP"]}', '{"keys": ["KEEP"]}'),
                              key_object_infos={})[0] == 0


# ---------------------------------------------------------------------------- plain judge, Q8

def test_plain_judge_reply_handling() -> None:
    def one(reply: str) -> Any:
        return ref.score_question(12, "Q", "gt", "A", judge=Scripted(reply), key_object_infos={})

    assert one(score_reply(87.456)) == (87.46, "ok")
    assert one(score_reply(120)) == (120, "ok")                               # not clamped
    assert one(json.dumps({"reasons": "r", "score": 50})) == (50, "r")
    assert one('```json\n{"reason": "r", "score": 90}\n```') == (0, "error")  # strict json.loads
    assert one('{"reason": "r"}') == (0, "error")
    with pytest.raises(ref.ReferenceCrash):
        one(score_reply("85"))                                                # round("85", 2)
    judge = Scripted(score_reply(10))
    ref.score_question(12, "Q?", "gt.", "ans.", judge=judge, key_object_infos={})
    assert judge.requests[0][1] == {"role": "user", "content": "question: Q?\ngt: gt.\nanswer from VLM: ans."}


def test_q8_reads_the_ego_record_not_the_top_level_speed(tmp_path: Path) -> None:
    s0, s1, _ = (name for name, _, _ in pub.SCENARIOS)
    w = pub.write_dataset(tmp_path, top_level_speed={(s0, 5): 0.1}, no_ego=[(s0, 10)])

    def system(scenario: str, frame: int) -> str:
        judge = Scripted(score_reply(100))
        ref.score_question(8, "Brake?", "Yes.", "No.", judge=judge, key_object_infos={},
                           anno_dir=w.b2d_root / scenario / "anno", frame_number=frame)
        return judge.requests[0][0]["content"]

    plain = ref.SYSTEM_PROMPT + ref.NORMAL_EXAMPLE
    assert system(s0, 5) == plain                                  # ego record 5.0 m/s; top-level 0.1 ignored
    assert system(s1, 5) == plain + ref.q8_appendix(0.2)           # ego record 0.2 m/s
    assert system(s0, 500) == plain                                # no file: 4.0 m/s
    with pytest.raises(ref.ReferenceCrash):
        system(s0, 10)                                             # file without an ego record


# ---------------------------------------------------------------------------- Q42

def test_geometry_helpers() -> None:
    assert ref.mean_angle(10, 350) == 0
    assert ref.mean_angle(0, 180) == 0                             # a U-turn's heading counts as straight on
    assert ref.yaw_deg((0, 0), (0, -1)) == 270
    sq = ref.rect_corners(0, 0, 0, 1, 1)
    assert ref.rects_intersect(sq, ref.rect_corners(2, 0, 0, 1, 1))          # touching edges collide
    assert not ref.rects_intersect(sq, ref.rect_corners(2.001, 0, 0, 1, 1))
    assert ref.rects_intersect(sq, ref.rect_corners(2.3, 0, 45, 1, 1))       # a corner reaches in
    assert ref.to_world([1.0, 2.0, 0.0], [[1, 0, 0, -5], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]) == (6.0, 2.0, 0.0)


def _q42(w: pub.Written, scenario: str, frame: int, answer: str) -> float:
    return ref.score_question(42, "Q", "", answer, judge=Scripted(), key_object_infos={},
                              anno_dir=w.b2d_root / scenario / "anno", frame_number=frame)[0]


def test_q42_simulation(tmp_path: Path) -> None:
    w = pub.write_dataset(tmp_path)
    s0, s1, _ = (name for name, _, _ in pub.SCENARIOS)
    wp = lambda step, dy=0.0: json.dumps({f"{k * 0.5:.1f}s": [step * k, dy] for k in range(1, 9)})  # noqa: E731
    # ego at x = 2.5, 5 m/s: the ground truth path (20 m in 4 s) stops short of the car at x = 30.
    assert _q42(w, s0, 5, json.dumps(pub.gt_waypoints(5, 5.0))) == 100.0
    # half as far: efficiency 10/20 -> 60 + 20
    assert _q42(w, s0, 5, wp(1.25)) == 80.0
    # 28 m: reaches the parked car (one object, counted once) -> 0.5 * 60 + 40; efficiency capped at 1
    assert _q42(w, s0, 5, wp(3.5)) == 70.0
    # 7.5 m to the left, through the pedestrian at (20, 8) (a walker counts): 0.5 * 60 + 40
    assert _q42(w, s0, 5, wp(2.5, 7.5)) == 70.0
    # 4 m to the left: clear of both the car (y 0) and the pedestrian (y 8)
    assert _q42(w, s0, 5, wp(2.5, 4.0)) == 100.0
    # the slow scenario: the real ego moves 0.8 m <= 1 m, so any path is efficient; standing still is fine
    assert _q42(w, s1, 5, wp(0.0)) == 100.0
    assert _q42(w, s0, 5, "```json\n" + wp(2.5) + "\n```") == 100.0
    assert _q42(w, s0, 5, "Waypoints: " + wp(2.5)) == 0                  # text around the JSON: not JSON
    with pytest.raises(ref.ReferenceCrash):
        _q42(w, s0, 5, json.dumps({"9.0s": [1.0, 0.0]}))                 # frame 95 has no annotation


# ---------------------------------------------------------------------------- aggregation

def test_make_stats_groups_by_scenario_type() -> None:
    st = ref.make_stats([("Accident_Town1_Route1", 7, 100.0), ("Accident_Town2_Route2", 7, 50.0),
                         ("ParkingExit_Town3_Route3", 19, 20.0)])
    assert st == {"overall_avg": 56.6667, "qid_avg_scores": {7: 75.0, 19: 20.0},
                  "scenario_avg_scores": {"Accident": 75.0, "ParkingExit": 20.0},
                  "scenario_qid_avg_scores": {"Accident": {7: 75.0}, "ParkingExit": {19: 20.0}}}
    assert ref.make_stats([])["overall_avg"] == 0


def test_route_stats(tmp_path: Path) -> None:
    for route, scores in (("RouteA", [10, 20]), ("RouteB", [60])):
        (tmp_path / route).mkdir()
        for i, s in enumerate(scores):
            doc = {"QA": {"Category": [{"qid": 50, "score": s}, {"qid": 42, "score": 100}]}}
            (tmp_path / route / f"{i:05d}.json").write_text(json.dumps(doc))
    st = ref.route_stats(tmp_path, ["RouteA", "RouteB", "Missing"])
    assert st["per_scenario"]["RouteA"]["50"] == {"average_score": 15.0, "count": 2}
    assert st["overall"]["50"] == {"average_score": 30.0, "count": 3}
    assert "Missing" not in st["per_scenario"]


# ---------------------------------------------------------------------------- layout, end to end

def test_published_layout(tmp_path: Path) -> None:
    w = pub.write_dataset(tmp_path, all_cameras=True)
    frames = ref.published_frames(w.vqa_root)
    assert [(s, f) for s, f, _ in frames] == sorted(w.frames)
    s, f, path = frames[0]
    assert path == tmp_path / "vqa" / s / f"{f:05d}.json"
    for cam in pub.CAMERAS:
        assert (tmp_path / "images" / s / "camera" / cam / f"{f:05d}.jpg").is_file()
    doc = json.loads(path.read_text())
    assert set(doc) == {"key_object_infos", "QA", "extra_flags", "image_paths"}
    assert list(doc["QA"]) == ["perception", "prediction", "planning", "behaviour"]
    q19 = doc["QA"]["perception"][0]
    assert list(ref.parse_objects(q19["A"]).values()) == q19["object_tags"]
    assert ref.ego_speed(tmp_path / "images" / s / "anno", f) == 5.0


def test_end_to_end_ground_truth_answers_score_100(tmp_path: Path) -> None:
    w = pub.write_dataset(tmp_path)

    def judge(messages: list[dict[str, str]]) -> str:
        system, user = messages[0]["content"], messages[1]["content"]
        if system == ref.IMPORTANT_OBJECT_PROMPT2:
            return json.dumps({"list": json.loads(user)["list"]})
        if system in (ref.KEY_43_GT_PROMPT, ref.KEY_43_A_PROMPT):
            return json.dumps({"direction_key": "CHANGE_LANE_LEFT", "speed_key": "DECELERATE"})
        return score_reply(100)

    recs = ref.evaluate_published(w.vqa_root, w.b2d_root, lambda s, f, c, i, qa: qa["A"], judge)
    assert len(recs) == 4 * 11
    assert {r["score"] for r in recs} == {100}
    st = ref.make_stats((r["scenario"], r["qid"], r["score"]) for r in recs)
    assert st["overall_avg"] == 100 and set(st["scenario_avg_scores"]) == {"ParkedObstacle", "HazardAtSideLane"}
