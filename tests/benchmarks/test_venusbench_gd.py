"""VenusBench-GD: the loader on its published layout, bad input, and the suite's lifecycle.

Parity with ``eval.py`` is in ``tests/parity/test_parity_venusbench_gd.py``; here: what the loader
reads (ids, the box by the image's own size, refusal samples, Chinese instructions, the task
option), what a malformed record or folder says, and a run of the shipped suite with and without
``-n 2`` (refusals counted, the other denominator beside it, ``--uiground-refusals exclude``, a
baseline written by ``--snapshot-update`` and compared on the next run).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.venusbench_gd import loader as vl
from pytest_uiground.benchmarks.venusbench_gd.lookalike import write_venusbench_gd
from pytest_uiground.suite.loading import LayoutError, LoaderContext

SUITES = Path(__file__).parents[2] / "suites"


def ctx(data: Path | None) -> LoaderContext:
    return LoaderContext("t", Path("."), data)


def test_reads_published_layout(tmp_path: Path) -> None:
    fx = write_venusbench_gd(tmp_path, per_task=4)
    samples = vl.load({}, ctx(tmp_path))
    assert [s.id for s in samples] == [w.sample_id for w in fx.written]
    assert all(s.invalid is None for s in samples)
    assert {s.meta["task"] for s in samples} == set(vl.TASKS)
    first = fx.written[0]
    w, h = first.image_size
    x0, y0, x1, y1 = first.record["bbox"]
    assert samples[0].target.box == (x0 / w, y0 / h, x1 / w, y1 / h) and samples[0].image.size == (w, h)
    refusal = [s for s in samples if s.meta["task"] == "refusal_spatial"]
    assert refusal and all(s.target.refusal and s.target.box is None for s in refusal)
    assert {s.meta["expects"] for s in refusal} == {"refusal"} and {s.meta["gt_type"] for s in refusal} == {"negative"}
    levels = {s.meta["task"]: s.meta["level"] for s in samples}
    assert levels == {"element_grounding": "basic", "spatial_grounding": "basic", "visual_grounding": "basic",
                      "reasoning_grounding": "advanced", "functional_grounding": "advanced",
                      "refusal_spatial": "advanced"}
    s = samples[0]
    assert s.meta["platform_gt"] == f"{s.meta['platform']}/positive"
    assert s.meta["platform_application_gt"] == f"{s.meta['platform']}/{s.meta['application']}/positive"


def test_languages_tasks_and_index_ids(tmp_path: Path) -> None:
    write_venusbench_gd(tmp_path, per_task=3, ids=False)
    cn = vl.load({"language": "cn"}, ctx(tmp_path / "VenusBench-GD"))
    assert cn and all(s.id.endswith("-cn") and s.instruction.startswith("点击") for s in cn)
    assert "refusal_spatial" not in {s.meta["task"] for s in cn}  # eval.py: positive only in Chinese
    both = vl.load({"language": "all"}, ctx(tmp_path))
    assert len(both) == len(cn) + 6 * 3 and {s.meta["language"] for s in both} == {"en", "cn"}
    only = vl.load({"tasks": ["spatial_grounding"]}, ctx(tmp_path))
    assert [s.id for s in only] == [f"venusbench-spatial_grounding-{i}" for i in range(3)]


def test_instruction_cn_is_read_when_instruction_zh_is_absent(tmp_path: Path) -> None:
    rec = {"img_filename": "web/a.png", "bbox": [1, 2, 3, 4], "instruction": "x", "instruction_cn": "点击",
           "platform": "web", "application": "a", "ui_type": "text"}
    write_venusbench_gd(tmp_path, tasks=["element_grounding"], records={"element_grounding": [rec]})
    [s] = vl.load({"tasks": ["element_grounding"], "language": "cn"}, ctx(tmp_path))
    assert s.invalid is None and s.instruction == "点击"


def test_bad_input_names_the_thing(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match=r"needs --uiground-data-path.*git clone"):
        vl.load({}, ctx(None))
    with pytest.raises(ValueError, match=r"tasks: expected a non-empty list drawn from .*got \['clicking'\]"):
        vl.load({"tasks": ["clicking"]}, ctx(tmp_path))
    with pytest.raises(ValueError, match=r"language: expected one of en, cn, all, got 'fr'"):
        vl.load({"language": "fr"}, ctx(tmp_path))
    with pytest.raises(ValueError, match=r"unknown loader option\(s\) \['split'\]"):
        vl.load({"split": "x"}, ctx(tmp_path))
    with pytest.raises(LayoutError, match=r"VenusBench-GD not found.*instruction/"):
        vl.load({}, ctx(tmp_path))
    good = {"id": "a", "img_filename": "web/a.png", "bbox": [1, 2, 3, 4], "instruction": "x", "platform": "web",
            "application": "a", "ui_type": "text"}
    records = [good, {**good, "id": "b", "bbox": [1, 2, 3]}, {**good, "id": "c", "bbox": [9, 9, 3, 4]},
               {**good, "id": "d", "img_filename": "../x.png"}, {**good, "id": "e", "instruction": ""},
               {**good, "id": "f", "img_filename": "web/none.png"}, {**good, "id": "a"}, "text"]
    write_venusbench_gd(tmp_path, tasks=["element_grounding"], records={"element_grounding": records})
    (tmp_path / "VenusBench-GD" / "images" / "web" / "none.png").unlink(missing_ok=True)
    with pytest.raises(LayoutError, match=r"incomplete: expected .*refusal_spatial\.json.*tasks"):
        vl.load({}, ctx(tmp_path))
    got = {s.id: s.invalid for s in vl.load({"tasks": ["element_grounding"]}, ctx(tmp_path))}
    assert got["venusbench-element_grounding-b"] is not None and "'bbox': expected a list of 4" in \
        got["venusbench-element_grounding-b"]
    assert "negative size" in (got["venusbench-element_grounding-c"] or "")
    assert "points outside the dataset folder" in (got["venusbench-element_grounding-d"] or "")
    assert "'instruction': expected non-empty text" in (got["venusbench-element_grounding-e"] or "")
    assert "does not exist" in (got["venusbench-element_grounding-f"] or "")
    # the repeated id 'a': neither record takes it; both get their index, the rest run
    assert got["venusbench-element_grounding-record0"] is None and got["venusbench-element_grounding-record6"] is None
    assert "expected an object, got str" in (got["venusbench-element_grounding-record7"] or "")


def _install(project: Project) -> None:
    dest = project.root / "suites" / "venusbench_gd"
    dest.mkdir(parents=True)
    shutil.copy(SUITES / "venusbench_gd" / "suite.toml", dest / "suite.toml")
    shutil.rmtree(project.root / "suites" / "mini")


@pytest.mark.slow
def test_lifecycle(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    fx = write_venusbench_gd(tmp_path, per_task=3)
    answers: dict[str, str] = {}
    for w in fx.written:
        size = w.image_size
        x0, y0, x1, y1 = w.record["bbox"]
        centre = f"[{round(1000 * (x0 + x1) / 2 / size[0])},{round(1000 * (y0 + y1) / 2 / size[1])}]"
        answers[w.sample_id] = "[-1,-1]" if "refusal_spatial" in w.sample_id else centre
    refusals = [k for k in answers if "refusal_spatial" in k]
    answers[refusals[0]] = "[500,500]"  # a click where the element is absent: wrong
    preds = project.root / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in answers.items()))
    _install(project)
    args = ["suites/venusbench_gd", "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-cache", "off",
            "--uiground-data-path", str(tmp_path), "--model", "replay", "--uiground-predictions", str(preds),
            "--uiground-replay-parser", "ui-venus", "--uiground-report", "out", "-rA", *xdist]
    update = project.pytester.runpytest_subprocess(*args, "--snapshot-update")
    assert update.ret == 0, update.stdout.str()[-3000:]
    update.stdout.fnmatch_lines(["*refusal policy 'count': accuracy (18, refusals counted); "
                                 "accuracy_refusals_excluded (15, refusals excluded)*"])
    m = project.summary()["metrics"]
    assert m["accuracy"]["value"] == pytest.approx(100 * 17 / 18, abs=1e-3)
    assert m["accuracy_refusals_excluded"]["value"] == pytest.approx(100.0)
    assert m["accuracy"]["slices"]["task=refusal_spatial"] == pytest.approx(200 / 3, abs=1e-3)
    assert f"XFAIL suites/venusbench_gd/suite.toml::test_sample[{refusals[0]}]" in update.stdout.str()  # known failure
    again = project.pytester.runpytest_subprocess(*args)
    assert again.ret == 0, again.stdout.str()[-3000:]
    assert "no regressed sample" in again.stdout.str()
    # The other policy is another figure: a baseline recorded under 'count' is a mismatch, named.
    other = project.pytester.runpytest_subprocess(*args, "--uiground-refusals", "exclude")
    assert other.ret == 1
    other.stdout.fnmatch_lines(["*refusal policy*'count'*in the baseline*'exclude'*"])
    assert project.summary()["metrics"]["accuracy"]["n"] == 15


def test_a_fallback_id_never_takes_a_real_records_id() -> None:
    """A record without an id (index 0) falls back to ``record0``; a later record whose own id is ``record0``
    keeps it, and the fallback moves aside (the OSWorld-G rule, one helper: suite/loading.py unused_id)."""
    from pytest_uiground.benchmarks.venusbench_gd.loader import sample_ids

    ids = sample_ids("element_grounding", [{}, {"id": "record0"}, {"id": "a"}, {"id": "a"}], "")
    assert ids[1] == "venusbench-element_grounding-record0"
    assert ids[0] == "venusbench-element_grounding-record0-2"
    assert len(set(ids)) == 4 and ids[2].startswith("venusbench-element_grounding-record2")
