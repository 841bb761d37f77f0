"""Parity: the shipped VenusBench-GD suite vs an independent re-implementation of its ``eval.py``.

A dataset is written in the PUBLISHED layout (``instruction/<task>.json``, ``images/<platform>/``), 68
messy UI-Venus outputs (points on every box edge and corner, boxes, two points, text around a pair,
beyond the image, negative points, ``[-1, -1]`` and ``[-1, -1, -1, -1]`` refusals in their spellings,
decimals the reader cannot take, empty and free text) across all six task files become a replay file,
the suite runs end to end (``--model replay --uiground-replay-parser ui-venus``) with and without
``-n 2``, and every table ``eval.py`` prints (overall, text/icon, group, application, seeclick_style,
fine_grained), the per-task and basic/advanced figures and every sample's correctness are compared
with :mod:`parity.ref_venusbench_gd`. A second test reads the refusal forms of the other families
that can refuse (Gelato ``refusal``, GUI-Owl and Qwen3-VL ``terminate`` calls) through the loader,
the replay model and the suite's scorer, sample by sample, against the same reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image

from pytest_uiground.benchmarks.venusbench_gd import loader as vl
from pytest_uiground.benchmarks.venusbench_gd.lookalike import TASKS, write_venusbench_gd
from pytest_uiground.models.offline.replay import ReplayModel
from pytest_uiground.scoring import scorer as scoring
from pytest_uiground.suite.loading import LoaderContext

from . import ref_venusbench_gd as rv
from .test_parity_gui import run_suite

EXACT = 5e-5  # summary.json keeps 4 decimals (0..100); counts are compared exactly
IMAGES = {"web/w.png": (1920, 1080), "mobile/m.png": (1080, 2400), "desktop/d.png": (2000, 1000)}
PLATFORM = {"web/w.png": "web", "mobile/m.png": "mobile", "desktop/d.png": "desktop"}
APPS = {"web": ("amazon", "github"), "mobile": ("wechat",), "desktop": ("vscode", "excel")}
GROUPS = ("Shopping", "Social", "Office")
FULL = (0, 0, 1000, 1000)

# (UI-Venus answer, target box in 0..1000 of the image; the record's bbox is that in pixels)
POSITIVE: list[tuple[str, tuple[float, float, float, float]]] = [
    ("[500,500]", (490, 490, 510, 510)),                   # hit
    ("[500, 500]", (501, 490, 510, 510)),                  # a hair right of it: miss
    ("[500,500]", (500, 500, 600, 600)),                   # on the top-left corner: hit (inclusive)
    ("[500,500]", (400, 400, 500, 500)),                   # on the bottom-right corner: hit
    ("[500,500]", (500, 500, 500, 500)),                   # a zero-size box at the point: hit
    ("[-1,-1]", FULL),                                     # a refusal where the element is: wrong
    ("[-1,-1,-1,-1]", FULL),                               # UI-Venus-Ground's refusal box: wrong
    ("", FULL),                                            # empty: wrong_format
    ("I cannot find it.", FULL),                           # free text: wrong_format
    ("[100,200,300,400]", (190, 290, 210, 310)),           # a box: its centre (200, 300), hit
    ("[100, 200], [300, 400]", (190, 290, 210, 310)),      # two corners: the centre, hit
    ("[1001, 500]", (900, 400, 1000, 600)),                # beyond the image, not clipped: miss
    ("[0,0]", (0, 0, 5, 5)),                               # the origin: hit
    ("[1000,1000]", (990, 990, 1000, 1000)),               # the far corner: hit
    ("[500.5, 300]", FULL),                                # a decimal the reader's int() refuses
    ("The target is [250,750] here", (240, 740, 260, 760)),  # the first [...] in the text: hit
    ("[500]", FULL),                                       # one number: wrong_format
    ("[a, b]", FULL),                                      # no numbers: wrong_format
    ("[250,750]", (260, 740, 270, 760)),                   # miss
    ("  [250,750]  \n", (240, 740, 260, 760)),             # spaces around: hit
    ("[012,3]", FULL),                                     # a leading zero the reader cannot eval
    ("[300,400] [600,700]", (290, 390, 310, 410)),         # two pairs without a comma: the first
    ("[-5, 500]", FULL),                                   # a negative x: a point, miss
    ("[999,1]", (998, 0, 1000, 2)),                        # near a corner: hit
    ("<think>[1,1]</think>[500,500]", (0, 0, 2, 2)),       # the first [...] is inside the thinking
    ("[1000, 0]", (999, 0, 1000, 1)),                      # the top-right corner: hit
    ("[700,300]", (700.0001, 290, 710, 310)),              # just beyond the left edge: miss
    ("[700,300]", (690, 290, 700, 300)),                   # on the right/bottom edges: hit
]
NEGATIVE: list[str] = [
    "[-1,-1]", "[-1, -1]", "[ -1 , -1 ]", "[-1,-1,-1,-1]", "[0,0]", "", "The element is not present.",
    "[-2,-2]", "[500,500]", "[-1,-1] because it is absent", "[-1.0,-1.0]", "[-1,-1],[-1,-1]",
]


def dataset(tmp_path: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[tuple[str, int], str]]:
    """The records per task file and the answer per (task, index); two images per positive case."""
    files: dict[str, list[dict[str, Any]]] = {t: [] for t in TASKS}
    texts: dict[tuple[str, int], str] = {}
    names = list(IMAGES)
    k = 0
    for copy in range(2):
        for j, (text, box) in enumerate(POSITIVE):
            task = TASKS[(j + copy) % 5]
            image = names[(j + 2 * copy) % 3]
            w, h = IMAGES[image]
            platform = PLATFORM[image]
            rec = {"id": f"p{k:03d}", "img_filename": image,
                   "bbox": [box[0] * w / 1000, box[1] * h / 1000, box[2] * w / 1000, box[3] * h / 1000],
                   "instruction": f"case {k}", "instruction_zh": f"案例 {k}", "platform": platform,
                   "application": APPS[platform][k % len(APPS[platform])], "ui_type": ("text", "icon")[k % 2],
                   "group": GROUPS[k % 3]}
            texts[(task, len(files[task]))] = text
            files[task].append(rec)
            k += 1
    for j, text in enumerate(NEGATIVE):
        image = names[j % 3]
        platform = PLATFORM[image]
        rec = {"id": f"n{j:03d}", "img_filename": image, "bbox": [0, 0, 0, 0], "instruction": f"missing {j}",
               "instruction_zh": f"缺失 {j}", "platform": platform, "application": APPS[platform][0],
               "ui_type": ("text", "icon")[j % 2], "group": GROUPS[j % 3]}
        texts[("refusal_spatial", j)] = text
        files["refusal_spatial"].append(rec)
    root = tmp_path / "VenusBench-GD" / "images"
    for name, size in IMAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", size, (240, 240, 240)).save(root / name)
    write_venusbench_gd(tmp_path, records=files)
    return files, texts


def sid(task: str, rec: dict[str, Any]) -> str:
    return f"venusbench-{task}-{rec['id']}"


@pytest.mark.slow
def test_every_table_and_sample(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    files, texts = dataset(tmp_path)
    assert len(texts) >= 60
    replay = {sid(t, files[t][i]): text for (t, i), text in texts.items()}
    metrics = run_suite(project, "venusbench_gd", tmp_path / "VenusBench-GD", replay, "ui-venus", *xdist)
    m = metrics["accuracy"]
    ref = rv.run(files, IMAGES, texts, "ui-venus")
    o = ref["overall"]
    assert (m["n"], m["format_errors"]) == (o["num_total"], o["wrong_format_num"]) == (len(texts), 15)
    assert m["value"] == pytest.approx(100 * o["action_acc"], abs=EXACT)
    assert 0 < o["num_correct_action"] < o["num_total"]
    for ui, key in (("text", "text"), ("icon", "icon")):
        assert m["slices"][f"ui_type={ui}"] == pytest.approx(100 * o[f"{key}_acc"], abs=EXACT)
        assert m["slice_n"][f"ui_type={ui}"] == o[f"{key}_n"]
    tables = {"leaderboard_simple_style": lambda c: f"group={c[0]}",
              "leaderboard_detailed_style": lambda c: f"application={c[0]}",
              "seeclick_style": lambda c: f"platform_gt={c[0]}/{c[2]}",
              "fine_grained": lambda c: f"platform_application_gt={c[0]}/{c[1]}/{c[3]}",
              "per_task": lambda c: f"task={c[0]}", "per_level": lambda c: f"level={c[0]}"}
    for name, label in tables.items():
        prefix = label(("x", "x", "x", "x")).split("=")[0] + "="
        assert {k for k in m["slices"] if k.startswith(prefix)} == {label(c) for c in ref[name]}, name
        for combo, row in ref[name].items():
            assert m["slice_n"][label(combo)] == row["num_total"], (name, combo)
            assert m["slices"][label(combo)] == pytest.approx(100 * row["action_acc"], abs=EXACT), (name, combo)
            assert m.get("slice_format_errors", {}).get(label(combo), 0) == row["wrong_format_num"], (name, combo)
    # The refusal policy's other figure: the positive samples alone (eval.py --gt_type positive).
    twin = metrics["accuracy_refusals_excluded"]
    assert twin["n"] == ref["positive_only"]["num_total"] == len(texts) - len(NEGATIVE)
    assert twin["value"] == pytest.approx(100 * ref["positive_only"]["action_acc"], abs=EXACT)
    rows = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    for (task, i), correctness in ref["correctness"].items():
        score = rows[sid(task, files[task][i])]["score"]
        assert (bool(score["correct"]), bool(score.get("format_error"))) == (
            correctness == "correct", correctness == "wrong_format"), (task, i, texts[(task, i)])


FAMILY_CASES: dict[str, list[tuple[str, bool]]] = {  # (answer, on a refusal sample?)
    "gelato": [("refusal", True), ("REFUSAL: not on screen", True), ("refusal", False), ("(500, 500)", True),
               ("(500, 500)", False), ("(500,500) or refusal", True), ("(500.5, 3)", False), ("", True)],
    "gui-owl": [('<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}'
                 "\n</tool_call>", True),
                ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}'
                 "\n</tool_call>", False),
                ("(500, 500)", False), ("[500, 500]", True), ("no pair here", True), ("no pair here", False)],
    "qwen3-vl": [('<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}'
                  "\n</tool_call>", True),
                 ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": '
                  "[500, 500]}}\n</tool_call>", False),
                 ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": '
                  "[500, 500]}}\n</tool_call>", True),
                 ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}'
                  "\n</tool_call>", False)],
    "ui-venus": [("[-1,-1]", True), ("[-1,-1]", False), ("[-1,-1,-1,-1]", True), ("[500,500]", True)],
}


@pytest.mark.parametrize("family", sorted(FAMILY_CASES))
def test_each_familys_refusal_form(tmp_path: Path, family: str) -> None:
    cases = FAMILY_CASES[family]
    files: dict[str, list[dict[str, Any]]] = {"element_grounding": [], "refusal_spatial": []}
    texts: dict[tuple[str, int], str] = {}
    for text, negative in cases:
        task = "refusal_spatial" if negative else "element_grounding"
        i = len(files[task])
        files[task].append({"id": f"{task[:3]}{i}", "img_filename": "web/w.png", "bbox": [950, 530, 970, 550],
                            "instruction": "x", "platform": "web", "application": "a", "ui_type": "text"})
        texts[(task, i)] = text
    root = tmp_path / "VenusBench-GD" / "images" / "web"
    root.mkdir(parents=True)
    Image.new("RGB", (1920, 1080)).save(root / "w.png")
    write_venusbench_gd(tmp_path, tasks=list(files), records=files)
    samples = vl.load({"tasks": list(files)}, LoaderContext("t", Path("."), tmp_path))
    by_id = {s.id: s for s in samples}
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": sid(t, files[t][i]), "output": v}) + "\n"
                             for (t, i), v in texts.items()))
    keys = list(texts)
    chosen = [by_id[sid(t, files[t][i])] for t, i in keys]
    got = ReplayModel(preds, family).predict(chosen)
    rule = scoring.load("task").rule
    assert rule is not None
    ref = rv.run(files, {"web/w.png": (1920, 1080)}, texts, family)["correctness"]
    refused = 0
    for key, sample, pred in zip(keys, chosen, got, strict=True):
        score = rule(sample, pred)
        refused += pred.refused
        assert (score.correct, score.format_error) == (ref[key] == "correct", ref[key] == "wrong_format"), \
            (family, texts[key])
    assert refused >= 2  # each family's refusal form is read as one, on both kinds of sample
