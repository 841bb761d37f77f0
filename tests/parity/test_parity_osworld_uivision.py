"""End-to-end parity: the shipped OSWorld-G and UI-Vision suites vs their reference scoring.

For each benchmark a dataset is written in the PUBLISHED layout, 30+ messy raw outputs become a
replay file, the shipped suite runs end to end (``--model replay --uiground-replay-parser
qwen3-vl`` / ``uground``), with and without ``-n 2``, and every figure the reference prints, and
every sample's verdict, is compared with the independent re-implementations in
:mod:`parity.ref_osworld_g` / :mod:`parity.ref_ui_vision`. Counts are compared exactly, accuracies
to the 4 decimals summary.json keeps (0..100 scale).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.osworld_g.lookalike import write_osworld_g
from pytest_uiground.benchmarks.ui_vision.lookalike import write_ui_vision

from . import ref_osworld_g as rg
from . import ref_ui_vision as ru
from .test_parity_gui import run_suite

pytestmark = pytest.mark.slow
EXACT = 5e-5  # summary.json rounds to 4 decimals; counts are compared exactly
CAT2PLATFORM = json.loads((Path(__file__).parents[2] / "pytest_uiground" / "benchmarks" / "ui_vision"
                           / "mapdict_cat2platform.json").read_text())


def verdicts(project: Project) -> dict[str, bool]:
    rows = [json.loads(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    return {r["id"]: bool(r["score"]["correct"]) for r in rows}


def rows(project: Project) -> dict[str, dict[str, Any]]:
    out = [json.loads(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in out}


# -- OSWorld-G (Qwen3-VL outputs, 1920x1080 screenshots) -------------------------------------------
def sq(x0: float, y0: float, x1: float, y1: float) -> list[float]:
    return [x0, y0, x1, y0, x1, y1, x0, y1]


C = (960, 324)  # where "[500, 300]" clicks on 1920x1080
TOOL = '<tool_call>{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": {}}}}}</tool_call>'
OSWORLD_CASES: list[tuple[str, str, list[float]]] = [
    ("[500, 300]", "bbox", [950, 320, 20, 10]),                                  # hit
    ("(500,300)", "bbox", [961, 320, 20, 10]),                                   # miss by a pixel
    (TOOL.format("[741, 312]"), "bbox", [1422.9, 326.4, 26.68, 28.4]),           # int() truncates to 1422: miss
    ("[-1, -1]", "refusal", [0, 0, 0, 0]),                                       # refusal on a refusal: hit
    ("[-1,-1]", "bbox", [0, 0, 1920, 1080]),                                     # refusal elsewhere: miss
    ("[-1.0, -1.0]", "polygon", sq(0, 0, 1920, 1080)),                           # refusal elsewhere: miss
    ('{"action": "terminate", "status": "failure"}', "refusal", [0, 0, 0, 0]),   # hit
    ("{'action': 'terminate'}", "refusal", [0, 0, 0, 0]),                        # hit
    ('{"action":"terminate"}', "refusal", [0, 0, 0, 0]),                         # not ClawGUI's form: miss
    ("[-5, -3]", "refusal", [0, 0, 0, 0]),                                       # both negative: official hit
    ("[-5, 300]", "refusal", [0, 0, 0, 0]),                                      # one negative: a click, miss
    ("", "bbox", [0, 0, 1920, 1080]),                                            # empty: miss
    ("I cannot find it on the screen.", "refusal", [0, 0, 0, 0]),                # free text: not a refusal
    ("Step 1: click [500, 300]", "bbox", [950, 320, 20, 10]),                    # 3 numbers: nothing
    ('{"point_2d": [500, 300]}', "bbox", [950, 320, 20, 10]),                    # the 2 of point_2d: nothing
    ('{"bbox_2d": [100, 200, 300, 400]}', "bbox", [0, 100, 10, 10]),             # 5 numbers: pair (2, 100)
    ("[100, 200, 300, 400]", "bbox", [190, 210, 10, 10]),                        # box: top-left /999
    ("[1004, 500]", "bbox", [1900, 500, 20, 100]),                               # beyond the image: miss
    ("[0, 0]", "bbox", [0, 0, 5, 5]),                                            # origin: hit
    ("[0.5, 0.9]", "bbox", [0, 0, 5, 5]),                                        # truncated to (0, 0)
    ("[1, 1]", "bbox", [0, 0, 5, 5]),                                            # (1, 1) px read as relative
    ("[999.9, 999.9]", "bbox", [1900, 1060, 19, 19]),                            # (1919, 1079): edge, hit
    ("[500.5, 500.5]", "polygon", [900, 500, 1000, 500, 1000, 600, 900, 600]),   # (960, 540): hit
    ("(x=500, y=300)", "polygon", [900, 300, 950, 300, 950, 350, 1000, 350, 1000, 400, 900, 400]),  # notch
    ("<tool_call>{bad json [12, 34]}</tool_call>", "polygon", [0, 0, 100, 0, 0, 100]),  # numbers: hit
    (TOOL.format('["500", "x"]'), "bbox", [950, 0, 20, 1080]),                   # 1 number left: nothing
    ("[-1, -1, 500, 500]", "refusal", [0, 0, 0, 0]),                             # first pair -1: refusal
    ("-1 -1", "bbox", [0, 0, 1920, 1080]),                                       # refusal elsewhere
    ("[500, 300]", "polygon", sq(960, 300, 1000, 350)),                          # on the left edge: in
    ("[500, 300]", "polygon", sq(900, 300, 960, 350)),                           # on the right edge: out
    ("[500, 300]", "polygon", sq(900, 300, 1000, 324)),                          # on the bottom edge: out
    ("[500, 300]", "polygon", sq(900, 324, 1000, 400)),                          # on the top edge: in
    ("[500, 300]", "polygon", [900, 300, 1020, 300, 900, 420]),                  # inside a slanted edge
    ("[500, 300]", "polygon", [900, 300, 984, 300, 900, 384]),                   # on the slanted edge: out
    ("[500, 300]", "bbox", [940, 304, 20, 20]),                                  # right/bottom box edge: in
    ("  [ 500 , 300 ]  \n", "refusal", [0, 0, 0, 0]),                            # a click on a refusal: miss
    (TOOL.format("[500, 300]"), "polygon", sq(955, 320, 965, 330)),              # tool call: hit
]
GROUPS = ("text_matching", "element_recognition", "layout_understanding", "fine_grained_manipulation")


def osworld_records() -> tuple[list[dict[str, Any]], dict[str, list[dict[str, str]]]]:
    records, classified = [], {g: [] for g in (*GROUPS, "refusal")}
    for i, (_, kind, coords) in enumerate(OSWORLD_CASES):
        rid = f"SCREEN{i // 5}-{i % 5}"
        records.append({"id": rid, "image_path": f"SCREEN{i // 5}.png", "image_size": [1920, 1080],
                        "instruction": f"case {i}", "box_type": kind, "box_coordinates": coords,
                        "GUI_types": ["Button"]})
        if i % 7 == 6:
            continue  # unclassified
        classified["refusal" if kind == "refusal" else GROUPS[i % 4]].append({"id": rid})
        if i % 3 == 0:
            classified[GROUPS[(i + 1) % 4]].append({"id": rid})  # in two groups
    return records, classified


def test_osworld_g_every_figure_and_sample(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    records, classified = osworld_records()
    texts = [t for t, _, _ in OSWORLD_CASES]
    assert len(texts) >= 30
    write_osworld_g(tmp_path, records=records, groups={g: [e["id"] for e in v] for g, v in classified.items()})
    replay = {f"osworld-g-{r['id']}": t for r, t in zip(records, texts, strict=True)}
    m = run_suite(project, "osworld_g", tmp_path / "benchmark", replay, "qwen3-vl", *xdist)["accuracy"]
    ref = rg.runner_evaluate(records, texts, classified)
    assert m["n"] == ref["total"] == len(records)
    assert m["value"] == pytest.approx(100 * ref["accuracy"], abs=EXACT)
    groups = ref["accuracy_dict_group"]
    assert {k.removeprefix("group=") for k in m["slices"] if k.startswith("group=")} == set(groups)
    for g, slot in groups.items():
        assert m["slice_n"][f"group={g}"] == slot["total"], g
        assert m["slices"][f"group={g}"] == pytest.approx(100 * slot["accuracy"], abs=EXACT), g
    got = verdicts(project)
    assert got == {f"osworld-g-{k}": v for k, v in ref["verdicts"].items()}
    # Per box type (ClawGUI's and lmms-eval's breakdown), from the same verdicts.
    for kind in ("bbox", "polygon", "refusal"):
        ids = [r["id"] for r in records if r["box_type"] == kind]
        assert m["slices"][f"box_type={kind}"] == pytest.approx(
            100 * sum(ref["verdicts"][i] for i in ids) / len(ids), abs=EXACT)
    # The cases exercise what they claim: hits and misses of every type, multi-group and unclassified.
    assert "unclassified" in groups and 0 < ref["correct"] < len(records)
    assert sum(s["total"] for s in groups.values()) > len(records)
    by_row = rows(project)
    refused = {i for i, r in by_row.items() if r["prediction"]["refused"]}
    assert len(refused) == 8 and all(not by_row[i]["score"]["format_error"] for i in refused)


# -- UI-Vision (UGround-V1 outputs) ---------------------------------------------------------------
PLATFORMS = ("VSCode", "GIMP", "Brave", "Anki", "draw.io", "VLC Media Player", "Code::Blocks", "NotAnApp")
UIV_CASES: list[tuple[str, list[float]]] = [
    ("(523, 412)", [600, 300, 700, 400]),           # (0.523, 0.412) of 1280x720 -> (669, 297): hit
    ("[523, 412]", [600, 300, 700, 400]),
    ("523, 412", [0, 0, 100, 100]),                 # a tuple without brackets: a point, miss
    ("(523.5, 412.25)", [600, 300, 700, 400]),
    (" (523,412)\n", [600, 300, 700, 400]),
    ("The element is at (523, 412).", [600, 300, 700, 400]),   # wrong format
    ("(523, 412).", [600, 300, 700, 400]),          # wrong format
    ("(523, 412), (100, 900)", [600, 300, 700, 400]),
    ("(100, 200, 300, 400)", [0, 0, 1280, 720]),    # four numbers: wrong format
    ("```\n(523, 412)\n```", [600, 300, 700, 400]),
    ("{'x': 523, 'y': 412}", [600, 300, 700, 400]),
    ("(523, 412)<|im_end|>", [600, 300, 700, 400]),
    ("", [0, 0, 1280, 720]),
    ("(1000, 500)", [1200, 300, 1280, 400]),        # x = 1.0 on a box touching the right edge: hit
    ("(1001, 500)", [1200, 300, 1280, 400]),        # not clipped: miss
    ("(-5, 500)", [0, 300, 100, 400]),              # negative: a miss, not wrong format
    ("(0, 0)", [0, 0, 10, 10]),
    ("{1: 2, 3: 4}", [0, 0, 10, 10]),               # a dict unpacks to its keys (1, 3): hit
    ("True, False", [0, 0, 10, 10]),                # (0.001, 0.0): hit, as eval would
    ("(523, 412)", [700, 400, 600, 300]),           # reversed corners, swapped: hit
    ("(1e3, 5e2)", [1200, 300, 1280, 400]),
    ("[523, 412, ]", [600, 300, 700, 400]),
    ("'523', '412'", [600, 300, 700, 400]),         # strings: wrong format
    ("(523,)", [600, 300, 700, 400]),
    ("None", [600, 300, 700, 400]),
    ("(523, 412) ", [0, 0, 600, 300]),              # miss
    ("(0x1F4, 300)", [600, 200, 700, 250]),         # 500 in hex: (640, 216): hit
    ("((523, 412))", [600, 300, 700, 400]),
    ("(523 412)", [600, 300, 700, 400]),
    ("(999, 999)", [1270, 710, 1280, 720]),         # (1278.7, 719.3): hit
    ("(500, 500)", [600, 300, 700, 400]),           # image_size 1280x720, the PNG 640x360: box by image_size
    ("(250, 250)", [300, 150, 350, 200]),
    ("(523, 412)", [669.44, 296.64, 700, 400]),     # on the left/top edge exactly
]


def uiv_records() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {s: [] for s in ru.SETTINGS}
    for i, (_, bbox) in enumerate(UIV_CASES):
        setting = ru.SETTINGS[i % 3]
        png = "small.png" if i == 30 else f"s{i % 4}.png"
        out[setting].append({"image_path": f"element_grounding/{png}", "image_size": [1280, 720], "bbox": bbox,
                             "prompt_to_evaluate": f"case {i}", "platform": PLATFORMS[i % len(PLATFORMS)],
                             "element_type": ("text", "icon")[i % 2], "category": "Button"})
    return out


def test_ui_vision_every_figure_and_sample(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    from PIL import Image as PILImage

    assert len(UIV_CASES) >= 30
    records = uiv_records()
    small = tmp_path / "ui-vision" / "images" / "element_grounding" / "small.png"
    small.parent.mkdir(parents=True)
    PILImage.new("RGB", (640, 360)).save(small)
    write_ui_vision(tmp_path, per_setting=records)
    texts = {s: [UIV_CASES[3 * k + ru.SETTINGS.index(s)][0] for k in range(len(records[s]))] for s in ru.SETTINGS}
    replay = {f"ui-vision-{s}-{k}": t for s in ru.SETTINGS for k, t in enumerate(texts[s])}
    m = run_suite(project, "ui_vision", tmp_path / "ui-vision", replay, "uground", *xdist)
    runs = {s: ru.run_setting(records[s], texts[s]) for s in ru.SETTINGS}
    for s, run in runs.items():
        o = run["overall_simple"]
        assert m[s]["n"] == o["num_total"], s
        assert m[s]["format_errors"] == o["wrong_format_num"], s
        assert m[s]["value"] == pytest.approx(100 * o["action_acc"], abs=EXACT), s
        assert round(m[s]["value"] * m[s]["n"] / 100) == o["num_correct_action"], s
    assert m["average"]["value"] == pytest.approx(100 * ru.final_avg(runs), abs=EXACT)
    table = ru.domain_table(runs, CAT2PLATFORM)
    cells = {k.removeprefix("cell="): v for k, v in m["accuracy"]["slices"].items() if k.startswith("cell=")}
    assert cells == pytest.approx({f"{s}/{d}": 100 * v for s, row in table.items() for d, v in row.items()},
                                  abs=EXACT)
    got = verdicts(project)
    want = {f"ui-vision-{s}-{k}": d["correctness"] == "correct" for s, run in runs.items()
            for k, d in enumerate(run["details"])}
    assert got == want
    fmt = {i for i, r in rows(project).items() if r["score"]["format_error"]}
    assert fmt == {f"ui-vision-{s}-{k}" for s, run in runs.items() for k, d in enumerate(run["details"])
                   if d["correctness"] == "wrong_format"}
    assert 0 < sum(want.values()) < len(want) and fmt  # hits, misses and wrong formats all occur


# -- deviations from other scorers and reference bugs (each listed in the suite's README) ----------------
def test_osworld_g_deviations() -> None:
    from pytest_uiground.benchmarks.osworld_g.parsers import parse_qwen3vl
    from pytest_uiground.models.families import ParseContext
    from pytest_uiground.scoring.rules import score_point

    size = ParseContext((1920, 1080))
    # O1: refusals count (official runners); ClawGUI's default leaves them out of the denominator.
    records, classified = osworld_records()
    texts = [t for t, _, _ in OSWORLD_CASES]
    ref = rg.runner_evaluate(records, texts, classified)
    kept = [(r, t) for r, t in zip(records, texts, strict=True) if r["box_type"] != "refusal"]
    clawgui_default = sum(rg.sample_correct(r, t) for r, t in kept) / len(kept)
    assert ref["total"] == len(records) and clawgui_default != ref["accuracy"]
    # O2: a negative point other than (-1, -1) is the official refusal, not ClawGUI's sentinel.
    assert rg.clawgui_qwen3vl_parse("[-5, -3]", [1920, 1080]) != rg.REFUSAL
    assert parse_qwen3vl("[-5, -3]", "point", size).refused
    # O3: unreadable output is a miss here (and in ClawGUI); the official runners pass [0, 0, 0, 0],
    # a click at the origin, which a box covering (0, 0) would count as a hit.
    garbled = parse_qwen3vl("no idea", "point", size)
    assert garbled.format_error and garbled.point is None
    assert rg.official_eval([0, 0, 0, 0], "bbox", [5, 5], [0, 0], [1920, 1080]) is True
    from pytest_uiground.benchmarks.osworld_g.loader import target_of
    from pytest_uiground.models.base import to_prediction
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample

    origin = Sample("o", ImageRef(key="x"), "x", "point",
                    target_of({"box_type": "bbox", "box_coordinates": [0, 0, 5, 5]}, (1920, 1080)))
    assert score_point(origin, to_prediction(garbled, "no idea")).correct is False
    # O4: an unknown box_type: _eval returns None (a silent miss); here the record is invalid, naming it.
    assert rg.official_eval([1, 1, 1, 1], "circle", [1, 1], [0, 0], [10, 10]) is None


def test_ui_vision_deviations() -> None:
    from pytest_uiground.benchmarks.ui_vision.parsers import parse_uground_v1
    from pytest_uiground.models.families import ParseContext

    size = ParseContext((1280, 720))
    # U1: arithmetic. The reference's eval("500+20, 3") gives (520, 3): a point (0.52, 0.003); a
    # literal reader refuses it as wrong format (and never runs the model's text).
    assert parse_uground_v1("500+20, 3", "point", size).format_error
    assert ru.uground_v1_point("500+20, 3") is None
    # U2: complex numbers: the reference's hit test raises TypeError (the run dies); here wrong format.
    assert parse_uground_v1("(1j, 2)", "point", size).format_error
    # U3: the README's MiniCPM-V-8B "Final Avg" 4.34 is not the mean of its settings (7.11, 5.30, 3.57);
    # the suite's average is always the mean, as every other row of that table.
    assert round((7.11 + 5.30 + 3.57) / 3, 2) == 5.33 != 4.34
    # U4: a platform outside mapdict_cat2platform.json has no domain: it counts in its setting's
    # figures but in no cell (the parity records include "NotAnApp").
    assert "NotAnApp" in PLATFORMS and all("NotAnApp" not in v for v in CAT2PLATFORM.values())
