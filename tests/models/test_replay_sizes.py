"""Replay at the speed of the file: sizes without decoding, dataset ids, 0..1 ScreenSpot-Pro answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import header_only_png

from pytest_uiground.benchmarks.screenspot import loader as screenspot
from pytest_uiground.benchmarks.screenspot.lookalike import write_screenspot_pro
from pytest_uiground.benchmarks.screenspot.parsers import parse_pro_normalized
from pytest_uiground.models import families
from pytest_uiground.models.offline.replay import ReplayModel
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageError, ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.loading import LoaderContext

CTX = families.ParseContext(image_size=(3840, 2160))



def sample(sid: str, image: ImageRef, **meta: str) -> Sample:
    return Sample(id=sid, image=image, instruction="click", task="point", target=Target(box=Box(0, 0, 0.5, 0.5)),
                  meta=meta)


def replay(tmp_path: Path, records: dict[str, str], parser: str = "uground") -> ReplayModel:
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps({"sample_id": k, "output": v}) + "\n" for k, v in records.items()))
    return ReplayModel(path, parser)


def test_dimensions_come_from_the_annotation_or_the_header_never_the_pixels(tmp_path: Path) -> None:
    png = header_only_png(tmp_path / "a.png", (3840, 2160))
    with pytest.raises(ImageError, match="could not be decoded"):
        ImageRef.from_path(png).load()  # the pixels really are missing
    assert ImageRef.from_path(png).dimensions() == (3840, 2160)
    assert ImageRef.from_path(tmp_path / "gone.png", size=(10, 20)).dimensions() == (10, 20)  # no file opened
    assert ImageRef.from_source("k", lambda: png.read_bytes()).dimensions() == (3840, 2160)
    with pytest.raises(ImageError, match=r"gone\.png.*does not exist"):
        ImageRef.from_path(tmp_path / "gone.png").dimensions()
    (tmp_path / "junk.png").write_bytes(b"not an image")
    with pytest.raises(ImageError, match=r"junk\.png.*could not be read"):
        ImageRef.from_path(tmp_path / "junk.png").dimensions()


def test_replay_scores_a_screen_it_cannot_decode(tmp_path: Path) -> None:
    """A replay needs only the size: a header-only screenshot replays; a missing one fails alone."""
    png = header_only_png(tmp_path / "a.png", (1000, 500))
    model = replay(tmp_path, {"s1": "(250,100)", "s2": "(1,1)"}, parser="qwen-vl")
    model.records["s1"]["model_input_size"] = [1000, 500]
    model.records["s2"]["model_input_size"] = [1000, 500]
    got = model.predict([sample("s1", ImageRef.from_path(png)), sample("s2", ImageRef.from_path(tmp_path / "x.png"))])
    assert got[0].error is None and got[0].point is not None
    assert (got[0].point.x, got[0].point.y) == pytest.approx((0.25, 0.2))
    assert got[1].point is None and "x.png" in (got[1].error or "") and "does not exist" in (got[1].error or "")


def test_records_keyed_by_the_datasets_own_id(tmp_path: Path) -> None:
    written = write_screenspot_pro(tmp_path, per_app=2)
    samples = screenspot.load_pro({}, LoaderContext("screenspot_pro", tmp_path, tmp_path))
    first = samples[0]
    own = first.meta["dataset_id"]
    assert first.id == f"sspro-{own}" and first.image.size == written.samples[0].image_size  # from img_size
    got = replay(tmp_path, {own: "(500,500)"}).predict([first])
    assert got[0].error is None and got[0].point is not None


def test_a_missing_record_names_the_missing_prefix(tmp_path: Path) -> None:
    img = ImageRef.from_path(tmp_path / "a.png", size=(100, 100))
    model = replay(tmp_path, {"vscode_macos_0": "(1,1)"})
    (got,) = model.predict([sample("sspro-vscode_macos_0", img)])
    assert got.error is not None and got.error.startswith("missing: no record for sample 'sspro-vscode_macos_0'")
    assert "the file has 'vscode_macos_0', which is this id without the prefix 'sspro-'" in got.error
    (other,) = model.predict([sample("sspro-word_macos_1", img, dataset_id="word_macos_1")])
    assert other.error is not None and "nor under the dataset's own id: dataset_id 'word_macos_1'" in other.error
    assert "prefix" not in other.error


@pytest.mark.parametrize("text,xy", [
    ("pyautogui.click(x=0.1175, y=0.0725)", (0.1175, 0.0725)),  # Aguvis-7B's published output
    ("pyautogui.click(0.5, 0.25)", (0.5, 0.25)),
    ("Thought: the menu.\npyautogui.click(x=0.2, y=0.3)\npyautogui.click(x=0.9, y=0.9)", (0.2, 0.3)),  # first wins
    ("pyautogui.click(x=1.0125, y=0.5)", (1.0125, 0.5)),  # beyond the image: a point, scored a miss
])
def test_normalized_reads_aguvis_clicks(text: str, xy: tuple[float, float]) -> None:
    got = parse_pro_normalized(text, "point", CTX)
    assert got.point is not None and (got.point.x, got.point.y) == pytest.approx(xy) and not got.format_error


@pytest.mark.parametrize("text", ["pyautogui.click(x=1, y=0)", "click(0.1, 0.2)", ""])
def test_normalized_unreadable_is_a_format_error_with_its_reason(text: str) -> None:
    got = parse_pro_normalized(text, "point", CTX)
    assert got.point is None and got.format_error and got.note
