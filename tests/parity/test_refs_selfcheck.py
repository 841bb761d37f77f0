"""Self-check of the reference re-implementations against hand-derived numbers.

Every expected value below was worked out by hand from the reference source (see the
docstrings in ref_mmbench_gui.py / ref_screenspot.py), not by running the functions.
"""

from __future__ import annotations

import json
import math

import pytest
from PIL import Image

from . import messy_outputs as mo
from . import published_gui as pg
from . import ref_mmbench_gui as mm
from . import ref_screenspot as ss

approx = pytest.approx


# -- MMBench-GUI L1 ---------------------------------------------------------------------

REF_OPTION = {
    "bare_upper": "C", "bare_lower": "C", "letter_dot": "B", "letter_colon_text": "D", "letter_paren": "E",
    "letter_close_paren": "A", "based_on_sentence": "B", "based_on_sentence_dot": "C", "option_lower": "B",
    "option_upper": "D", "answer_colon": "E", "answer_colon_lower": "F", "answer_fullwidth_colon": "A",
    "answer_is": "B", "correct_answer_is_paren": "D", "quoted": "C", "double_quoted": "E", "boxed": "B",
    "think_then_letter": "B", "think_unclosed": "A", "echo_options": "A", "clicking_sentence": "C",
    "article_a": "B", "empty": None, "whitespace": None, "truncated": None, "letter_g": None, "two_letters": "A",
    "markdown_bold": "C", "final_answer_line": "D", "leading_spaces_letter": "F", "number_only": None,
    "chinese_answer": "C", "letter_then_word": "E", "each_line_word": "B",
}
INTENDED_DIFFERS = {"based_on_sentence": "C", "clicking_sentence": "D"}  # only a word's first letter changes
INTENDED_THINK_STRIPPED = {"think_then_letter": "C", "think_unclosed": None}


@pytest.mark.parametrize("case_id,text", mo.L1_CASES, ids=[c for c, _ in mo.L1_CASES])
def test_l1_reference_option_parser(case_id, text):
    assert mm.parse_option(text) == REF_OPTION[case_id]


@pytest.mark.parametrize("case_id,text", mo.L1_CASES, ids=[c for c, _ in mo.L1_CASES])
def test_l1_intended_option_parser(case_id, text):
    assert mm.intended_parse_option(text) == INTENDED_DIFFERS.get(case_id, REF_OPTION[case_id])
    want = {**INTENDED_DIFFERS, **INTENDED_THINK_STRIPPED}.get(case_id, REF_OPTION[case_id])
    assert mm.intended_parse_option(text, strip_think=True) == want


def test_messy_lists_are_long_enough():
    for cases in (mo.L1_CASES, mo.L2_UITARS_CASES, mo.PRO_QWEN2VL_CASES, mo.V2_SEECLICK_CASES):
        assert len(cases) >= 30
        assert len({c for c, _ in cases}) == len(cases)


L1_OUTPUTS = ["A", "Based on the screen, the answer is C", "f", "Option b", "answer is D"]


def test_l1_flatten_and_scores():
    rows = mm.flatten_l1(pg.DEMO_L1)
    assert [(r["index"], r["platform"], r["difficulty"], r["answer"]) for r in rows] == [
        (0, "os_windows", "easy", "A"), (1, "os_windows", "medium", "C"), (2, "os_windows", "hard", "F"),
        (3, "os_android", "easy", "B"), (4, "os_android", "medium", "D")]
    # "answer is D" -> pattern 4 reads the "a" of "answer" (IGNORECASE) -> A.
    assert mm.l1_hits(rows, L1_OUTPUTS) == [1, 0, 1, 1, 0]
    ref = mm.score_l1(rows, L1_OUTPUTS)
    assert ref["easy"]["os_windows"] == {"score": 1.0, "sample_num": 1}
    assert ref["easy"]["level_score"] == 1.0 and ref["easy"]["level_sample_num"] == 2
    assert ref["medium"]["level_score"] == 0.0
    assert ref["hard"]["os_windows"]["score"] == 1.0
    assert ref["hard"]["os_android"]["sample_num"] == 0 and math.isnan(ref["hard"]["os_android"]["score"])
    assert math.isnan(ref["hard"]["level_score"])  # the empty-cell bug
    assert ref["total_sample_num"] == 5 and "overall" not in ref

    good = mm.intended_score_l1(rows, L1_OUTPUTS)
    assert good["hard"] == {"os_windows": {"score": 1.0, "sample_num": 1}, "level_sample_num": 1, "level_score": 1.0}
    assert good["medium"]["level_score"] == 1.0 and good["overall"] == 1.0


def test_l1_weighted():
    rows = mm.flatten_l1(pg.DEMO_L1)
    w = mm.score_l1(rows, ["A", "x", "x", "B", "x"], weighted=True)  # hits 1,0,0,1,0
    assert w["easy"]["os_windows"] == approx({"score": 1.0, "score_weighted": 0.8, "score_base": 0.8, "sample_num": 1})
    assert w["easy"]["os_android"]["score_weighted"] == approx(0.75)
    assert w["medium"]["level_score"] == 0.0
    assert math.isnan(w["hard"]["level_score"])


# -- MMBench-GUI L2 ---------------------------------------------------------------------


def test_smart_resize():
    assert mm.smart_resize(720, 1280) == (728, 1288)
    assert mm.smart_resize(2556, 1179) == (2548, 1176)
    assert mm.smart_resize(2160, 3840) == (2156, 3836)
    assert mm.smart_resize(6000, 8000) == (3080, 4116)  # above 16384*28*28: floored
    assert mm.smart_resize(140, 140) == (280, 280)  # below 100*28*28: ceiled


REF_UITARS = {  # 1280x720 image -> 1288x728 model input
    "action_start_box": (0.5, 0.5), "action_point_tag": (0.5, 0.5), "bare_pair": (0.5, 0.5),
    "bare_pair_spaces": (0.5, 0.5), "edge_top_left": (0.0, 0.0), "edge_bottom_right": (1.0, 1.0),
    "beyond_input": (1300 / 1288, 700 / 728), "original_pixels": (1280 / 1288, 720 / 728),
    "way_beyond": (2.0, 2.0), "relative_1000": (1001 / 1288, 500 / 728), "decimal": None,
    "negative": (10 / 1288, 0.5), "three_numbers": None, "box_four": None, "two_points": None,
    "thought_with_number": None, "thought_no_number": (1200 / 1288, 40 / 728), "think_block": None,
    "empty": None, "no_numbers": None, "truncated": None, "one_number": None, "normalized_floats": None,
    "zero_one_ints": (1 / 1288, 1 / 728), "json_point": None, "x_y_labels": (0.5, 0.5),
    "square_brackets": (0.5, 0.5), "newline_sep": (0.5, 0.5), "model_name_digits": None,
    "huge": (99999 / 1288, 99999 / 728), "y_only_beyond": (10 / 1288, 800 / 728),
    "x_beyond_y_in": (1400 / 1288, 10 / 728),
}


@pytest.mark.parametrize("case_id,text", mo.L2_UITARS_CASES, ids=[c for c, _ in mo.L2_UITARS_CASES])
def test_uitars_parse(case_id, text):
    want = REF_UITARS[case_id]
    got = mm.uitars_parse(text, 1280, 720)
    assert got == (None if want is None else approx(want))


def test_l2_double_division_hits_top_left():
    rec = pg.l2_record(0, "os_windows", "basic", "icon", [0.0, 0.0, 0.01, 0.01])
    # (1300, 700) -> (1.0093, 0.9615) -> x > 1 -> both / (1280, 720) -> (0.00079, 0.00134): a hit.
    assert mm.l2_code(rec, "(1300,700)", mm.uitars_parse_fn) == mm.HIT
    assert mm.intended_l2_code(rec, "(1300,700)", mm.uitars_parse_fn) == mm.MISS
    # y alone beyond: (10, 800) -> y 1.0989 -> both divided -> (6.1e-6, 0.0015): a hit too.
    assert mm.l2_code(rec, "(10,800)", mm.uitars_parse_fn) == mm.HIT
    assert mm.l2_code(rec, "(644.5,364.2)", mm.uitars_parse_fn) == mm.ERROR_FORMAT


def test_l2_boxes():
    assert mm.l2_box([0.1, 0.2, 0.3, 0.4], 1000, 500) == [0.1, 0.2, 0.3, 0.4]
    assert mm.l2_box([100, 50, 200, 100], 1000, 500) == approx([0.1, 0.1, 0.2, 0.2])
    assert mm.l2_box([-1, 0.2, 0.5, 0.6], 1000, 500) == approx([0.0, 0.0004, 0.0005, 0.0012])  # the -1 bug
    assert mm.intended_l2_box([-1, 0.2, 0.5, 0.6], 1000, 500) == [0.0, 0.2, 0.5, 0.6]
    with pytest.raises(ValueError):
        mm.l2_box([1200, 0, 1300, 10], 1000, 500)


def test_default_parsers():
    assert mm.default_parse_coordinates("The point is (12.5, 30)") == (12.5, 30.0)
    assert mm.default_parse_coordinates("x=0.25 y=0.75 then (1,2)") == (0.25, 0.75)
    assert mm.default_parse_coordinates("nothing") is None
    rec = pg.DEMO_L2_FULL[1]
    assert mm.l2_code(rec, "(0.55,0.55)", mm.reference_default_parse) == mm.ERROR_FORMAT
    assert mm.intended_l2_code(rec, "(704,396)", mm.default_parse_fn_as_intended) == mm.HIT  # 0.55, 0.55


L2_OUTPUTS = [
    "(193,109)",  # win basic icon: (0.1498, 0.1497) hit
    "(644,364)",  # win basic text: (0.5, 0.5) on the edge: hit
    "(1300,700)",  # win adv icon [0,0,.1,.1]: double division -> hit (intended: miss)
    "(644.5,364.2)",  # win adv text: 4 digit runs -> error format
    "(529,1147)",  # ios basic icon (1176x2548 input): (0.4498, 0.4502) hit
    "Thought: 2 items\nAction: click(start_box='(235,2100)')",  # 3 runs -> error format
    "(588,1274)",  # ios adv icon: (0.5, 0.5) hit
    "(100,100)",  # ios adv text: miss
]


def test_score_l2_reference():
    s = mm.score_l2(pg.DEMO_L2_FULL, L2_OUTPUTS)
    assert s["basic"]["os_windows"] == {
        "Total num": 2, "Icon num": 1, "Text num": 1, "Total accuracy": 100.0, "Icon accuracy": 100.0,
        "Text accuracy": 100.0, "Correct num": 2, "Wrong num": 0, "Error format num": 0}
    assert s["basic"]["os_ios"]["Total accuracy"] == 50.0 and s["basic"]["os_ios"]["Error format num"] == 1
    assert s["advanced"]["os_windows"]["Text accuracy"] == 0.0 and s["advanced"]["os_windows"]["Error format num"] == 1
    assert s["advanced"]["os_ios"]["Wrong num"] == 1 and s["advanced"]["os_ios"]["Total accuracy"] == 50.0
    assert s["Basic accuracy"] == approx(75.0)
    assert s["Advanced accuracy"] == approx(50.0)
    assert s["Average accuracy"] == approx(62.5)


def test_score_l2_intended_and_default_parser():
    good = mm.score_l2(pg.DEMO_L2_FULL, L2_OUTPUTS, intended=True)
    assert good["advanced"]["os_windows"]["Total accuracy"] == 0.0
    assert good["Advanced accuracy"] == approx(25.0) and good["Average accuracy"] == approx(50.0)
    unconfigured = mm.score_l2(pg.DEMO_L2_FULL, L2_OUTPUTS, parse=mm.reference_default_parse)
    assert unconfigured["Average accuracy"] == 0.0
    assert [c["Error format num"] for lv in ("basic", "advanced") for c in unconfigured[lv].values()] == [2, 2, 2, 2]


def test_score_l2_empty_cell():
    outs = L2_OUTPUTS[:5] + L2_OUTPUTS[6:]
    with pytest.raises(ZeroDivisionError):
        mm.score_l2(pg.DEMO_L2_EMPTY_TEXT, outs)
    good = mm.score_l2(pg.DEMO_L2_EMPTY_TEXT, outs, intended=True)
    assert good["basic"]["os_ios"]["Text accuracy"] is None and good["basic"]["os_ios"]["Total accuracy"] == 100.0
    assert good["Basic accuracy"] == approx(100.0)
    with pytest.raises(KeyError):  # no advanced samples at all
        mm.score_l2(pg.DEMO_L2_FULL[:2], L2_OUTPUTS[:2])


# -- ScreenSpot-Pro ---------------------------------------------------------------------

REF_QWEN2VL = {
    "box_tags": (0.15, 0.15), "box_tags_ref": (0.034, 0.056), "two_boxes_last_wins": (0.55, 0.55),
    "box_tags_spaces": None, "box_tags_decimals": None, "box_tags_point_only": None,
    "box_start_only": (0.15, 0.15), "bare_point": (0.15, 0.15), "bare_point_spaces": (0.15, 0.15),
    "bare_box": (0.15, 0.15), "edge_zero": (0.0, 0.0), "edge_1000": (1.0, 1.0), "just_beyond": (1.001, 0.5),
    "pixels_4k": (3.0, 2.0), "normalized_floats": (0.00015, 0.00015), "three_numbers": None, "five_numbers": None,
    "negative": (-0.005, 0.15), "two_points": (0.525, 0.525), "sentence_point": (0.15, 0.15),
    "sentence_with_count": None, "think_block": (0.08, 0.08), "empty": None, "no_numbers": None, "truncated": None,
    "json_bbox": None, "point_tag": (0.15, 0.15), "trailing_dot": (0.15, 0.15), "x_y_labels": (0.15, 0.15),
    "qwen2vl_name": None, "huge": (99.999, 99.999), "box_then_text_numbers": (0.15, 0.15),
}


@pytest.mark.parametrize("case_id,text", mo.PRO_QWEN2VL_CASES, ids=[c for c, _ in mo.PRO_QWEN2VL_CASES])
def test_qwen2vl_parse(case_id, text):
    want = REF_QWEN2VL[case_id]
    got = ss.qwen2vl_parse(text)
    assert got == (None if want is None else approx(want))


def test_qwen2vl_negative():
    assert ss.qwen2vl_negative_result("Target does not exist") == "negative"
    assert ss.qwen2vl_negative_result("(1,2)") == "positive"
    assert ss.qwen2vl_negative_result("no idea") == "wrong_format"


PRO_OUTPUTS = [
    "<|box_start|>(100,100),(200,200)<|box_end|>",  # correct
    "(1001,500)",  # wrong
    "<|box_start|>(550, 550),(560,560)<|box_end|>",  # spaces -> wrong_format
    "(1000,1000)",  # edge -> correct
    "[500, 0, 600, 100]",  # centre (0.55, 0.05) -> correct
    "There are 2 icons; the first is at (50,950).",  # 3 numbers -> wrong_format
]


def _m(correct, total, wf, text, icon):
    return {"num_correct_action": correct, "num_total": total, "wrong_format_num": wf,
            "action_acc": approx(correct / total), "text_acc": approx(text), "icon_acc": approx(icon)}


def test_score_screenspot_pro():
    s = ss.score_screenspot_pro(pg.DEMO_PRO, PRO_OUTPUTS)
    assert s["overall"] == _m(3, 6, 2, 2 / 3, 1 / 3)
    assert s["leaderboard_simple_style"] == {
        "group:Dev": _m(1, 3, 1, 1.0, 0.0), "group:Creative": _m(2, 2, 0, 1.0, 1.0), "group:CAD": _m(0, 1, 1, 0.0, 0.0)}
    assert s["leaderboard_detailed_style"] == {
        "app:vscode": _m(1, 3, 1, 1.0, 0.0), "app:photoshop": _m(2, 2, 0, 1.0, 1.0),
        "app:autocad": _m(0, 1, 1, 0.0, 0.0)}
    assert s["seeclick_style"] == {
        "plat:windows inst_style:instruction gt_type:positive": _m(3, 5, 1, 2 / 3, 1 / 2),
        "plat:macos inst_style:instruction gt_type:positive": _m(0, 1, 1, 0.0, 0.0)}
    assert set(s["fine_grained"]) == {
        "plat:windows app:vscode inst_style:instruction gt_type:positive",
        "plat:windows app:photoshop inst_style:instruction gt_type:positive",
        "plat:windows app:autocad inst_style:instruction gt_type:positive",
        "plat:macos app:vscode inst_style:instruction gt_type:positive"}
    assert s["fine_grained"]["plat:windows app:vscode inst_style:instruction gt_type:positive"] == _m(1, 2, 0, 1.0, 0.0)


# -- ScreenSpot v2 (SeeClick script) ------------------------------------------------------

REF_SEECLICK = {
    "point": (0.49, 0.5), "point_spaces": (0.49, 0.5), "box_tag": (0.5, 0.51),
    "two_box_tags_first_wins": (0.005, 0.005),
    "box_tag_spaces": None, "word_checkbox": None, "bare_box_floats": (0.5, 0.5), "edge_zero": (0.0, 0.0),
    "edge_one": (1.0, 1.0), "edge_one_dot": (1.0, 1.0), "beyond_one": (1.01, 0.5), "relative_1000": (490.0, 500.0),
    "pixels": (196.0, 400.0), "negative": (-0.1, 0.5), "three_numbers": None, "one_number": None,
    "two_points": (0.3, 0.3), "sentence": (0.49, 0.5), "sentence_with_count": None, "think_block": (0.295, 0.3),
    "empty": None, "no_numbers": None, "truncated": None, "percent": (49.0, 50.0), "qwen_box_tags": None,
    "leading_dot": (49.0, 50.0), "trailing_dot": (0.49, 0.5), "square_brackets": (0.49, 0.5), "json": (0.49, 0.5),
    "huge": (999.0, 999.0), "box_word_only": None, "box_upper_case": (0.49, 0.5),
}


@pytest.mark.parametrize("case_id,text", mo.V2_SEECLICK_CASES, ids=[c for c, _ in mo.V2_SEECLICK_CASES])
def test_seeclick_parse(case_id, text):
    want = REF_SEECLICK[case_id]
    got = ss.seeclick_parse(text)
    assert got == (None if want is None else approx(want))


V2_OUTPUTS = {
    "mobile": ["(0.30,0.30)", "<box>(0,0),(100,50)</box>", "the checkbox (0.8,0.9)"],
    "desktop": ["(490,500)", "(1.0,0.1)"],
    "web": ["Step 1: (0.5,0.05)", "(0.40,0.40,0.60,0.60)"],
}


def test_score_screenspot_v2():
    s = ss.score_screenspot_v2(pg.DEMO_V2, V2_OUTPUTS, pg.DEMO_V2_SIZES)
    assert s["per_task"]["mobile"] == approx(
        {"Action Acc": 2 / 3, "Total num": 3, "Wrong format num": 1, "Text Acc": 1.0, "Icon Acc": 0.5})
    assert s["per_task"]["desktop"] == approx(
        {"Action Acc": 0.5, "Total num": 2, "Wrong format num": 0, "Text Acc": 0.0, "Icon Acc": 1.0})
    assert s["per_task"]["web"] == approx(
        {"Action Acc": 0.5, "Total num": 2, "Wrong format num": 1, "Text Acc": 0.0, "Icon Acc": 1.0})
    assert s["tasks_result"] == [[1.0, 0.5], [0.0, 1.0], [0.0, 1.0]]
    assert s["paper_average (not printed by the script)"] == approx(3.5 / 6)


# -- published layouts ----------------------------------------------------------------------


def test_writers_produce_published_layouts(tmp_path):
    folder = pg.write_mmbench_gui(tmp_path / "lmu", l1=pg.DEMO_L1, l2=pg.DEMO_L2_FULL)
    assert folder.name == "MMBench-GUI"
    assert json.loads((folder / "L2_annotations.json").read_text())[3]["bbox"] == [0.9, 0.9, 1.0, 1.0]
    assert len(json.loads((folder / "L1_annotations.json").read_text())[0]["groups"]) == 3
    with Image.open(folder / "offline_images" / "os_ios" / "os_ios_1.png") as im:
        assert im.size == (1179, 2556)
    assert (folder / "offline_images" / "os_android" / "q11.png").is_file()

    v2 = pg.write_screenspot_v2(tmp_path / "ScreenSpot-v2", pg.DEMO_V2, pg.DEMO_V2_SIZES)
    assert sorted(p.name for p in v2.glob("*.json")) == [
        "screenspot_desktop_v2.json", "screenspot_mobile_v2.json", "screenspot_web_v2.json"]
    with Image.open(v2 / "screenspotv2_image" / "d.png") as im:
        assert im.size == (1000, 500)

    pro = pg.write_screenspot_pro(tmp_path / "ScreenSpot-Pro", pg.DEMO_PRO)
    assert sorted(p.name for p in (pro / "annotations").glob("*.json")) == [
        "autocad_windows.json", "photoshop_windows.json", "vscode_macos.json", "vscode_windows.json"]
    with Image.open(pro / "images" / "autocad_windows" / "5.png") as im:
        assert im.size == (2560, 1440)
