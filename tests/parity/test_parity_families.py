"""Parity: each 2026 family's reader vs the authors' own post-processing, on messy outputs.

For every family a seeded corpus (a few hundred texts, deterministic, no hypothesis) is read by
the project (``families.get(name).parse(text, "point", ctx)``) and by the independent
re-implementation of the authors' code in :mod:`parity.ref_families`, whose adapter maps the
official result to the project's convention, departing from it only in the deliberate
differences its docstring lists (D1..D4). Points must agree to 1e-6, except where the official
code rounds to whole pixels (Qwen3-VL's mobile cookbook: ``round(x / 999 * width)``, at most
half a pixel, under 1e-3 of the smallest side used here); refused/error must agree exactly.

The corpus mixes the family's official answer form with random coordinates (0, the edges,
beyond the image or frame, negatives where the regexes allow them, decimals), thinking before
the answer (``<think>...</think>``, ``Thought: ... Action: ...``, with a coordinate pair inside),
two actions, spacing variants, cut-off output, prose after, the refusal forms, empty output and
JSON with other keys. Pixel families are read on several original image sizes; the reference
computes the model-input size with its own re-implementation of the authors' smart_resize.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest

from pytest_uiground.models import families
from pytest_uiground.models.families import ParseContext

from . import ref_families as rf

SIZES = [(1920, 1080), (2560, 1440), (3840, 2160), (1080, 2400), (800, 600)]
TOL = 1e-6
TOL_ROUNDED = 1e-3  # the mobile cookbook rounds to whole pixels: <= 0.5 / 600 < 1e-3
Case = tuple[str, str, tuple[int, int]]  # (case id, text, original image size)

THOUGHTS = ["The settings gear is at the top right.", "I need the search bar; it is near the top.",
            "Looking at the toolbar, the icon is the third one.", "The button labelled OK closes the dialog."]


def ours(family: str, text: str, size: tuple[int, int]) -> rf.Reading:
    fam = families.get(family)
    ctx = ParseContext(image_size=size, model_input_size=fam.input_size(size) if fam.needs_input_size else None)
    parsed = fam.parse(text, "point", ctx)
    if parsed.refused:
        assert parsed.point is None and not parsed.format_error
        return rf.REFUSED
    if parsed.point is None:
        assert parsed.format_error
        return rf.ERROR
    assert not parsed.format_error
    return parsed.point.x, parsed.point.y


def agree(a: rf.Reading, b: rf.Reading, tol: float) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a[0] - b[0]) <= tol and abs(a[1] - b[1]) <= tol


# -- corpus building blocks -----------------------------------------------------------------


def n1000(rng: random.Random) -> int:
    return rng.choice([0, 1, 500, 999, 1000, 1001, rng.randint(0, 1000), rng.randint(0, 1000),
                       rng.randint(0, 1000), rng.randint(1001, 2500)])


def npix(rng: random.Random, limit: int) -> int:
    return rng.choice([0, 1, limit - 1, limit, limit + rng.randint(1, 400), rng.randint(0, limit),
                       rng.randint(0, limit), rng.randint(0, limit)])


def think(rng: random.Random, pair: str = "") -> str:
    thought = rng.choice(THOUGHTS)
    inner = f"{thought} It is around {pair}." if pair else thought
    return rng.choice([f"<think>{inner}</think>\n", f"<think>\n{inner}\n</think>\n\n",
                       f"Thought: {inner}\nAction: \"click it\"\n", f"{inner}\n"])


def prose(rng: random.Random) -> str:
    return rng.choice(["\nI clicked the element.", "\n\nDone.", " This is the answer.", "\n```", "\n\n"])


def cut(rng: random.Random, text: str) -> str:
    return text[:rng.randrange(1, len(text))] if len(text) > 1 else ""


def dress(rng: random.Random, answer: str, pair: str) -> str:
    """The answer, maybe with thinking before (maybe naming ``pair``), prose after, or cut off."""
    roll = rng.random()
    if roll < 0.25:
        answer = think(rng) + answer
    elif roll < 0.4:
        answer = think(rng, pair) + answer
    if rng.random() < 0.2:
        answer += prose(rng)
    if rng.random() < 0.1:
        answer = cut(rng, answer)
    return answer


def corpus(rng: random.Random, n: int, make: Callable[[random.Random, tuple[int, int]], str],
           fixed: list[str]) -> list[Case]:
    cases = [(f"fixed-{i}", text, SIZES[i % len(SIZES)]) for i, text in enumerate(fixed)]
    for i in range(n):
        size = rng.choice(SIZES)
        cases.append((f"random-{i}", make(rng, size), size))
    return cases


# -- qwen3-vl -------------------------------------------------------------------------------


def tool(name: str, args: dict[str, object], rng: random.Random | None = None, compact: bool = False) -> str:
    body = json.dumps({"name": name, "arguments": args}, separators=(",", ":") if compact else None)
    open_ws, close_ws = ("\n", "\n") if rng is None else (rng.choice(["\n", "\n", "\n", "", " ", "\n\n"]),
                                                          rng.choice(["\n", "\n", "\n", "", " "]))
    return f"<tool_call>{open_ws}{body}{close_ws}</tool_call>"


def qwen_call(rng: random.Random) -> str:
    x, y = n1000(rng), n1000(rng)
    roll = rng.random()
    if roll < 0.45:
        args: dict[str, object] = {"action": rng.choice(["left_click", "left_click", "mouse_move", "double_click",
                                                          "left_click_drag", "right_click"]), "coordinate": [x, y]}
    elif roll < 0.55:
        value = rng.choice([[x + rng.choice([0.5, 0.25, 0.0]), -y if rng.random() < .5 else y], [True, y]])
        args = {"action": "left_click", "coordinate": value}
    elif roll < 0.7:
        args = {"action": rng.choice(["click", "click", "long_press", "swipe"]), "coordinate": [x % 1000, y % 1000]}
        if args["action"] == "swipe":
            args["coordinate2"] = [y % 1000, x % 1000]
        return tool("mobile_use", args, rng)
    elif roll < 0.8:
        args = {"action": "terminate", "status": rng.choice(["failure", "success"])}
        return tool(rng.choice(["computer_use", "mobile_use"]), args, rng)
    elif roll < 0.85:
        args = {"action": "type", "text": "hello"}
    elif roll < 0.9:
        args = {"action": "left_click", "coordinate": rng.choice([[x, y, 0], [str(x), str(y)], [x], {"x": x, "y": y}])}
    else:
        args = {"action": "left_click", "coordinate": [x, y], "button": "left", "extra": {"k": [1, 2]}}
    return tool("computer_use", args, rng, compact=rng.random() < 0.3)


def qwen_plain(rng: random.Random) -> str:
    x, y = n1000(rng), n1000(rng)
    return rng.choice([f"[{x}, {y}]", f"({x},{y})", f'{{"point_2d": [{x}, {y}]}}',
                       f'[{{"bbox_2d": [{x}, {y}, {x + 20}, {y + 10}], "label": "OK"}}]', "I cannot find it.", ""])


def make_qwen3_vl(rng: random.Random, size: tuple[int, int]) -> str:
    if rng.random() < 0.15:
        return dress(rng, qwen_plain(rng), f"[{n1000(rng)}, {n1000(rng)}]")
    answer = qwen_call(rng)
    if rng.random() < 0.15:
        answer += "\n" + qwen_call(rng)
    return dress(rng, answer, rng.choice([f"({n1000(rng)}, {n1000(rng)})", f"[{n1000(rng)}, {n1000(rng)}]"]))


QWEN3_VL_FIXED = [
    tool("computer_use", {"action": "left_click", "coordinate": [512, 300]}),
    '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [512, 300]}}</tool_call>',
    # an earlier call without the newline, a later one with it: the cookbook reads the later
    '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [100, 200]}}'
    '</tool_call>\n' + tool("computer_use", {"action": "left_click", "coordinate": [900, 800]}),
    tool("computer_use", {"action": "terminate", "status": "failure"}),
    tool("computer_use", {"action": "terminate", "status": "failure", "coordinate": [0, 0]}),
    tool("computer_use", {"action": "left_click", "coordinate": [512, 300, 1]}),
    tool("mobile_use", {"action": "long_press", "coordinate": [447, 81], "time": 2}),
    tool("mobile_use", {"action": "click", "coordinate": [999, 999]}),
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [51',
    "", "[500, 300]", "no tool call here",
]


# -- gui-owl ----------------------------------------------------------------------------------


def owl_answer(rng: random.Random) -> str:
    x, y = n1000(rng), n1000(rng)
    roll = rng.random()
    if roll < 0.5:
        return tool("computer_use", {"action": rng.choice(["left_click", "mouse_move"]), "coordinate": [x, y]}, rng,
                    compact=rng.random() < 0.25)
    if roll < 0.6:
        return tool("computer_use", {"action": "terminate", "status": "failure"}, rng)
    if roll < 0.7:
        return tool("computer_use", {"action": "left_click", "coordinate": [x + 0.5, y]}, rng)
    if roll < 0.75:
        return tool("computer_use", {"action": "left_click", "coordinate": [-x - 1, y]}, rng)
    return rng.choice([f"({x}, {y})", f"({x},{y})", f"( {x} , {y} )", f"({x},\n{y})", f"[{x}, {y}]", f"[{x},{y}]",
                       f"[{x},  {y}]", f"click({x}, {y})", "", "The element is not on the screen."])


def make_gui_owl(rng: random.Random, size: tuple[int, int]) -> str:
    answer = owl_answer(rng)
    if rng.random() < 0.15:
        answer += "\n" + owl_answer(rng)
    return dress(rng, answer, rng.choice([f"({n1000(rng)}, {n1000(rng)})", f"[{n1000(rng)}, {n1000(rng)}]",
                                          f"({n1000(rng)},{n1000(rng)})"]))


OWL_TERMINATE = tool("computer_use", {"action": "terminate", "status": "failure"})
GUI_OWL_FIXED = [
    tool("computer_use", {"action": "left_click", "coordinate": [512, 300]}),
    "I see the icon near (120, 340).</think>\n" + tool("computer_use", {"action": "left_click", "coordinate": [5, 3]}),
    OWL_TERMINATE, "<think>It is not there.</think>\n" + OWL_TERMINATE,
    OWL_TERMINATE + "\n(12, 34)", OWL_TERMINATE[:-12], OWL_TERMINATE[:40],
    '{"coordinate": [512,300]}', "", "(0, 0)", "[0, 0]",
]


# -- ui-venus ---------------------------------------------------------------------------------


def venus_answer(rng: random.Random) -> str:
    x, y, a, b = n1000(rng), n1000(rng), n1000(rng), n1000(rng)
    return rng.choice([
        f"[{x},{y}]", f"[{x},{y}]", f"[{x}, {y}]", f" [ {x} , {y} ] ", f"[{x},{y},{a},{b}]", f"[{x}, {y}, {a}, {b}]",
        f"[{x},{y}],[{a},{b}]", f"[{x}, {y}], [{a}, {b}]", f"[{x},{y}]\n[{a},{b}]", "[-1,-1]", "[-1, -1]",
        f"[{x}.5,{y}]", f"[{x},{y}.0]", f"[-{x},{y}]", f"[{x},{y},{a}]", "[-1,-1,5]", f"[0{x},{y}]",
        f"({x},{y})", f'{{"point": [{x},{y}]}}', f"[{x} {y}]", f"[{x}]", "", "I cannot find it.",
        f"[{x},{y}] is the button.", f"The answer is [{x},{y}].", f"[１２,{y}]", f"[1_000,{y}] is it",
        f"[{x}, {y}] then [{a}, {b}]", f"[{x // 10} {x % 10},{y}],[{a},{b}]", "[-1,-1,-1,-1]", f"[- 1,{y}],[{a},{b}]",
    ])


def make_ui_venus(rng: random.Random, size: tuple[int, int]) -> str:
    return dress(rng, venus_answer(rng), rng.choice([f"[{n1000(rng)},{n1000(rng)}]", f"({n1000(rng)}, {n1000(rng)})"]))


UI_VENUS_FIXED = ["[512,300]", "[100,200,300,400]", "[100, 200], [300, 400]", "[-1,-1]", "[-1,-1,5]", "[012,300]",
                  "[1 2,3],[4,5]", "[- 1,2],[3,4]", "[１２,３００]", "[1_000,300] x", "[512.5,300]", "", "[-3,-1,1,-1]"]


# -- holo -----------------------------------------------------------------------------------------


def holo_answer(rng: random.Random, size: tuple[int, int]) -> str:
    w, h = rf.transformers_smart_resize(size[1], size[0], 28, 3136, rf.HOLO_MAX_PIXELS)[::-1]
    x: object = npix(rng, w)
    y: object = npix(rng, h)
    roll = rng.random()
    if roll < 0.15:
        x = rng.choice([float(x), x + 0.5, str(x), f" {x} ", f"{x}.0", f"+{x}", -int(str(x)), True, None, [x], 1e3])
    elif roll < 0.2:
        y = rng.choice([float(y), str(y), f"{y}.5", False])
    data: dict[str, object] = {"action": "click_absolute", "x": x, "y": y}
    roll = rng.random()
    if roll < 0.15:
        del data["action"]
    elif roll < 0.25:
        data["action"] = rng.choice(["click", "click_relative", None, "Click_absolute"])
    elif roll < 0.35:
        data = {"x": x, "y": y, "action": "click_absolute", "element": "OK button", "confidence": 0.9}
    body = json.dumps(data, indent=rng.choice([None, None, 2]))
    roll = rng.random()
    if roll < 0.06:
        body = f"```json\n{body}\n```"
    elif roll < 0.12:
        body = f"Click({x}, {y})"
    elif roll < 0.16:
        body = f"[{body}]"
    elif roll < 0.2:
        body = body[:-1] + f', "x": {y}}}'  # a duplicate key
    elif roll < 0.3:
        body = rng.choice(["  ", "\n", "\t"]) + body + rng.choice(["", "\n", " \n"])
    return body


def make_holo(rng: random.Random, size: tuple[int, int]) -> str:
    return dress(rng, holo_answer(rng, size), "") if rng.random() < 0.3 else holo_answer(rng, size)


HOLO_FIXED = ['{"action": "click_absolute", "x": 947, "y": 338}', '{"x": 947, "y": 338}', '{"x": 947.0, "y": 338}',
              '{"x": "947", "y": 338}', '{"x": 947.5, "y": 338}', '{"action": "click", "x": 947, "y": 338}',
              '{"x": -5, "y": 0}', '{"x": 99999, "y": 1}', '{"x": true, "y": 1}', '{"x": 947, "y": 338', "",
              '{"x": " 947 ", "y": 338}', '{"x": "947.0", "y": 338}', '{"x": "1_000", "y": 3}', '{"x": 1e3, "y": 3}']


# -- opencua ---------------------------------------------------------------------------------------


def cua_line(rng: random.Random, size: tuple[int, int]) -> str:
    w, h = rf.opencua_smart_resize_qwen25(*size)
    x, y = npix(rng, w), npix(rng, h)
    xy = rng.choice([f"x={x}, y={y}", f"x={x},y={y}", f"x={x},   y={y}", f"x={x}.5, y={y}",
                     f"x={round(x / w, 4)}, y={round(y / h, 4)}", f"x={x}, y=0.5", f"x=1, y={y}", f"x = {x}, y = {y}",
                     f"x=-{x}, y={y}", f"x={x}.2.3, y={y}", f"x=., y={y}", f"button='left', x={x}, y={y}"])
    return rng.choice([
        f"pyautogui.click({xy})", f"pyautogui.click({xy})", f"pyautogui.click({xy})", f"pyautogui.doubleClick({xy})",
        f"pyautogui.rightClick({xy})", f"pyautogui.moveTo({xy})", f"pyautogui.dragTo({xy}, duration=0.5)",
        f"computer.triple_click({xy})", "computer.terminate(status='failure')", f"pyautogui.click({x}, {y})",
        f"pyautogui.write(message='x={x}, y={y}')", "pyautogui.press('enter')",
    ])


def make_opencua(rng: random.Random, size: tuple[int, int]) -> str:
    lines = [cua_line(rng, size) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    code = "\n".join(lines)
    roll = rng.random()
    if roll < 0.35:
        text = f"```python\n{code}\n```"
    elif roll < 0.55:
        text = (f"## Thought\n{rng.choice(THOUGHTS)}\n## Action\nClick the element.\n"
                f"## Code\n```python\n{code}\n```")
    elif roll < 0.7:
        text = f"Action: I will run {lines[0]} now."  # inline: parse_response's second pass
    elif roll < 0.8:
        text = "  " + code.replace("\n", "\n    ")
    else:
        text = code
    return dress(rng, text, "")


OPENCUA_FIXED = ["```python\npyautogui.click(x=1443, y=343)\n```", "pyautogui.click(x=0.5, y=0.3)",
                 "pyautogui.click(x=500, y=0.5)", "pyautogui.click(x=1.2.3, y=4)\npyautogui.click(x=100, y=200)",
                 "pyautogui.click(x=100, y=200)\npyautogui.moveTo(x=., y=4)", "pyautogui.doubleClick(x=5, y=6)",
                 "computer.terminate(status='failure')", "", "pyautogui.click(100, 200)",
                 "computer.triple_click(x=1.2.3, y=4)\npyautogui.click(x=100, y=200)",
                 "Now pyautogui.click(x=300, y=400) then pyautogui.click(x=1, y=2)"]


# -- mai-ui ----------------------------------------------------------------------------------------


def make_mai_ui(rng: random.Random, size: tuple[int, int]) -> str:
    x, y, a, b = n1000(rng), n1000(rng), n1000(rng), n1000(rng)
    coord = rng.choice([f"[{x},{y}]", f"[{x},{y}]", f"[{x}, {y}]", f"[{x}.5,{y}]", f"[-{x},{y}]", f"[ {x},{y}]",
                        f"[{x},{y},{a}]"])
    body = rng.choice(['{"coordinate":%s}', '{"coordinate": %s}', '{"coordinate": %s}}', '{"point": %s}']) % coord
    inner = rng.choice(THOUGHTS) + rng.choice(["", f" Maybe [{a},{b}].", f" Maybe [{a}, {b}].", f" Maybe ({a},{b})."])
    text = rng.choice([f"<grounding_think>\n{inner}\n</grounding_think>\n<answer>\n{body}\n</answer>",
                       f"<grounding_think>{inner}</grounding_think><answer>{body}</answer>",
                       f"<answer>\n{body}\n</answer>", body, coord, ""])
    if rng.random() < 0.1:
        text += f"\n<answer>\n{{\"coordinate\":[{b},{a}]}}\n</answer>"
    return dress(rng, text, "")


MAI_UI_FIXED = ['<grounding_think>\nThe button.\n</grounding_think>\n<answer>\n{"coordinate":[512,300]}\n</answer>',
                '<answer>\n{"coordinate": [512, 300]}\n</answer>', "[1000,1000]", "[0,0]", "", "[512.5,300]"]


# -- gta1 ------------------------------------------------------------------------------------------


def make_gta1(rng: random.Random, size: tuple[int, int]) -> str:
    h, w = rf.qwen_vl_utils_smart_resize(size[1], size[0], 28, 3136, rf.GTA1_MAX_PIXELS)
    x, y, a, b = npix(rng, w), npix(rng, h), npix(rng, w), npix(rng, h)
    pair = rng.choice([f"({x},{y})", f"({x},{y})", f"({x}, {y})", f"({x},\n{y})", f"( {x} , {y} )", f"({x}.5,{y})",
                       f"({x}.0,{y})", f"(.5,{y})", f"(-{x},{y})", f"({x},-{y})", f"[{x},{y}]", f"Click({x}, {y})",
                       f"(x={x}, y={y})", f"({x},{y}) or ({a}.5,{b})", f"({x},{y}) or ({a},{b})", ""])
    return dress(rng, pair, rng.choice([f"({a},{b})", f"({a}.5, {b})", f"[{a},{b}]"]))


GTA1_FIXED = ["(960,540)", "(960, 540)", "(960.5,540)", "(960,540) then (1.5,2)", "( 960 , 540 )", "(-5,10)", "",
              "(0,0)", "(99999,1)", "(.5,3)"]

# -- the comparison ----------------------------------------------------------------------------------

FAMILIES: dict[str, tuple[Callable[[random.Random, tuple[int, int]], str], list[str],
                          Callable[[str, tuple[int, int]], rf.Reading]]] = {
    "qwen3-vl": (make_qwen3_vl, QWEN3_VL_FIXED, lambda t, s: rf.qwen3vl_ours(t, *s)),
    "gui-owl": (make_gui_owl, GUI_OWL_FIXED, lambda t, s: rf.gui_owl_ours(t)),
    "ui-venus": (make_ui_venus, UI_VENUS_FIXED, lambda t, s: rf.ui_venus_ours(t)),
    "holo": (make_holo, HOLO_FIXED, lambda t, s: rf.holo_ours(t, *s)),
    "opencua": (make_opencua, OPENCUA_FIXED, lambda t, s: rf.opencua_ours(t, *s)),
    "mai-ui": (make_mai_ui, MAI_UI_FIXED, lambda t, s: rf.mai_ui_ours(t)),
    "gta1": (make_gta1, GTA1_FIXED, lambda t, s: rf.gta1_ours(t, *s)),
}
N_RANDOM = 300


def family_corpus(family: str) -> list[Case]:
    make, fixed, _ = FAMILIES[family]
    return corpus(random.Random(f"parity-{family}"), N_RANDOM, make, fixed)


def reference(family: str, text: str, size: tuple[int, int]) -> rf.Reading:
    got = FAMILIES[family][2](text, size)
    if got == rf.PLAIN:  # D4: qwen3-vl reads a text with no tool call as the uground family does
        got = ours("uground", text, size)
    return got


@pytest.mark.parametrize("family", list(FAMILIES))
def test_reader_matches_the_official_code(family: str) -> None:
    if family == "holo":
        pytest.importorskip("pydantic")  # the official parse is pydantic's model_validate_json
    cases = family_corpus(family)
    bad = []
    for case_id, text, size in cases:
        ref = reference(family, text, size)
        tol = TOL_ROUNDED if family == "qwen3-vl" and '"mobile_use"' in text else TOL
        got = ours(family, text, size)
        if not agree(got, ref, tol):
            bad.append(f"{case_id} {size}: {text!r}\n    ours {got!r}, official {ref!r}")
    assert not bad, f"{len(bad)} of {len(cases)} disagree:\n" + "\n".join(bad[:15])


@pytest.mark.parametrize("family", list(FAMILIES))
def test_corpus_covers_points_errors_and_refusals(family: str) -> None:
    """The corpus is deterministic, a few hundred texts, and reaches every kind of result."""
    if family == "holo":
        pytest.importorskip("pydantic")
    cases = family_corpus(family)
    assert cases == family_corpus(family) and len(cases) >= N_RANDOM
    kinds = [reference(family, text, size) for _, text, size in cases]
    points = [k for k in kinds if not isinstance(k, str)]
    assert len(points) >= 50 and kinds.count(rf.ERROR) >= 20, (len(points), kinds.count(rf.ERROR))
    assert any(p[0] > 1 or p[1] > 1 for p in points)  # beyond the image
    assert any(p[0] == 0 or p[1] == 0 for p in points)  # the edge
    if family in ("qwen3-vl", "gui-owl", "ui-venus"):
        assert kinds.count(rf.REFUSED) >= 10
    else:
        assert rf.REFUSED not in kinds
    assert any(text == "" for _, text, _ in cases)


def test_deliberate_differences_are_exercised() -> None:
    """Each D1..D4 of ref_families' docstring occurs in the corpus (and so is compared)."""
    owl = [t for _, t, _ in family_corpus("gui-owl")]
    gta = [t for _, t, _ in family_corpus("gta1")]
    qwen = [t for _, t, _ in family_corpus("qwen3-vl")]
    fallback_owl = [t for t in owl if rf.gui_owl_ours(t) in (rf.ERROR, rf.REFUSED)]
    assert sum(rf.gui_owl_ours(t) == rf.REFUSED for t in fallback_owl) >= 10  # D2
    assert sum(rf.gui_owl_ours(t) == rf.ERROR for t in fallback_owl) >= 10  # D1
    assert sum(rf.gta1_ours(t, 1920, 1080) == rf.ERROR for t in gta) >= 20  # D1
    assert sum(rf.qwen3vl_ours(t, 1920, 1080) == rf.REFUSED for t in qwen) >= 10  # D3
    assert sum(rf.qwen3vl_ours(t, 1920, 1080) == rf.PLAIN for t in qwen) >= 20  # D4
    # no D5: a tag without the cookbook's newline is read as the cookbook reads it (mostly an error)
    no_newline = [t for t in qwen if "<tool_call>{" in t or "} </tool_call>" in t]
    assert len(no_newline) >= 10 and sum(rf.qwen3vl_ours(t, 1920, 1080) == rf.ERROR for t in no_newline) >= 10
