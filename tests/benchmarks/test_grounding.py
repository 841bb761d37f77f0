"""Your own screens (issue 30): the annotations.jsonl format, the ``grounding`` loader, the importers
(COCO, Label Studio, CVAT, OpenAdapt) on exports in each tool's documented format, ``validate``,
``init NAME --from DIR``, the size-aware tolerance and a loader module of the project's own."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from pytest_uiground import registry
from pytest_uiground.benchmarks.grounding.loader import load
from pytest_uiground.gate.checks import sized_tolerance
from pytest_uiground.record.geometry import Box
from pytest_uiground.screens import checks, importers, scaffold, validate
from pytest_uiground.screens import format as fmt
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config
from pytest_uiground.suite.loading import LoaderContext, collecting_quirks, load_suite

W, H = 400, 200


def screen(path: Path, size: tuple[int, int] = (W, H)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, "white").save(path)
    return path


def write_lines(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def load_dir(folder: Path, **options: object) -> list:
    return load({"warnings": False, **options}, LoaderContext("mine", folder))


def test_pixels_become_the_internal_frame_and_every_task_loads(tmp_path: Path) -> None:
    screen(tmp_path / "screens" / "a.png")
    write_lines(tmp_path / "annotations.jsonl", [
        {"id": "menu", "image": "screens/a.png", "instruction": "Open the menu", "bbox": [40, 20, 80, 60],
         "element_type": "icon", "app": "radio"},
        {"image": "screens/a.png", "instruction": "Tap the slanted key", "polygon": [100, 100, 140, 100, 120, 150],
         "app": "radio"},
        {"id": "gone", "image": "screens/a.png", "instruction": "Open the sunroof", "task": "refusal", "app": "x"},
        {"id": "det", "image": "screens/a.png", "task": "detect", "bbox": [200, 50, 300, 90], "click": [250, 70],
         "app": "x"},
    ])
    menu, poly, gone, det = load_dir(tmp_path)
    assert [s.invalid for s in (menu, poly, gone, det)] == [None] * 4
    assert menu.id == "menu" and menu.task == "point" and menu.click is None
    assert menu.target.box == Box(40 / W, 20 / H, 80 / W, 60 / H)
    assert menu.meta == {"element_type": "icon", "app": "radio", "size": "32to100"}
    assert poly.id == "a-001"  # the one id rule (format.new_id): the image stem and the first free counter
    assert poly.target.polygon == (100, 100, 140, 100, 120, 150) and poly.target.frame == (W, H)
    assert poly.target.box == Box(100 / W, 100 / H, 140 / W, 150 / H)
    assert gone.target.refusal and gone.task == "point"
    assert det.task == "detect" and det.click is not None and math.isclose(det.click.x, 250 / W)


@pytest.mark.parametrize(("line", "words"), [
    ({"image": "../b.png", "instruction": "x", "bbox": [1, 1, 5, 5]}, ["contains '..'", "copy the screenshot"]),
    ({"image": "/abs/b.png", "instruction": "x", "bbox": [1, 1, 5, 5]}, ["is absolute"]),
    ({"image": "a.png", "bbox": [1, 1, 5, 5]}, ["no instruction yet", "Open the comments"]),
    ({"image": "a.png", "instruction": "x", "bbox": [10, 10, 5, 5]}, ["box [10, 10, 5, 5] px", "degenerate"]),
    ({"image": "a.png", "instruction": "x", "bbox": [500, 300, 600, 400]}, ["outside the 400x200 px image"]),
    ({"image": "missing.png", "instruction": "x", "bbox": [1, 1, 5, 5]}, ["does not exist", "missing.png"]),
    ({"image": "a.png", "instruction": "x", "task": "click"}, ["'task' is \"click\"", "point, detect, refusal"]),
    ("{not json", ["not a JSON object"]),
])
def test_a_bad_line_fails_that_sample_naming_the_line_and_the_fix(tmp_path: Path, line: object,
                                                                   words: list[str]) -> None:
    screen(tmp_path / "a.png")
    write_lines(tmp_path / "annotations.jsonl", [{"id": "ok", "image": "a.png", "instruction": "Go",
                                                   "bbox": [1, 1, 50, 50]}, line])
    ok, bad = load_dir(tmp_path)
    assert ok.invalid is None
    assert bad.invalid is not None and "annotations.jsonl line 2" in bad.invalid
    for w in words:
        assert w in bad.invalid


def test_csv_with_the_same_columns_gives_the_same_samples(tmp_path: Path) -> None:
    screen(tmp_path / "a.png")
    write_lines(tmp_path / "annotations.jsonl", [
        {"id": "one", "image": "a.png", "instruction": "Open, then close", "bbox": [1, 2, 30, 40], "app": "nav"},
        {"id": "two", "image": "a.png", "task": "detect", "bbox": [50, 60, 90, 100], "click": [70, 80],
         "app": "nav"}])
    (tmp_path / "annotations.csv").write_text(
        'id,image,instruction,x1,y1,x2,y2,task,click_x,click_y,app\n'
        'one,a.png,"Open, then close",1,2,30,40,,,,nav\n'
        'two,a.png,,50,60,90,100,detect,70,80,nav\n', encoding="utf-8")
    assert load_dir(tmp_path) == load_dir(tmp_path, annotations="annotations.csv")


def test_write_is_readable_back_and_atomic(tmp_path: Path) -> None:
    path = tmp_path / "annotations.jsonl"
    records = [{"app": "radio", "bbox": [1.0, 2.5, 3, 4], "image": "a.png", "instruction": "Ünïcode", "id": "x"}]
    fmt.write(path, records)
    text = path.read_text(encoding="utf-8")
    assert text == '{"id": "x", "image": "a.png", "instruction": "Ünïcode", "bbox": [1, 2.5, 3, 4], "app": "radio"}\n'
    assert fmt.raw_records(path) == [{"id": "x", "image": "a.png", "instruction": "Ünïcode", "bbox": [1, 2.5, 3, 4],
                                      "app": "radio"}]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left
    assert fmt.box_text([1, 2.5, 3, 4]) == "box [1, 2.5, 3, 4] px"


def test_cheap_checks_are_noted_at_collection_one_line_each_with_the_id_and_the_fix(tmp_path: Path) -> None:
    screen(tmp_path / "a.png")
    write_lines(tmp_path / "annotations.jsonl", [
        {"id": "a1", "image": "a.png", "instruction": "Open the menu", "bbox": [10, 10, 60, 60], "app": "x"},
        {"id": "a2", "image": "a.png", "instruction": "open  the MENU", "bbox": [200, 10, 260, 60], "app": "x"},
        {"id": "a3", "image": "a.png", "instruction": "Close", "bbox": [11, 10, 60, 61]},
        {"id": "a4", "image": "a.png", "instruction": "Wide", "bbox": [300, 150, 450, 190], "app": "x"},
    ])
    with collecting_quirks() as lines:
        load({}, LoaderContext("mine", tmp_path))
    assert any(m.startswith("annotations.jsonl: a2: the instruction 'open  the MENU' is also sample a1's")
               for m in lines), lines
    assert any("a3: its box [11, 10, 60, 61] px duplicates sample a1's box [10, 10, 60, 60] px" in m for m in lines)
    assert any("a4: box [300, 150, 450, 190] px reaches outside the 400x200 px image" in m for m in lines)
    assert any("a3: metadata key 'app' is on 3 of 4 samples, missing on a3" in m and "fix:" in m for m in lines)
    assert len(lines) == 4


class FakeItem:
    def __init__(self, text: str, box: Box) -> None:
        self.text, self.box, self.score = text, box, 1.0


def fake_detector(img: Image.Image) -> list[FakeItem]:
    """Two 'Insert' words and one 'Layout' word, in the 400x200 frame."""
    return [FakeItem("Insert", Box(10 / W, 10 / H, 60 / W, 30 / H)),
            FakeItem("Insert", Box(200 / W, 100 / H, 250 / W, 120 / H)),
            FakeItem("Layout", Box(100 / W, 10 / H, 160 / W, 30 / H))]


def test_validate_flags_a_planted_error_draws_it_and_is_clean_once_fixed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    screen(tmp_path / "suite" / "a.png")
    good = [{"id": "layout", "image": "a.png", "instruction": "Open the Layout tab", "bbox": [100, 10, 160, 30]},
            {"id": "insert", "image": "a.png", "instruction": 'Open the "Insert" tab <b>', "bbox": [10, 10, 60, 30]}]
    ann = write_lines(tmp_path / "suite" / "annotations.jsonl",
                      [good[0], {**good[1], "bbox": [300, 150, 350, 190]}])  # planted: the box is off the word
    monkeypatch.setattr(validate, "load_detector", lambda name: fake_detector)
    page = tmp_path / "v.html"
    args = [str(tmp_path / "suite"), "--detector", "fake", "--html", str(page)]
    assert validate.main(args) == 0, "advice alone passes"
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("advice: insert: the instruction 'Open the \"Insert\" tab <b>' matches 2 fake boxes "
                             "reading 'Insert'")
    assert "advice: insert: no fake proposal overlaps its box [300, 150, 350, 190] px (best IoU 0.00 < 0.3); fix: " \
        "check that the box is on the element" in out[1]
    assert out[-1].startswith("0 errors and 2 advice in 2 samples") and "advice fails only with --strict" in out[-1]
    html = page.read_text()
    assert "data:image/png;base64," in html and "&lt;b&gt;" in html and "<b>'" not in html
    assert validate.main([*args, "--strict"]) == 1
    write_lines(ann, [good[0], {**good[1], "instruction": "Insert a picture (the top one)"}])
    assert validate.main([*args, "--strict"]) == 0, "one shared word does not make it ambiguous"
    assert "clean" in capsys.readouterr().out.splitlines()[-1]


def test_validate_reads_a_suite_folder_through_its_suite_toml(tmp_path: Path) -> None:
    screen(tmp_path / "s" / "data" / "a.png")
    write_lines(tmp_path / "s" / "data" / "labels.jsonl",
                [{"image": "a.png", "instruction": "Go", "bbox": [1, 1, 9, 9]}])
    (tmp_path / "s" / "suite.toml").write_text(scaffold.suite_toml("s", []).replace(
        'annotations = "annotations.jsonl"', 'annotations = "data/labels.jsonl"'))
    assert validate.find_annotations(tmp_path / "s") == tmp_path / "s" / "data" / "labels.jsonl"
    assert validate.main([str(tmp_path / "s"), "--detector", "none", "--html", str(tmp_path / "v.html")]) == 0


# -- importers: exports in each tool's documented format -----------------------------------------------------
def coco_export(folder: Path) -> Path:
    """COCO as CVAT exports it: bbox [x, y, w, h] px, a box's attributes under 'attributes'."""
    data = {"images": [{"id": 1, "file_name": "a.png", "width": W, "height": H}],
            "categories": [{"id": 1, "name": "icon"}, {"id": 2, "name": "text"}],
            "annotations": [
                {"id": 7, "image_id": 1, "category_id": 1, "bbox": [40, 20, 40, 40], "area": 1600, "iscrowd": 0,
                 "attributes": {"instruction": "Open the menu", "occluded": False, "app": "radio"}},
                {"id": 8, "image_id": 1, "category_id": 2, "bbox": [100.5, 60, 50, 20], "area": 1000, "iscrowd": 0,
                 "attributes": {"instruction": "Play the next song", "occluded": False, "app": "radio"}}]}
    (folder / "annotations").mkdir(parents=True)
    (folder / "annotations" / "instances_default.json").write_text(json.dumps(data))
    return folder / "annotations" / "instances_default.json"


def label_studio_export(folder: Path) -> Path:
    """Label Studio's JSON export: percent regions, a per-region textarea 'instruction' sharing its id."""
    def region(rid: str, x: float, y: float, w: float, h: float, label: str, text: str) -> list[dict]:
        return [{"id": rid, "type": "rectanglelabels", "from_name": "label", "to_name": "image", "original_width": W,
                 "original_height": H, "image_rotation": 0,
                 "value": {"x": x / W * 100, "y": y / H * 100, "width": w / W * 100, "height": h / H * 100,
                           "rotation": 0, "rectanglelabels": [label]}},
                {"id": rid, "type": "textarea", "from_name": "instruction", "to_name": "image", "original_width": W,
                 "original_height": H, "value": {"x": x / W * 100, "y": y / H * 100, "width": w / W * 100,
                                                 "height": h / H * 100, "rotation": 0, "text": [text]}}]
    data = [{"id": 1, "data": {"image": "/data/local-files/?d=a.png", "app": "radio"},
             "annotations": [{"id": 1, "result": region("r1", 40, 20, 40, 40, "icon", "Open the menu")
                              + region("r2", 100.5, 60, 50, 20, "text", "Play the next song")}]}]
    path = folder / "export.json"
    path.write_text(json.dumps(data))
    return path


def cvat_export(folder: Path) -> Path:
    path = folder / "annotations.xml"
    path.write_text(f"""<?xml version="1.0" encoding="utf-8"?>
<annotations><version>1.1</version>
  <image id="0" name="a.png" width="{W}" height="{H}">
    <box label="icon" source="manual" occluded="0" xtl="40" ytl="20" xbr="80" ybr="60" z_order="0">
      <attribute name="instruction">Open the menu</attribute><attribute name="app">radio</attribute></box>
    <polygon label="text" source="manual" occluded="0" points="100.5,60;150.5,60;150.5,80" z_order="0">
      <attribute name="instruction">Play the next song</attribute><attribute name="app">radio</attribute></polygon>
  </image>
</annotations>""")
    return path


def imported(kind: str, export: Path, out: Path) -> list:
    assert importers.main([kind, str(export), "--out", str(out)]) == 0
    return load_dir(out.parent, annotations=out.name)


def geometry(samples: list) -> list[tuple]:
    return [(s.instruction, s.target.box, s.meta.get("app"), s.meta.get("element_type")) for s in samples]


def test_coco_and_label_studio_exports_give_the_same_samples(tmp_path: Path) -> None:
    screen(tmp_path / "coco" / "images" / "a.png")
    screen(tmp_path / "ls" / "a.png")
    from_coco = imported("coco", coco_export(tmp_path / "coco"), tmp_path / "coco" / "annotations.jsonl")
    from_ls = imported("label-studio", label_studio_export(tmp_path / "ls"), tmp_path / "ls" / "annotations.jsonl")
    assert [s.invalid for s in from_coco + from_ls] == [None] * 4
    assert geometry(from_coco) == [("Open the menu", Box(40 / W, 20 / H, 80 / W, 60 / H), "radio", "icon"),
                                   ("Play the next song", Box(100.5 / W, 60 / H, 150.5 / W, 80 / H), "radio", "text")]
    assert [(a, tuple(round(v, 6) for v in b), c, d) for a, b, c, d in geometry(from_ls)] == \
        [(a, tuple(round(v, 6) for v in b), c, d) for a, b, c, d in geometry(from_coco)]
    line = json.loads((tmp_path / "coco" / "annotations.jsonl").read_text().splitlines()[0])
    assert line["image"] == "images/a.png" and line["bbox"] == [40, 20, 80, 60]


def test_cvat_xml_boxes_and_polygons_in_pixels(tmp_path: Path) -> None:
    screen(tmp_path / "a.png")
    box, poly = imported("cvat", cvat_export(tmp_path), tmp_path / "annotations.jsonl")
    assert box.target.box == Box(40 / W, 20 / H, 80 / W, 60 / H) and box.meta["app"] == "radio"
    assert poly.target.polygon == (100.5, 60, 150.5, 60, 150.5, 80) and poly.instruction == "Play the next song"


def test_an_image_outside_the_output_folder_is_copied_beside_it_and_a_missing_one_is_named(tmp_path: Path) -> None:
    screen(tmp_path / "elsewhere" / "a.png")
    export = label_studio_export(tmp_path / "elsewhere")
    out = tmp_path / "suite" / "annotations.jsonl"
    out.parent.mkdir()
    assert importers.main(["label-studio", str(export), "--out", str(out)]) == 0
    assert (tmp_path / "suite" / "images" / "a.png").is_file()
    assert all(line["image"] == "images/a.png" for line in map(json.loads, out.read_text().splitlines()))
    (tmp_path / "elsewhere" / "a.png").unlink()
    with pytest.raises(importers.ImportFailed, match=r"image 'a.png' not found .* pass --images DIR"):
        importers.convert("label-studio", export, tmp_path / "other" / "x.jsonl")


def test_openadapt_json_imports_with_the_same_ids_and_boxes(tmp_path: Path) -> None:
    from pytest_uiground.benchmarks.openadapt import loader as openadapt

    repo = Path(__file__).resolve().parents[2] / "suites" / "detection_curated"
    out = tmp_path / "annotations.jsonl"
    assert importers.main(["openadapt", str(repo / "annotations.json"), "--out", str(out)]) == 0
    theirs = openadapt.load({"annotations": "annotations.json"}, LoaderContext("c", repo))
    ours = load_dir(tmp_path)
    assert [s.id for s in ours] == [s.id for s in theirs]
    for a, b in zip(ours, theirs, strict=True):
        assert a.task == b.task == "detect" and a.invalid is None
        assert all(abs(x - y) < 0.01 / 100 for x, y in zip(a.target.box, b.target.box, strict=True)), a.id
        assert a.click is not None and b.click is not None and abs(a.click.x - b.click.x) < 1e-3


# -- init --from ---------------------------------------------------------------------------------------------
def test_init_from_a_folder_writes_a_self_contained_suite_and_prints_the_next_three_commands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_uiground.__main__ import main as cli

    shots = tmp_path / "shots"
    screen(shots / "a.png")
    screen(shots / "nav" / "b.png")
    write_lines(shots / "annotations.jsonl", [
        {"id": f"s{i}", "image": "a.png" if i % 2 else "nav/b.png", "instruction": f"Item {i}",
         "bbox": [10 * i, 10, 10 * i + 30, 40], "app": "radio" if i % 3 else "nav", "serial": str(i)}
        for i in range(1, 7)])
    project = tmp_path / "project"
    assert cli(["init", "mine", "--from", str(shots), "--dir", str(project)]) == 0
    out = capsys.readouterr().out
    suite = project / "suites" / "mine"
    assert (suite / "screens" / "nav" / "b.png").is_file() and (suite / "README.md").is_file()
    text = (suite / "annotations.jsonl").read_text()
    assert ".." not in text and '"image": "screens/nav/b.png"' in text
    config = load_suite_config(suite / "suite.toml")
    assert config.loader == "grounding" and [m.name for m in config.metrics] == ["grounding_accuracy"]
    assert config.metrics[0].slices == ("app", "size")  # serial has one value per sample: not a slice
    assert (config.tolerance, config.tolerance_samples, config.min_slice) == (2.0, 1.0, 10)
    assert len(load_suite(suite / "suite.toml").samples) == 6
    nxt = out.split("next:\n", 1)[1].splitlines()
    assert nxt == ["  python -m pytest_uiground validate suites/mine",
                   "  pytest suites/mine --model ocr --snapshot-update",
                   "  git add suites/mine baselines/mine && git commit -m 'suite mine'"]
    assert (project / ".github" / "workflows" / "model-upgrade-gate.yml").is_file()
    assert 'suites = ["suites/mine"]' in (project / "uiground-model.toml").read_text()
    assert cli(["init", "mine", "--from", str(shots), "--dir", str(project)]) == 1
    assert "exists; choose another NAME" in capsys.readouterr().err


def test_init_from_screenshots_without_annotations_points_at_the_annotator(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    screen(tmp_path / "shots" / "a.png")
    assert scaffold.main("bare", tmp_path / "shots", tmp_path / "p") == 0
    out = capsys.readouterr().out
    assert "  python -m pytest_uiground annotate suites/bare" in out
    assert (tmp_path / "p" / "suites" / "bare" / "annotations.jsonl").read_text() == ""


# -- the gate's side: a metric no sample has, the size-aware tolerance ---------------------------------------
def test_tolerance_auto_and_in_samples(tmp_path: Path) -> None:
    assert sized_tolerance(2.0, 1.0, 23) == pytest.approx(100 / 23)
    assert sized_tolerance(2.0, 1.0, 1000) == 2.0
    assert sized_tolerance(0.0, 2.0, 100) == 2.0 and sized_tolerance(5.0, 0.0, 10) == 5.0
    toml = tmp_path / "suite.toml"
    base = scaffold.suite_toml("t", [])
    toml.write_text(base.replace('slice_tolerance = "auto"', 'slice_tolerance = "3 samples"'))
    c = load_suite_config(toml)
    assert (c.slice_tolerance, c.slice_tolerance_samples) == (0.0, 3.0)
    toml.write_text(base.replace('tolerance = "auto"\n', 'tolerance = "lots"\n', 1))
    with pytest.raises(SuiteConfigError, match=r"baseline.tolerance: 'lots' is not a number of points, \"auto\""):
        load_suite_config(toml)


def test_a_metric_no_sample_has_says_so_instead_of_nan(tmp_path: Path) -> None:
    from pytest_uiground.gate.checks import build_checks
    from pytest_uiground.gate.metrics import compute_all

    screen(tmp_path / "a.png")
    write_lines(tmp_path / "annotations.jsonl", [{"image": "a.png", "task": "detect", "bbox": [1, 1, 9, 9]}])
    (tmp_path / "suite.toml").write_text(scaffold.suite_toml("t", []).replace(
        'tasks = ["point"]', 'tasks = ["point"]\nfloor = 25.0'))
    config = load_suite_config(tmp_path / "suite.toml")
    (check, *_) = build_checks(config, compute_all(config.metrics, []), [], None, partial=False, updating=False,
                               suite_file="suite.toml")
    assert check.problems() == ["grounding_accuracy: no sample has task point, so its floor 25.00 cannot be met "
                                "(set in suite.toml): give the samples that task, or drop the metric"]
    assert not any("nan" in p for p in check.problems())


def test_a_loader_module_of_the_project_needs_no_pythonpath(tmp_path: Path) -> None:
    """``myloaders:load`` beside suites/ resolves from the suite's folder; a module that is nowhere is an error
    naming the pythonpath line to add."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "suites" / "x").mkdir(parents=True)
    (tmp_path / "uig_test_loaders_x.py").write_text("def load(options, ctx):\n    return ['ok']\n")
    code = ("from pathlib import Path; from pytest_uiground import registry; import sys; "
            f"f = registry.resolve('g', 'uig_test_loaders_x:load', what='loader', option='o', "
            f"near=Path({str(tmp_path / 'suites' / 'x')!r})); print(f({{}}, None))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "suites", capture_output=True, text=True)
    assert done.stdout.strip() == "['ok']", done.stderr
    with pytest.raises(registry.UnknownNameError, match=r"pythonpath = \[\"FOLDER\"\]"):
        registry.resolve("g", "uig_nowhere_xyz:load", what="loader", option="o", near=tmp_path / "suites" / "x")


def test_checks_match_only_the_instructions_most_specific_words() -> None:
    items = fake_detector(Image.new("RGB", (W, H)))
    assert [i.text for i in checks._matches("Open Insert", items)] == ["Insert", "Insert"]
    assert [i.text for i in checks._matches("Open the Layout", items)] == ["Layout"]
    assert checks._matches("Call home", items) == []


def test_instruction_alts_load_from_jsonl_and_csv_and_are_no_metadata(tmp_path: Path) -> None:
    """Other wordings (issue 43) travel with the sample, not as a slice; the CSV holds them as JSON text."""
    screen(tmp_path / "a.png")
    write_lines(tmp_path / "annotations.jsonl", [
        {"id": "one", "image": "a.png", "instruction": "Open the menu", "bbox": [1, 2, 30, 40],
         "instruction_alts": [" Menü öffnen ", "Show the menu"], "app": "nav"},
        {"id": "two", "image": "a.png", "instruction": "Close", "bbox": [50, 60, 90, 100], "app": "nav"}])
    (tmp_path / "annotations.csv").write_text(
        'id,image,instruction,instruction_alts,x1,y1,x2,y2,app\n'
        'one,a.png,Open the menu,"[""Menü öffnen"", ""Show the menu""]",1,2,30,40,nav\n'
        'two,a.png,Close,,50,60,90,100,nav\n', encoding="utf-8")
    one, two = load_dir(tmp_path)
    assert one.invalid is None and one.instruction_alts == ("Menü öffnen", "Show the menu")
    assert two.instruction_alts == () and "instruction_alts" not in one.meta
    assert load_dir(tmp_path) == load_dir(tmp_path, annotations="annotations.csv")
    path = tmp_path / "written.jsonl"  # written back in the format's order, after the instruction
    fmt.write(path, [{"bbox": [1, 2, 30, 40], "instruction_alts": ["Menü öffnen"], "image": "a.png",
                      "instruction": "Open"}])
    assert list(fmt.raw_records(path)[0]) == ["image", "instruction", "instruction_alts", "bbox"]


@pytest.mark.parametrize(("alts", "words"), [
    ("Menü öffnen", ["'instruction_alts' is \"Men", "not a list", '"instruction_alts": ["Show the comments"']),
    (["Menü öffnen", "  "], ["'instruction_alts' item 2 is \"  \"", "not a non-empty string"]),
    (["ok", 3], ["'instruction_alts' item 2 is 3"]),
    ({"de": "Menü öffnen"}, ["'instruction_alts' is {\"de\"", "not a list"]),
])
def test_bad_instruction_alts_fail_that_sample_naming_the_value_and_the_fix(tmp_path: Path, alts: object,
                                                                          words: list[str]) -> None:
    screen(tmp_path / "a.png")
    write_lines(tmp_path / "annotations.jsonl", [
        {"id": "ok", "image": "a.png", "instruction": "Go", "bbox": [1, 1, 50, 50]},
        {"id": "bad", "image": "a.png", "instruction": "Go", "bbox": [1, 1, 50, 50], "instruction_alts": alts}])
    ok, bad = load_dir(tmp_path)
    assert ok.invalid is None
    assert bad.invalid is not None and bad.invalid.startswith("annotations.jsonl line 2 (sample bad): ")
    for w in words:
        assert w in bad.invalid, bad.invalid


def test_a_csv_cell_that_is_not_json_names_its_column(tmp_path: Path) -> None:
    screen(tmp_path / "a.png")
    (tmp_path / "annotations.csv").write_text(
        'id,image,instruction,instruction_alts,x1,y1,x2,y2\n'
        'one,a.png,Open the menu,Menü öffnen,1,2,30,40\n', encoding="utf-8")
    (one,) = load_dir(tmp_path, annotations="annotations.csv")
    assert one.invalid is not None and "column instruction_alts is 'Menü öffnen', not JSON" in one.invalid
    assert 'a list of strings ["Show the comments"' in one.invalid
