"""OSWorld-G and UI-Vision: loaders on their published layouts, bad input, and refusals end to end.

The parity with the reference scorers is in ``tests/parity/test_parity_osworld_uivision.py``; here:
what the loaders read (``instructions = "refined"`` reads the other file; UI-Vision's box by the
record's ``image_size``), what a malformed record or folder says, and the refusal lifecycle (a
refusal on a refusal sample passes, elsewhere it is a miss, never a format error; the count shows
in the terminal, summary.json, Markdown and report.html, and the baseline keeps it per sample),
with and without ``-n 2``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import Project

# Pillow before pytester snapshots sys.modules (its extension modules must not load twice).
from PIL import Image  # noqa: F401

from pytest_uiground.benchmarks.osworld_g import loader as og
from pytest_uiground.benchmarks.osworld_g.lookalike import write_osworld_g
from pytest_uiground.benchmarks.ui_vision import loader as uv
from pytest_uiground.benchmarks.ui_vision.lookalike import write_ui_vision
from pytest_uiground.suite.loading import LayoutError, LoaderContext

SUITES = Path(__file__).parents[2] / "suites"


def ctx(data: Path | None) -> LoaderContext:
    return LoaderContext("t", Path("."), data)


# -- OSWorld-G loader -------------------------------------------------------------------------------
def test_osworld_g_reads_published_layout_and_refined_file(tmp_path: Path) -> None:
    fx = write_osworld_g(tmp_path, records=8)
    original = og.load({}, ctx(tmp_path))
    refined = og.load({"instructions": "refined"}, ctx(tmp_path / "benchmark"))
    assert [s.id for s in original] == [w.sample_id for w in fx.written] == [s.id for s in refined]
    assert all(s.invalid is None for s in original + refined)
    pairs = zip(original, refined, strict=True)
    assert all(r.instruction != o.instruction and "refined" in r.instruction for o, r in pairs)
    kinds = {s.meta["box_type"]: s.target for s in original}
    assert kinds["refusal"].refusal and kinds["refusal"].box is None
    assert kinds["polygon"].polygon is not None and kinds["polygon"].frame == (480, 270)
    first = fx.written[0].record["box_coordinates"]
    assert original[0].target.box == (first[0] / 480, first[1] / 270, (first[0] + first[2]) / 480,
                                      (first[1] + first[3]) / 270)
    groups = {g for s in original for g in s.meta["group"].split("|")}
    assert "unclassified" in groups and any("|" in s.meta["group"] for s in original)


def test_osworld_g_bad_input_names_the_thing(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match=r"needs --uiground-data-path.*git clone"):
        og.load({}, ctx(None))
    with pytest.raises(ValueError, match=r"instructions: expected 'original'.*'refined'.*got 'short'"):
        og.load({"instructions": "short"}, ctx(tmp_path))
    with pytest.raises(LayoutError, match=r"OSWorld-G\.json not found"):
        og.load({}, ctx(tmp_path))
    good = {"id": "A-0", "image_path": "A.png", "image_size": [64, 48], "instruction": "x", "box_type": "bbox",
            "box_coordinates": [1, 2, 3, 4]}
    records = [good, {**good, "id": "A-1", "box_type": "circle"},
               {**good, "id": "A-2", "box_type": "polygon", "box_coordinates": [1, 2, 3, 4]},
               {**good, "id": "A-3", "image_size": [1920, 1080]}, {**good, "id": "A-4", "image_path": "../x.png"},
               {**good, "id": "A-0"}]
    write_osworld_g(tmp_path, records=records, groups={})
    samples = {s.id: s.invalid for s in og.load({}, ctx(tmp_path))}
    assert samples["osworld-g-A-0"] is None
    assert "'box_type': 'circle' is not one of bbox, polygon, refusal" in samples["osworld-g-A-1"]
    assert "at least three vertices" in samples["osworld-g-A-2"]
    assert "[1920, 1080] but the image is 64x48" in samples["osworld-g-A-3"]
    assert "points outside the dataset folder" in samples["osworld-g-A-4"]
    assert "repeats the id of record 0" in samples["osworld-g-record5"]
    (tmp_path / "benchmark" / "classification_result.json").write_text(json.dumps({"groups": {}}))
    with pytest.raises(ValueError, match=r"classification_result\.json: expected .*classified"):
        og.load({}, ctx(tmp_path))


# -- UI-Vision loader ---------------------------------------------------------------------------------
def test_ui_vision_reads_published_layout(tmp_path: Path) -> None:
    fx = write_ui_vision(tmp_path, per_setting=4)
    samples = uv.load({}, ctx(tmp_path))
    assert [s.id for s in samples] == [w.sample_id for w in fx.written]
    assert {s.meta["setting"] for s in samples} == {"basic", "functional", "spatial"}
    reversed_rec = next(w for w in fx.written if w.record["bbox"][0] > w.record["bbox"][2])
    s = next(x for x in samples if x.id == reversed_rec.sample_id)
    x2, y1, x1, y2 = reversed_rec.record["bbox"]
    assert s.target.box == (x1 / 400, y1 / 250, x2 / 400, y2 / 250)
    assert s.meta["cell"] == f"{s.meta['setting']}/{s.meta['domain']}"
    only = uv.load({"settings": ["spatial"]}, ctx(tmp_path / "ui-vision"))
    assert {x.meta["setting"] for x in only} == {"spatial"} and len(only) == 4


def test_ui_vision_bad_input_names_the_thing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"settings: expected a list drawn from .*got \['hard'\]"):
        uv.load({"settings": ["hard"]}, ctx(tmp_path))
    with pytest.raises(LayoutError, match=r"element_grounding_basic\.json not found.*hf download ServiceNow/ui-vision"):
        uv.load({}, ctx(tmp_path))
    good = {"image_path": "element_grounding/a.png", "image_size": [100, 50], "bbox": [1, 2, 3, 4],
            "prompt_to_evaluate": "x", "platform": "NotAnApp", "element_type": "text"}
    write_ui_vision(tmp_path, per_setting={"basic": [good, {**good, "bbox": [1, 2, 3]},
                                                     {**good, "image_size": [0, 50]}, {**good, "platform": None}],
                                           "functional": [], "spatial": []})
    s = uv.load({}, ctx(tmp_path))
    assert s[0].invalid is None and "domain" not in s[0].meta  # a platform outside the table: no domain
    assert "'bbox': expected a list of 4 numbers" in (s[1].invalid or "")
    assert "'image_size': expected a positive" in (s[2].invalid or "")
    assert "'platform'" in (s[3].invalid or "")


def test_ui_vision_domain_table_is_the_references() -> None:
    d = uv.domains()
    assert len(d) == 83 and d["Code::Blocks"] == "Development" and d["7-Zip"] == "Productivity"
    assert sorted(set(d.values())) == ["Browsers", "Creativity", "Development", "Education", "Entertainment",
                                       "Productivity"]


# -- refusals end to end ------------------------------------------------------------------------------
def _install(project: Project, folder: str) -> None:
    dest = project.root / "suites" / folder
    dest.mkdir(parents=True)
    shutil.copy(SUITES / folder / "suite.toml", dest / "suite.toml")
    shutil.rmtree(project.root / "suites" / "mini")


@pytest.mark.slow
def test_refusals_lifecycle(project: Project, tmp_path: Path, xdist: list[str]) -> None:
    fx = write_osworld_g(tmp_path, records=8)
    refusal = [w.sample_id for w in fx.written if w.record["box_type"] == "refusal"]
    normal = [w.sample_id for w in fx.written if w.record["box_type"] == "bbox"]
    answers = {w.sample_id: "[500, 500]" for w in fx.written}
    answers[refusal[0]] = "[-1, -1]"                                        # right
    answers[refusal[1]] = '<tool_call>{"arguments": {"action": "terminate", "status": "failure"}}</tool_call>'
    answers[normal[0]] = "[-1,-1]"                                          # refusing a present element
    preds = project.root / "p.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in answers.items()))
    _install(project, "osworld_g")
    args = ["suites/osworld_g", "-p", "no:cacheprovider", "-p", "no:randomly", "--uiground-cache", "off",
            "--uiground-data-path", str(tmp_path), "--model", "replay", "--uiground-predictions", str(preds),
            "--uiground-replay-parser", "qwen3-vl", "--uiground-report", "out", "--uiground-markdown", "s.md",
            "-rA", *xdist]
    assert project.pytester.runpytest_subprocess(*args, "--snapshot-update").ret == 0
    result = project.pytester.runpytest_subprocess(*args)
    assert result.ret == 0, result.stdout.str()[-3000:]
    out = result.stdout.str()
    assert f"PASSED suites/osworld_g/suite.toml::test_sample[{refusal[0]}]" in out
    result.stdout.fnmatch_lines(["*format errors: 0; refusals: 3; sample errors: 0*"])
    rows = {r["id"]: r for r in map(json.loads, (project.root / "out" / "samples.jsonl").read_text().splitlines())}
    assert rows[refusal[0]]["score"]["correct"] and rows[refusal[1]]["score"]["correct"]
    miss = rows[normal[0]]
    assert miss["prediction"]["refused"] and not miss["score"]["correct"] and not miss["score"]["format_error"]
    assert project.summary()["refusals"] == 3
    assert ", 3 refusals;" in (project.root / "s.md").read_text()
    assert "<dt>refusals</dt><dd>3</dd>" in (project.root / "out" / "report.html").read_text().replace("\n", "")
    # The baseline keeps each sample's refusal (its 'refused' component).
    update = project.pytester.runpytest_subprocess(*args, "--snapshot-update")
    assert update.ret == 0, update.stdout.str()[-3000:]
    stored = "\n".join(project.baseline_files().values())
    entries = json.loads(project.baseline_files()["osworld_g/samples.json"])["samples"]
    assert sum(e["c"].get("refused") is True for e in entries.values()) == 3, stored[:2000]
    assert sum(e.get("a", {}).get("refused") is True for e in entries.values()) == 3, "the answers are kept too"


def test_report_draws_the_polygon_not_its_bounding_box() -> None:
    from PIL import Image as PILImage
    from PIL import ImageDraw

    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target
    from pytest_uiground.report import gallery

    poly = (10.0, 10.0, 50.0, 10.0, 50.0, 50.0, 90.0, 50.0, 90.0, 90.0, 10.0, 90.0)  # L: top-right quarter out
    sample = Sample("p", ImageRef(key="x"), "x", "point",
                    Target(polygon=poly, frame=(100, 100), box=Box(0.1, 0.1, 0.9, 0.9)))
    img = PILImage.new("RGB", (100, 100), (0, 0, 0))
    gallery.draw_marks(ImageDraw.Draw(img), lambda x, y: (x * 100, y * 100), sample, None, 5)
    assert img.getpixel((50, 30)) == gallery.TRUTH_RGB  # the notch's wall is drawn
    assert img.getpixel((89, 10)) == (0, 0, 0)  # the bounding box's top-right corner is not


def test_osworld_g_scorer_reads_a_negative_click_as_refusal_for_any_family() -> None:
    from pytest_uiground.benchmarks.osworld_g.scorer import score
    from pytest_uiground.record.geometry import Box, Point
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.prediction import Prediction
    from pytest_uiground.record.sample import Sample, Target
    from pytest_uiground.scoring import scorer as scoring

    assert scoring.load("osworld_g").rule is score  # registered under the suite's [scorer] name
    refusal = Sample("r", ImageRef(key="x"), "x", "point", Target(refusal=True))
    box = Sample("b", ImageRef(key="x"), "x", "point", Target(box=Box(0.0, 0.0, 1.0, 1.0)))
    negative = Prediction(point=Point(-0.001, -0.5), raw="[-1, -500]")
    right = score(refusal, negative)
    assert right.correct is True and right.components["refused"] is True
    wrong = score(box, negative)
    assert wrong.correct is False and wrong.format_error is False and wrong.components["refused"] is True
    one_negative = Prediction(point=Point(-0.001, 0.5))
    assert score(refusal, one_negative).correct is False
    assert score(box, one_negative).components == {"point_hit": False}
    assert score(box, Prediction(point=Point(0.5, 0.5))).correct is True


def test_terminal_line_names_refusals() -> None:
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.prediction import Prediction
    from pytest_uiground.record.result import SampleResult, sample_line
    from pytest_uiground.record.sample import Sample, Target
    from pytest_uiground.report.browse import truth_fields
    from pytest_uiground.scoring.rules import score_point

    sample = Sample("r", ImageRef(key="x"), "Click the missing tab", "point", Target(refusal=True))
    pred = Prediction(refused=True, raw="[-1, -1]")
    result = SampleResult("osworld_g", "r", "point", {}, score=score_point(sample, pred), prediction=pred)
    line = sample_line(sample, result)
    assert "expected a refusal (the element is absent), got a refusal" in line
    assert truth_fields(sample) == {"refusal": True}


def test_a_sample_in_several_groups_counts_in_each_slice() -> None:
    from pytest_uiground.gate.metrics import compute
    from pytest_uiground.record.result import SampleResult
    from pytest_uiground.record.score import Score
    from pytest_uiground.suite.config import MetricSpec

    def result(sid: str, group: str, ok: bool) -> SampleResult:
        return SampleResult("s", sid, "point", {"group": group}, score=Score(100.0 * ok, ok))

    results = [result("a", "x|y", True), result("b", "x", False), result("c", "y|y", False)]
    m = compute(MetricSpec(name="accuracy", slices=("group",)), results)
    assert m.overall.n == 3 and m.overall.value == pytest.approx(100 / 3)
    assert {k: (a.n, a.value) for k, a in m.slices.items()} == {"group=x": (2, 50.0), "group=y": (2, 50.0)}


def test_osworld_g_replay_file_keyed_by_the_datasets_own_id(tmp_path: Path) -> None:
    """The official runners log each answer under the record's ``id`` ("0FOB4CLBT2-0"), not the suite's
    ``osworld-g-`` id: such a file replays as it is."""
    from pytest_uiground.models.offline.replay import ReplayModel

    write_osworld_g(tmp_path, records=4)
    loaded = og.load({}, ctx(tmp_path))
    raw_ids = [r["id"] for r in json.loads((tmp_path / "benchmark" / og.FILES["original"]).read_text())]
    assert [s.meta["dataset_id"] for s in loaded] == raw_ids
    assert all(s.id == f"osworld-g-{og.safe_id(s.meta['dataset_id'])}" for s in loaded)
    samples = [s for s in loaded if s.target.box is not None]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"sample_id": s.meta["dataset_id"], "output": "(500, 500)"}) + "\n"
                             for s in samples))
    got = ReplayModel(preds, "uground").predict(samples)
    assert [g.error for g in got] == [None] * len(samples) and all(g.point is not None for g in got)


@pytest.mark.parametrize(("text", "why"), [
    ("9" * 400 + ", 500", "not a finite number"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [NaN, 3]}}'
     "</tool_call>", "not a finite number"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1e999, 3]}}'
     "</tool_call>", "not a finite number"),
    ("<tool_call>" + "[" * 5000 + "]" * 5000 + "</tool_call>", "nests too deeply"),
])
def test_osworld_g_answers_the_reference_would_crash_on_are_format_errors(text: str, why: str) -> None:
    """Issue 34 item 6: int() of inf/NaN and a RecursionError escaped the parser as the sample's error."""
    from pytest_uiground.benchmarks.osworld_g.parsers import parse_qwen3vl
    from pytest_uiground.models.families import ParseContext

    parsed = parse_qwen3vl(text, "point", ParseContext(image_size=(1920, 1080)))
    assert parsed.format_error and parsed.point is None and not parsed.refused
    assert why in parsed.note


def test_ui_vision_uground_reader_memory_is_bounded_on_a_2mb_answer() -> None:
    """Issue 34 item 7: literal_eval of "[1, 1, ...]" (2 MB) built a syntax tree of ~650 MB
    (tracemalloc peak); the answer is now refused unparsed, as a format error that says why."""
    import tracemalloc

    from pytest_uiground.benchmarks.ui_vision.parsers import parse_uground_v1
    from pytest_uiground.models.families import ParseContext

    text = "[" + "1, " * 700_000 + "]"
    tracemalloc.start()
    try:
        parsed = parse_uground_v1(text, "point", ParseContext(image_size=(1920, 1080)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parsed.format_error and "more than 1000 tokens" in parsed.note
    assert peak < 50_000_000, f"peak {peak / 1e6:.0f} MB"


@pytest.mark.parametrize("text", ["(1." + "0" * 2_000_000 + ", 2)", "(1, 2)  # " + "x" * 2_000_000,
                                  "(\n 500,\n 20  # the button\n)", "[-3, +1002.5]"])
def test_ui_vision_uground_reader_still_reads_long_texts_that_are_pairs(text: str) -> None:
    """The bound counts tokens, not characters: a long number or comment is still read as the
    reference's eval reads it (tests/parity/ref_ui_vision.py uground_v1_point)."""
    from parity.ref_ui_vision import uground_v1_point

    from pytest_uiground.benchmarks.ui_vision.parsers import read_point

    want = uground_v1_point(text)
    assert want is not None and read_point(text) == tuple(want)


def test_osworld_g_fallback_ids_never_equal_a_real_id(tmp_path: Path) -> None:
    """Issue 34 item 10: record 1 repeats an id, so its fallback would be osworld-g-record1, which a
    later real record is called: the suite failed to load ("duplicate sample id")."""
    good = {"id": "A-0", "image_path": "A.png", "image_size": [64, 48], "instruction": "x", "box_type": "bbox",
            "box_coordinates": [1, 2, 3, 4]}
    records = [good, {**good}, {**good, "id": "record1"}, {**good, "id": "record3-2"}, {**good, "id": True},
               {**good, "id": "record3"}]
    write_osworld_g(tmp_path, records=records, groups={})
    samples = og.load({}, ctx(tmp_path))
    ids = [s.id for s in samples]
    assert len(set(ids)) == len(ids)
    assert ids == ["osworld-g-A-0", "osworld-g-record1-2", "osworld-g-record1", "osworld-g-record3-2",
                   "osworld-g-record4", "osworld-g-record3"]
    assert [s.invalid is None for s in samples] == [True, False, True, True, False, True]


def test_osworld_g_a_group_name_holding_the_separator_stays_one_slice(tmp_path: Path) -> None:
    """Issue 34 item 11: a group "text|icon" was split by the slicing into group=text and group=icon."""
    from pytest_uiground.gate.metrics import compute
    from pytest_uiground.record.result import SampleResult
    from pytest_uiground.record.score import Score
    from pytest_uiground.suite.config import MetricSpec

    write_osworld_g(tmp_path, records=4, groups={})
    raw = json.loads((tmp_path / "benchmark" / og.FILES["original"]).read_text())
    groups = {"text|icon": [{"id": raw[0]["id"]}], "text": [{"id": raw[1]["id"]}]}
    (tmp_path / "benchmark" / "classification_result.json").write_text(json.dumps({"classified": groups}))
    samples = og.load({}, ctx(tmp_path))
    assert samples[0].meta["group"] == "text\u00a6icon" and samples[1].meta["group"] == "text"
    results = [SampleResult("s", s.id, "point", s.meta, score=Score(100.0, True)) for s in samples[:2]]
    m = compute(MetricSpec(name="accuracy", slices=("group",)), results)
    assert set(m.slices) == {"group=text\u00a6icon", "group=text"}
    groups = {"a|b": [{"id": raw[0]["id"]}], "a\u00a6b": [{"id": raw[1]["id"]}]}
    (tmp_path / "benchmark" / "classification_result.json").write_text(json.dumps({"classified": groups}))
    with pytest.raises(ValueError, match=r"groups 'a\|b' and 'a¦b' both become the slice value"):
        og.load({}, ctx(tmp_path))
