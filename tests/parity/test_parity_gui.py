"""End-to-end parity: the shipped GUI suites vs the benchmarks' reference scoring, on messy outputs.

For MMBench-GUI L1 and L2, ScreenSpot-v2 and ScreenSpot-Pro: a dataset is written in the
PUBLISHED layout (:mod:`parity.published_gui`), at least 30 messy raw outputs
(:mod:`parity.messy_outputs`) become a replay predictions file, the shipped suite runs end to
end (``--model replay --uiground-replay-parser FAMILY``), and every figure the reference prints
is compared with the independent re-implementations in :mod:`parity.ref_mmbench_gui` /
:mod:`parity.ref_screenspot`: accuracies to 0.1 (points, on the project's 0..100 scale) and
every count exactly. Where a reference has a bug, its ``intended`` twin is the oracle; each such
deviation is listed in the suite's README with the test that shows it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import tomllib
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground import registry
from pytest_uiground.benchmarks.mmbench_gui import loader as mmbench_gui
from pytest_uiground.benchmarks.screenspot import loader as screenspot
from pytest_uiground.models import families
from pytest_uiground.suite.loading import LoaderContext

from . import messy_outputs as mo
from . import published_gui as pg
from . import ref_mmbench_gui as rm
from . import ref_screenspot as rs

pytestmark = pytest.mark.slow
SUITES = Path(__file__).parents[2] / "suites"
TOL = 0.1  # accuracy points (0..100)


def install_suite(project: Project, folder: str) -> str:
    """Copy the shipped suite into the test project (in place of its own); its name."""
    name: str = tomllib.loads((SUITES / folder / "suite.toml").read_text())["suite"]["name"]
    dest = project.root / "suites" / name
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(SUITES / folder / "suite.toml", dest / "suite.toml")
    shutil.rmtree(project.root / "suites" / "mini", ignore_errors=True)
    return name


def run_suite(project: Project, folder: str, data: Path, outputs: Mapping[str, str], family: str,
              *args: str, failed: Sequence[str] = ()) -> dict[str, Any]:
    """Install the shipped suite, replay ``outputs`` (sample id or reference index → text); the metrics."""
    name = install_suite(project, folder)
    preds = project.root / "outputs.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in outputs.items()))
    project.monkeypatch.setenv("LMUData", str(project.root / "no-lmudata"))
    result = project.pytester.runpytest_subprocess(
        f"suites/{name}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable",
        "--uiground-cache", "off", "--uiground-data-path", str(data), "--uiground-report", "out",
        "--model", "replay", "--uiground-predictions", str(preds), "--uiground-replay-parser", family,
        "--snapshot-update", *args)  # records the baseline the suite needs (it fails closed without one)
    assert result.ret == (1 if failed else 0), result.stdout.str()[-3000:]
    for test in failed:  # a failed aggregate check: its row in the uiground table says FAIL
        label = test.removeprefix("test_aggregate").replace("[[]", "").replace("[]]", "")
        result.stdout.fnmatch_lines([f"{label} *FAIL*", "*checks failed*"])
    metrics: dict[str, Any] = project.summary()["metrics"]
    return metrics


def pct(fraction: float) -> float:
    return 100.0 * fraction


def correct_num(metric: Mapping[str, Any], label: str) -> int:
    """num_correct / Correct num: the slice's hits, exact (value x n / 100 is a whole number)."""
    return round(metric["slices"][label] * metric["slice_n"][label] / 100)


def assert_fraction_slice(metric: Mapping[str, Any], label: str, ref_acc: float | None, ref_n: int) -> None:
    """A text/icon accuracy: equal when the reference subset is non-empty, absent when empty."""
    if ref_n == 0:
        assert label not in metric["slices"], f"{label}: empty in the reference, no slice here"
        return
    assert ref_acc is not None
    assert metric["slices"][label] == pytest.approx(ref_acc, abs=TOL), label
    assert metric["slice_n"][label] == ref_n, label


# -- MMBench-GUI L2 (UI-TARS) ---------------------------------------------------------------------
L2_PLATFORMS = ("os_windows", "os_mac", "os_android")
L2_BOXES = ([0.45, 0.45, 0.55, 0.55], [0.0, 0.0, 0.1, 0.1], [0.0, 0.0, 1.0, 1.0], [0.9, 0.9, 1.0, 1.0])


def l2_records() -> list[dict[str, Any]]:
    """One record per messy UI-TARS output (1280x720), covering every platform x level x type
    except os_android basic text (an empty cell: the reference divides by zero there)."""
    records = []
    for i in range(len(mo.L2_UITARS_CASES)):
        platform, level = L2_PLATFORMS[i % 3], ("basic", "advanced")[(i // 3) % 2]
        dtype = "icon" if platform == "os_android" and level == "basic" else ("icon", "text")[(i // 6) % 2]
        bbox: list[float] = L2_BOXES[i % 4]
        if i == 5:
            bbox = [-1, -1, 0.6, 0.6]  # normalized with -1 (the reference divides it by the size: B4)
        if i == 7:
            bbox = [576, 324, 704, 396]  # pixels of the 1280x720 image
        records.append(pg.l2_record(i, platform, level, dtype, bbox))
    return records


def test_mmbench_l2_uitars_every_figure(project: Project, tmp_path: Path) -> None:
    records = l2_records()
    texts = mo.L2_UITARS_TEXTS
    pg.write_mmbench_gui(tmp_path, l1=[pg.l1_record(0, "os_mac", [pg.l1_group("A", "easy")])], l2=records)
    # The replay is keyed by the reference's own index (what its prediction file holds).
    replay = {str(r["index"]): t for r, t in zip(records, texts, strict=True)}
    m = run_suite(project, "mmbench_gui/l2", tmp_path, replay, "uitars")
    ref = rm.score_l2(records, texts, parse=rm.uitars_parse_fn, intended=True)
    assert m["basic"]["value"] == pytest.approx(ref["Basic accuracy"], abs=TOL)
    assert m["advanced"]["value"] == pytest.approx(ref["Advanced accuracy"], abs=TOL)
    assert m["average"]["value"] == pytest.approx(ref["Average accuracy"], abs=TOL)
    compared = 0
    for level in ("basic", "advanced"):
        metric = m[level]
        assert metric["n"] == sum(c["Total num"] for c in ref[level].values())
        assert metric["format_errors"] == sum(c["Error format num"] for c in ref[level].values())
        for platform, cell in ref[level].items():
            label = f"platform={platform}"
            assert metric["slices"][label] == pytest.approx(cell["Total accuracy"], abs=TOL)
            assert metric["slice_n"][label] == cell["Total num"]
            assert correct_num(metric, label) == cell["Correct num"]
            assert metric["slice_format_errors"][label] == cell["Error format num"]
            assert cell["Total num"] - cell["Correct num"] - cell["Error format num"] == cell["Wrong num"]
            for dtype in ("icon", "text"):
                n = cell[f"{dtype.capitalize()} num"]
                assert_fraction_slice(metric, f"cell={platform}/{level}/{dtype}",
                                      cell[f"{dtype.capitalize()} accuracy"], n)
            compared += 1
    assert compared == 6
    assert ref["basic"]["os_android"]["Text num"] == 0  # the empty cell is exercised
    # The messy outputs exercise hits, misses and format errors, and the reference bugs:
    codes = [rm.l2_code(r, t, rm.uitars_parse_fn) for r, t in zip(records, texts, strict=True)]
    intended = [rm.intended_l2_code(r, t, rm.uitars_parse_fn) for r, t in zip(records, texts, strict=True)]
    assert {rm.HIT, rm.MISS, rm.ERROR_FORMAT} <= set(intended)
    assert codes != intended, "the double division / -1 box bugs must change some sample here"


def test_mmbench_l2_one_level_average_is_that_level(project: Project, tmp_path: Path) -> None:
    """B5: without advanced samples the reference raises KeyError; the average is Basic alone."""
    chosen = [(r, t) for r, t in zip(l2_records(), mo.L2_UITARS_TEXTS, strict=True)
              if r["grounding_type"] == "basic" and r["platform"] != "os_android"]  # no empty cell: no 1/0
    records, texts = [r for r, _ in chosen], [t for _, t in chosen]
    pg.write_mmbench_gui(tmp_path, l1=[pg.l1_record(0, "os_mac", [pg.l1_group("A", "easy")])], l2=records)
    replay = {f"l2-{r['index']}": t for r, t in zip(records, texts, strict=True)}
    # The empty level's own aggregate fails its floor (a metric over no samples); nothing else.
    m = run_suite(project, "mmbench_gui/l2", tmp_path, replay, "uitars", failed=["test_aggregate[[]advanced[]]"])
    ref = rm.score_l2(records, texts, parse=rm.uitars_parse_fn, intended=True)
    assert ref["Advanced accuracy"] is None
    with pytest.raises(KeyError):
        rm.level2_scores(rm.l2_stats(records, [rm.intended_l2_code(r, t, rm.uitars_parse_fn)
                                               for r, t in zip(records, texts, strict=True)]))
    assert m["average"]["value"] == pytest.approx(ref["Average accuracy"], abs=TOL)
    assert m["average"]["value"] == pytest.approx(m["basic"]["value"], abs=1e-9)
    assert m["advanced"]["n"] == 0


# -- MMBench-GUI L1 -------------------------------------------------------------------------------
def l1_records() -> tuple[list[dict[str, Any]], list[str]]:
    """Questions for the 35 messy answers: 3 per record (easy, medium, hard), the last record
    on os_linux with no hard question (an empty cell: the reference's nan level score). The
    right answer is the reference parser's own reading of the output for two questions in
    three and another letter otherwise, so buggy readings turn into differences."""
    texts = mo.L1_TEXTS
    records, row = [], 0
    for r in range(12):
        platform = "os_linux" if r == 11 else ("os_windows", "os_ios", "os_web")[r % 3]
        groups = []
        for difficulty in ("easy", "medium", "hard")[: 2 if r == 11 else 3]:
            read = rm.parse_option(texts[row]) or "A"
            answer = read if row % 3 != 2 else "ABCDEF"[("ABCDEF".index(read) + 1) % 6]
            groups.append(pg.l1_group(answer, difficulty, "ABCDEF", hint="top bar" if row % 4 == 0 else None))
            row += 1
        records.append(pg.l1_record(100 + r, platform, groups))
    assert row == len(texts)
    return records, texts


def test_mmbench_l1_every_figure(project: Project, tmp_path: Path) -> None:
    records, texts = l1_records()
    pg.write_mmbench_gui(tmp_path, l1=records, l2=[pg.l2_record(0, "os_mac", "basic", "icon", [0, 0, 1, 1])])
    rows = rm.flatten_l1(records)
    # Keyed by the reference's running index over flattened questions (its prediction file's index).
    replay = {str(row["index"]): t for row, t in zip(rows, texts, strict=True)}
    m = run_suite(project, "mmbench_gui/l1", tmp_path, replay, "uitars")
    acc = m["accuracy"]
    ref = rm.intended_score_l1(rows, texts)
    assert acc["n"] == ref["total_sample_num"] == len(texts)
    for difficulty in ("easy", "medium", "hard"):
        level = ref[difficulty]
        label = f"difficulty={difficulty}"
        assert acc["slices"][label] == pytest.approx(pct(level["level_score"]), abs=TOL)
        assert acc["slice_n"][label] == level["level_sample_num"]
        for platform, cell in level.items():
            if platform in ("level_sample_num", "level_score"):
                continue
            assert acc["slices"][f"cell={difficulty}/{platform}"] == pytest.approx(pct(cell["score"]), abs=TOL)
            assert acc["slice_n"][f"cell={difficulty}/{platform}"] == cell["sample_num"]
    assert "cell=hard/os_linux" not in acc["slices"]
    assert acc["value"] == pytest.approx(pct(ref["overall"]), abs=TOL)
    # Where the reference is not buggy it is the same number: its level scores without the
    # empty-cell nan, and every sample but the "Based on ..." kind read alike.
    buggy = rm.score_l1(rows, texts)
    assert buggy["medium"]["level_score"] == pytest.approx(ref["medium"]["level_score"], abs=1e-9)
    assert buggy["easy"]["level_score"] != pytest.approx(ref["easy"]["level_score"], abs=1e-9)  # "Based on"
    differs = [t for t in texts if rm.parse_option(t) != rm.intended_parse_option(t)]
    assert differs == ["Based on the screen, the answer is C", "Clicking the gear opens settings, so D"]
    assert rm.l1_hits(rows, texts) != rm.l1_hits(rows, texts, rm.intended_parse_option)
    unread = [rm.intended_parse_option(t) is None for t in texts]
    assert acc["format_errors"] == sum(unread) > 0  # no reference count: the project's unparsed answers


@pytest.mark.parametrize("text", ["Option b", "This is a settings screen; I choose B"])
def test_mmbench_l1_served_by_an_api_is_read_with_the_reference_parser(project: Project, tmp_path: Path,
                                                                       text: str) -> None:
    """``--model openai`` gets the suite's ``[models.<family>]`` parser like the native adapter:
    answers the uitars family parser cannot read are MMBench-GUI's option B here (before,
    every one was a format error)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from chat_server import ChatServer, Reply

    records, _ = l1_records()
    pg.write_mmbench_gui(tmp_path, l1=records[:2], l2=[pg.l2_record(0, "os_mac", "basic", "icon", [0, 0, 1, 1])])
    name = install_suite(project, "mmbench_gui/l1")
    project.monkeypatch.setenv("LMUData", str(project.root / "no-lmudata"))
    project.monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    with ChatServer(lambda body: Reply.ok(text)) as srv:
        project.pytester.runpytest_subprocess(
            f"suites/{name}", "-p", "no:cacheprovider", "-p", "no:randomly", "--benchmark-disable",
            "--uiground-cache", "off", "--uiground-data-path", str(tmp_path), "--uiground-report", "out",
            "--model", "openai", "--uiground-api-base", srv.url, "--uiground-served-model", "m",
            "--uiground-parser", "uitars")
        assert srv.count == 6
    rows = [json.loads(line) for line in (project.root / "out" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["error"] is None for r in rows)
    assert [r["prediction"]["option"] for r in rows] == ["B"] * 6
    assert project.summary()["metrics"]["accuracy"]["format_errors"] == 0


# -- ScreenSpot-v2 (SeeClick) ---------------------------------------------------------------------
V2_SIZES = {"m.png": (400, 800), "d.png": (1000, 500), "w.png": (800, 600)}
V2_IMAGE = {"mobile": "m.png", "desktop": "d.png", "web": "w.png"}


def v2_box(case: str, w: int, h: int) -> list[float]:
    if case in ("edge_zero",):
        return [0, 0, 0.05 * w, 0.05 * h]
    if case in ("edge_one", "edge_one_dot"):
        return [0.95 * w, 0.95 * h, 0.05 * w, 0.05 * h]
    if case == "beyond_one":  # overhangs the right edge: 1.01 hits it, unclipped as in the reference
        return [0.98 * w, 0.4 * h, 0.05 * w, 0.2 * h]
    return [0.4 * w, 0.4 * h, 0.2 * w, 0.2 * h]


def v2_dataset() -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[str]]]:
    splits: dict[str, list[dict[str, Any]]] = {s: [] for s in pg.V2_SPLITS}
    outputs: dict[str, list[str]] = {s: [] for s in pg.V2_SPLITS}
    for i, (case, text) in enumerate(mo.V2_SEECLICK_CASES):
        split = pg.V2_SPLITS[i % 3]
        img = V2_IMAGE[split]
        dtype = "image" if i == 4 else ("text", "icon")[(i // 3) % 2]  # "image": counted as icon
        splits[split].append(pg.v2_record(img, v2_box(case, *V2_SIZES[img]), dtype))
        outputs[split].append(text)
    return splits, outputs


def test_screenspot_v2_seeclick_every_figure(project: Project, tmp_path: Path) -> None:
    splits, outputs = v2_dataset()
    pg.write_screenspot_v2(tmp_path, splits, V2_SIZES)
    replay = {f"ssv2-{s}-{i}": t for s, texts in outputs.items() for i, t in enumerate(texts)}
    m = run_suite(project, "screenspot/v2", tmp_path, replay, "seeclick")
    ref = rs.score_screenspot_v2(splits, outputs, V2_SIZES)
    for split, task in ref["per_task"].items():
        label = f"split={split}"
        assert m["accuracy"]["slices"][label] == pytest.approx(pct(task["Action Acc"]), abs=TOL)
        assert m["accuracy"]["slice_n"][label] == task["Total num"]
        assert m["accuracy"]["slice_format_errors"][label] == task["Wrong format num"]
        text_n = sum(r["data_type"] == "text" for r in splits[split])
        assert_fraction_slice(m["average"], f"cell={split}/text", pct(task["Text Acc"]), text_n)
        assert_fraction_slice(m["average"], f"cell={split}/icon", pct(task["Icon Acc"]), len(splits[split]) - text_n)
    assert m["average"]["value"] == pytest.approx(pct(ref["paper_average (not printed by the script)"]), abs=TOL)
    assert m["accuracy"]["format_errors"] == sum(t["Wrong format num"] for t in ref["per_task"].values()) > 0
    codes = [rs.v2_code(r, t, V2_SIZES[r["img_filename"]]) for s in splits
             for r, t in zip(splits[s], outputs[s], strict=True)]
    assert {"correct", "wrong", "wrong_format"} <= set(codes)


def test_screenspot_v2_empty_split_and_cell(project: Project, tmp_path: Path) -> None:
    """The SeeClick script divides by zero on an empty split and logs 0 for an empty text/icon
    list (which a six-cell mean then counts); here neither has a slice and ``average`` is the
    mean of the cells that have samples."""
    splits, outputs = v2_dataset()
    splits["desktop"], outputs["desktop"] = [], []
    splits["web"] = [{**r, "data_type": "text"} for r in splits["web"]]
    pg.write_screenspot_v2(tmp_path, splits, V2_SIZES)
    with pytest.raises(ZeroDivisionError):
        rs.score_screenspot_v2(splits, outputs, V2_SIZES)
    ref = rs.score_screenspot_v2({k: v for k, v in splits.items() if v}, outputs, V2_SIZES)
    assert ref["per_task"]["web"]["Icon Acc"] == 0
    replay = {f"ssv2-{s}-{i}": t for s, texts in outputs.items() for i, t in enumerate(texts)}
    m = run_suite(project, "screenspot/v2", tmp_path, replay, "seeclick")
    assert "split=desktop" not in m["accuracy"]["slices"]
    assert "cell=web/icon" not in m["average"]["slices"]
    present = [ref["per_task"]["mobile"]["Text Acc"], ref["per_task"]["mobile"]["Icon Acc"],
               ref["per_task"]["web"]["Text Acc"]]
    assert m["average"]["value"] == pytest.approx(pct(sum(present) / 3), abs=TOL)
    assert m["average"]["value"] != pytest.approx(pct(ref["paper_average (not printed by the script)"]), abs=TOL)


# -- ScreenSpot-Pro (Qwen2-VL) --------------------------------------------------------------------
PRO_APPS = (("vscode", "windows", "Dev"), ("vscode", "macos", "Dev"), ("photoshop", "windows", "Creative"),
            ("autocad", "windows", "CAD"), ("blender", "linux", "Creative"))


def pro_box(case: str, w: int, h: int) -> list[float]:
    if case == "edge_zero":
        return [0, 0, 0.05 * w, 0.05 * h]
    if case == "edge_1000":
        return [0.95 * w, 0.95 * h, w, h]
    if case == "just_beyond":  # overhangs the right edge: 1.001 hits it, unclipped as in the reference
        return [0.99 * w, 0.4 * h, 1.01 * w, 0.6 * h]
    if case == "two_boxes_last_wins":
        return [0.5 * w, 0.5 * h, 0.6 * w, 0.6 * h]
    return [0.1 * w, 0.1 * h, 0.2 * w, 0.2 * h]


def pro_records() -> list[dict[str, Any]]:
    records = []
    for i, (case, _) in enumerate(mo.PRO_QWEN2VL_CASES):
        app, platform, group = PRO_APPS[i % len(PRO_APPS)]
        size = (3840, 2160) if i % 2 else (2560, 1440)
        ui_type = "icon" if app == "blender" else ("text", "icon")[(i // 5) % 2]  # blender: no text
        records.append(pg.pro_record(i, app, platform, group, ui_type, pro_box(case, *size), size))
    return records


def test_screenspot_pro_qwen2vl_every_table(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    records = pro_records()
    texts = mo.PRO_QWEN2VL_TEXTS
    pg.write_screenspot_pro(tmp_path, records)
    m = run_suite(project, "screenspot/pro", tmp_path, {f"sspro-{r['id']}": t for r, t in zip(records, texts,
                                                                                                strict=True)},
                  "uground", *xdist)["accuracy"]
    ref = rs.score_screenspot_pro(records, texts)
    results = rs.pro_results(records, texts)

    def check(label: str, entry: Mapping[str, Any], subset: Sequence[Mapping[str, Any]], typed: str) -> None:
        assert m["slices"][label] == pytest.approx(pct(entry["action_acc"]), abs=TOL), label
        assert m["slice_n"][label] == entry["num_total"]
        assert correct_num(m, label) == entry["num_correct_action"]
        assert m["slice_format_errors"][label] == entry["wrong_format_num"]
        for ui in ("text", "icon"):
            n = sum(r["ui_type"] == ui for r in subset)
            assert_fraction_slice(m, f"{typed}/{ui}" if typed else f"ui_type={ui}", pct(entry[f"{ui}_acc"]), n)

    overall = ref["overall"]
    assert m["value"] == pytest.approx(pct(overall["action_acc"]), abs=TOL)
    assert m["n"] == overall["num_total"] and m["format_errors"] == overall["wrong_format_num"] > 0
    assert round(m["value"] * m["n"] / 100) == overall["num_correct_action"]
    for ui in ("text", "icon"):
        assert m["slices"][f"ui_type={ui}"] == pytest.approx(pct(overall[f"{ui}_acc"]), abs=TOL)
    tables = 0
    for key, entry in ref["leaderboard_simple_style"].items():
        g = key.removeprefix("group:")
        check(f"group={g}", entry, [r for r in results if r["group"] == g], f"cell={g}")
        tables += 1
    for key, entry in ref["leaderboard_detailed_style"].items():
        a = key.removeprefix("app:")
        check(f"application={a}", entry, [r for r in results if r["application"] == a], f"application_type={a}")
        tables += 1
    for key, entry in ref["seeclick_style"].items():
        p = key.split()[0].removeprefix("plat:")
        check(f"platform={p}", entry, [r for r in results if r["platform"] == p], f"platform_type={p}")
        tables += 1
    for key, entry in ref["fine_grained"].items():
        p, a = key.split()[0].removeprefix("plat:"), key.split()[1].removeprefix("app:")
        subset = [r for r in results if r["platform"] == p and r["application"] == a]
        check(f"platform_application={p}/{a}", entry, subset, f"platform_application_type={p}/{a}")
        tables += 1
    assert tables == 3 + 4 + 3 + 5
    assert ref["leaderboard_detailed_style"]["app:blender"]["text_acc"] == 0  # B11: empty shown as 0 there
    assert {r["correctness"] for r in results} == {"correct", "wrong", "wrong_format"}


# -- the suites' parsers against the reference parsers, case by case -----------------------------
def _xy(parsed: families.Parsed) -> tuple[float, float] | None:
    return (parsed.point.x, parsed.point.y) if parsed.point is not None else None


@pytest.mark.parametrize("case,text", mo.L2_UITARS_CASES + mo.PRO_QWEN2VL_CASES + mo.V2_SEECLICK_CASES)
def test_point_parsers_read_every_messy_output_as_the_reference(case: str, text: str) -> None:
    from pytest_uiground.benchmarks.mmbench_gui.parsers import parse_uitars
    from pytest_uiground.benchmarks.screenspot.parsers import parse_pro_qwen2vl, parse_seeclick

    ctx720 = families.ParseContext(image_size=(1280, 720), model_input_size=(9, 9))  # the input size is not used
    pairs = {"l2": (parse_uitars, lambda t: rm.uitars_parse(t, 1280, 720), mo.L2_UITARS_TEXTS),
             "pro": (parse_pro_qwen2vl, rs.qwen2vl_parse, mo.PRO_QWEN2VL_TEXTS),
             "v2": (parse_seeclick, rs.seeclick_parse, mo.V2_SEECLICK_TEXTS)}
    for ours, theirs, texts in pairs.values():
        if text in texts:
            got = ours(text, "point", ctx720)
            assert _xy(got) == theirs(text)
            assert got.format_error == (theirs(text) is None) and (got.note or got.point)


@pytest.mark.parametrize("case,text", mo.L1_CASES)
def test_l1_parser_is_the_reference_but_for_pattern_4(case: str, text: str) -> None:
    from pytest_uiground.benchmarks.mmbench_gui.parsers import parse_l1

    got = parse_l1(text, "option", families.ParseContext(image_size=(1, 1)))
    assert got.option == rm.intended_parse_option(text)
    if case not in ("based_on_sentence", "clicking_sentence"):
        assert got.option == rm.parse_option(text)


# -- the override tables, the replay, and records in the wrong layout -----------------------------
def test_l1_reads_every_text_answering_model_with_the_reference_parser() -> None:
    tables = tomllib.loads((SUITES / "mmbench_gui" / "l1" / "suite.toml").read_text())["models"]
    # ocr, center and omniparser answer with boxes only (no text to read an option from); replay reads a parser
    names = (set(registry.known(registry.MODEL_GROUP)) | set(families.names())) - {"ocr", "center", "replay",
                                                                                    "omniparser"}
    assert names <= set(tables), f"models without the MMBench-GUI option parser: {sorted(names - set(tables))}"
    assert {t["parser"] for t in tables.values()} == {"pytest_uiground.benchmarks.mmbench_gui.parsers:parse_l1"}


def test_replay_of_an_unknown_name_without_a_suite_parser_is_one_start_up_error(project: Project,
                                                                                tmp_path: Path) -> None:
    """A replay parser that is no family and that the suite does not declare is refused once, when the
    suite is collected (issue 23), naming the families and the missing table, instead of a format
    error on every sample."""
    suite = SUITES / "screenspot" / "pro" / "suite.toml"  # declares no [models.seeclick]
    dest = project.root / "suites" / "screenspot_pro"
    dest.mkdir(parents=True)
    shutil.copy(suite, dest / "suite.toml")
    pro = pro_records()[:2]
    pg.write_screenspot_pro(tmp_path / "pro", pro)
    preds = project.root / "o.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": f"sspro-{r['id']}", "output": "(0.1,0.1)"}) + "\n"
                             for r in pro))
    result = project.pytester.runpytest_subprocess(
        "suites/screenspot_pro", "-p", "no:cacheprovider", "--benchmark-disable", "--uiground-cache", "off",
        "--uiground-data-path", str(tmp_path / "pro"), "--model", "replay", "--uiground-predictions", str(preds),
        "--uiground-replay-parser", "seeclick")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out  # a collection error: no sample ran
    assert "--uiground-replay-parser 'seeclick' is unknown: not a model family" in out
    assert "declares no [models.seeclick] parser" in out
    assert out.count("declares no [models.seeclick] parser") <= 2 and "passed" not in out


def ctx(data: Path) -> LoaderContext:
    return LoaderContext(suite_name="t", suite_dir=Path("."), data_path=data)


def test_records_in_the_wrong_layout_name_file_record_and_field(project: Project, tmp_path: Path) -> None:
    l2 = l2_records()[:3]
    l2[1] = {**l2[1], "bbox": "0.1 0.1 0.2 0.2"}  # a string, not four numbers
    pg.write_mmbench_gui(tmp_path / "mm", l1=[pg.l1_record(0, "os_mac", [{"question": "q?", "answer": "A",
                                                                            "difficulty": "easy", "options": ["x"]}])],
                         l2=l2)
    bad_l2 = {s.id: s for s in mmbench_gui.load_l2({}, ctx(tmp_path / "mm"))}["l2-1"]
    assert "L2_annotations.json record 1 (index 1): field 'bbox'" in (bad_l2.invalid or "")
    bad_l1 = mmbench_gui.load_l1({}, ctx(tmp_path / "mm"))[0]
    assert "L1_annotations.json record 0 (index 0): field 'groups[0].options'" in (bad_l1.invalid or "")

    splits, _ = v2_dataset()
    splits["web"][2] = {k: v for k, v in splits["web"][2].items() if k != "instruction"}
    pg.write_screenspot_v2(tmp_path / "v2", splits, V2_SIZES)
    bad_v2 = {s.id: s for s in screenspot.load_v2({}, ctx(tmp_path / "v2"))}["ssv2-web-2"]
    assert "screenspot_web_v2.json record 2: field 'instruction'" in (bad_v2.invalid or "")

    pro = pro_records()[:3]
    pro[2] = {**pro[2], "img_size": [3840]}
    pg.write_screenspot_pro(tmp_path / "pro", [pro[0], pro[1]])
    (tmp_path / "pro" / "annotations" / "photoshop_windows.json").write_text(json.dumps([pro[2]]))
    bad_pro = {s.id: s for s in screenspot.load_pro({}, ctx(tmp_path / "pro"))}[f"sspro-{pro[2]['id']}"]
    assert "photoshop_windows.json record 0: field 'img_size'" in (bad_pro.invalid or "")

    # End to end: the broken record fails alone, its message in the run's output.
    shutil.copy(SUITES / "screenspot" / "pro" / "suite.toml", project.root / "suites" / "mini" / "suite.toml")
    preds = project.root / "o.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": f"sspro-{r['id']}", "output": "(150,150)"}) + "\n"
                             for r in pro))
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "-p", "no:cacheprovider", "--benchmark-disable", "--uiground-cache", "off", "-rf",
        "--uiground-data-path", str(tmp_path / "pro"), "--model", "replay", "--uiground-predictions", str(preds),
        "--uiground-replay-parser", "uground")
    out = result.stdout.str()
    assert result.ret == 1
    assert "photoshop_windows.json record 0: field 'img_size'" in out
    assert out.count("FAILED suites/mini/suite.toml::test_sample[") == 1
