"""The offline ``ocr`` model: the pure matcher, the per-image OCR cache, and real OCR on
generated screens (the end-to-end check that the default model is a usable baseline)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.benchmarks.synthetic import loader as synthetic
from pytest_uiground.models.base import Model, ModelOptions
from pytest_uiground.models.offline.ocr import (
    OcrGrounder,
    OcrItem,
    create,
    match_instruction,
    normalize_text,
    polygon_to_box,
)
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import LoaderContext

REPO = Path(__file__).resolve().parents[2]
CTX = LoaderContext(suite_name="ocr-test", suite_dir=REPO)


DEFAULT_BOX = Box(0.1, 0.1, 0.2, 0.2)


def item(text: str, score: float = 0.99, box: Box = DEFAULT_BOX) -> OcrItem:
    return OcrItem(text, score, box)


SAVE = item("Save", box=Box(0.1, 0.1, 0.2, 0.15))
SAVE_AS = item("Save as", box=Box(0.3, 0.1, 0.45, 0.15))
EMAIL = item("Email address", box=Box(0.1, 0.5, 0.5, 0.55))
REMEMBER = item("Remember me", box=Box(0.1, 0.7, 0.3, 0.75))
ITEMS = [SAVE, SAVE_AS, EMAIL, REMEMBER, item("Cancel"), item("Select"), item("Button")]


# ---------------------------------------------------------------------------- matcher


def test_import_is_cheap() -> None:
    code = (
        "import sys, pytest_uiground.models.offline.ocr\n"
        "heavy = {'rapidocr_onnxruntime', 'torch', 'transformers', 'datasets'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_normalize_text() -> None:
    assert normalize_text("  'Auto-Save'  NOW!! ") == "auto save now"


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("Click the 'Save' button", SAVE),
        ('Click "Save as"', SAVE_AS),
        ("Tap “Email address”", EMAIL),
        ("Press the Save button", SAVE),
        ("Press the Save as button", SAVE_AS),
        ("Select the Remember me checkbox", REMEMBER),
        ("Click the 'Email address' input field", EMAIL),
    ],
)
def test_matches_the_named_text(instruction: str, expected: OcrItem) -> None:
    assert match_instruction(instruction, ITEMS) == expected


def test_quoted_text_wins_over_other_words() -> None:
    """The quote says what to click; 'Cancel' elsewhere in the sentence must not win."""
    assert match_instruction("Instead of Cancel, click 'Save'", ITEMS) == SAVE


def test_apostrophe_is_not_a_quote() -> None:
    dont = item("Don't save")
    assert match_instruction("Click Don't save", [dont, SAVE_AS]) == dont


def test_one_ocr_typo_still_matches() -> None:
    typo = item("Emall address", box=Box(0.5, 0.5, 0.9, 0.55))
    assert match_instruction("Tap the field with placeholder 'Email address'", [typo, SAVE]) == typo
    assert match_instruction("Click the Email address text box", [typo, SAVE]) == typo


def test_generic_words_alone_never_match() -> None:
    generic = [item("Click"), item("Select"), item("Button"), item("the"), item("Checkbox")]
    assert match_instruction("Click the select button", generic) is None
    assert match_instruction("Select the checkbox", ITEMS) is None


def test_short_texts_need_a_near_exact_read() -> None:
    """'puas' is 0.75 similar to 'plus' but is another word (a misread icon)."""
    assert match_instruction("Click the add button (plus icon)", [item("puas")]) is None
    assert match_instruction("Click the close button (X icon)", [item("X"), item("x")]) is None
    assert match_instruction("Click 'Save'", [item("Sane")]) is None
    assert match_instruction("Click 'Cancel'", [item("Cancal")]) is not None


def test_ties_go_to_the_longer_text_then_the_higher_confidence() -> None:
    low, high = item("Send", 0.6), item("Send", 0.9)
    assert match_instruction("Tap Send", [low, high]) is high
    assert match_instruction("Tap Save as", [SAVE, SAVE_AS]) is SAVE_AS
    assert match_instruction("Tap Save", [SAVE_AS, SAVE]) is SAVE


def test_no_match_and_empty_inputs() -> None:
    assert match_instruction("Click 'Delete'", ITEMS) is None
    assert match_instruction("Click 'Save'", []) is None
    assert match_instruction("", ITEMS) is None


def test_polygon_to_box_is_axis_aligned_and_clipped() -> None:
    box = polygon_to_box([[110, 20], [210, 25], [205, 45], [105, 40]], 400, 200)
    assert box == Box(105 / 400, 0.1, 210 / 400, 0.225)
    assert polygon_to_box([[-5, -5], [500, -5], [500, 300], [-5, 300]], 400, 200) == Box(0, 0, 1, 1)


# -------------------------------------------------------------------- model (fake OCR)


class FakeEngine:
    """Stands in for RapidOCR: returns fixed lines and counts calls."""

    def __init__(self, lines: list[list[Any]]) -> None:
        self.lines = lines
        self.calls = 0

    def __call__(self, img_content: Any) -> tuple[Any, Any]:
        self.calls += 1
        return (self.lines or None), [0.0, 0.0, 0.0]


def _image_sample(sample_id: str, instruction: str, color: tuple[int, int, int] = (255, 255, 255)) -> Sample:
    def source() -> Any:
        from PIL import Image

        return Image.new("RGB", (400, 200), color)

    return Sample(sample_id, ImageRef.from_source(sample_id, source), instruction, "point", Target(box=None))


def test_predict_with_fake_engine_caches_per_image_content() -> None:
    engine = FakeEngine([[[[40, 20], [120, 20], [120, 40], [40, 40]], "Save", 0.98]])
    model = OcrGrounder(engine=engine)
    assert isinstance(model, Model)
    white = [_image_sample(f"w{i}", "Click 'Save'") for i in range(3)]
    preds = model.predict([*white, _image_sample("m", "Click 'Delete'")])
    assert engine.calls == 1  # four samples, one distinct image
    assert preds[0].point == pytest.approx(Point(0.2, 0.15))
    assert preds[0].box == pytest.approx(Box(0.1, 0.1, 0.3, 0.2))
    assert preds[0].raw == "ocr:'Save'@(0.20,0.15)"
    assert preds[3].point is None and preds[3].raw == "ocr:no match" and not preds[3].format_error
    model.predict([_image_sample("g", "Click 'Save'", (0, 128, 0))])
    assert engine.calls == 2
    model.clear_cache()
    model.predict(white[:1])
    assert engine.calls == 3


def test_cache_is_bounded() -> None:
    engine = FakeEngine([])
    model = OcrGrounder(engine=engine, cache_size=2)
    colors = [(0, 0, 0), (1, 1, 1), (2, 2, 2), (0, 0, 0)]
    model.predict([_image_sample(f"s{i}", "Click 'Save'", c) for i, c in enumerate(colors)])
    assert engine.calls == 4  # the first image was evicted before it came back
    assert model.predict([_image_sample("x", "Click 'Save'")])[0].point is None


def test_unsupported_task_and_broken_image_fail_only_their_sample() -> None:
    model = OcrGrounder(engine=FakeEngine([]))
    option = Sample("o", ImageRef.from_source("o", lambda: b""), "Which one? A or B", "option", Target())
    junk = ImageRef.from_source("b", lambda: b"not an image")
    broken = Sample("b", junk, "Click 'Save'", "point", Target())
    ok = _image_sample("ok", "Click 'Save'")
    verdict = Sample("v", ok.image, "The 'Save' button is shown", "verdict", Target(verdict="passed"))
    preds = model.predict([option, broken, ok, verdict])
    assert preds[0].error and "'point', 'verdict' and 'detect'" in preds[0].error
    assert preds[1].error and "'b'" in preds[1].error
    assert preds[2].error is None
    # a verdict task is grounded like a point task, with no verdict (scored wrong, not an error)
    assert preds[3].error is None and preds[3].verdict is None


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="device 'cuda'"):
        OcrGrounder(ModelOptions(name="ocr", device="cuda"), engine=FakeEngine([]))
    OcrGrounder(ModelOptions(name="ocr", device="auto"), engine=FakeEngine([]))  # the CLI default
    with pytest.raises(ValueError, match="path"):
        OcrGrounder(ModelOptions(name="ocr", path="/x"), engine=FakeEngine([]))


def test_fingerprint_names_engine_and_matcher() -> None:
    fp = OcrGrounder(engine=FakeEngine([])).fingerprint()
    assert fp["model"] == "ocr" and fp["engine"] == "rapidocr_onnxruntime"
    assert fp["matcher"]["threshold"] == 0.75 and "engine_version" in fp


# ---------------------------------------------------------- real OCR on generated UIs


class CountingEngine:
    """Wraps the real engine to count OCR runs."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.calls = 0

    def __call__(self, img_content: Any) -> tuple[Any, Any]:
        self.calls += 1
        result: tuple[Any, Any] = self.engine(img_content)
        return result


@pytest.fixture(scope="module")
def real_model() -> OcrGrounder:
    """The model as the plugin builds it (factory, default engine settings), built once."""
    pytest.importorskip("rapidocr_onnxruntime", reason="the core install's OCR model [core] is not installed")
    return create(ModelOptions(name="ocr"))


def test_factory_builds_the_real_engine(real_model: OcrGrounder) -> None:
    assert real_model.name == "ocr"
    assert real_model.fingerprint()["engine_version"] != "not installed"


@pytest.mark.slow
def test_real_ocr_hits_text_targets_on_easy_screens(
    real_model: OcrGrounder, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = CountingEngine(real_model._engine)
    monkeypatch.setattr(real_model, "_engine", counter)
    # Screens 0, 3 and 6 are easy (light, dark, light); 20 targets = every element.
    samples = [
        s
        for s in synthetic.load({"screens": 7, "targets_per_screen": 20}, CTX)
        if s.meta["difficulty"] == "easy"
    ]
    screens = {s.image.key for s in samples}
    assert len(screens) == 3
    preds = real_model.predict(samples)
    assert counter.calls == len(screens)  # once per image, not once per sample

    text = [(s, p) for s, p in zip(samples, preds, strict=True) if s.meta["element_type"] != "icon"]
    icons = [p for s, p in zip(samples, preds, strict=True) if s.meta["element_type"] == "icon"]
    hits = sum(
        p.point is not None and s.target.box is not None and s.target.box.contains(p.point) for s, p in text
    )
    assert len(text) >= 8 and icons
    assert hits / len(text) >= 0.7, [(s.instruction, p.raw) for s, p in text]
    assert all(p.point is None for p in icons)
