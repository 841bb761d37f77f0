"""Parsers: each family's convention, rendered here by independent formulas and read back."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_uiground.models import families
from pytest_uiground.models.families import ParseContext, Parsed
from pytest_uiground.models.families.reading import FLORENCE2_LOC_OFFSET, parse_option, parse_verdict
from pytest_uiground.record.geometry import Box, Point

FAMILIES = families.names()


def parse(family: str, text: str, task: str, ctx: ParseContext, **switches: object) -> Parsed:
    """``family``'s reading of ``text`` for a ``task`` kind, with the reader switches a suite may set
    (``strict_card``, ``loc_offset``) applied to ``ctx``."""
    return families.get(family).parse(text, task, replace(ctx, **switches))  # type: ignore[arg-type]

CTX = ParseContext(image_size=(1920, 1080))
# What Qwen2.5-VL's processor fed the model for a 1920x1080 screenshot (28-multiples).
QWEN_CTX = ParseContext(image_size=(1920, 1080), model_input_size=(1932, 1092))
W, H = QWEN_CTX.model_input_size or (0, 0)

POINTS = [(0.0, 0.0), (0.25, 0.75), (0.615, 0.406), (1.0, 1.0), (0.123456, 0.987654)]


def close(p: Point | None, x: float, y: float, tol: float) -> bool:
    return p is not None and abs(p.x - x) <= tol and abs(p.y - y) <= tol


def point(family: str, text: str, ctx: ParseContext = QWEN_CTX, **kw: object) -> Parsed:
    return parse(family, text, "point", ctx, **kw)  # type: ignore[arg-type]


# --- round trips ------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["elam", "molmo"])
@pytest.mark.parametrize(("x", "y"), POINTS)
def test_molmo_percent_round_trip(family: str, x: float, y: float) -> None:
    text = f'Sure. <point x="{x * 100:.10f}" y="{y * 100:.10f}" alt="Settings">Settings</point>'
    assert close(point(family, text, CTX).point, x, y, 1e-9)
    card_like = f'<point x="{x * 100:.1f}" y="{y * 100:.1f}" alt="a">a</point>'
    assert close(point(family, card_like, CTX).point, x, y, 0.0005 + 1e-12)


@pytest.mark.parametrize(("x", "y"), POINTS)
def test_uground_round_trip(x: float, y: float) -> None:
    for text, tol in (
        (f"({round(x * 1000)}, {round(y * 1000)})", 0.0005 + 1e-12),
        (f"[{x * 1000:.8f}, {y * 1000:.8f}]", 1e-9),
        (f"<|box_start|>({round(x * 1000)},{round(y * 1000)})<|box_end|>", 0.0005 + 1e-12),
    ):
        assert close(point("uground", text, CTX).point, x, y, tol), text


def test_uground_box_pair_gives_centre_and_box() -> None:
    got = point("uground", "<|box_start|>(100,200),(300,400)<|box_end|>", CTX)
    assert got.box == pytest.approx(Box(0.1, 0.2, 0.3, 0.4))
    assert close(got.point, 0.2, 0.3, 1e-12)


@pytest.mark.parametrize(("x", "y"), POINTS)
def test_uitars_round_trip_all_forms(x: float, y: float) -> None:
    px, py = round(x * W), round(y * H)
    tol = 0.5 / min(W, H) + 1e-12
    for text in (
        f"Action: click(start_box='({px},{py})')",
        f"Thought: the gear icon.\nAction: click(start_box='<|box_start|>({px},{py})<|box_end|>')",
        f"Action: click(point='<point>{px} {py}</point>')",
    ):
        assert close(point("uitars", text).point, x, y, tol), text


def test_uitars_box_gives_centre_in_model_input_pixels() -> None:
    got = point("uitars", f"Action: click(start_box='({W // 4},{H // 2},{W // 2},{H})')")
    assert got.box is not None
    assert close(got.point, (W // 4 + W // 2) / 2 / W, (H // 2 + H) / 2 / H, 1e-12)


def test_uitars_reads_the_action_not_the_thought() -> None:
    text = "Thought: earlier I clicked (10, 20) by mistake.\nAction: click(start_box='(966,546)')"
    assert close(point("uitars", text).point, 966 / W, 546 / H, 1e-12)


@pytest.mark.parametrize(("x", "y"), POINTS)
def test_qwen_vl_round_trip_json_and_plain(x: float, y: float) -> None:
    px, py = x * W, y * H
    tol = 1e-9
    for text in (
        f'```json\n[{{"point_2d": [{px:.8f}, {py:.8f}], "label": "gear"}}]\n```',
        f'{{"point_2d": [{px:.8f}, {py:.8f}]}}',
        f"({px:.8f}, {py:.8f})",
    ):
        assert close(point("qwen-vl", text).point, x, y, tol), text


def test_qwen_vl_bbox_sets_box_and_centre() -> None:
    x0, y0, x1, y1 = 0.1, 0.2, 0.5, 0.6
    text = f'```json\n[{{"bbox_2d": [{x0 * W}, {y0 * H}, {x1 * W}, {y1 * H}], "label": "OK button"}}]\n```'
    got = point("qwen-vl", text)
    assert got.box == pytest.approx(Box(x0, y0, x1, y1))
    assert close(got.point, 0.3, 0.4, 1e-9)


def test_qwen_vl_truncated_json_is_still_read() -> None:
    assert close(point("qwen-vl", '```json\n[{"bbox_2d": [0, 0, 966, 546], "lab').point, 0.25, 0.25, 1e-9)


@pytest.mark.parametrize(("x", "y"), POINTS)
def test_qwen3_vl_round_trip_relative(x: float, y: float) -> None:
    text = f'```json\n[{{"point_2d": [{x * 1000:.8f}, {y * 1000:.8f}]}}]\n```'
    assert close(point("qwen3-vl", text, CTX).point, x, y, 1e-9)
    box = f'[{{"bbox_2d": [{x * 500:.8f}, {y * 500:.8f}, {x * 1000:.8f}, {y * 1000:.8f}]}}]'
    assert close(point("qwen3-vl", box, CTX).point, 0.75 * x, 0.75 * y, 1e-9)


def test_qwen3_vl_needs_no_model_input_size() -> None:
    assert not point("qwen3-vl", '{"point_2d": [500, 500]}', CTX).format_error


def tinyclick_pixel(n: int, side: int) -> float:
    """TinyClick's click pixel for bin ``n`` on a ``side``-pixel axis (``int(n / 1000 * side)`` in its
    ``postprocess``), written with integer arithmetic, normalized."""
    return (n * side // 1000) / side


@pytest.mark.parametrize(("x", "y"), POINTS)
def test_tinyclick_round_trip_floors_to_a_pixel_as_its_postprocess(x: float, y: float) -> None:
    nx, ny = min(999, int(x * 1000)), min(999, int(y * 1000))
    w, h = CTX.image_size
    want = (tinyclick_pixel(nx, w), tinyclick_pixel(ny, h))
    # the full decode (TinyClick's main.py), the adapter's (no decoder start token), a replayed bare one
    for text in (f"</s><s>click<loc_{nx}><loc_{ny}></s>", f"<s>click<loc_{nx}><loc_{ny}></s>",
                 f"click<loc_{nx}><loc_{ny}>"):
        assert close(point("tinyclick", text, CTX).point, *want, 1e-12), text
    assert close(point("tinyclick", f"click<loc_{nx}><loc_{ny}>", CTX).point, x, y, 0.001 + 1 / h)


def test_florence2_offset_reads_loc_runs_at_the_bin_centre() -> None:
    text = "</s><s>click<loc_615><loc_406></s>"
    got = point("tinyclick", text, CTX, loc_offset=FLORENCE2_LOC_OFFSET)
    assert close(got.point, 0.6155, 0.4065, 1e-12)
    box = point("tinyclick", "<loc_100><loc_200><loc_300><loc_400>", CTX, loc_offset=FLORENCE2_LOC_OFFSET)
    assert box.box == pytest.approx(Box(0.1005, 0.2005, 0.3005, 0.4005))


def test_tinyclick_box_gives_its_first_corner_not_the_centre() -> None:
    got = point("tinyclick", "click<loc_100><loc_200><loc_300><loc_400>", CTX)
    assert got.box is None and close(got.point, 0.1, 0.2, 1e-12)


def test_tinyclick_first_adjacent_pair_anywhere_wins() -> None:
    # odd runs and a non-adjacent first token: the first *adjacent* pair, as re.findall(...)[0]
    assert close(point("tinyclick", "click<loc_1><loc_2><loc_3>", CTX).point, 0.001, 0.002, 1e-3)
    got = point("tinyclick", "click<loc_500> <loc_7><loc_100><loc_200>", CTX)
    assert close(got.point, tinyclick_pixel(7, 1920), tinyclick_pixel(100, 1080), 1e-12)


@pytest.mark.parametrize(("text", "why"), [
    ("</s><s>type hello<loc_100><loc_200></s>", "action 'type' is not 'click'"),
    ("scroll<loc_100><loc_200>", "action 'scroll' is not 'click'"),
    ("<loc_100><loc_200>", "action '<loc_100>' is not 'click'"),
    ("</s><s> click<loc_100><loc_200></s>", "no '<action> ... <loc_N>' output"),  # a space: no match there either
    ("click on OK", "no '<action> ... <loc_N>' output"),
    ("click<loc_100> <loc_200>", "no adjacent <loc_x><loc_y> pair"),
])
def test_tinyclick_scores_only_clicks(text: str, why: str) -> None:
    """Where TinyClick's postprocess returns action None / point (0, 0), a format error naming why."""
    got = point("tinyclick", text, CTX)
    assert got.format_error and got.point is None and why in got.note


# --- the card's own rule (ELAM / Molmo) -------------------------------------------------


def test_card_regex_requires_a_decimal_point() -> None:
    got = point("elam", '<point x="61" y="40" alt="a">a</point>', CTX)
    assert got.point is None and got.format_error and "decimal" in got.note
    lenient = point("elam", '<point x="61" y="40" alt="a">a</point>', CTX, strict_card=False)
    assert close(lenient.point, 0.61, 0.40, 1e-12)


def test_multi_point_form_only_outside_strict_card_mode() -> None:
    text = '<points x1="10.5" y1="20.5" x2="70.0" y2="80.0" alt="two">two</points>'
    assert point("molmo", text, CTX).format_error
    assert close(point("molmo", text, CTX, strict_card=False).point, 0.105, 0.205, 1e-12)


def test_card_regex_wins_over_the_extension_even_when_later() -> None:
    text = '<points x1="10.5" y1="20.5" alt="a">a</points> then <point x="50.0" y="60.0" alt="b">b</point>'
    assert close(point("elam", text, CTX, strict_card=False).point, 0.5, 0.6, 1e-12)


def test_card_clips_instead_of_rejecting() -> None:
    assert point("elam", '<point x="150.0" y="40.0" alt="a">a</point>', CTX).point == Point(1.0, 0.4)


def test_card_first_point_wins() -> None:
    text = '<point x="10.0" y="20.0" alt="a">a</point><point x="90.0" y="90.0" alt="b">b</point>'
    assert point("elam", text, CTX).point == pytest.approx(Point(0.1, 0.2))


# --- convention mix-ups: never rescaled; a point beyond the frame stays a point, with a note ------


def test_uground_percent_looking_values_are_read_as_0_1000() -> None:
    got = point("uground", "(61.5, 40.2)", CTX)
    assert not got.format_error
    assert close(got.point, 0.0615, 0.0402, 1e-12)


def test_uground_pixel_values_stay_a_point_beyond_the_image_with_a_note() -> None:
    got = point("uground", "(1520, 300)", CTX)
    assert not got.format_error and close(got.point, 1.52, 0.3, 1e-12)
    assert "0..1000" in got.note and "pixels" in got.note


def test_uitars_x_beyond_model_input_width_is_a_point_with_a_note() -> None:
    got = point("uitars", f"Action: click(start_box='({W + 5},100)')")
    assert not got.format_error and close(got.point, (W + 5) / W, 100 / H, 1e-12)
    assert "beyond" in got.note and "model_input_size" in got.note


def test_uitars_values_fitting_only_the_original_image_say_so() -> None:
    ctx = ParseContext(image_size=(3840, 2160), model_input_size=(1932, 1092))
    got = point("uitars", "Action: click(start_box='(3000,1500)')", ctx)
    assert not got.format_error and "original 3840x2160" in got.note


def test_within_one_unit_of_the_edge_is_clipped_not_rejected() -> None:
    assert point("uground", "(1000.6, 0)", CTX).point == Point(1.0, 0.0)
    assert point("uitars", f"Action: click(start_box='({W}.9,{H})')").point == Point(1.0, 1.0)
    assert point("uground", "(-0.5, 10)", CTX).point == pytest.approx(Point(0.0, 0.01))


@pytest.mark.parametrize(("family", "text", "want"), [
    ("uground", "(-5, 300)", (-0.005, 0.3)),
    ("uitars", "Action: click(start_box='(-12,300)')", (-12 / W, 300 / H)),
    ("qwen-vl", '{"point_2d": [-3, 40]}', (-3 / W, 40 / H)),
    ("qwen3-vl", '{"point_2d": [1200, 40]}', (1.2, 0.04)),
    ("tinyclick", "click<loc_1500><loc_20>", (int(1.5 * 1920) / 1920, int(0.02 * 1080) / 1080)),
])
def test_out_of_range_is_a_point_beyond_the_frame_and_a_miss(family: str, text: str, want: tuple[float, float]) -> None:
    """As the benchmarks' scorers count it: a plain miss on any box, not a format error."""
    got = point(family, text)
    assert not got.format_error and got.note and close(got.point, *want, 1e-9)
    assert got.point is not None and not Box(0, 0, 1, 1).contains(got.point)


def test_qwen_vl_without_model_input_size_raises() -> None:
    with pytest.raises(ValueError, match="model_input_size"):
        point("qwen-vl", '{"point_2d": [1, 2]}', CTX)
    with pytest.raises(ValueError, match="model_input_size"):
        parse("uitars", "", "verdict", CTX)
    assert parse("uitars", "Answer: B", "option", CTX).option == "B"  # no coordinates, no size needed


def test_non_positive_model_input_size_raises() -> None:
    with pytest.raises(ValueError, match="positive"):
        point("uitars", "(1, 2)", ParseContext((10, 10), (0, 10)))


# --- several points, malformed text, empty output ------------------------------------------


@pytest.mark.parametrize(("family", "text", "want"), [
    ("uground", "(100, 200) or maybe (900, 900)", (0.1, 0.2)),
    ("qwen3-vl", '[{"point_2d": [100, 200]}, {"point_2d": [900, 900]}]', (0.1, 0.2)),
    ("qwen-vl", f'[{{"point_2d": [{W / 10}, {H / 5}]}}, {{"point_2d": [5, 5]}}]', (0.1, 0.2)),
    ("tinyclick", "click<loc_100><loc_200> or <loc_900><loc_900>", (0.1, 0.2)),
    ("uitars", f"Action: click(point='<point>{W // 2} {H // 2}</point>') (10,10)", (0.5, 0.5)),
])
def test_first_point_wins(family: str, text: str, want: tuple[float, float]) -> None:
    assert close(point(family, text).point, *want, 1e-3)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("text", ["", "   \n", "I cannot find that element.", "(12, abc)", "<loc_5>", "[1, 2, 3]"])
def test_malformed_or_empty_is_a_format_error(family: str, text: str) -> None:
    if family == "ui-venus" and text == "[1, 2, 3]":
        pytest.skip("UI-Venus reads the integers in the first bracket: x=1, y=2 (tests/models/test_families.py)")
    if family in ("kimi", "gemini") and text == "[1, 2, 3]":
        pytest.skip("ClawGUI's kimi_parse reads a bare 'x, y': x=1, y=2 (tests/models/test_families_reach.py)")
    got = point(family, text)
    assert got.format_error and got.point is None and got.note
    if not text.strip():
        assert got.note == "empty output"


def test_unknown_family_and_task() -> None:
    with pytest.raises(ValueError, match="known: elam, molmo, uitars"):
        parse("elma", "", "point", CTX)
    with pytest.raises(ValueError, match="unknown task kind"):
        parse("elam", "", "click", CTX)


# --- verdicts ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "want"), [
    ("The evaluation is PASSED.", "passed"),
    ("Result: FAILED", "failed"),
    ("The requirement is not met, although the label says PASSED.", "failed"),
    ("PASSED ... FAILED", "failed"),
    ("The expectation is met.", "passed"),
    ("the evaluation passed", None),  # the card is case-sensitive
    ("Passed", None),
    ("", None),
])
def test_verdict_keyword_order_of_the_card(text: str, want: str | None) -> None:
    assert parse_verdict(text) == want


VERDICT_FAMILIES = [f for f in FAMILIES if "verdict" in families.get(f).prompts]


@pytest.mark.parametrize("family", VERDICT_FAMILIES)
def test_verdict_rows_return_verdict_and_point(family: str) -> None:
    points = {
        "elam": '<point x="50.0" y="25.0" alt="a">a</point>',
        "molmo": '<point x="50.0" y="25.0" alt="a">a</point>',
        "uitars": f"Action: click(start_box='({W // 2},{H // 4})')",
        "uground": "(500, 250)",
        "qwen-vl": f'{{"point_2d": [{W / 2}, {H / 4}]}}',
        "qwen3-vl": '{"point_2d": [500, 250]}',
        "tinyclick": "<loc_500><loc_250>",
    }
    # TinyClick reads only an output that starts with its action
    lead = "click FAILED " if family == "tinyclick" else "Step by step... FAILED. "
    got = parse(family, f"{lead}{points[family]}", "verdict", QWEN_CTX)
    assert got.verdict == "failed" and not got.format_error
    assert close(got.point, 0.5, 0.25, 1e-3)


def test_unparseable_verdict_is_a_format_error_but_keeps_the_point() -> None:
    got = parse("elam", 'It looks fine. <point x="50.0" y="25.0" alt="a">a</point>', "verdict", CTX)
    assert got.verdict is None and got.format_error and "case-sensitive" in got.note
    assert got.point == pytest.approx(Point(0.5, 0.25))


def test_verdict_without_point_notes_it_without_a_format_error() -> None:
    got = parse("elam", "PASSED", "verdict", CTX)
    assert got.verdict == "passed" and not got.format_error and got.point is None
    assert got.note.startswith("point:")


def test_empty_verdict_output() -> None:
    got = parse("molmo", "", "verdict", CTX)
    assert got.format_error and got.verdict is None


# --- options ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "want"), [
    ("Based on the screenshot, the answer is C", "C"),
    ("A button labelled 'Summary' is visible at the top, so answer: D", "D"),
    ("Answer: C", "C"),
    ("**Answer:** (E)", "E"),
    ("The correct option is B.", "B"),
    ("(C)", "C"),
    ("C.", "C"),
    ("C: It's a sub-screen within the 'Summary' section", "C"),
    ("C", "C"),
    ("  D  \n", "D"),
    ("\\boxed{F}", "F"),
    ("Reasoning... the answer is B. Wait, re-checking: the final answer is D.", "D"),
    ("The answer is \\boxed{A}. Other options like B are wrong.", "A"),
    ("Option C is correct because the back arrow says Summary.", "C"),
    ("Because the arrow says 'Summary'.\nC", "C"),
])
def test_option_extraction(text: str, want: str) -> None:
    got = parse("qwen-vl", text, "option", QWEN_CTX)
    assert got.option == want and not got.format_error


@pytest.mark.parametrize("text", [
    "Based on the navigation bar, it is a sub-screen.",  # MMBench-GUI's regex reads B
    "A button at the top shows the title.",  # ... and A
    "Etc.",
    "",
    "the answer is c",  # lowercase letters are not option letters
])
def test_no_option_is_a_format_error(text: str) -> None:
    got = parse("uground", text, "option", CTX)
    assert got.option is None and got.format_error and got.note


def test_echoed_option_list_is_ambiguous_not_guessed() -> None:
    option, why = parse_option("A. Rings\nB. Dashboard\nC. Summary")
    assert option is None and "ambiguous" in why


def test_answer_statement_beats_option_lines() -> None:
    assert parse_option("A. Rings\nB. Dashboard\nC. Summary\nThe answer is B")[0] == "B"


# --- answers ----------------------------------------------------------------------------


def test_answer_is_stripped_text() -> None:
    assert parse("elam", "  42 km/h \n", "answer", CTX) == Parsed(answer="42 km/h")
    empty = parse("elam", "  ", "answer", CTX)
    assert empty.format_error and empty.answer is None and empty.note == "empty output"
