"""Imports and annotations.jsonl that fail closed (issue 38) and imports that join a suite (issue 39).

Each test failed before its fix: an export naming a file outside its folder was copied in; a failed import left
its screenshots; duplicate ids, NaN/Infinity/1e400/boolean pixels and JSON nested past the recursion limit gave
silent lines or tracebacks; an instruction holding U+2028, U+2029 or U+0085 was split into two broken lines and
lost on the annotator's next save; ``--out`` a folder raised IsADirectoryError; and ``import --append`` did not
exist (``--force`` wiped what was annotated).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import Project
from PIL import Image

from pytest_uiground.benchmarks.grounding.loader import load
from pytest_uiground.models.families import reading
from pytest_uiground.record import jsontext
from pytest_uiground.report.runs import CompareError, read_records
from pytest_uiground.screens import format as fmt
from pytest_uiground.screens import importers, scaffold
from pytest_uiground.screens.annotator.store import Store
from pytest_uiground.suite.loading import LoaderContext, load_suite

W, H = 400, 200
BREAKERS = "Open\u2028the\u2029menu\u0085now"
DEEP = "[" * 100_000  # json.loads raises RecursionError on this on Python 3.11


def screen(path: Path, size: tuple[int, int] = (W, H)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, "white").save(path)
    return path


def load_dir(folder: Path, name: str = fmt.DEFAULT_FILE) -> list:
    return load({"warnings": False, "annotations": name}, LoaderContext("mine", folder))


def coco(folder: Path, anns: list[dict], images: list[dict] | None = None, text: str | None = None) -> Path:
    """A COCO export (CVAT's COCO 1.0: the instruction and the id in each annotation's attributes)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"images": images or [{"id": 1, "file_name": "a.png", "width": W, "height": H}],
            "categories": [{"id": 1, "name": "icon"}],
            "annotations": [{"id": k + 1, "image_id": 1, "category_id": 1, **a} for k, a in enumerate(anns)]}
    path = folder / "instances_default.json"
    path.write_text(text if text is not None else json.dumps(data))
    return path


def ann(x: float, instruction: str = "Open the menu", **attrs: object) -> dict:
    return {"bbox": [x, 20, 40, 40], "attributes": {"instruction": instruction, **attrs}}


def run_import(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = importers.main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


# -- the one helper --------------------------------------------------------------------------------------------
def test_jsontext_splits_on_newline_only_escapes_the_separators_and_bounds_nesting_on_every_python() -> None:
    line = jsontext.dumps_line({"instruction": BREAKERS, "app": "Radio é"})
    assert "\u2028" not in line and "\u2029" not in line and "\u0085" not in line and "é" in line
    assert "\\u2028" in line and "\\u2029" in line and "\\u0085" in line
    assert jsontext.loads(line) == {"instruction": BREAKERS, "app": "Radio é"}
    raw = '{"i": "a\u2028b"}\r\n{"i": "c\u0085d"}\n'
    assert len(raw.splitlines()) == 4  # what every reader did
    assert [json.loads(x)["i"] for x in jsontext.split_lines(raw)] == ["a\u2028b", "c\u0085d"]
    assert jsontext.split_lines("a\n\nb") == ["a", "", "b"] and jsontext.split_lines("") == []
    ok = "[" * jsontext.MAX_DEPTH + "]" * jsontext.MAX_DEPTH
    assert jsontext.loads(ok) is not None
    assert jsontext.loads('["' + "[" * 5000 + '"]') == ["[" * 5000]  # brackets inside a string do not count
    with pytest.raises(RecursionError, match=r"nested deeper than 500 levels \(line 3\)") as info:
        jsontext.loads('{"a":\n1,\n"b": ' + "[" * 501 + "]" * 501 + "}")
    assert isinstance(info.value, jsontext.TooDeep) and info.value.line == 3
    # the model answers' bound of last round is this one, not a second copy
    assert reading.loads is not None and reading.MAX_JSON_DEPTH == jsontext.MAX_DEPTH
    with pytest.raises(jsontext.TooDeep):
        reading.loads("[" * 501)


# -- line separators: write -> read -> annotator save -> read --------------------------------------------------
def test_an_instruction_with_line_separators_survives_write_read_annotator_save_and_read(tmp_path: Path) -> None:
    screen(tmp_path / "a.png")
    path = tmp_path / fmt.DEFAULT_FILE
    first = {"id": "menu", "image": "a.png", "instruction": BREAKERS, "bbox": [10, 10, 50, 50]}
    fmt.write(path, [first])
    assert path.read_text(encoding="utf-8").count("\n") == 1
    assert [line.raw for line in fmt.read(path)] == [first]
    # the annotator saves another sample (one carrying the separators too): the first line is kept, not split
    store = Store(path)
    snap = store.read()
    assert snap.problems == [] and [e.data for e in snap.entries] == [first]
    second = {"id": "b", "image": "a.png", "instruction": "Close\u2029it", "bbox": [60, 10, 90, 50]}
    store.change(snap.revision, [{"op": "insert", "index": 1, "sample": second}], {"a.png": (W, H)})
    assert [line.raw for line in fmt.read(path)] == [first, second]
    assert [e.data for e in store.read().entries] == [first, second]
    samples = load_dir(tmp_path)
    assert [(s.id, s.instruction, s.invalid) for s in samples] == [("menu", BREAKERS, None),
                                                                   ("b", "Close\u2029it", None)]


def test_the_annotator_refuses_a_pixel_beyond_a_float_in_one_line(tmp_path: Path) -> None:
    from pytest_uiground.screens.annotator.store import StoreError

    store = Store(tmp_path / fmt.DEFAULT_FILE)
    sample = {"image": "a.png", "instruction": "Go", "bbox": [1, 1, 10**400, 9]}
    with pytest.raises(StoreError, match=r"'bbox' is \[1, 1, 1000.*expected \[x1, y1, x2, y2\] in pixels of the image "
                                         r"\(finite numbers\)"):
        store.change(store.read().revision, [{"op": "insert", "index": 0, "sample": sample}], {})
    assert not (tmp_path / fmt.DEFAULT_FILE).exists()


def test_separators_survive_init_from_and_an_import(tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    screen(shots / "a.png")
    # a hand-written file holding the separators raw inside the string (valid JSON): read as one line
    (shots / fmt.DEFAULT_FILE).write_text(json.dumps({"id": "m", "image": "a.png", "instruction": BREAKERS,
                                                      "bbox": [1, 1, 30, 30]}, ensure_ascii=False) + "\n",
                                          encoding="utf-8")
    assert scaffold.main("mine", shots, tmp_path / "p") == 0
    suite = tmp_path / "p" / "suites" / "mine"
    assert [s.instruction for s in load_dir(suite)] == [BREAKERS]
    export = coco(tmp_path / "export", [ann(40, BREAKERS)])
    screen(tmp_path / "export" / "a.png")
    assert importers.main(["coco", str(export), "--out", str(tmp_path / "out" / "annotations.jsonl")]) == 0
    assert [s.instruction for s in load_dir(tmp_path / "out")] == [BREAKERS]


# -- importers read inside the export only, and write all or nothing -------------------------------------------
@pytest.mark.parametrize("how", ["absolute", "climbs", "label-studio ?d=../..", "not an image"])
def test_an_export_naming_a_file_outside_its_folder_or_not_an_image_is_refused_naming_the_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    secret = screen(tmp_path / "private" / "secret.png")
    (tmp_path / "export" / "notes.png").parent.mkdir(parents=True)
    (tmp_path / "export" / "notes.png").write_text("not a picture")
    name = {"absolute": str(secret), "climbs": "../private/secret.png", "label-studio ?d=../..": "",
            "not an image": "notes.png"}[how]
    if how.startswith("label-studio"):
        export = tmp_path / "export" / "tasks.json"
        export.write_text(json.dumps([{"id": 4, "data": {"image": "/data/local-files/?d=../private/secret.png"},
                                       "annotations": []}]))
        kind, record = "label-studio", "task 4"
    else:
        export = coco(tmp_path / "export", [ann(40)], images=[{"id": 1, "file_name": name}])
        kind, record = "coco", "annotations[0] (id 1)"
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    code, _, err = run_import(capsys, kind, str(export), "--out", str(out))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert record in err and "nothing was written" in err
    assert ("is not an image" in err) if how == "not an image" else (
        f"is {secret}, outside the export's folder" in err and "--images DIR" in err)
    assert not (tmp_path / "suite").exists(), "nothing copied, nothing written"


def test_a_file_outside_the_export_is_read_from_images_dir(tmp_path: Path) -> None:
    screen(tmp_path / "shots" / "a.png")
    export = coco(tmp_path / "export", [ann(40)], images=[{"id": 1, "file_name": "../shots/a.png"}])
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    assert importers.main(["coco", str(export), "--out", str(out), "--images", str(tmp_path / "shots")]) == 0
    assert (tmp_path / "suite" / "images" / "a.png").is_file()
    assert [s.invalid for s in load_dir(tmp_path / "suite")] == [None]


def test_a_coco_export_in_annotations_reads_the_dataset_folder_above_it_and_nothing_further(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """COCO's layout (datumaro's and CVAT's COCO export: ``annotations/instances_default.json`` beside
    ``images/default/``) failed to find its own screenshots; the folder above ``annotations/`` is the export's,
    a folder above that is not, and a folder of another name is not widened."""
    screen(tmp_path / "ds" / "images" / "default" / "a.png")
    secret = screen(tmp_path / "private" / "secret.png")
    out = tmp_path / "suite" / fmt.DEFAULT_FILE
    export = coco(tmp_path / "ds" / "annotations", [ann(40)])
    assert run_import(capsys, "coco", str(export), "--out", str(out))[0] == 0
    assert [s.invalid for s in load_dir(tmp_path / "suite")] == [None]
    assert (tmp_path / "suite" / "images" / "a.png").is_file()
    climbs = coco(tmp_path / "ds" / "annotations", [ann(40)],
                  images=[{"id": 1, "file_name": "../../private/secret.png"}])
    code, _, err = run_import(capsys, "coco", str(climbs), "--out", str(tmp_path / "other" / fmt.DEFAULT_FILE))
    assert code == 1 and f"is {secret}, outside the export's folder {(tmp_path / 'ds').resolve()}" in err, err
    elsewhere = coco(tmp_path / "ds" / "labels", [ann(40)])
    code, _, err = run_import(capsys, "coco", str(elsewhere), "--out", str(tmp_path / "third" / fmt.DEFAULT_FILE))
    assert code == 1 and "image 'a.png' not found" in err, err


def test_a_failed_import_leaves_no_screenshot_and_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    screen(tmp_path / "export" / "a.png")
    screen(tmp_path / "export" / "b.png")
    images = [{"id": 1, "file_name": "a.png"}, {"id": 2, "file_name": "b.png"}]
    export = coco(tmp_path / "export", [ann(40), {**ann(80), "image_id": 2, "bbox": [1, 2, 0, 5]}], images=images)
    out = tmp_path / "suite" / "deeper" / fmt.DEFAULT_FILE
    code, _, err = run_import(capsys, "coco", str(export), "--out", str(out))
    assert code == 1 and "annotations[1] (id 2)" in err and "degenerate" in err, err
    assert not (tmp_path / "suite").exists(), "a.png was copied before b.png's record failed"


def test_a_failed_write_removes_the_copies_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    screen(tmp_path / "export" / "a.png")
    export = coco(tmp_path / "export", [ann(40)])
    out = tmp_path / "suite" / fmt.DEFAULT_FILE

    def full_disk(path: Path, text: str, **_: object) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(importers, "atomic_write_text", full_disk)
    assert importers.main(["coco", str(export), "--out", str(out)]) == 1
    assert not (tmp_path / "suite").exists()


def test_duplicate_ids_from_an_import_are_refused_naming_both(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    screen(tmp_path / "a.png")
    export = coco(tmp_path, [ann(40, id="menu"), ann(120, "Play", id="menu")])
    code, _, err = run_import(capsys, "coco", str(export), "--out", str(tmp_path / "out.jsonl"))
    assert code == 1 and "annotations[1] (id 2): id 'menu' is also the id of" in err and "annotations[0]" in err
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(("kind", "bad", "shown"), [
    ("coco", "NaN", "NaN"), ("coco", "Infinity", "Infinity"), ("coco", "1e400", "Infinity"),
    ("coco", "-Infinity", "-Infinity"), ("coco", "1" + "0" * 400, "1000"), ("coco", "true", "true"),
    ("cvat", "nan", "NaN"), ("cvat", "1e400", "Infinity"), ("label-studio", "NaN", "NaN"),
])
def test_non_finite_overflowing_or_boolean_pixels_are_one_line_naming_the_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, bad: str, shown: str) -> None:
    screen(tmp_path / "a.png")
    if kind == "coco":
        export = coco(tmp_path, [], text='{"images": [{"id": 1, "file_name": "a.png"}], "annotations": [{"id": 5, '
                                         f'"image_id": 1, "bbox": [10, 10, {bad}, {bad}]' + "}]}")
        record = "annotations[0] (id 5): bbox [x, y, w, h] is ["
    elif kind == "cvat":
        export = tmp_path / "a.xml"
        export.write_text(f'<annotations><image name="a.png"><box label="x" xtl="1" ytl="1" xbr="{bad}" ybr="9"/>'
                          "</image></annotations>")
        record = "image 'a.png' box #1: xtl, ytl, xbr, ybr is ["
    else:
        export = tmp_path / "ls.json"
        export.write_text('[{"id": 1, "data": {"image": "a.png"}, "annotations": [{"result": [{"id": "r", "type": '
                          '"rectanglelabels", "original_width": 400, "original_height": 200, "value": {"x": 1, '
                          f'"y": 1, "width": {bad}, "height": 5' + "}}]}]}]")
        record = "task 1 region \"r\": [original_width"
    code, _, err = run_import(capsys, kind, str(export), "--out", str(tmp_path / "out.jsonl"))
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert record in err and shown in err and "expected finite numbers (pixels)" in err, err
    assert "Traceback" not in err and not (tmp_path / "out.jsonl").exists()


def test_json_nested_past_the_bound_is_one_line_naming_the_file_and_the_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "deep.json"
    export.write_text('{\n"images": ' + DEEP)
    for kind in ("coco", "label-studio", "openadapt"):
        code, _, err = run_import(capsys, kind, str(export), "--out", str(tmp_path / "out.jsonl"))
        assert code == 1 and f"{export}" in err and "nested deeper than 500 levels (line 2)" in err, (kind, err)
        assert len(err.strip().splitlines()) == 1
    # a line of annotations.jsonl: that sample fails naming its line, the others load
    screen(tmp_path / "s" / "a.png")
    (tmp_path / "s" / fmt.DEFAULT_FILE).write_text(
        '{"id": "ok", "image": "a.png", "instruction": "Go", "bbox": [1, 1, 9, 9]}\n' + DEEP + "\n")
    ok, deep = load_dir(tmp_path / "s")
    assert ok.invalid is None and deep.invalid is not None
    assert deep.invalid.startswith("annotations.jsonl line 2 (sample line-001): nests JSON deeper than 500 levels")
    # the annotator keeps the line as it is and says so; samples.jsonl names its line
    snap = Store(tmp_path / "s" / fmt.DEFAULT_FILE).read()
    assert snap.entries[1].raw == DEEP and "line 2 is not JSON (JSON nested deeper than 500" in snap.problems[0]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "samples.jsonl").write_text(DEEP + "\n")
    with pytest.raises(CompareError, match=r"samples.jsonl, line 1: not a sample record \(TooDeep"):
        read_records(tmp_path / "run")


@pytest.mark.parametrize(("bad", "words"), [
    ('"bbox": [1, 1, ' + "9" * 5000 + ", 9]", "not readable JSON (Exceeds the limit (4300 digits)"),
    ('"bbox": [1, 1, 1e400, 9]', "'bbox' is [1, 1, Infinity, 9]; expected [x1, y1, x2, y2]"),
    ('"bbox": [1, 1, ' + "9" * 400 + ", 9]", "expected [x1, y1, x2, y2] in pixels of the image (finite numbers)"),
    ('"bbox": [1, 1, true, 9]', "'bbox' is [1, 1, true, 9]"),
])
def test_an_unreadable_number_in_annotations_jsonl_fails_that_sample_only(tmp_path: Path, bad: str,
                                                                          words: str) -> None:
    screen(tmp_path / "a.png")
    (tmp_path / fmt.DEFAULT_FILE).write_text('{"id": "ok", "image": "a.png", "instruction": "Go", "bbox": [1, 1, 9, 9]}'
                                             '\n{"id": "bad", "image": "a.png", "instruction": "Go", ' + bad + "}\n")
    ok, broken = load_dir(tmp_path)
    assert ok.invalid is None and broken.invalid is not None and words in broken.invalid, broken.invalid
    assert broken.invalid.startswith("annotations.jsonl line 2 (sample ")


def test_the_terminal_annotators_resume_keeps_a_deep_line_as_it_is(tmp_path: Path) -> None:
    """``annotate --terminal --resume`` reads its annotations.jsonl with the format's reader: a line nested too
    deep is one bad line (the loader names it), kept byte for byte when the file is written again."""
    from pytest_uiground.screens.review import open_output

    text = '{"id": "ok", "image": "a.png", "instruction": "Go", "bbox": [1, 1, 9, 9]}\n' + DEEP + "\n"
    (tmp_path / fmt.DEFAULT_FILE).write_text(text, encoding="utf-8")
    out = open_output(tmp_path / fmt.DEFAULT_FILE, resume=True)
    assert [line.raw is None for line in out.existing] == [False, True]
    assert "deeper than 500 levels" in (out.existing[1].problem or "")
    out.save()
    assert (tmp_path / fmt.DEFAULT_FILE).read_text(encoding="utf-8") == text


def test_out_a_folder_csv_or_both_modes_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    screen(tmp_path / "a.png")
    export = coco(tmp_path / "e", [ann(40)])
    code, _, err = run_import(capsys, "coco", str(export), "--out", str(tmp_path))
    assert code == 2 and err.strip() == f"import: --out {tmp_path} is a folder; pass the file to write: --out " \
                                        f"{tmp_path / fmt.DEFAULT_FILE}"
    code, _, err = run_import(capsys, "coco", str(export), "--out", str(tmp_path / "a.csv"))
    assert code == 2 and "writes JSON lines" in err
    with pytest.raises(SystemExit) as info:
        importers.main(["coco", str(export), "--append", "--force"])
    assert info.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_init_from_refuses_a_nan_line_naming_it_and_leaves_no_suite(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    shots = tmp_path / "shots"
    screen(shots / "a.png")
    (shots / fmt.DEFAULT_FILE).write_text('{"image": "a.png", "instruction": "Go", "bbox": [1, 1, 9, 9]}\n'
                                          '{"image": "a.png", "instruction": "Go", "bbox": [1, NaN, 9, 9]}\n')
    assert scaffold.main("mine", shots, tmp_path / "p") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"init: {shots / fmt.DEFAULT_FILE}:2: Out of range float values") and "finite" in err
    assert not (tmp_path / "p" / "suites" / "mine").exists()


def test_init_from_an_openadapt_folder_points_at_screens_and_copies_nothing_else(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[2] / "suites" / "detection_curated", tmp_path / "src")
    assert scaffold.main("cur", tmp_path / "src", tmp_path / "p") == 0
    suite = tmp_path / "p" / "suites" / "cur"
    assert not (suite / "images").exists(), "the screenshots are under screens/ already"
    samples = load_dir(suite)
    assert len(samples) > 20 and all(s.invalid is None for s in samples)
    assert {str(line.raw["image"]).split("/")[0] for line in fmt.read(suite / fmt.DEFAULT_FILE) if line.raw} \
        == {"screens"}


# -- issue 39: an import joins an existing suite ---------------------------------------------------------------
def annotated_suite(folder: Path) -> tuple[Path, str]:
    screen(folder / "screens" / "a.png")
    path = folder / fmt.DEFAULT_FILE
    text = ('{"id": "home-001", "image": "screens/a.png", "instruction": "Open the menu", "bbox": [40, 20, 80, 60]}\n'
            '# typed by hand, no id\n'
            '{"image": "screens/a.png", "instruction": "Search",   "bbox": [200, 5, 260, 25]}\n')
    path.write_text(text, encoding="utf-8")
    return path, text


def test_import_append_adds_to_an_annotated_suite_keeping_its_lines_byte_for_byte(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, before = annotated_suite(tmp_path / "suite")
    screen(tmp_path / "export" / "b.png")
    export = coco(tmp_path / "export", [ann(10, "Play"), ann(100, "Pause")],
                  images=[{"id": 1, "file_name": "b.png"}])
    code, _, err = run_import(capsys, "coco", str(export), "--out", str(path))
    assert code == 2 and "exists; pass --append to add these samples to it" in err
    code, out, err = run_import(capsys, "coco", str(export), "--out", str(path), "--append")
    assert code == 0, err
    assert out.startswith(f"added 2 samples to {path} (1 images copied") and "after its 2 lines" in out
    text = path.read_text(encoding="utf-8")
    assert text.startswith(before)
    samples = load_dir(path.parent)
    assert [(s.id, s.instruction, s.invalid) for s in samples] == [
        ("home-001", "Open the menu", None), ("a-001", "Search", None), ("b-001", "Play", None),
        ("b-002", "Pause", None)]


@pytest.mark.parametrize(("record", "words"), [
    ({"bbox": [40, 20, 40, 40], "attributes": {"instruction": "Menu again"}},
     ["screens/a.png box [40, 20, 80, 60] px is already a sample", f"{fmt.DEFAULT_FILE}:1"]),
    ({"bbox": [300, 100, 20, 20], "attributes": {"instruction": "New", "id": "home-001"}},
     ["id 'home-001' is also the id of", f"{fmt.DEFAULT_FILE}:1"]),
    ({"bbox": [300, 100, 20, 20], "attributes": {"instruction": "New", "id": "a-001"}},
     ["id 'a-001' is also the id of", f"{fmt.DEFAULT_FILE}:3"]),  # the hand-written line's id, as the loader gives it
])
def test_import_append_refuses_duplicates_and_overlaps_and_changes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict, words: list[str]) -> None:
    path, before = annotated_suite(tmp_path / "suite")
    screen(tmp_path / "export" / "b.png")
    export = coco(tmp_path / "suite" / "export", [ann(5, "Fine", id="fine"), {"image_id": 2, **record}],
                  images=[{"id": 1, "file_name": "b.png"}, {"id": 2, "file_name": "../screens/a.png"}])
    screen(tmp_path / "suite" / "export" / "b.png")
    code, _, err = run_import(capsys, "coco", str(export), "--out", str(path), "--append")
    assert code == 1 and all(w in err for w in words) and "annotations[1] (id 2)" in err, err
    assert path.read_text(encoding="utf-8") == before and not (tmp_path / "suite" / "images").exists()


def test_an_export_of_the_suites_own_screenshots_names_them_and_repeats_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The docs' route: init --from copied the screenshots into screens/, the labelling tool exported them from
    the original folder. The import names screens/a.png (no second copy in images/), so a box the suite has on
    it is seen as a repeat."""
    path, before = annotated_suite(tmp_path / "suite")
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "a.png").write_bytes((tmp_path / "suite" / "screens" / "a.png").read_bytes())
    export = coco(tmp_path / "tool", [{"bbox": [40, 20, 40, 40], "attributes": {"instruction": "Menu"}}])
    code, _, err = run_import(capsys, "coco", str(export), "--out", str(path), "--append")
    assert code == 1 and f"screens/a.png box [40, 20, 80, 60] px is already a sample ({fmt.DEFAULT_FILE}:1)" in err
    assert path.read_text(encoding="utf-8") == before
    export = coco(tmp_path / "tool", [{"bbox": [300, 100, 20, 20], "attributes": {"instruction": "Close"}}])
    assert importers.main(["coco", str(export), "--out", str(path), "--append"]) == 0
    # a-001 is the hand-written line's id (the loader's rule, format.new_id), so the import's is a-002
    assert fmt.read(path)[-1].raw == {"id": "a-002", "image": "screens/a.png", "instruction": "Close",
                                      "bbox": [300, 100, 320, 120], "element_type": "icon"}
    assert not (tmp_path / "suite" / "images").exists()


# -- end to end: a suite that was annotated, imported into and run ---------------------------------------------
SUITE = """
[suite]
name = "mini"
version = "1"

[loader]
name = "grounding"

[[metrics]]
name = "grounding_accuracy"
tasks = ["point"]
floor = 10.0
"""


def test_a_suite_with_separators_and_an_appended_import_runs_every_sample(project: Project, xdist: list[str],
                                                                          tmp_path: Path) -> None:
    folder = project.root / "suites" / "mini"
    (folder / "suite.toml").write_text(SUITE)
    screen(folder / "screens" / "a.png")
    fmt.write(folder / fmt.DEFAULT_FILE, [
        {"id": f"s{i}", "image": "screens/a.png", "instruction": f"Item{BREAKERS}{i}",
         "bbox": [10 + 40 * i, 20, 40 + 40 * i, 60]} for i in range(4)])
    screen(tmp_path / "export" / "b.png")
    export = coco(tmp_path / "export", [ann(10 + 50 * k, f"Row\u2028{k}") for k in range(3)],
                  images=[{"id": 1, "file_name": "b.png"}])
    assert importers.main(["coco", str(export), "--out", str(folder / fmt.DEFAULT_FILE), "--append"]) == 0
    load_suite.cache_clear()
    recorded = project.run("--snapshot-update", xdist=xdist)
    assert recorded.ret == 0, recorded.stdout.str()
    result = project.run("--uiground-report", "out", xdist=xdist)
    out = result.stdout.str()
    assert result.ret == 0 and "verdict for mini: PASS" in out, out
    summary = project.summary()
    assert summary["n_samples"] == 7 == len(project.ids()), "no sample lost to a line separator"
    assert summary["metrics"]["grounding_accuracy"]["value"] == 100.0, summary["metrics"]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="json.loads on 100,000 '[' raises RecursionError on 3.11 only")
def test_a_deep_line_fails_its_sample_not_the_run(project: Project) -> None:
    folder = project.root / "suites" / "mini"
    (folder / "suite.toml").write_text(SUITE)
    screen(folder / "a.png")
    (folder / fmt.DEFAULT_FILE).write_text(
        "".join(json.dumps({"id": f"s{i}", "image": "a.png", "instruction": f"Item {i}",
                            "bbox": [10 + 40 * i, 20, 40 + 40 * i, 60]}) + "\n" for i in range(3)) + DEEP + "\n")
    load_suite.cache_clear()
    result = project.run("-rA")
    out = result.stdout.str()
    assert result.ret in (0, 1) and "RecursionError" not in out and "Traceback" not in out, out
    assert "annotations.jsonl line 4 (sample line-001): nests JSON deeper than 500 levels" in out


def test_a_benchmarks_format_is_imported_through_the_registry() -> None:
    """``import openadapt`` is the OpenAdapt benchmark's importer, reached through the ``pytest_uiground.importers``
    entry points (the core knows no benchmark, issue 39); the tools' formats are the core's own."""
    from pytest_uiground.benchmarks.openadapt.importer import from_openadapt
    from pytest_uiground.screens import importers as imp

    assert imp.importer("openadapt") is from_openadapt
    assert imp.formats()[:3] == ["coco", "label-studio", "cvat"] and "openadapt" in imp.formats()
    with pytest.raises(LookupError, match="no import format named 'nope'"):
        imp.importer("nope")


def test_validate_and_the_loader_read_the_same_samples(tmp_path: Path) -> None:
    """One path from a line to a sample (``screens/samples.py``): the grounding loader's samples are the ones
    ``validate`` checks."""
    from PIL import Image

    from pytest_uiground.benchmarks.grounding.loader import load
    from pytest_uiground.screens import format as fmt
    from pytest_uiground.screens.samples import samples_of
    from pytest_uiground.suite.loading import LoaderContext

    Image.new("RGB", (200, 100), "white").save(tmp_path / "a.png")
    lines = [{"id": "x", "image": "a.png", "instruction": "Open", "bbox": [10, 10, 50, 40]},
             {"id": "y", "image": "a.png", "instruction": "Gone", "bbox": [300, 10, 350, 40]}]
    (tmp_path / "annotations.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    path = tmp_path / "annotations.jsonl"
    direct = samples_of(path, fmt.read(path))
    loaded = load({"warnings": False}, LoaderContext("mine", tmp_path))
    assert [(s.id, s.invalid, s.target) for s in direct] == [(s.id, s.invalid, s.target) for s in loaded]
    assert direct[0].invalid is None and "lies outside the 200x100 px image" in (direct[1].invalid or "")
