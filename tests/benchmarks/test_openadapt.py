"""The ``openadapt`` and ``recorded_sessions`` loaders: both annotation forms, per-element
failures, file-level refusals and pixel → normalized conversion, against values computed
here by hand from the fixture's pixel layout (400x300 screenshots)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# Imported at module level: pytester restores sys.modules after each test, and Pillow's
# extension modules should not be imported twice in one process.
from PIL import Image

from pytest_uiground import registry
from pytest_uiground.benchmarks.openadapt import loader as openadapt
from pytest_uiground.benchmarks.openadapt import recorded
from pytest_uiground.benchmarks.openadapt.lookalike import write_annotations, write_recorded
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.sample import Sample, check_sample_ids
from pytest_uiground.suite.loading import LoaderContext

W, H = 400, 300


def ctx(suite_dir: Path, data_path: Path | None = None) -> LoaderContext:
    return LoaderContext(suite_name="openadapt-test", suite_dir=suite_dir, data_path=data_path)


def by_id(samples: list[Sample]) -> dict[str, Sample]:
    return {s.id: s for s in samples}


def px_box(x0: float, y0: float, x1: float, y1: float) -> Box:
    return Box(x0 / W, y0 / H, x1 / W, y1 / H)


def assert_box(actual: Box | None, expected: Box) -> None:
    assert actual is not None
    assert tuple(actual) == pytest.approx(tuple(expected), abs=1e-9)


# Screen 0 of the fixture, in pixels: (type, x0, y0, x1, y1, size bucket by hand from max(w, h)).
SCREEN0 = {
    "sample_000.sample_000_elem_000": ("button", 40, 40, 160, 80, "gt100"),  # 120 x 40
    "sample_000.sample_000_elem_001": ("icon", 300, 30, 324, 54, "lt32"),  # 24 x 24
    "sample_000.sample_000_elem_002": ("text_field", 40, 120, 240, 150, "gt100"),  # 200 x 30
    "sample_000.sample_000_elem_003": ("link", 40, 200, 100, 220, "32to100"),  # 60 x 20
}


# -- both forms ------------------------------------------------------------------------------------
def test_code_form_boxes_clicks_and_meta(tmp_path: Path) -> None:
    path = write_annotations(tmp_path, "code", screens=2)
    samples = openadapt.load({"annotations": "annotations.json"}, ctx(tmp_path))
    assert len(samples) == 4 + 3
    check_sample_ids(samples, source="test")
    got = by_id(samples)
    for sid, (kind, x0, y0, x1, y1, size) in SCREEN0.items():
        s = got[sid]
        assert s.task == "detect" and s.invalid is None
        assert_box(s.target.box, px_box(x0, y0, x1, y1))  # [x, y, w, h] read as corners x+w, y+h
        assert s.click == pytest.approx(Point((x0 + x1) / 2 / W, (y0 + y1) / 2 / H))  # the centre
        assert dict(s.meta) == {"dataset": "curated", "element_type": kind, "form": "code", "size": size,
                                "difficulty": "easy", "theme": "light"}
        assert s.image.path == tmp_path / "samples" / "001.png"
    login = got["sample_000.sample_000_elem_000"]
    assert login.instruction == "Click on the 'Login' button"
    assert got["sample_001.sample_001_elem_000"].meta["theme"] == "dark"
    assert json.loads(path.read_text())["name"] == "curated"


def test_docs_form_uses_the_stored_click_point(tmp_path: Path) -> None:
    write_annotations(tmp_path, "docs", screens=1)
    got = by_id(openadapt.load({"annotations": "annotations.json"}, ctx(tmp_path)))
    assert set(got) == set(SCREEN0)
    for sid, (kind, x0, y0, x1, y1, size) in SCREEN0.items():
        s = got[sid]
        assert_box(s.target.box, px_box(x0, y0, x1, y1))
        # The fixture stores a click a third of the way across, not the centre.
        assert s.click == pytest.approx(Point((x0 + (x1 - x0) / 3) / W, (y0 + y1) / 2 / H))
        assert dict(s.meta) == {"dataset": "curated", "element_type": kind, "form": "docs", "size": size}
    # Docs elements have no instruction: their text is the instruction.
    assert got["sample_000.sample_000_elem_000"].instruction == "Login"


def test_the_two_forms_of_one_layout_give_the_same_boxes(tmp_path: Path) -> None:
    code = write_annotations(tmp_path / "c", "code", screens=3)
    docs = write_annotations(tmp_path / "d", "docs", screens=3)
    a = by_id(openadapt.load({"annotations": str(code)}, ctx(tmp_path)))
    b = by_id(openadapt.load({"annotations": str(docs)}, ctx(tmp_path)))
    assert set(a) == set(b) and len(a) == 11
    for sid in a:
        assert_box(a[sid].target.box, b[sid].target.box or Box(0, 0, 0, 0))
        assert a[sid].meta["size"] == b[sid].meta["size"]


def test_load_decodes_no_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_annotations(tmp_path, "code", screens=1)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an image was opened at load time")

    monkeypatch.setattr(Image, "open", refuse)
    assert len(openadapt.load({}, ctx(tmp_path))) == 4  # annotations.json is the default


def test_dataset_name_option_file_field_and_default(tmp_path: Path) -> None:
    code = write_annotations(tmp_path / "c", "code", screens=1, dataset="synthetic")
    docs = write_annotations(tmp_path / "d", "docs", screens=1, dataset="mine")
    assert openadapt.load({"annotations": str(code)}, ctx(tmp_path))[0].meta["dataset"] == "synthetic"
    assert openadapt.load({"annotations": str(docs)}, ctx(tmp_path))[0].meta["dataset"] == "mine"
    named = openadapt.load({"annotations": str(docs), "dataset": "real"}, ctx(tmp_path))
    assert {s.meta["dataset"] for s in named} == {"real"}
    data = json.loads(docs.read_text())
    del data["dataset"]
    docs.write_text(json.dumps(data))
    assert openadapt.load({"annotations": str(docs)}, ctx(tmp_path))[0].meta["dataset"] == "curated"


def test_annotations_are_relative_to_data_path_when_given(tmp_path: Path) -> None:
    write_annotations(tmp_path / "data" / "curated", "docs", screens=1)
    options = {"annotations": "curated/annotations.json"}
    assert len(openadapt.load(options, ctx(tmp_path / "suite", data_path=tmp_path / "data"))) == 4
    with pytest.raises(FileNotFoundError, match=r"curated/annotations\.json.*suite folder"):
        openadapt.load(options, ctx(tmp_path / "suite"))
    with pytest.raises(ValueError, match=r"unknown loader option\(s\) \['file'\]"):
        openadapt.load({"file": "x"}, ctx(tmp_path))


def test_registered_under_both_names() -> None:
    found = registry.resolve(registry.LOADER_GROUP, "openadapt", what="loader", option="x")
    assert found is openadapt.load
    found = registry.resolve(registry.LOADER_GROUP, "recorded_sessions", what="loader", option="x")
    assert found is recorded.load_recorded


def test_pyproject_entry_points_import() -> None:
    """pyproject's paths, read directly: an installed environment may still hold an older copy of them."""
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    loaders = pyproject["project"]["entry-points"][registry.LOADER_GROUP]
    assert registry.import_object(loaders["openadapt"], what="loader") is openadapt.load
    assert registry.import_object(loaders["recorded_sessions"], what="loader") is recorded.load_recorded


# -- bad elements fail alone -----------------------------------------------------------------------
def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def png(path: Path, size: tuple[int, int] = (W, H)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, "white").save(path)


def docs_element(eid: str, bbox: Any, **extra: Any) -> dict[str, Any]:
    return {"id": eid, "bbox": bbox, "text": eid, "type": "button", **extra}


def test_bad_docs_elements_are_invalid_alone(tmp_path: Path) -> None:
    png(tmp_path / "s" / "1.png")
    elements = [
        docs_element("good", [0.1, 0.2, 0.3, 0.4], click_point=[0.2, 0.3]),
        docs_element("wide", [0.1, 0.2, 1.3, 0.4]),
        docs_element("flat", [0.1, 0.2, 0.3, 0.2]),
        {"id": "nobox", "text": "x", "type": "icon"},
        docs_element("far", [0.1, 0.2, 0.3, 0.4], click_point=[1.5, 0.3]),
        docs_element("miss", [0.1, 0.2, 0.3, 0.4], click_point=[0.5, 0.5]),
        docs_element("pixels", [40, 60, 120, 120]),
        docs_element("slop", [0.0, 0.5, 1.0000001, 1.0]),
    ]
    path = write_json(tmp_path / "ann.json", {"version": "1.0", "samples": [
        {"id": "s1", "image": "s/1.png", "width": W, "height": H, "elements": elements}]})
    got = by_id(openadapt.load({"annotations": "ann.json"}, ctx(tmp_path)))
    assert got["s1.good"].invalid is None
    assert_box(got["s1.good"].target.box, Box(0.1, 0.2, 0.3, 0.4))
    assert got["s1.slop"].invalid is None  # float noise at the edge is clipped, not refused
    assert_box(got["s1.slop"].target.box, Box(0.0, 0.5, 1.0, 1.0))
    expected = {
        "wide": "bbox [0.1, 0.2, 1.3, 0.4] is outside 0..1: boxes are normalized; divide pixel values by width/height",
        "flat": "bbox [0.1, 0.2, 0.3, 0.2] has zero or negative area",
        "nobox": "has no 'bbox'; add \"bbox\": [x0, y0, x1, y1] normalized 0..1",
        "far": "click_point [1.5, 0.3] is outside 0..1",
        "miss": "click_point [0.5, 0.5] lies outside the element's bbox [0.1, 0.2, 0.3, 0.4]",
        "pixels": "bbox [40, 60, 120, 120] is outside 0..1",
    }
    for eid, message in expected.items():
        s = got[f"s1.{eid}"]
        assert s.task == "detect" and s.target.box is None
        assert s.invalid is not None and message in s.invalid, s.invalid
        assert s.invalid.startswith(f"{path}: sample 's1', element '{eid}': ")
        assert s.meta["element_type"] == ("icon" if eid == "nobox" else "button")  # still in its slices


def test_bad_code_elements_and_screens_are_invalid_alone(tmp_path: Path) -> None:
    png(tmp_path / "img" / "ok.png")
    path = write_json(tmp_path / "ann.json", {"name": "set", "version": "1.0", "samples": [
        {"id": "ok", "image_path": "img/ok.png", "width": W, "height": H, "elements": [
            {"id": "e1", "bbox": [0.1, 0.1, 0.2, 0.2], "text": "A", "element_type": "text"},
            {"id": "e2", "bbox": [0.1, 0.1, 0.0, 0.2], "text": "B", "element_type": "text"},
            {"id": "e3", "bbox": [0.9, 0.1, 0.2, 0.2], "text": "C", "element_type": "text"},
            {"bbox": [0.1, 0.1, 0.2, 0.2], "element_type": "icon"},
        ]},
        {"id": "gone", "image_path": "img/gone.png", "width": W, "height": H, "elements": [
            {"id": "g1", "bbox": [0.1, 0.1, 0.2, 0.2], "element_type": "icon"},
            {"id": "g2", "bbox": [0.3, 0.1, 0.2, 0.2], "element_type": "icon"}]},
        {"id": "nosize", "image_path": "img/ok.png", "height": H, "elements": [
            {"id": "n1", "bbox": [0.1, 0.1, 0.2, 0.2], "element_type": "icon"}]},
    ]})
    got = by_id(openadapt.load({"annotations": "ann.json"}, ctx(tmp_path)))
    assert set(got) == {"ok.e1", "ok.e2", "ok.e3", "ok.3", "gone.g1", "gone.g2", "nosize.n1"}
    assert got["ok.e1"].invalid is None and got["ok.e1"].meta["dataset"] == "set"
    assert "bbox [0.1, 0.1, 0.0, 0.2] has zero or negative area (w=0, h=0.2)" in (got["ok.e2"].invalid or "")
    assert "ends at x+w=1.1" in (got["ok.e3"].invalid or "")
    assert "element '#3': has no 'id'" in (got["ok.3"].invalid or "")
    gone = str(tmp_path / "img" / "gone.png")
    for eid in ("g1", "g2"):
        reason = got[f"gone.{eid}"].invalid or ""
        assert reason.startswith(f"{path}: sample 'gone', element {eid!r}: image {gone!r}")
        assert "does not exist" in reason and "fix image_path" in reason
    assert "width null is not a positive whole number of pixels" in (got["nosize.n1"].invalid or "")
    assert str(path) in (got["nosize.n1"].invalid or "")


def test_ids_are_made_safe_and_unique(tmp_path: Path) -> None:
    png(tmp_path / "1.png")
    write_json(tmp_path / "ann.json", {"version": "1.0", "samples": [
        {"id": "#login page", "image": "1.png", "width": W, "height": H, "elements": [
            docs_element("a b", [0.1, 0.1, 0.2, 0.2]), docs_element("a_b", [0.3, 0.1, 0.4, 0.2]),
            docs_element("a b", [0.5, 0.1, 0.6, 0.2])]}]})
    samples = openadapt.load({"annotations": "ann.json"}, ctx(tmp_path))
    assert [s.id for s in samples] == ["login_page.a_b", "login_page.a_b-2", "login_page.a_b-3"]
    check_sample_ids(samples, source="test")


# -- whole-file refusals ---------------------------------------------------------------------------
def test_a_file_mixing_forms_is_refused_naming_the_sample(tmp_path: Path) -> None:
    inside = write_json(tmp_path / "a.json", {"version": "1.0", "samples": [
        {"id": "s7", "image_path": "1.png", "width": W, "height": H,
         "elements": [docs_element("e", [0.1, 0.1, 0.2, 0.2], click_point=[0.15, 0.15])]}]})
    with pytest.raises(ValueError, match=r"a\.json: sample 's7' mixes the two annotation forms") as info:
        openadapt.load({"annotations": str(inside)}, ctx(tmp_path))
    assert "['image_path']" in str(info.value) and "'type', 'click_point'" in str(info.value)

    across = write_json(tmp_path / "b.json", {"version": "1.0", "samples": [
        {"id": "first", "image_path": "1.png", "width": W, "height": H,
         "elements": [{"id": "e", "bbox": [0.1, 0.1, 0.1, 0.1], "element_type": "icon"}]},
        {"id": "second", "image": "2.png", "width": W, "height": H, "elements": []}]})
    with pytest.raises(ValueError, match=r"b\.json: sample 'second' is in the docs form \(image\) but "
                                         r"sample 'first' is in the code form"):
        openadapt.load({"annotations": str(across)}, ctx(tmp_path))


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    (json.dumps([1, 2]), "expected a JSON object with a 'samples' list"),
    (json.dumps({"version": "1.0", "samples": {}}), "expected a 'samples' list"),
    (json.dumps({"version": "2.0", "samples": []}), "unknown annotation version \"2.0\""),
    (json.dumps({"samples": []}), "unknown annotation version null"),
])
def test_file_level_problems_raise_naming_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "ann.json"
    path.write_text(content)
    with pytest.raises(ValueError) as info:
        openadapt.load({"annotations": "ann.json"}, ctx(tmp_path))
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


# -- recorded sessions -----------------------------------------------------------------------------
def test_recorded_session_pixels_to_normalized(tmp_path: Path) -> None:
    write_recorded(tmp_path / "session", frames=2, missing_box=True)
    samples = recorded.load_recorded({"session": "session"}, ctx(tmp_path))
    assert len(samples) == 4 + 3
    check_sample_ids(samples, source="test")
    got = by_id(samples)
    login = got["frame_0001.0"]  # click (100, 60) on the 120x40 button at (40, 40), 400x300 frame
    assert login.task == "detect" and login.invalid is None
    assert login.click == pytest.approx(Point(100 / 400, 60 / 300))
    assert_box(login.target.box, Box(40 / 400, 40 / 300, 160 / 400, 80 / 300))
    assert login.instruction == "Login"
    assert dict(login.meta) == {"dataset": "recorded", "element_type": "button", "size": "gt100"}
    assert got["frame_0001.1"].meta["size"] == "lt32"
    last = got["frame_0002.2"]  # the line whose bbox a person has not drawn yet
    assert last.invalid is not None and last.target.box is None
    assert "clicks.jsonl:7" in last.invalid and "the ground-truth box is missing" in last.invalid
    assert "python -m pytest_uiground annotate" in last.invalid
    assert all(s.invalid is None for s in samples if s is not last)


def test_recorded_bad_lines_fail_alone(tmp_path: Path) -> None:
    png(tmp_path / "f.png", (200, 100))
    lines = [
        {"image": "f.png", "click_xy": [50, 50], "label": "ok", "bbox": [40, 40, 60, 60], "type": "icon"},
        {"image": "f.png", "click_xy": [150, 50], "label": "outside", "bbox": [40, 40, 60, 60]},
        {"image": "f.png", "click_xy": [50, 50], "bbox": [40, 40, 260, 60]},
        {"image": "nope.png", "click_xy": [50, 50], "bbox": [40, 40, 60, 60]},
        {"image": "f.png", "bbox": [40, 40, 60, 60]},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n\n{broken\n"
    (tmp_path / "log.jsonl").write_text(text)
    got = by_id(recorded.load_recorded({"clicks": "log.jsonl", "dataset": "sess"}, ctx(tmp_path)))
    assert list(got) == ["f.0", "f.1", "f.2", "nope.0", "f.3", "line7.0"]
    ok = got["f.0"]
    assert ok.invalid is None and dict(ok.meta) == {"dataset": "sess", "element_type": "icon", "size": "lt32"}
    assert_box(ok.target.box, Box(0.2, 0.4, 0.3, 0.6))
    assert ok.click == pytest.approx(Point(0.25, 0.5))
    assert "log.jsonl:2" in (got["f.1"].invalid or "")
    assert "click_xy [150, 50] lies outside bbox [40, 40, 60, 60]" in (got["f.1"].invalid or "")
    assert "bbox [40, 40, 260, 60] lies outside the 200x100 image" in (got["f.2"].invalid or "")
    assert "nope.png" in (got["nope.0"].invalid or "") and "does not exist" in (got["nope.0"].invalid or "")
    assert "has no 'click_xy'" in (got["f.3"].invalid or "")
    assert "log.jsonl:7" in (got["line7.0"].invalid or "") and "not valid JSON" in (got["line7.0"].invalid or "")
    assert got["f.1"].instruction == "outside" and got["f.2"].instruction == "the clicked element"


def test_recorded_missing_log_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"sess/clicks\.jsonl.*not found"):
        recorded.load_recorded({"session": "sess"}, ctx(tmp_path))
