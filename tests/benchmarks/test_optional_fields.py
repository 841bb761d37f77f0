"""Fields a benchmark's reference reads as optional never fail collection.

VenusBench-GD's ``eval.py`` reads ``group``, ``platform``, ``application`` and ``ui_type`` as
``sample[k] if k in sample else None``; ScreenSpot-Pro's ``eval_screenspot_pro.py`` reads ``group``
so (the others as ``sample[k]``). A copy of either dataset whose records lack such a field must load,
score and land those records in the ``none`` slice (the reference's ``None`` row), never stop the run
with "metrics[0].slices: no sample has the key 'group'" (what the VenusBench-GD suite did).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Project
from parity.test_parity_gui import run_suite

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.screenspot import loader as screenspot
from pytest_uiground.benchmarks.screenspot.lookalike import write_screenspot_pro
from pytest_uiground.benchmarks.venusbench_gd import loader as vl
from pytest_uiground.benchmarks.venusbench_gd.lookalike import write_venusbench_gd
from pytest_uiground.suite.loading import LoaderContext


def ctx(data: Path) -> LoaderContext:
    return LoaderContext("t", Path("."), data)


def test_venusbench_records_without_the_optional_fields_load(tmp_path: Path) -> None:
    fx = write_venusbench_gd(tmp_path, per_task=2, tasks=["element_grounding"])
    records = [dict(w.record) for w in fx.written]
    del records[0]["group"]
    for key in ("group", "platform", "application", "ui_type"):
        records[1].pop(key)
    write_venusbench_gd(tmp_path, tasks=["element_grounding"], records={"element_grounding": records})
    first, second = vl.load({"tasks": ["element_grounding"]}, ctx(tmp_path))
    assert first.invalid is None and second.invalid is None
    assert first.meta["group"] == "none" and first.meta["platform"] == records[0]["platform"]
    assert {k: second.meta[k] for k in ("group", "platform", "application", "ui_type")} == dict.fromkeys(
        ("group", "platform", "application", "ui_type"), "none")
    # eval.py's seeclick_style and fine_grained keys take the None too
    assert second.meta["platform_gt"] == "none/positive"
    assert second.meta["platform_application_gt"] == "none/none/positive"


def test_screenspot_pro_group_is_optional_the_rest_required(tmp_path: Path) -> None:
    good = {"img_filename": "x_win/a.png", "bbox": [10, 10, 50, 30], "instruction": "click", "id": "x_win_0",
            "application": "x", "platform": "windows", "img_size": [200, 100], "ui_type": "icon"}
    no_app = {k: v for k, v in good.items() if k != "application"} | {"id": "x_win_1"}
    write_screenspot_pro(tmp_path, apps=(), folder_name="", records={"x_win": [good, no_app]})
    samples = {s.id: s for s in screenspot.load_pro({}, ctx(tmp_path))}
    s = samples["sspro-x_win_0"]
    assert s.invalid is None and s.meta["group"] == "none" and s.meta["cell"] == "none/icon"
    # eval_screenspot_pro.py reads application as sample["application"]: still a record error, named
    assert "field 'application'" in (samples["sspro-x_win_1"].invalid or "")


@pytest.mark.slow
def test_venusbench_copy_without_group_runs(project: Project, tmp_path: Path) -> None:
    """End to end: not one record carries ``group`` (the suite declares it a slice); the run collects,
    scores every sample and reports the ``group=none`` slice."""
    fx = write_venusbench_gd(tmp_path, per_task=2, tasks=["element_grounding", "refusal_spatial"])
    files: dict[str, list[dict[str, object]]] = {"element_grounding": [], "refusal_spatial": []}
    answers: dict[str, str] = {}
    for w in fx.written:
        task = "refusal_spatial" if "refusal_spatial" in w.sample_id else "element_grounding"
        files[task].append({k: v for k, v in w.record.items() if k != "group"})
        x0, y0, x1, y1 = w.record["bbox"]
        width, height = w.image_size
        answers[w.sample_id] = ("[-1,-1]" if task == "refusal_spatial" else
                                f"[{round(500 * (x0 + x1) / width)},{round(500 * (y0 + y1) / height)}]")
    write_venusbench_gd(tmp_path, tasks=list(files), records=files)
    for name in ("spatial_grounding", "visual_grounding", "reasoning_grounding", "functional_grounding"):
        (tmp_path / "VenusBench-GD" / "instruction" / f"{name}.json").write_text("[]")
    metrics = run_suite(project, "venusbench_gd", tmp_path / "VenusBench-GD", answers, "ui-venus",
                        "--snapshot-update")
    acc = metrics["accuracy"]
    assert acc["n"] == 4 and acc["value"] == pytest.approx(100.0)
    assert acc["slice_n"]["group=none"] == 4
    assert not any(k.startswith("group=") and k != "group=none" for k in acc["slices"])
