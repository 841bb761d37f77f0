"""The shared reading helpers of the families (pytest_uiground.models.families.reading), directly:
which match wins, how a frame scales, what an out-of-range number becomes, and the tool-call form."""

from __future__ import annotations

import pytest

from pytest_uiground.models.families import reading


def test_the_earliest_shape_wins_and_a_pair_of_pairs_is_a_box() -> None:
    assert reading.first_shape("first (10, 20) then [30, 40]") == [10, 20]
    assert reading.first_shape("box (10,20),(30,40) done") == [10, 20, 30, 40]
    assert reading.first_shape("<point>5 6</point> and later (1, 2)") == [5, 6]
    assert reading.first_shape("no numbers here") is None


def test_a_cut_off_qwen_json_is_still_read_and_a_wrong_arity_is_skipped() -> None:
    assert reading.first_qwen_json('[{"point_2d": [1, 2, 3]}, {"bbox_2d": [10, 20, 30, 40]') == [10, 20, 30, 40]
    assert reading.first_qwen_json('```json\n[{"point_2d": [512, 288], "label": "ok"') == [512, 288]


def test_to_coords_keeps_a_point_beyond_the_frame_with_a_note_and_clips_rounding_only() -> None:
    inside = reading.to_coords([1000.5, 0], 1000, 1000, "relative 0..1000")
    assert inside.point is not None and inside.point.x == 1.0 and inside.note == "", "within rounding: clipped"
    beyond = reading.to_coords([2621, 500], 1000, 1000, "relative 0..1000")
    assert beyond.point is not None and beyond.point.x == pytest.approx(2.621)
    assert "x=2621 is beyond 1000" in beyond.note and "mix-up" in beyond.note
    negative = reading.to_coords([-5, -7], 1000, 1000, "relative 0..1000")
    assert negative.point is not None and negative.point.x < 0 and negative.point.y < 0
    box = reading.to_coords([300, 400, 100, 200], 1000, 1000, "relative 0..1000")
    assert box.box is not None and (box.box.x0, box.box.y0, box.box.x1, box.box.y1) == (0.1, 0.2, 0.3, 0.4)
    assert box.point == box.box.center


def test_in_frame_never_clips() -> None:
    c = reading.in_frame(1200.0, 500.0, 1000.0, 1000.0, "norm1000")
    assert c.point is not None and c.point.x == pytest.approx(1.2) and "x=1200 is beyond 1000" in c.note


def test_tool_calls_in_order_with_a_cut_off_one_as_none_and_terminate_recognised() -> None:
    text = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 2]}}\n'
            '</tool_call>\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", '
            '"status": "failure"}}\n</tool_call><tool_call>{"name": "computer_use", "argu')
    calls = reading.tool_calls(text)
    assert len(calls) == 3 and calls[2] is None
    assert calls[0] is not None and calls[0]["arguments"] == {"action": "left_click", "coordinate": [1, 2]}
    assert [reading.is_terminate(c) for c in calls] == [False, True, False]


def test_verdicts_follow_the_card_rule_failure_first() -> None:
    assert reading.parse_verdict("The condition is met. PASSED") == "passed"
    assert reading.parse_verdict("it is not met") == "failed"
    assert reading.parse_verdict("FAILED although PASSED was expected") == "failed"
    assert reading.parse_verdict("passed (lower case)") is None


def test_model_input_size_is_never_guessed() -> None:
    with pytest.raises(ValueError, match="model_input_size"):
        reading.model_input_size(reading.ParseContext(image_size=(100, 100)))
    assert reading.model_input_size(reading.ParseContext(image_size=(100, 100), model_input_size=(56, 28))) == (56, 28)


DEEP = "[" * 5000 + "]" * 5000
HUGE = "9" * 5000


@pytest.mark.parametrize(("family", "text", "why"), [
    ("qwen3-vl", "<tool_call>\n" + DEEP + "\n</tool_call>", "nests JSON too deeply"),
    ("gui-owl", "<tool_call>" + DEEP + "</tool_call>", "no '(x, y)'"),
    ("holo", '{"x": ' + DEEP + ', "y": 3}', "nested too deeply"),
    ("holo", DEEP, "nested too deeply"),
    ("holo", '{"x": "' + HUGE + '", "y": 3}', "at most 4,300 digits"),
    ("gta1", f"({HUGE},3)", "more than 4,300 digits"),
    ("gelato", f"({HUGE},3)", "more than 4,300 digits"),
    ("tinyclick", f"<s>click <loc_{HUGE}><loc_3>", "more than 4,300 digits"),
])
def test_unreadable_answers_are_format_errors_naming_why(family: str, text: str, why: str) -> None:
    """Issue 34 item 6: JSON nested 5,000 deep and numbers Python's int() refuses raised out of
    the reader (RecursionError, ValueError), a sample error that blocks --snapshot-update."""
    from pytest_uiground.models import families

    ctx = reading.ParseContext(image_size=(1000, 800), model_input_size=(1008, 812))
    parsed = families.get(family).parse(text, "point", ctx)
    assert parsed.format_error and parsed.point is None
    assert why in parsed.note
    assert len(parsed.note) < 400  # a 5,000-digit value is not echoed whole


def test_whole_number_refuses_what_int_refuses_and_brief_cuts_long_values() -> None:
    assert reading.whole_number("12") == 12 and reading.whole_number("9" * 5000) is None
    assert reading.brief("9" * 5000).endswith("characters)") and len(reading.brief("9" * 5000)) < 120
    assert reading.brief(12) == "12"
