"""GUI-Owl-1.5's OSWorld-G figure as its script computes it, beside the suite's own rule, on a small constructed run.

The reference (X-PLUG/MobileAgent@11cea57 ``Mobile-Agent-v3.5/grounding_and_kb/eval_grounding_benchmarks.py``,
``ScreenSpotv2.evaluate``) is re-implemented below from the raw answer and the record's pixels, independently
of the scorer (``pytest_uiground/benchmarks/osworld_g/gui_owl_published.py``), which reads the family's
parsed point. Ten records on 1920x1080 screens, each answer chosen for a rule: a tool call inside its box, an
unreadable answer on a box covering the origin (the script's (0, 0) hits it), a click outside, a polygon
hit, a ``terminate`` call, an unreadable answer, an explicit ``(0, 0)`` and a ``(-1, -1)`` on refusal
samples (all right in the script), a click on a refusal sample, and a click one grid unit outside a box
that the script's floor widens to take it in.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import Project
from parity.test_parity_gui import install_suite

from pytest_uiground.benchmarks.osworld_g.gui_owl_published import grid_point, score
from pytest_uiground.benchmarks.osworld_g.lookalike import write_osworld_g
from pytest_uiground.models import families
from pytest_uiground.models.base import to_prediction
from pytest_uiground.models.families import ParseContext
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target

SIZE = (1920, 1080)
TERMINATE = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}\n'
             "</tool_call>")
CASES: list[tuple[str, list[float], str]] = [  # (box_type, box_coordinates in pixels, GUI-Owl's answer)
    ("bbox", [100, 100, 50, 40], '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
                                 '"coordinate": [65, 111]}}\n</tool_call>'),
    ("bbox", [0, 0, 40, 30], "I cannot tell where that is."),
    ("bbox", [500, 500, 100, 100], "(100, 100)"),
    ("polygon", [960, 540, 1060, 540, 1060, 640, 960, 640], "The icon is at (525, 545)."),
    ("refusal", [0, 0, 0, 0], TERMINATE),
    ("refusal", [0, 0, 0, 0], "The element is not visible on this screen."),
    ("refusal", [0, 0, 0, 0], "(0, 0)"),
    ("refusal", [0, 0, 0, 0], "(-1, -1)"),
    ("refusal", [0, 0, 0, 0], "(500, 500)"),
    ("bbox", [100.3, 300, 60, 60], "(52, 300)"),  # floor(100.3 * 1000 / 1920) = 52: in; 52 / 1000 * 1920 px: out
]
SCRIPT_RIGHT = [True, True, False, True, True, True, True, True, False, True]  # by hand, from the rules
SUITE_RIGHT = [True, False, False, True, True, False, False, False, False, False]
AS_PUBLISHED = "pytest_uiground.benchmarks.osworld_g.gui_owl_published:score"


def script_verdict(response: str, box_type: str, bbox: Sequence[float], size: tuple[int, int]) -> bool:
    """``ScreenSpotv2.evaluate`` for one item (``use_qwen3vl=True``), from the raw response."""
    matches = re.findall(r"\((\d+),\s*(\d+)\)", response) or re.findall(r"\[(\d+), (\d+)\]", response)
    x, y = (int(matches[-1][0]), int(matches[-1][1])) if matches else (0, 0)
    sx, sy = 1000 / size[0], 1000 / size[1]
    if box_type == "bbox":
        x1, y1, w, h = bbox
        return (math.floor(x1 * sx) <= x <= math.ceil((x1 + w) * sx)) and (
            math.floor(y1 * sy) <= y <= math.ceil((y1 + h) * sy))
    if box_type == "polygon":
        n, inside, j = len(bbox) // 2, False, len(bbox) // 2 - 1
        for i in range(n):
            xi, yi, xj, yj = bbox[2 * i] * sx, bbox[2 * i + 1] * sy, bbox[2 * j] * sx, bbox[2 * j + 1] * sy
            if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
                inside = not inside
            j = i
        return inside
    return (x, y) == (0, 0)


def run(project: Project, root: Path, outputs: Mapping[str, str], as_published: bool, *args: str
        ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    name = install_suite(project, "osworld_g")
    toml = project.root / "suites" / name / "suite.toml"
    if as_published:
        text = toml.read_text()
        assert '[scorer]\nname = "osworld_g"' in text
        toml.write_text(text.replace('[scorer]\nname = "osworld_g"', f'[scorer]\nname = "{AS_PUBLISHED}"'))
    preds = root / "outputs.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in outputs.items()))
    result = project.pytester.runpytest_subprocess(
        f"suites/{name}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable",
        "--uiground-cache", "off", "--uiground-data-path", str(root / "benchmark"), "--uiground-report", "out",
        "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", "gui-owl",
        "--snapshot-update", *args)
    assert result.ret == 0, result.stdout.str()[-3000:]
    rows = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    return project.summary(), rows


def target(kind: str, box: Sequence[float]) -> Target:
    if kind == "refusal":
        return Target(refusal=True)
    if kind == "polygon":
        return Target(polygon=tuple(box), frame=SIZE)
    x, y, w, h = box
    return Target(box=Box(x / SIZE[0], y / SIZE[1], (x + w) / SIZE[0], (y + h) / SIZE[1]))


def test_the_scorer_on_the_familys_reading_equals_the_script() -> None:
    """Each answer read by the ``gui-owl`` family, then scored: the script's verdict, and its (0, 0) noted."""
    family = families.get("gui-owl")
    ctx = ParseContext(image_size=SIZE, model_input_size=family.input_size(SIZE))
    for i, (kind, box, answer) in enumerate(CASES):
        sample = Sample(id=f"s{i}", image=ImageRef(key=f"s{i}", size=SIZE), instruction="x", task="point",
                        target=target(kind, box))
        pred = to_prediction(family.parse(answer, "point", ctx), answer)
        got = score(sample, pred)
        assert got.correct is script_verdict(answer, kind, box, SIZE) is SCRIPT_RIGHT[i], (i, answer)
        assert ("as_published" in got.notes) is (grid_point(pred) == (0, 0) and pred.point is None), i


@pytest.mark.slow
@pytest.mark.parametrize("as_published", [False, True], ids=["suite-rule", "as-published"])
def test_the_figure_as_gui_owl_published_it(project: Project, tmp_path: Path, as_published: bool,
                                            xdist: list[str]) -> None:
    records = [{"id": f"G{i}-0", "image_path": f"G{i}.png", "image_size": list(SIZE), "instruction": f"Click {i}",
                "box_type": kind, "box_coordinates": box} for i, (kind, box, _) in enumerate(CASES)]
    write_osworld_g(tmp_path, records=records, size=SIZE)
    ids = [f"osworld-g-G{i}-0" for i in range(len(CASES))]
    expected = [script_verdict(answer, kind, box, SIZE) for kind, box, answer in CASES]
    assert expected == SCRIPT_RIGHT  # the re-implementation agrees with the rules read by hand
    summary, rows = run(project, tmp_path, {sid: answer for sid, (_, _, answer) in zip(ids, CASES, strict=True)},
                        as_published, *xdist)
    got = [bool(rows[sid]["score"]["correct"]) for sid in ids]
    assert got == (SCRIPT_RIGHT if as_published else SUITE_RIGHT)
    accuracy = summary["metrics"]["accuracy"]
    assert accuracy["n"] == 10 and accuracy["value"] == pytest.approx(10 * sum(got))
    # the deviation in one number: three refusal samples right only by the script's (0, 0)
    refusals_right = sum(g for g, (kind, _, _) in zip(got, CASES, strict=True) if kind == "refusal")
    assert refusals_right == (4 if as_published else 1)
