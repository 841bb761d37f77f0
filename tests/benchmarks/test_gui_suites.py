"""MMBench-GUI (L1, L2), ScreenSpot-v2 and ScreenSpot-Pro suites on generated data in the published layouts.

Each end-to-end test copies the shipped suite.toml into a throw-away project, writes a fixture
with :mod:`pytest_uiground.benchmarks.screenspot.lookalike`, replays outputs chosen per sample to be right, wrong
or unparseable, and checks summary.json against numbers computed here by hand from the
written records with the benchmarks' own rules (point in box, edges inclusive; unparseable
output stays in the denominator as wrong).
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from random import Random
from typing import Any

import pytest
from conftest import Project

# Imported here, not inside a test: pytester restores sys.modules after each test, and
# Pillow's extension modules should not be imported twice in one process.
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.mmbench_gui import loader as mmbench_gui
from pytest_uiground.benchmarks.mmbench_gui.lookalike import write_mmbench_gui
from pytest_uiground.benchmarks.screenspot import loader as screenspot
from pytest_uiground.benchmarks.screenspot.lookalike import DEFAULT_PRO_APPS, write_screenspot_pro, write_screenspot_v2
from pytest_uiground.record.sample import Sample
from pytest_uiground.suite.loading import LoaderContext
from pytest_uiground.suite.lookalike import Written

pytestmark = pytest.mark.slow

SUITES = Path(__file__).parents[2] / "suites"
SHIPPED = {  # suite name → its folder in this repository
    "mmbench_gui_l1": "mmbench_gui/l1", "mmbench_gui_l2": "mmbench_gui/l2",
    "screenspot_v2": "screenspot/v2", "screenspot_pro": "screenspot/pro",
}


# -- helpers ----------------------------------------------------------------------------------------
def install(project: Project, suite: str) -> None:
    dest = project.root / "suites" / suite
    dest.mkdir(parents=True)
    shutil.copy(SUITES / SHIPPED[suite] / "suite.toml", dest / "suite.toml")
    shutil.rmtree(project.root / "suites" / "mini", ignore_errors=True)


def run(project: Project, suite: str, data: Path, outputs: Mapping[str, str] | None, *args: str) -> pytest.RunResult:
    """Run one suite with --model replay over ``outputs`` (sample id → raw text)."""
    project.monkeypatch.setenv("LMUData", str(project.root / "no-lmudata"))
    replay: list[str] = []
    if outputs is not None:
        path = project.root / "outputs.jsonl"
        path.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in outputs.items()))
        replay = ["--model", "replay", "--uiground-predictions", str(path), "--uiground-replay-parser", "uground"]
    else:
        replay = ["--model", "center"]
    return project.pytester.runpytest_subprocess(
        f"suites/{suite}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable",
        "--uiground-cache", "off", "--uiground-data-path", str(data), "--uiground-report", "out", *replay, *args)


def pct(hits: Sequence[bool]) -> float:
    return 100.0 * sum(hits) / len(hits)


def in_box(p: tuple[float, float], box: Sequence[float]) -> bool:
    """The benchmarks' hit test: point in [x1, x2] x [y1, y2], edges inclusive."""
    return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]


def point_output(box: Sequence[float], kind: str) -> tuple[str, tuple[float, float] | None]:
    """A UGround-style ``(x, y)`` in 0..1000 that is right (box centre), wrong (the far
    corner of the screen) or unparseable, and the normalized point it reads as."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if kind == "garbage":
        return "I cannot find that element.", None
    if kind == "miss":
        x, y = (990 if cx < 0.5 else 10), (990 if cy < 0.5 else 10)
    else:
        x, y = round(cx * 1000), round(cy * 1000)
    return f"click({x}, {y})", (x / 1000, y / 1000)


def score_points(items: Iterable[tuple[str, Sequence[float]]], seed: int, weights: Sequence[float] = (6, 3, 1),
                 ) -> tuple[dict[str, str], dict[str, bool], set[str]]:
    """Outputs per sample id, whether each is a hit (by hand), and the unparseable ids."""
    rng = Random(seed)
    outputs, hits, garbage = {}, {}, set()
    for sid, box in items:
        kind = rng.choices(["hit", "miss", "garbage"], weights=weights)[0]
        text, point = point_output(box, kind)
        outputs[sid] = text
        hits[sid] = point is not None and in_box(point, box)
        if point is None:
            garbage.add(sid)
    return outputs, hits, garbage


def group_pct(ids: Iterable[str], key: Callable[[str], str], hits: Mapping[str, bool]) -> dict[str, float]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for sid in ids:
        groups[key(sid)].append(hits[sid])
    return {k: pct(v) for k, v in groups.items()}


def ctx(data: Path | None) -> LoaderContext:
    return LoaderContext(suite_name="t", suite_dir=Path("."), data_path=data)


def by_id(samples: Iterable[Sample]) -> dict[str, Sample]:
    return {s.id: s for s in samples}


@pytest.fixture
def gui(project: Project) -> Project:
    shutil.rmtree(project.root / "suites" / "mini")
    return project


# -- MMBench-GUI L2 ---------------------------------------------------------------------------------
def test_mmbench_l2_basic_advanced_average_by_hand(gui: Project, tmp_path: Path, xdist: list[str]) -> None:
    install(gui, "mmbench_gui_l2")
    fx = write_mmbench_gui(tmp_path / "lmu", l1_records=1, l2_records=3, seed=3, no_icon=("os_linux",))
    rec = {w.sample_id: w.record for w in fx.l2}
    outputs, hits, garbage = score_points(((sid, r["bbox"]) for sid, r in rec.items()), seed=11)
    result = run(gui, "mmbench_gui_l2", tmp_path / "lmu", outputs, "--snapshot-update", *xdist)
    assert result.ret == 0, result.stdout.str()[-3000:]
    m = gui.summary()["metrics"]

    def ids(gtype: str) -> list[str]:
        return [sid for sid, r in rec.items() if r["grounding_type"] == gtype]

    for gtype in ("basic", "advanced"):
        got = m[gtype]
        chosen = ids(gtype)
        # The reference: per platform "Total accuracy", weighted by the platform's sample count.
        per_platform = group_pct(chosen, lambda s: rec[s]["platform"], hits)
        counts = {p: sum(rec[s]["platform"] == p for s in chosen) for p in per_platform}
        weighted = sum(per_platform[p] * counts[p] for p in per_platform) / sum(counts.values())
        assert got["value"] == pytest.approx(weighted, abs=1e-3)
        assert got["value"] == pytest.approx(pct([hits[s] for s in chosen]), abs=1e-3)
        assert got["n"] == len(chosen)
        assert got["format_errors"] == len(garbage & set(chosen))
        for p, v in per_platform.items():
            assert got["slices"][f"platform={p}"] == pytest.approx(v, abs=1e-3)
        cells = group_pct(chosen, lambda s: f"{rec[s]['platform']}/{rec[s]['grounding_type']}/{rec[s]['data_type']}",
                          hits)
        assert {k: v for k, v in got["slices"].items() if k.startswith("cell=")} == pytest.approx(
            {f"cell={k}": v for k, v in cells.items()}, abs=1e-3)
        # The platform without icon samples: its text cell and platform slice exist, no icon cell, no crash.
        assert f"cell=os_linux/{gtype}/icon" not in got["slices"]
        assert got["slices"][f"cell=os_linux/{gtype}/text"] == pytest.approx(cells[f"os_linux/{gtype}/text"], abs=1e-3)
        assert got["slices"]["platform=os_linux"] == pytest.approx(cells[f"os_linux/{gtype}/text"], abs=1e-3)
    basic, advanced = pct([hits[s] for s in ids("basic")]), pct([hits[s] for s in ids("advanced")])
    assert m["average"]["value"] == pytest.approx((basic + advanced) / 2, abs=1e-3)
    assert m["average"]["format_errors"] == len(garbage)
    assert m["accuracy"]["value"] == pytest.approx(pct(list(hits.values())), abs=1e-3)
    assert 0 < basic < 100 and 0 < advanced < 100 and garbage, "the outputs must exercise hits, misses and garbage"
    # Basic and Advanced differ in size here, so the headline mean differs from the micro overall.
    assert len(ids("basic")) != len(ids("advanced"))
    assert abs(m["average"]["value"] - m["accuracy"]["value"]) > 1.0


def test_mmbench_l2_malformed_records_fail_alone(gui: Project, tmp_path: Path) -> None:
    good = {"image_path": "a.png", "instruction": "click OK", "bbox": [0.1, 0.1, 0.3, 0.2], "image_size": [200, 100],
            "data_type": "text", "platform": "os_web", "app_name": "shop", "grounding_type": "basic"}
    records: list[Any] = [
        {**good, "index": 0},
        {**good, "index": 1, "bbox": [0.1, 0.2]},                     # short bbox
        {**good, "index": 2, "grounding_type": "expert"},             # unknown grounding type
        {**good, "index": 3, "bbox": [20, 10, 60, 20]},               # pixels: ÷ image_size, as the reference
        {**good, "index": 4, "bbox": [-1, 0.1, 0.3, 0.2]},            # -1 reads as 0, as the reference
        {**{k: v for k, v in good.items() if k != "instruction"}, "index": 5},
        {**good, "index": 1},                                         # repeated index
        "not a record",
        {**good, "index": 8, "image_path": "os_web/b.png"},           # already prefixed with the platform
    ]
    fx = write_mmbench_gui(tmp_path / "lmu", l1_records=1, l2_records=records)
    samples = by_id(mmbench_gui.load_l2({}, ctx(fx.folder)))
    assert samples["l2-0"].invalid is None
    assert samples["l2-0"].image.path == fx.folder / "offline_images" / "os_web" / "a.png"
    assert samples["l2-8"].image.path == fx.folder / "offline_images" / "os_web" / "b.png"
    assert "record 1 (index 1): field 'bbox'" in (samples["l2-1"].invalid or "")
    assert "record 2 (index 2): field 'grounding_type': 'expert'" in (samples["l2-2"].invalid or "")
    assert samples["l2-3"].target.box == pytest.approx((0.1, 0.1, 0.3, 0.2))
    assert samples["l2-4"].target.box == pytest.approx((0.0, 0.1, 0.3, 0.2))
    assert "record 5 (index 5): field 'instruction'" in (samples["l2-5"].invalid or "")
    assert "record 6 (index 1): field 'index': 1 repeats the index of record 1" in (samples["l2-record6"].invalid or "")
    assert "record 7: expected an object" in (samples["l2-record7"].invalid or "")

    install(gui, "mmbench_gui_l2")
    result = run(gui, "mmbench_gui_l2", fx.folder, None, "-rf")
    assert result.ret == 1
    out = result.stdout.str()
    bad = ["l2-1", "l2-2", "l2-5", "l2-record6", "l2-record7"]
    for sid in bad:
        assert f"FAILED suites/mmbench_gui_l2/suite.toml::test_sample[{sid}]" in out
    assert gui.summary()["errors"] == sorted(bad)
    assert "test_sample[l2-0] PASSED" in out or "FAILED suites/mmbench_gui_l2/suite.toml::test_sample[l2-0]" not in out


def test_mmbench_wrong_layout_names_the_expected_files(gui: Project, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMUData", str(tmp_path / "lmu-env"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError) as err:
        mmbench_gui.load_l2({}, ctx(empty))
    msg = str(err.value)
    for place in (empty, empty / "MMBench-GUI", tmp_path / "lmu-env" / "MMBench-GUI"):
        assert str(place / "L2_annotations.json") in msg
    assert "hf download OpenGVLab/MMBench-GUI" in msg and "--uiground-data-path" in msg
    # Annotations without the image folder beside them: the expected folder is named.
    half = tmp_path / "half" / "MMBench-GUI"
    half.mkdir(parents=True)
    (half / "L1_annotations.json").write_text("[]")
    with pytest.raises(FileNotFoundError, match=r"no image folder beside it: expected .*/MMBench-GUI/offline_images"):
        mmbench_gui.load_l1({}, ctx(tmp_path / "half"))
    # The $LMUData fallback, VLMEvalKit's convention.
    write_mmbench_gui(tmp_path / "lmu-env", l1_records=2, l2_records=1, platforms=("os_ios",))
    assert len(mmbench_gui.load_l2({}, ctx(None))) == 4
    with pytest.raises(ValueError, match="unknown loader option"):
        mmbench_gui.load_l2({"modes": "all"}, ctx(None))

    install(gui, "mmbench_gui_l2")
    result = run(gui, "mmbench_gui_l2", empty, None)
    assert result.ret != 0
    out = result.stdout.str()
    assert "loader 'mmbench_gui_l2' failed" in out and str(empty / "MMBench-GUI" / "L2_annotations.json") in out


# -- MMBench-GUI L1 ---------------------------------------------------------------------------------
def reference_l1_parse(text: str) -> str | None:
    """The reference's option regexes (utils/misc.py), to show the outputs it misreads."""
    import re

    for pattern in (r"\b([A-F])[\.:](?!\w)", r"\bOption\s+([A-F])\b", r"\bAnswer\s*[:：]?\s*([A-F])\b",
                    r"^[ \t]*([A-F])[\.:]?", r"[\'\"]([A-F])[\'\"]", r"\b([A-F])\b(?!\s+\w)"):
        m = re.search(pattern, text, re.IGNORECASE | re.MULTILINE)
        if m:
            return m.group(1).upper()
    return None


def test_mmbench_l1_accuracy_by_difficulty_and_platform(gui: Project, tmp_path: Path) -> None:
    install(gui, "mmbench_gui_l1")
    fx = write_mmbench_gui(tmp_path / "lmu", l1_records=18, l2_records=1, seed=2)
    rng = Random(5)
    outputs: dict[str, str] = {}
    right: dict[str, bool] = {}
    garbage: set[str] = set()
    info: dict[str, tuple[str, str]] = {}
    for w in fx.l1:
        answer, letters = w.group["answer"], list(w.group["options"])
        info[w.sample_id] = (w.group["difficulty"], w.record["platform"])
        kind = rng.choices(["right", "wrong", "garbage"], weights=[5, 3, 1])[0]
        if kind == "right":
            outputs[w.sample_id] = rng.choice([f"Based on the screenshot, the answer is {answer}.", f"{answer}",
                                               f"Answer: ({answer})", f"\\boxed{{{answer}}}"])
        elif kind == "wrong":
            outputs[w.sample_id] = f"The answer is {next(x for x in letters if x != answer)}"
        else:
            outputs[w.sample_id] = "I am not sure what this screen shows."
            garbage.add(w.sample_id)
        right[w.sample_id] = kind == "right"
    result = run(gui, "mmbench_gui_l1", tmp_path / "lmu", outputs, "--snapshot-update")
    assert result.ret == 0, result.stdout.str()[-3000:]
    acc = gui.summary()["metrics"]["accuracy"]
    assert acc["value"] == pytest.approx(pct(list(right.values())), abs=1e-3)
    assert acc["n"] == len(fx.l1) and acc["format_errors"] == len(garbage)
    expected = {f"difficulty={k}": v for k, v in group_pct(right, lambda s: info[s][0], right).items()}
    expected |= {f"platform={k}": v for k, v in group_pct(right, lambda s: info[s][1], right).items()}
    expected |= {f"cell={k}": v for k, v in group_pct(right, lambda s: f"{info[s][0]}/{info[s][1]}", right).items()}
    assert acc["slices"] == pytest.approx(expected, abs=1e-3)
    # The reference's per-difficulty level_score is sample-weighted over platforms: the same number.
    for d in ("easy", "medium", "hard"):
        cells = [(acc["slices"][f"cell={d}/{p}"], acc["slice_n"][f"cell={d}/{p}"])
                 for (dd, p) in set(info.values()) if dd == d]
        assert sum(v * n for v, n in cells) / sum(n for _, n in cells) == pytest.approx(
            acc["slices"][f"difficulty={d}"], abs=1e-2)
    # Outputs the reference regex misreads ("Based on ..." → B) count as right here.
    answer = {w.sample_id: w.group["answer"] for w in fx.l1}
    misread = [s for s, text in outputs.items() if right[s] and reference_l1_parse(text) != answer[s]]
    assert misread, "the fixture must include outputs that the reference's option regex misreads"


def test_mmbench_l1_records_to_samples(tmp_path: Path) -> None:
    group = {"question": "Which tab is open?", "options": {"A": "Home", "B": "Mail", "C": None}, "answer": "B",
             "explanation": "", "difficulty": "easy"}
    base = {"image_path": "x.png", "image_size": [10, 10], "platform": "os_mac", "app_name": "mail"}
    records: list[Any] = [
        {**base, "index": 0, "groups": [group, {**group, "hint": "Look left.", "difficulty": "hard"}]},
        {**base, "index": 1, "groups": [{**group, "answer": "C"}, {**group, "options": {"A": "x", "G": "y"}},
                                        {**group, "difficulty": "impossible"}]},
        {**base, "index": 2, "groups": "none"},
    ]
    fx = write_mmbench_gui(tmp_path, l1_records=records, l2_records=1, platforms=("os_mac",))
    samples = by_id(mmbench_gui.load_l1({}, ctx(tmp_path)))
    assert samples["l1-0-0"].instruction == "Question: Which tab is open?\nOptions:\nA. Home\nB. Mail"
    assert samples["l1-0-1"].instruction.startswith("Hint: Look left.\nQuestion: Which tab is open?")
    assert samples["l1-0-0"].target.option == "B"
    assert dict(samples["l1-0-1"].meta) == {"platform": "os_mac", "app_name": "mail", "difficulty": "hard",
                                            "cell": "hard/os_mac", "row_index": "1"}
    assert samples["l1-0-0"].image.path == fx.folder / "offline_images" / "os_mac" / "x.png"
    assert "record 1 (index 1): field 'groups[0].answer': 'C' is not one of the options A, B" in (
        samples["l1-1-0"].invalid or "")
    assert "field 'groups[1].options': key 'G'" in (samples["l1-1-1"].invalid or "")
    assert "field 'groups[2].difficulty'" in (samples["l1-1-2"].invalid or "")
    assert "record 2: field 'groups'" in (samples["l1-2-0"].invalid or "")
    # A record whose groups cannot be read belongs to no known difficulty: it fails in every mode.
    assert [s.id for s in mmbench_gui.load_l1({"mode": "hard"}, ctx(tmp_path))] == ["l1-0-1", "l1-2-0"]


# -- ScreenSpot-v2 ----------------------------------------------------------------------------------
def v2_box(w: Written) -> tuple[float, float, float, float]:
    """By hand: pixel [x, y, w, h] → normalized xyxy with the image's own size."""
    x, y, bw, bh = w.record["bbox"]
    width, height = w.image_size
    return x / width, y / height, (x + bw) / width, (y + bh) / height


def test_screenspot_v2_macro_over_cells_vs_micro(gui: Project, tmp_path: Path) -> None:
    install(gui, "screenspot_v2")
    # A data root holding ScreenSpot-v2/ with images/ (the other accepted image folder name).
    fx = write_screenspot_v2(tmp_path / "data", per_cell=6, seed=0, image_dir="images")
    boxes = {w.sample_id: v2_box(w) for w in fx.samples}
    outputs, hits, garbage = score_points(boxes.items(), seed=8)
    # One output exactly on a box's left edge (inclusive), where 0..1000 can express it exactly.
    pixels = {w.sample_id: (w.record["bbox"][0], w.image_size[0]) for w in fx.samples}
    edge = next(s for s, (x, width) in pixels.items() if x * 1000 % width == 0 and s not in garbage)
    _, y0, _, y1 = boxes[edge]
    ex, ey = pixels[edge][0] * 1000 // pixels[edge][1], round((y0 + y1) / 2 * 1000)
    outputs[edge], hits[edge] = f"({ex}, {ey})", in_box((ex / 1000, ey / 1000), boxes[edge])
    assert hits[edge], "a point on the left edge is a hit"
    result = run(gui, "screenspot_v2", tmp_path / "data", outputs, "--snapshot-update")
    assert result.ret == 0, result.stdout.str()[-3000:]
    m = gui.summary()["metrics"]
    rec = {w.sample_id: w for w in fx.samples}
    assert all(len({w.image_size for w in fx.samples if w.sample_id.startswith(f"ssv2-{split}-")}) == 2
               for split in ("mobile", "desktop", "web")), "images of one split differ in size"
    split_of = {s: s.split("-")[1] for s in rec}
    cells = group_pct(rec, lambda s: f"{split_of[s]}/{rec[s].record['data_type']}", hits)
    assert len(cells) == 6
    assert m["average"]["value"] == pytest.approx(sum(cells.values()) / 6, abs=1e-3)
    assert m["average"]["slices"] == pytest.approx({f"cell={k}": v for k, v in cells.items()}, abs=1e-3)
    micro = pct(list(hits.values()))
    assert m["accuracy"]["value"] == pytest.approx(micro, abs=1e-3)
    assert abs(m["average"]["value"] - micro) > 0.5, "cells of different sizes: macro and micro must differ here"
    assert m["accuracy"]["slices"]["split=web"] == pytest.approx(
        pct([hits[s] for s in rec if split_of[s] == "web"]), abs=1e-3)
    assert m["accuracy"]["format_errors"] == len(garbage) > 0
    assert m["average"]["n"] == len(rec)


def test_screenspot_v2_layout_and_bad_records(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as err:
        screenspot.load_v2({}, ctx(tmp_path))
    assert str(tmp_path / "ScreenSpot-v2") in str(err.value) and "screenspot_mobile_v2.json" in str(err.value)
    part = tmp_path / "part"
    write_screenspot_v2(part, splits=("mobile", "web"))
    with pytest.raises(FileNotFoundError, match=r"expected .*part/ScreenSpot-v2/screenspot_desktop_v2.json"):
        screenspot.load_v2({}, ctx(part))
    assert {s.meta["split"] for s in screenspot.load_v2({"splits": ["web"]}, ctx(part))} == {"web"}
    shutil.rmtree(part / "ScreenSpot-v2" / "screenspotv2_image")
    with pytest.raises(FileNotFoundError, match=r"screenspotv2_image/ .* or .*images/"):
        screenspot.load_v2({"splits": ["web"]}, ctx(part))

    good = {"img_filename": "a.png", "bbox": [8, 6, 16, 12], "instruction": "click", "data_type": "icon",
            "data_source": "ios"}
    bad = tmp_path / "bad"
    write_screenspot_v2(bad, folder_name="", records={
        "mobile": [good, {**good, "img_filename": "missing.png"}, {**good, "bbox": [1, 2, 3]},
                   {**good, "bbox": [70, 2, 8, 8]}, {**good, "data_type": None}],
        "desktop": [{**good, "bbox": [60, 40, 10, 20]}], "web": []})
    (bad / "screenspotv2_image" / "missing.png").unlink(missing_ok=True)
    samples = by_id(screenspot.load_v2({}, ctx(bad)))
    # The blank image is 64x48: the box is normalized by that size, read from the header.
    assert samples["ssv2-mobile-0"].target.box == pytest.approx((8 / 64, 6 / 48, 24 / 64, 18 / 48))
    assert dict(samples["ssv2-mobile-0"].meta) == {"split": "mobile", "data_type": "icon", "data_source": "ios",
                                                   "cell": "mobile/icon"}
    assert "screenspot_mobile_v2.json record 1: field 'img_filename'" in (samples["ssv2-mobile-1"].invalid or "")
    assert "does not exist" in (samples["ssv2-mobile-1"].invalid or "")
    assert "record 2: field 'bbox'" in (samples["ssv2-mobile-2"].invalid or "")
    assert "record 3: field 'bbox'" in (samples["ssv2-mobile-3"].invalid or "")
    assert "outside the image" in (samples["ssv2-mobile-3"].invalid or "")
    assert "record 4: field 'data_type'" in (samples["ssv2-mobile-4"].invalid or "")
    # A box overhanging the screenshot is kept as SeeClick computes it (no clipping: the reference
    # clips no point either, so a point just beyond the edge hits it there too).
    assert samples["ssv2-desktop-0"].target.box == pytest.approx((60 / 64, 40 / 48, 70 / 64, 60 / 48))


# -- ScreenSpot-Pro ---------------------------------------------------------------------------------
def test_screenspot_pro_slices_by_hand(gui: Project, tmp_path: Path) -> None:
    install(gui, "screenspot_pro")
    apps = (*DEFAULT_PRO_APPS, ("office 365", "windows", "Office"))
    fx = write_screenspot_pro(tmp_path / "data", apps=apps, per_app=5, seed=1)
    rec = {w.sample_id: w.record for w in fx.samples}
    assert any(s.startswith("sspro-office_365_windows_") for s in rec), "an id that needs making safe"
    boxes = {s: (r["bbox"][0] / r["img_size"][0], r["bbox"][1] / r["img_size"][1], r["bbox"][2] / r["img_size"][0],
                 r["bbox"][3] / r["img_size"][1]) for s, r in rec.items()}
    outputs, hits, garbage = score_points(boxes.items(), seed=2)
    result = run(gui, "screenspot_pro", tmp_path / "data" / "ScreenSpot-Pro", outputs, "--snapshot-update")
    assert result.ret == 0, result.stdout.str()[-3000:]
    acc = gui.summary()["metrics"]["accuracy"]
    assert acc["value"] == pytest.approx(pct(list(hits.values())), abs=1e-3)
    assert acc["n"] == len(rec) and acc["format_errors"] == len(garbage) > 0
    expected: dict[str, float] = {}
    for key in ("group", "application", "ui_type", "platform"):
        values = {s: str(r[key]) for s, r in rec.items()}
        expected |= {f"{key}={k}": v for k, v in group_pct(rec, values.__getitem__, hits).items()}
    combined = {"cell": ("group", "ui_type"), "application_type": ("application", "ui_type"),
                "platform_type": ("platform", "ui_type"), "platform_application": ("platform", "application"),
                "platform_application_type": ("platform", "application", "ui_type")}
    for name, keys in combined.items():  # one slice key per table the reference prints
        expected |= {f"{name}={k}": v for k, v in group_pct(
            rec, lambda s, keys=keys: "/".join(str(rec[s][k]) for k in keys), hits).items()}
    assert acc["slices"] == pytest.approx(expected, abs=1e-3)
    assert "application=office 365" in acc["slices"]


def test_screenspot_pro_language_layout_and_bad_records(tmp_path: Path) -> None:
    fx = write_screenspot_pro(tmp_path, apps=DEFAULT_PRO_APPS[:2], per_app=2)
    cn = screenspot.load_pro({"language": "cn"}, ctx(tmp_path))
    assert {s.instruction for s in cn} == {w.record["instruction_cn"] for w in fx.samples}
    assert all(s.meta["language"] == "cn" for s in cn)
    with pytest.raises(ValueError, match="language"):
        screenspot.load_pro({"language": "de"}, ctx(tmp_path))
    with pytest.raises(FileNotFoundError) as err:
        screenspot.load_pro({}, ctx(tmp_path / "nowhere"))
    assert "annotations/{app}_{platform}.json" in str(err.value)
    assert str(tmp_path / "nowhere" / "ScreenSpot-Pro") in str(err.value)
    shutil.rmtree(fx.folder / "images")
    with pytest.raises(FileNotFoundError, match=r"expected .*ScreenSpot-Pro/images/"):
        screenspot.load_pro({}, ctx(tmp_path))

    good = {"img_filename": "x_win/a.png", "bbox": [10, 10, 50, 30], "instruction": "click", "instruction_cn": "点击",
            "id": "x_win_0", "application": "x", "platform": "windows", "img_size": [200, 100], "ui_type": "icon",
            "group": "CAD"}
    bad = tmp_path / "bad"
    write_screenspot_pro(bad, apps=(), folder_name="", records={"x_win": [
        good, {**good, "id": "x_win_1", "img_size": None}, {**good, "id": "x_win_0"},
        {**good, "id": "x win/2", "bbox": [50, 10, 10, 30]}]})
    samples = by_id(screenspot.load_pro({}, ctx(bad)))
    assert samples["sspro-x_win_0"].target.box == pytest.approx((0.05, 0.1, 0.25, 0.3))
    assert samples["sspro-x_win_0"].image.path == bad / "images" / "x_win" / "a.png"
    assert "x_win.json record 1: field 'img_size'" in (samples["sspro-x_win_1"].invalid or "")
    assert "record 2: field 'id': 'x_win_0' repeats the id of x_win.json record 0" in (
        samples["sspro-x_win-2"].invalid or "")
    assert "record 3: field 'bbox'" in (samples["sspro-x_win_2"].invalid or "")
