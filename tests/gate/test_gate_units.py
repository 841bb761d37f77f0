"""The gate cannot be fooled: the rules that need no pytest run, each stated in its test's
docstring."""

from __future__ import annotations

import gc
import json
import struct
import warnings
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_uiground.benchmarks.screenspot import loader as screenspot
from pytest_uiground.gate.baseline import Baseline, BaselineEntry
from pytest_uiground.gate.metrics import compute
from pytest_uiground.models.base import ModelAdapter, ModelLoadError, ModelOptions
from pytest_uiground.record import image as image_mod
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageError, ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.result import SampleResult
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.record.score import Score
from pytest_uiground.report import summary as summary_mod
from pytest_uiground.report.summary import build as summary
from pytest_uiground.run.prediction_cache import PredictionCache
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config
from pytest_uiground.suite.loading import LoaderContext, SuiteLoadError, load_suite

SUITE = """
[suite]
name = "{name}"
version = "1"

[loader]
name = "synthetic"

[loader.options]
seed = 3
screens = 2
targets_per_screen = 3

[[metrics]]
name = "acc"
tasks = ["point"]
{metric}

[baseline]
{baseline}
"""


def suite_file(tmp_path: Path, *, name: str = "mini", metric: str = "", baseline: str = "") -> Path:
    path = tmp_path / name.replace("/", "_").replace(".", "_") / "suite.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SUITE.format(name=name, metric=metric, baseline=baseline))
    return path


# -- break 9: suite validation ------------------------------------------------------------------
@pytest.mark.parametrize(("metric", "baseline", "expected"), [
    ("floor = 250", "", "metrics[0].floor: must be a number between 0 and 100, got 250"),
    ("floor = nan", "", "metrics[0].floor: must be a number between 0 and 100, got nan"),
    ("tolerance = -1", "", "metrics[0].tolerance: must be a number >= 0 (and finite), got -1"),
    ("", "tolerance = nan", "baseline.tolerance: must be a number >= 0 (and finite), got nan"),
    ("", "slice_tolerance = -0.5", "baseline.slice_tolerance: must be a number >= 0"),
    ('slices = ["difficulty"]\nslice_floors = {"difficulty=hard" = 101}', "", "'difficulty=hard': must be a number"),
    ('slices = ["difficulty"]\nslice_floors = {"dificulty=hard" = 10}', "",
     "'dificulty=hard' is not a slice of this metric: write 'KEY=VALUE' with KEY one of its slices (difficulty)"),
])
def test_suite_fields_are_range_checked(tmp_path: Path, metric: str, baseline: str, expected: str) -> None:
    with pytest.raises(SuiteConfigError) as err:
        load_suite_config(suite_file(tmp_path, metric=metric, baseline=baseline))
    assert expected in str(err.value)


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", ".hidden", "x..y", ""])
def test_suite_name_must_be_safe(tmp_path: Path, name: str) -> None:
    with pytest.raises(SuiteConfigError, match=r"suite\.name: .* is not a safe name"):
        load_suite_config(suite_file(tmp_path, name=name))


@pytest.mark.parametrize(("metric", "expected"), [
    ('slices = ["dificulty"]', "metrics[0].slices: no sample has the key 'dificulty'; the samples' keys: "),
    ('where = {level = "hard"}', "metrics[0].where: no sample has the key 'level'; the samples' keys: "),
    ('macro_over = "levl"\naverage = "macro"', "metrics[0].macro_over: no sample has the key 'levl'"),
])
def test_unknown_metadata_keys_are_errors_naming_the_known_ones(tmp_path: Path, metric: str, expected: str) -> None:
    with pytest.raises(SuiteLoadError) as err:
        load_suite(suite_file(tmp_path, metric=metric))
    assert expected in str(err.value)
    if "keys:" in expected:
        assert "difficulty" in str(err.value).split("keys:")[1]


# -- break 8: an empty dataset ------------------------------------------------------------------
def test_empty_dataset_fails_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "emptyloader.py").write_text("def load(options, ctx):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = suite_file(tmp_path)
    path.write_text(path.read_text().replace('name = "synthetic"', 'name = "emptyloader:load"'))
    with pytest.raises(SuiteLoadError, match="found no samples; an empty suite would pass while testing nothing"):
        load_suite(path)


def test_provenance_mismatch_names_the_difference(tmp_path: Path) -> None:
    from pytest_uiground.gate.baseline import growth, growth_text, provenance_mismatch

    base = Baseline(tmp_path / "samples.json", {"a": BaselineEntry(True, 100.0), "b": BaselineEntry(False, 0.0)},
                    {"suite_version": "1", "dataset_fingerprint": "f1", "dataset_revision": "r1",
                     "unrecorded": ["c"]})
    same = {"suite_version": "1", "dataset_fingerprint": "f1", "dataset_revision": "r1"}
    assert provenance_mismatch(base, same, {"a", "b", "c"}) is None
    text = provenance_mismatch(base, {**same, "dataset_revision": "r2"}, {"a", "b", "d"})
    assert text is not None
    assert "dataset revision 'r1' in the baseline, 'r2' now" in text
    # a grown or shrunk sample set is no mismatch (issue 30): new samples are run, not gated; removed ones drop out
    assert "added" not in text and "removed" not in text
    assert provenance_mismatch(base, same, {"a", "b", "d"}) is None
    assert growth(base, {"a", "b", "d"}) == (("d",), ("c",))
    assert growth_text(("d",), ("c",)) == ("1 new sample (not in the baseline: run, not gated; --snapshot-update "
                                           "--uiground-only-new adds them): d; 1 removed (dropped from the "
                                           "comparison): c")
    only_options = provenance_mismatch(base, {**same, "dataset_fingerprint": "f2"}, {"a", "b", "c"})
    assert only_options is not None and "dataset fingerprint 'f1' in the baseline, 'f2' now" in only_options


# -- break 7: hostile data ----------------------------------------------------------------------
def png_header(path: Path, width: int, height: int) -> None:
    """A small PNG file whose header declares ``width`` x ``height`` (a decompression bomb)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
                     + chunk(b"IEND", b""))


def v2_dataset(tmp_path: Path, records: list[dict[str, Any]]) -> LoaderContext:
    from PIL import Image

    root = tmp_path / "ScreenSpot-v2"
    (root / "images").mkdir(parents=True)
    Image.new("RGB", (100, 50)).save(root / "images" / "ok.png")
    for split in ("mobile", "desktop", "web"):
        (root / f"screenspot_{split}_v2.json").write_text(json.dumps(records if split == "mobile" else []))
    return LoaderContext(suite_name="ss", suite_dir=tmp_path, data_path=root)


def record(name: str) -> dict[str, Any]:
    return {"img_filename": name, "instruction": "click", "bbox": [1, 1, 5, 5], "data_type": "text",
            "data_source": "ios"}


def test_image_paths_outside_the_dataset_are_invalid_samples(tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    png_header(secret, 10, 10)
    ctx = v2_dataset(tmp_path, [record("ok.png"), record("../../secret.png"), record(str(secret)),
                                record("sub/../ok.png")])
    samples = screenspot.load_v2({"splits": ["mobile"]}, ctx)
    ok, up, absolute, normal = samples
    for s, name in ((up, "../../secret.png"), (absolute, str(secret))):
        assert s.invalid is not None and "record" in s.invalid and "img_filename" in s.invalid
        assert repr(name) in s.invalid and s.image.path is None  # never opened, never sent
    assert ok.invalid is None and normal.invalid is None  # ".." that stays inside is fine


@pytest.mark.parametrize("size", [(100_000, 100_000), (12_000, 12_000)])  # a bomb; a 144-MP image
def test_huge_image_headers_are_invalid_samples_not_collection_errors(tmp_path: Path,
                                                                      size: tuple[int, int]) -> None:
    ctx = v2_dataset(tmp_path, [record("ok.png"), record("big.png")])
    png_header(ctx.data_path / "images" / "big.png", *size)  # type: ignore[operator]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Pillow's DecompressionBombWarning must not escape
        ok, big = screenspot.load_v2({"splits": ["mobile"]}, ctx)
    assert ok.invalid is None
    assert big.invalid is not None and "--uiground-max-pixels" in big.invalid and "big.png" in big.invalid
    with pytest.raises(ImageError, match="max-pixels"):
        ImageRef.from_path(ctx.data_path / "images" / "big.png").load()  # type: ignore[operator]


def test_pixel_limit_is_configurable(tmp_path: Path) -> None:
    from PIL import Image

    path = tmp_path / "wide.png"
    Image.new("RGB", (300, 200)).save(path)
    try:
        image_mod.set_pixel_limit(50_000)
        with pytest.raises(ImageError, match="300x200 = 60000 pixels, over the limit of 50000"):
            ImageRef.from_path(path).load()
        image_mod.set_pixel_limit(60_000)
        assert ImageRef.from_path(path).load().size == (300, 200)
    finally:
        image_mod.set_pixel_limit(89_478_485)


def test_truncated_png_does_not_leak_its_file_handle(tmp_path: Path) -> None:
    """Reading a truncated PNG fails and closes its file: no ResourceWarning (an error under
    filterwarnings = error)."""
    from PIL import Image

    path = tmp_path / "cut.png"
    Image.effect_noise((64, 64), 50).convert("RGB").save(path)
    path.write_bytes(path.read_bytes()[:300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ImageError, match="could not be decoded"):
            ImageRef.from_path(path).load()
        gc.collect()


# -- breaks 2 and 5: the prediction cache -------------------------------------------------------
class Keyed(ModelAdapter):
    name = "keyed"

    def cache_key(self, sample: Sample) -> dict[str, Any]:
        return {"sample": sample.id, "image": sample.image.key}

    def fingerprint(self) -> dict[str, Any]:
        return {"model": "keyed"}


def test_cache_key_holds_the_image_content(tmp_path: Path) -> None:
    """The prediction cache key holds the image's content: a screenshot replaced under the same name is a
    miss, never the stale prediction."""
    from PIL import Image

    from pytest_uiground.run.predictors import cache_parts

    path = tmp_path / "screen.png"
    Image.new("RGB", (20, 20), (255, 255, 255)).save(path)
    sample = Sample(id="s", image=ImageRef.from_path(path), instruction="x", task="point",
                    target=Target(box=Box(0, 0, 1, 1)))
    cache = PredictionCache(tmp_path / "cache", {"model": "keyed"})
    parts = cache_parts(Keyed(), sample)
    assert parts is not None
    key = cache.key(parts)
    cache.put(key, Prediction(raw="white"))
    assert cache.key(cache_parts(Keyed(), sample) or {}) == key  # unchanged file: a hit
    Image.new("RGB", (20, 20), (0, 0, 0)).save(path)
    new_key = cache.key(cache_parts(Keyed(), sample) or {})
    assert new_key != key and cache.get(new_key).value is None


def test_ocr_model_is_cacheable() -> None:
    """The ocr model declares a cache key (instruction, task, image content), so it is cached like every
    adapter."""
    from pytest_uiground.models.offline.ocr import OcrGrounder
    from pytest_uiground.run.predictors import cache_parts

    model = OcrGrounder(engine=lambda img: ([], None))
    sample = Sample(id="s", image=ImageRef.from_source("k", lambda: b""), instruction="Save", task="point",
                    target=Target(box=Box(0, 0, 1, 1)))
    key = model.cache_key(sample)
    assert key["instruction"] == "Save" and key["task"] == "point"
    assert cache_parts(model, sample) == {**key, "image_content": "key:k"}


# -- break 11: output size, NaN, replay lines, device -------------------------------------------
def test_raw_output_is_capped_and_the_cap_noted() -> None:
    from pytest_uiground.run.worker import cap_output

    text = "x" * 5_000_000
    pred, score = cap_output(Prediction(raw=text, answer=text), Score(0.0, False), 1000)
    result = SampleResult(suite="s", id="a", task="vqa", meta={}, score=score, prediction=pred)
    line = json.dumps(result.to_json())
    assert len(line) < 5000
    assert result.score.notes["output_cut"] == {"cap_chars": 1000, "raw_chars": 5_000_000, "answer_chars": 5_000_000}


def test_summary_never_holds_nan(tmp_path: Path) -> None:
    """summary.json holds null, never NaN, for a metric with no sample (kept tested though it held before)."""
    config = load_suite_config(suite_file(tmp_path, metric='where = {difficulty = "easy"}'))
    metric = compute(config.metrics[0], [])  # no sample: the value is NaN
    doc = summary("mini", None, [], [metric], [], None, {"n": float("nan")} and {})
    text = summary_mod.dumps(doc.to_json())
    assert "NaN" not in text
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in summary.json"))["metrics"]["acc"][
        "value"] is None


@pytest.mark.parametrize(("content", "expected"), [
    (b'{"sample_id": "a", "output": "x"}\n\xff\xfe bad bytes\n', ":2: not UTF-8 text"),
    (b'{"sample_id": "a", "output": "x"}\n{"sample_id": "b", "output": 3}\n', ":2: not a replay record ('output'"),
    (b'{"sample_id": "a"}\n', ":1: not a replay record (missing field 'output')"),
    (b'{broken\n', ":1: not a replay record"),
    (b'[1, 2]\n', ":1: not a replay record (expected a JSON object, got list)"),
])
def test_bad_replay_lines_are_errors_naming_file_and_line(tmp_path: Path, content: bytes, expected: str) -> None:
    from pytest_uiground.models.offline.replay import ReplayModel

    path = tmp_path / "preds.jsonl"
    path.write_bytes(content)
    with pytest.raises(ModelLoadError) as err:
        ReplayModel(path, "uground")
    assert f"{path}{expected}" in str(err.value)


def test_missing_gpu_is_named_once() -> None:
    from pytest_uiground.models.hf.device import device_problem

    assert device_problem("cuda:7", lambda: 2) == (
        "--uiground-device cuda:7: 2 CUDA device(s) visible (cuda:0..cuda:1); pick one of those, 'auto' (one GPU "
        "per xdist worker, CPU without a GPU) or 'cpu'")
    assert "no CUDA device is visible" in (device_problem("cuda:0", lambda: 0) or "")
    assert device_problem("cuda:1", lambda: 2) is None
    assert device_problem("cpu", lambda: pytest.fail("must not look for GPUs")) is None


# -- reproducibility ----------------------------------------------------------------------------
def test_remote_code_needs_a_pinned_revision_or_the_flag(tmp_path: Path) -> None:
    from pytest_uiground.models.hf.loading import pretrained_kwargs

    opts = ModelOptions(name="molmo")
    with pytest.raises(ModelLoadError, match="pin it with --uiground-model-revision"):
        pretrained_kwargs(opts, "org/remote-model", remote_code=True)
    pinned = ModelOptions(name="molmo", revision="0123abc")
    assert pretrained_kwargs(pinned, "org/remote-model", remote_code=True) == {
        "trust_remote_code": True, "revision": "0123abc"}
    trusted = ModelOptions(name="molmo", trust_remote_code=True)
    assert pretrained_kwargs(trusted, "org/remote-model", remote_code=True) == {"trust_remote_code": True}
    assert pretrained_kwargs(opts, str(tmp_path), remote_code=True) == {"trust_remote_code": True}  # local code
    assert pretrained_kwargs(opts, "org/native", remote_code=False) == {"trust_remote_code": False}


def test_secret_repr_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_uiground.models.openai.settings import api_key_from_env

    monkeypatch.setenv("GATE_KEY", "sk-very-secret-value")
    key = api_key_from_env("GATE_KEY", who="x", option="y")
    assert "sk-very" not in repr(key) + str(key) + f"{key}" + repr([key])
    assert key.reveal() == "sk-very-secret-value"
    assert key.redact("echo sk-very-secret-value") == "echo [REDACTED]"


def test_annotate_skips_a_bomb_instead_of_crashing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In annotate, an image whose header declares too many pixels (a decompression bomb) is skipped with a
    message instead of stopping the session."""
    from pytest_uiground.screens.review import read_image

    png_header(tmp_path / "bomb.png", 100_000, 100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_image(tmp_path / "bomb.png") is None
    assert "skipped" in capsys.readouterr().err


def test_openadapt_image_paths_stay_inside_the_dataset(tmp_path: Path) -> None:
    from pytest_uiground.benchmarks.openadapt import recorded

    (tmp_path / "data").mkdir()
    png_header(tmp_path / "outside.png", 10, 10)
    session = tmp_path / "data" / "sess"
    session.mkdir()
    line = {"image": "../../outside.png", "click_xy": [5, 5], "bbox": [1, 1, 9, 9], "label": "x"}
    (session / "clicks.jsonl").write_text(json.dumps(line) + "\n")
    samples = recorded.load_recorded({"clicks": "sess/clicks.jsonl", "dataset": "sess"},
                                     LoaderContext("t", tmp_path, data_path=tmp_path / "data"))
    assert len(samples) == 1 and samples[0].image.path is None
    assert "points outside the dataset folder" in (samples[0].invalid or "")
