"""ScreenSpot-Pro negative instructions (``gt_type`` negative in the published layout).

``eval_screenspot_pro.py`` (likaixin2000/ScreenSpot-Pro-GUI-Grounding@bd8bbbb) scores a negative
sample with ``eval_sample_negative_gt``: right iff the answer is "negative" (a refusal), a point is
wrong, nothing readable is ``wrong_format``; its tables are the same ``calc_metric_for_result_list``
as VenusBench-GD's ``eval.py`` (derived from it), so the independent re-implementation in
:mod:`parity.ref_venusbench_gd` is the reference here too. The shipped suite runs on a look-alike
with negative records added, with and without ``-n 2``: positives keep the headline ``accuracy``
(negatives left out, as a ``--gt_type positive`` run), negatives are counted in ``negative_accuracy``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Project
from parity import ref_venusbench_gd as rv
from parity.test_parity_gui import run_suite

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.screenspot import loader as ssl
from pytest_uiground.benchmarks.screenspot.lookalike import write_screenspot_pro
from pytest_uiground.suite.loading import LoaderContext

NEGATIVE_TEXTS = ["[-1,-1]", "[-1, -1]", "[500,500]", "", "not there", "[-1,-1,-1,-1]", "[-1.0,-1.0]"]


def negatives(n: int) -> list[dict[str, Any]]:
    return [{"img_filename": "neg/screen.png", "instruction": f"click the absent thing {i}", "instruction_cn": "x",
             "id": f"neg_{i}", "application": "vscode", "platform": "macos", "img_size": [64, 48],
             "ui_type": ("text", "icon")[i % 2], "group": "Dev", "gt_type": "negative"} for i in range(n)]


def test_loader_reads_negative_records(tmp_path: Path) -> None:
    bad = {**negatives(1)[0], "id": "odd", "gt_type": "maybe"}
    fx = write_screenspot_pro(tmp_path, per_app=2, records={"neg_macos": [*negatives(2), bad]})
    samples = {s.id: s for s in ssl.load_pro({}, LoaderContext("t", Path("."), tmp_path))}
    neg = samples["sspro-neg_0"]
    assert neg.invalid is None and neg.target.refusal and neg.target.box is None
    assert neg.meta["gt_type"] == "negative" and neg.meta["expects"] == "refusal"
    pos = samples[fx.samples[0].sample_id]
    assert pos.meta["gt_type"] == "positive" and pos.meta["expects"] == "element" and pos.target.box is not None
    assert "'gt_type': 'maybe' is not one of positive, negative" in (samples["sspro-odd"].invalid or "")


@pytest.mark.slow
def test_negatives_scored_and_counted_separately(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    fx = write_screenspot_pro(tmp_path, per_app=2, records={"neg_macos": negatives(len(NEGATIVE_TEXTS))})
    answers: dict[str, str] = {}
    positives: list[dict[str, Any]] = []
    for k, w in enumerate(fx.samples):
        x0, y0, x1, y1 = w.record["bbox"]
        hit = f"[{round(1000 * (x0 + x1) / 2 / w.image_size[0])},{round(1000 * (y0 + y1) / 2 / w.image_size[1])}]"
        answers[w.sample_id] = ("[-1,-1]", "", hit)[k % 3]  # a refusal where the element is, no answer, a hit
        positives.append(dict(w.record))
    for i, text in enumerate(NEGATIVE_TEXTS):
        answers[f"sspro-neg_{i}"] = text
    metrics = run_suite(project, "screenspot/pro", tmp_path / "ScreenSpot-Pro", answers, "ui-venus", *xdist)
    sizes = {r["img_filename"]: tuple(r["img_size"]) for r in positives}
    sizes["neg/screen.png"] = (64, 48)
    files = {"positive": positives, "refusal_spatial": negatives(len(NEGATIVE_TEXTS))}
    texts = {("positive", i): answers[w.sample_id] for i, w in enumerate(fx.samples)}
    texts.update({("refusal_spatial", i): t for i, t in enumerate(NEGATIVE_TEXTS)})
    ref = rv.run(files, sizes, texts, "ui-venus")
    neg = rv.metrics_of([{"correctness": ref["correctness"][("refusal_spatial", i)], "ui_type": None}
                         for i in range(len(NEGATIVE_TEXTS))])
    m, n = metrics["accuracy"], metrics["negative_accuracy"]
    assert (m["n"], m["format_errors"]) == (ref["positive_only"]["num_total"], ref["positive_only"]["wrong_format_num"])
    assert m["value"] == pytest.approx(100 * ref["positive_only"]["action_acc"], abs=5e-5)
    assert (n["n"], n["format_errors"]) == (neg["num_total"], neg["wrong_format_num"]) == (7, 3)
    assert n["value"] == pytest.approx(100 * neg["action_acc"], abs=5e-5) and neg["num_correct_action"] == 3
    rows = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    assert [bool(rows[f"sspro-neg_{i}"]["score"]["correct"]) for i in range(7)] == [
        ref["correctness"][("refusal_spatial", i)] == "correct" for i in range(7)]
