"""The 2026 answer formats of GELab-Zero (Step-GUI), duvo-eye, GroundNext, Seed 1.8, Kimi K2.5 and Gemini 3.x,
read as their authors (or, for the three API models, their only published grounding harness) read them.

Each answer below is documented where it is quoted (the source is beside it) or a messy variant of
one; every answer is read by the family and by the independent re-implementation of the authors'
parsing (:mod:`parity.ref_families_reach`), and the two agree: the same point, or both unreadable (a
format error here, an exception or no point there). Also: each family is registered with its frame,
its prompt cites its source (or says it is project wording), a huge number is a format error with a
short note, and the replay model reads a file of these answers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from parity import ref_families_reach as ref

from pytest_uiground.models import families
from pytest_uiground.models.families import clawgui
from pytest_uiground.models.families.reading import ParseContext
from pytest_uiground.models.offline.replay import ReplayModel
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target

CTX = ParseContext(image_size=(1080, 2400))
GELAB_DOC = "stepfun-ai/gelab-zero@19465cf"
DUVO_DOC = "huggingface.co/duvoai/duvo-eye-1.5 model card"
GN_DOC = "ServiceNow/GroundCUA@a28e03b eval/prompts.py BasicPrompt"
GN_SIZE = (1932, 1092)  # 1920x1080 through smart_resize(factor 28, max_pixels 12845056), worked by hand

GELAB = [  # (answer, where it is documented or what it varies)
    ("action:CLICK\tpoint:500,300",
     f"{GELAB_DOC} copilot_tools/parser_0920_summary.py prompt: action:CLICK\\tpoint:x,y"),
    ("<THINK>the search box is at the top</THINK>\nexplain:open search\taction:CLICK\tpoint:512,88\tsummary:tap",
     f"{GELAB_DOC} str2action docstring: <THINK> cot </THINK>\\nexplain:xxx\\taction:xx\\t...\\tsummary:xxx"),
    ("explain:xxx\taction:CLICK\tpoint:120,940\tsearch_type:none",
     f"{GELAB_DOC} copilot_front_end/mobile_action_helper.py comment: explain:xxx\\taction:CLICK\\tpoint:x,y\\t"
     "search_type:app|keyboard|none"),
    ("explain:xxx\taction:TYPE\tvalue:hello\tpoint:300,410\tkeyboard:true",
     f"{GELAB_DOC} mobile_action_helper.py comment: action:TYPE\\tvalue:xxxx\\tpoint:x,y\\tkeyboard:true"),
    ("action:CLICK\tpoint:500 300", "str2action: 'x,y' or 'x y'"),
    ("<think>x</think>action:CLICK\tpoint:0,1000", "lower-case tags, the frame's corners"),
    ("< THINK >a</ Think >\taction:CLICK\tpoint:999,999", "spaced tags (its regex normalises them)"),
    ("action:CLICK\tpoint:1001,5", "beyond 1000: a point, not clipped"),
    ("action:CLICK point:500,300", "space-separated keys: no point key (str2action splits on tabs)"),
    ("action:CLICK\tpoint:500", "one number: str2action raises"),
    ("action:CLICK\tpoint:500.5,300", "a decimal: int() raises"),
    ("action:CLICK\tpoint:" + "9" * 5000 + ",3", "past int()'s digit limit: raises"),
    ("", "empty"),
    ("action:SLIDE\tpoint1:100,200\tpoint2:100,800", "a slide: no 'point' key"),
    ("action:CLICK\tpoint:10,20\tpoint:30,40", "a repeated key: the last (a dict)"),
    ("</THINK>action:CLICK\tpoint:70,80\t<THINK>", "tags out of order: split on the first </THINK>"),
]
DUVO = [
    ('{"x": 500, "y": 250}', f"{DUVO_DOC}: Output {{\"x\": int, \"y\": int}} in [0, 1000]"),
    ('{"x":12,"y":988}', "compact"),
    (' {"x": 0, "y": 1000}\n', "whitespace around (json.loads allows it)"),
    ('{"y": 7, "x": 3}', "keys in either order"),
    ('{"x": 500.0, "y": 250}', "a float: not an int"),
    ('{"x": "500", "y": 250}', "a string"),
    ('{"x": true, "y": 1}', "a boolean is not an int"),
    ('{"x": 500}', "no y"),
    ("[500, 250]", "a list"),
    ('The element is at {"x": 500, "y": 250}', "prose around: the whole answer must be the JSON"),
    ("", "empty"),
    ('{"x": ' + "9" * 5000 + ', "y": 1}', "past int()'s digit limit"),
    ('{"x": 1200, "y": -4}', "outside 0..1000: a point, kept"),
]

CLAW = "ZJU-REAL/ClawGUI@d990d3e clawgui-eval"
SEED = [
    ("<point>500 300</point>", f"{CLAW}/judge/grounding_judge.py seed18_parse docstring: <point>x y</point>"),
    ("The search field is top left. <point>100 200</point> Checking again, it is the icon: <point>512 88</point>",
     f"{CLAW} seed18_parse: findall, the last match (the final answer after reasoning)"),
    ("<point>500 300<point>", f"{CLAW}/inference/seed_inferencer.py SEED_SYSTEM_PROMPT's own form, no slash: "
                              "the judge's regex needs </point>"),
    ("<point> 12.5  988 </point>", "fractions and spaces (its \\s* and (?:\\.\\d+)?)"),
    ("<point>500,300</point>", "a comma: its regex needs whitespace between the numbers"),
    ("(500, 300)", "no tag"),
    ("<point>-5 10</point>", "a minus sign: no match"),
    ("<point>1200 5</point>", "beyond 1000: a point, kept"),
    ("", "empty"),
]
KIMI = [
    ("(500,300)", f"{CLAW}/inference/kimi_inferencer.py KIMI_SYSTEM_PROMPT: 'exactly in format:\\n(x,y)'"),
    ("The button is near (120, 45). Final answer: (130, 47)", f"{CLAW}/judge/grounding_judge.py kimi_parse: the "
                                                              "last (x, y)"),
    ("500, 300", "kimi_parse method 2: a bare x, y"),
    ("[500, 300]", "brackets: no (x, y), the bare pair inside"),
    ("(1,2) then 3, 4", "an (x, y) wins over a later bare pair"),
    ("(500.5, 300.25)", "fractions"),
    ("I think x=500, y=300", "no two numbers around a comma"),
    ("(-1, -1)", "minus signs: neither regex matches"),
    ("", "empty"),
]
GEMINI = [
    ("(742,118)", f"{CLAW}/inference/gemini_inferencer.py GEMINI_SYSTEM_PROMPT: 'exactly in format:\\n(x,y)'"),
    ("**Reasoning**: the gear icon sits at the top right.\n**Answer**: (955, 32)",
     f"{CLAW} gemini_inferencer.py parse_coord_from_response: the last (x, y)"),
    ("x: 955, y: 32", "'955, y': no digits after the comma, no pair"),
    ("955 , 32", "a bare pair with spaces"),
    ("", "empty"),
]

CALL = '<tool_call>\n{{"name": "computer_use", "arguments": {{"action": "{}", "coordinate": {}}}}}\n</tool_call>'
GROUNDNEXT = [
    (CALL.format("mouse_move", "[960, 540]"), f"{GN_DOC} system prompt: the computer_use tool, mouse_move (x, y)"),
    (CALL.format("left_click", "[12, 1090]"), f"{GN_DOC}: <tool_call>\\n{{\"name\": ..., \"arguments\": ...}}"),
    (CALL.format("mouse_move", "[960.7, 540.2]"), "floats: int() truncates"),
    (CALL.format("mouse_move", "[-1, -1]"), "both negative: is_point_inside_element's refusal"),
    (CALL.format("mouse_move", "[-1, 300]"), "one negative: a point"),
    (CALL.format("mouse_move", '["960", "540"]'), "strings int() takes"),
    (CALL.format("mouse_move", '["9.5", "540"]'), "a string int() refuses: raises"),
    (CALL.format("mouse_move", "[960, 540, 1]"), "three values: the assert fails"),
    (CALL.format("mouse_move", "null"), "no coordinate: len(None) raises"),
    ('<tool_call>\n{"name": "computer_use"}\n</tool_call>', "no arguments: None.get raises"),
    ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "mouse_move", "coordinate": [960, 540]\n'
     "</tool_call>", "cut JSON: the two digit runs"),
    ('<tool_call>\n{"name": "computer_use", "arguments": {"coordinate": [-5, -7]\n</tool_call>',
     "cut JSON with negatives: the digit runs lose the signs, a point"),
    ("<tool_call>\nmouse_move(960, 540) at step 2\n</tool_call>", "three digit runs: None"),
    ("I would hover over (960, 540).", "no <tool_call>: IndexError"),
    ("<tool_call>[960, 540]</tool_call>", "a JSON list: .get raises"),
    ("<think>(1, 2)</think><tool_call>\n" + '{"name": "computer_use", "arguments": {"coordinate": [3, 4]}}',
     "no closing tag: the rest of the text"),
]


def official(family: str, text: str) -> tuple[float, float] | str | None:
    try:
        if family == "groundnext":
            point = ref.groundnext_official(text)
            if point is None:
                return None
            if point[0] < 0 and point[1] < 0:
                return "refused"
            return point[0] / GN_SIZE[0], point[1] / GN_SIZE[1]
        return {"gelab-zero": ref.gelab_zero_official, "duvo-eye": ref.duvo_eye_official, "seed": ref.seed18_official,
                "kimi": ref.kimi_official, "gemini": ref.gemini_official}[family](text)
    except (ValueError, TypeError, AttributeError, IndexError, AssertionError):
        return None


CASES = ([("gelab-zero", t, why) for t, why in GELAB] + [("duvo-eye", t, why) for t, why in DUVO]
         + [("groundnext", t, why) for t, why in GROUNDNEXT] + [("seed", t, why) for t, why in SEED]
         + [("kimi", t, why) for t, why in KIMI] + [("gemini", t, why) for t, why in GEMINI])


@pytest.mark.parametrize(("family", "text", "why"), CASES, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(CASES)])
def test_reads_as_the_authors_code(family: str, text: str, why: str) -> None:
    ctx = ParseContext(image_size=(1920, 1080), model_input_size=GN_SIZE) if family == "groundnext" else CTX
    got = families.get(family).parse(text, "point", ctx)
    want = official(family, text)
    if want == "refused":
        assert got.refused and got.point is None and not got.format_error, why
    elif want is None:
        assert got.format_error and got.point is None and not got.refused, why
        assert len(got.note) < 400, "a huge value is not echoed whole"
    else:
        assert not got.format_error and got.point is not None, why
        assert not isinstance(want, str)
        assert (got.point.x, got.point.y) == pytest.approx(want, abs=1e-12), why


def test_both_outcomes_are_in_the_table() -> None:
    for family in ("gelab-zero", "duvo-eye", "groundnext", "seed", "kimi", "gemini"):
        outcomes = {official(f, t) is None for f, t, _ in CASES if f == family}
        assert outcomes == {True, False}, family
    assert any(official("groundnext", t) == "refused" for t, _ in GROUNDNEXT)


def test_registered_with_frame_sources_and_prompt() -> None:
    for name in ("gelab-zero", "duvo-eye"):
        fam = families.get(name)
        assert fam.frame == "norm1000" and fam.sources and not fam.refusal
        prompt = fam.prompt("point")
        assert "{instruction}" in prompt.user and "project wording" in prompt.source
    assert families.get("duvo-eye").generation.max_new_tokens == 64  # the card's decoding


@pytest.mark.parametrize(("name", "sha256", "length"), [
    ("seed", "acdac9af331109ea27e81b38f90fa78e59c3b9e6713353d8842bbd4b4ea9f717", 398),
    ("kimi", "35cef27c31ef02e92cc1a67e0c558b6fb22846b512852f46fc8cb7fbb99c8bfd", 368),
    ("gemini", "35cef27c31ef02e92cc1a67e0c558b6fb22846b512852f46fc8cb7fbb99c8bfd", 368),
])
def test_the_api_families_prompt_as_clawgui_does(name: str, sha256: str, length: int) -> None:
    """The prompt text is the inferencer's ``*_SYSTEM_PROMPT`` (hashed once from ClawGUI@d990d3e
    ``clawgui-eval/inference/{seed,kimi,gemini}_inferencer.py``), then its description line; text before the
    image ("Input Order tv"); 0..1000; greedy with its 32,768-token limit."""
    fam = families.get(name)
    prompt = fam.prompt("point")
    head, _, tail = prompt.user.rpartition("\n")
    assert (hashlib.sha256(head.encode()).hexdigest(), len(head)) == (sha256, length)
    assert tail == "The user's element description is: {instruction}" and not prompt.image_first
    assert prompt.text("the Save button").endswith("The user's element description is: the Save button")
    assert fam.frame == "norm1000" and fam.generation.max_new_tokens == 32768 and not fam.refusal
    assert all(clawgui.REPO in src for src in fam.sources) and clawgui.REPO == "ZJU-REAL/ClawGUI@d990d3e"


def test_groundnext_prompt_resize_and_frame() -> None:
    """The system text is the source's after ``.format`` (hashed once from GroundCUA@a28e03b eval/prompts.py,
    with {width}x{height} where it formats the resized size), the user text its hover sentence, and the
    resize rule eval.py's (1920x1080 -> 1932x1092, worked by hand from smart_resize's definition)."""
    fam = families.get("groundnext")
    prompt = fam.prompt("point")
    assert prompt.system is not None
    assert (hashlib.sha256(prompt.system.encode()).hexdigest(), len(prompt.system)) == (
        "03e1b5d5982c26b054675c0f38084dd3941b35e902ac81416ea2afc34312ca46", 3400)
    assert prompt.text("the Save button") == "Hover over the UI element 'the Save button'" and prompt.image_first
    assert fam.frame == "pixels-resized" and fam.input_size((1920, 1080)) == GN_SIZE and fam.client_resize
    assert "The screen's resolution is 1932x1092." in prompt.system_text(GN_SIZE)


def test_replay_reads_a_file_of_these_answers(tmp_path: Path) -> None:
    samples = [Sample(id=f"s{i}", image=ImageRef(key=f"s{i}", size=(1080, 2400)), instruction="x", task="point",
                      target=Target()) for i in range(2)]
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"sample_id": "s0", "output": "action:CLICK\tpoint:250,500"}) + "\n"
                     + json.dumps({"sample_id": "s1", "output": "action:CLICK point:250,500"}) + "\n")
    first, second = ReplayModel(preds, "gelab-zero").predict(samples)
    assert first.point is not None and (first.point.x, first.point.y) == (0.25, 0.5)
    assert second.format_error and second.point is None
