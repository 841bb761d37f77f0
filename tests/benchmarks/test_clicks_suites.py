"""WebClick and Showdown-clicks: the loaders on their published layouts, bad input, and each suite's lifecycle.

Parity with the authors' scoring is in ``tests/parity/test_parity_clicks.py``; here: what each
loader reads (ids, boxes, buckets and resolutions, sizes), what a malformed row or folder says (one
broken row fails that sample, never the run), and a run of each shipped suite with and without
``-n 2``: a baseline recorded by ``--snapshot-update``, the same answers passing against it, a worse
answer failing as a regression while the baseline stays as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.showdown_clicks import loader as sd
from pytest_uiground.benchmarks.showdown_clicks import scorer as sd_scorer
from pytest_uiground.benchmarks.showdown_clicks.lookalike import write_showdown_clicks
from pytest_uiground.benchmarks.webclick import loader as wc
from pytest_uiground.benchmarks.webclick.lookalike import write_webclick
from pytest_uiground.record.geometry import Point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.suite.loading import LayoutError, LoaderContext

SUITES = Path(__file__).parents[2] / "suites"


def ctx(data: Path | None) -> LoaderContext:
    return LoaderContext("t", Path("."), data)


def test_webclick_reads_published_layout(tmp_path: Path) -> None:
    fx = write_webclick(tmp_path, n=6)
    samples = wc.load({}, ctx(tmp_path))  # a folder holding WebClick/
    assert [s.id for s in samples] == [w.sample_id for w in fx.written]
    assert all(s.invalid is None for s in samples)
    assert [s.meta["bucket"] for s in samples] == [w.record["bucket"] for w in fx.written]
    assert samples[0].target.box == tuple(fx.written[0].record["bbox"])
    assert samples[0].image.dimensions() == (480, 300)  # from the parquet cell's bytes, lazily
    assert samples[0].image.load().size == (480, 300)


def test_webclick_bad_rows_and_folders(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match=r"WebClick not found: expected test-\*\.parquet.*Looked in.*hf download"):
        wc.load({}, ctx(tmp_path))
    with pytest.raises(ValueError, match=r"unknown loader option\(s\) \['split'\]"):
        wc.load({"split": "x"}, ctx(tmp_path))
    good = {"instruction": "click it", "bbox": [0.1, 0.1, 0.2, 0.2], "bucket": "calendars"}
    write_webclick(tmp_path, rows=[good, {**good, "bbox": [10.0, 20.0, 30.0, 40.0]}, {**good, "bbox": [0.1, 0.2]},
                                   {**good, "instruction": ""}, {"instruction": "x", "bbox": [0.3, 0.3, 0.2, 0.4]},
                                   {k: v for k, v in good.items() if k != "bucket"}])
    got = {s.id: s for s in wc.load({}, ctx(tmp_path / "WebClick"))}
    assert got["webclick-0"].invalid is None
    assert "row 1: field 'bbox': expected [x1, y1, x2, y2] as fractions of the image" in (
        got["webclick-1"].invalid or "")
    assert "field 'bbox': expected a list of 4 numbers" in (got["webclick-2"].invalid or "")
    assert "field 'instruction'" in (got["webclick-3"].invalid or "")
    assert "x1 <= x2" in (got["webclick-4"].invalid or "")
    assert got["webclick-5"].invalid is None and got["webclick-5"].meta["bucket"] == "none"  # optional, as ScreenSpot


def test_showdown_reads_published_layout(tmp_path: Path) -> None:
    fx = write_showdown_clicks(tmp_path, n=6)
    samples = sd.load({}, ctx(tmp_path))
    assert [s.id for s in samples] == [w.sample_id for w in fx.written]
    assert all(s.invalid is None for s in samples)
    first, row = samples[0], fx.written[0].record
    w, h = row["width"], row["height"]
    assert first.image.size == (w, h) and first.image.path == fx.folder / row["image"]
    assert first.target.box == (row["x1"] / w, row["y1"] / h, row["x2"] / w, row["y2"] / h)
    assert {s.meta["resolution"] for s in samples} == {"320x200", "420x262"}
    assert first.meta["recording_id"] == row["recording_id"]


def test_showdown_bad_rows_and_folders(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match=r"needs --uiground-data-path.*hf download generalagents/showdown-clicks"):
        sd.load({}, ctx(None))
    with pytest.raises(LayoutError, match=r"showdown-clicks-dev/data\.csv. Looked for"):
        sd.load({}, ctx(tmp_path))
    good = {"id": "a", "recording_id": "r", "instruction": "click", "image": "frames/r/0.png", "x1": 1, "y1": 2,
            "x2": 30, "y2": 40, "width": 64, "height": 48}
    rows = [good, {**good, "id": "b", "x2": 30.5}, {**good, "id": "c", "x1": ""},
            {**good, "id": "d", "image": "../x.png"},
            {**good, "id": "e", "image": "frames/none.png"}, {**good, "id": "a"}, {**good, "id": "f", "x2": 0},
            {**good, "id": "", "width": "", "height": ""}]
    fx = write_showdown_clicks(tmp_path, rows=rows)
    (fx.folder / "frames" / "none.png").unlink()
    got = {s.id: s.invalid for s in sd.load({}, ctx(fx.folder))}
    assert "data.csv row 2: field 'x2': expected a whole number of pixels, got '30.5'" in (got["showdown-b"] or "")
    assert "field 'x1'" in (got["showdown-c"] or "")
    assert "outside the dataset folder" in (got["showdown-d"] or "")
    assert "does not exist" in (got["showdown-e"] or "")
    assert "x1 <= x2" in (got["showdown-f"] or "")
    # the repeated id 'a': neither row takes it; a row without a size reads it from the image header
    assert got["showdown-row0"] is None and got["showdown-row5"] is None and got["showdown-row7"] is None
    with pytest.raises(LayoutError, match=r"no column\(s\) x1, y1"):
        write_showdown_clicks(tmp_path / "cols", rows=[good], columns=("id", "instruction", "image"))
        sd.load({}, ctx(tmp_path / "cols"))


def test_showdown_scores_the_click_in_whole_pixels(tmp_path: Path) -> None:
    """``is_point_in_bbox`` on ints: a click at x = 30.7 px is pixel 30, inside a box whose x2 is 30."""
    good = {"id": "a", "recording_id": "r", "instruction": "click", "image": "frames/r/0.png", "x1": 1, "y1": 2,
            "x2": 30, "y2": 40, "width": 64, "height": 48}
    write_showdown_clicks(tmp_path, rows=[good])
    [s] = sd.load({}, ctx(tmp_path))
    on_edge = Prediction(raw="", point=Point(30.7 / 64, 20 / 48))
    assert not s.target.box.contains(on_edge.point)  # type: ignore[union-attr]  # a normalized rule misses
    assert sd_scorer.score(s, on_edge).correct is True
    assert sd_scorer.score(s, Prediction(raw="", point=Point(31.0 / 64, 20 / 48))).correct is False
    assert sd_scorer.score(s, Prediction(raw="", point=None, format_error=True)).correct is False


def _install(project: Project, name: str) -> None:
    dest = project.root / "suites" / name
    dest.mkdir(parents=True)
    shutil.copy(SUITES / name / "suite.toml", dest / "suite.toml")
    shutil.rmtree(project.root / "suites" / "mini", ignore_errors=True)


def _centre_answers(samples: list[tuple[str, tuple[float, float, float, float]]]) -> dict[str, str]:
    """UI-Venus answers (0..1000) at each box's centre."""
    return {sid: f"[{round(500 * (b[0] + b[2]))},{round(500 * (b[1] + b[3]))}]" for sid, b in samples}


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["webclick", "showdown_clicks"])
def test_lifecycle(project: Project, tmp_path: Path, xdist: list[str], suite: str) -> None:
    if suite == "webclick":
        write_webclick(tmp_path, n=9)
        data = tmp_path / "WebClick"
        samples = wc.load({}, ctx(data))
    else:
        data = write_showdown_clicks(tmp_path, n=8).folder
        samples = sd.load({}, ctx(data))
    answers = _centre_answers([(s.id, tuple(s.target.box)) for s in samples])  # type: ignore[arg-type]
    preds = project.root / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in answers.items()))
    _install(project, suite)
    args = [f"suites/{suite}", "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-cache", "off",
            "--uiground-data-path", str(data), "--model", "replay", "--uiground-predictions", str(preds),
            "--uiground-replay-parser", "ui-venus", "--uiground-report", "out", "--benchmark-disable", *xdist]
    update = project.pytester.runpytest_subprocess(*args, "--snapshot-update")
    assert update.ret == 0, update.stdout.str()[-3000:]
    assert project.summary()["metrics"]["accuracy"]["value"] == pytest.approx(100.0)
    baseline = sorted((project.root / "baselines" / suite).rglob("*"))
    before = {p: p.read_bytes() for p in baseline if p.is_file()}
    assert before, "the update wrote a baseline"
    again = project.pytester.runpytest_subprocess(*args)
    assert again.ret == 0, again.stdout.str()[-3000:]
    assert "no regressed sample" in again.stdout.str()
    worse = dict(answers, **{samples[0].id: "[-5,-5]"})
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in worse.items()))
    failed = project.pytester.runpytest_subprocess(*args)
    assert failed.ret == 1
    failed.stdout.fnmatch_lines(["regressed (right in the baseline, wrong now) (1):", f"  {samples[0].id}: *"])
    assert {p: p.read_bytes() for p in baseline if p.is_file()} == before  # only --snapshot-update changes it
