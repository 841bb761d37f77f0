"""Native model adapters on tiny random models of the real classes, built offline.

Each family runs the real path: ``from_pretrained`` → processor → ``generate`` →
decode → the family's parser, inside a pytest run of a suite, with and without
xdist, and batched outputs must equal batch-1 outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Project

pytest.importorskip("torchvision", reason="the Qwen-VL processors need torchvision")

pytestmark = pytest.mark.slow

FAMILIES = {  # --model name → tiny model builder
    "uground": "qwen2_vl",
    "uitars": "qwen2_5_vl",
    "qwen-vl": "qwen2_5_vl",
    "tinyclick": "florence2",
}


def run_model(project: Project, model: str, path: Path, report: str, *args: str) -> dict:  # type: ignore[type-arg]
    project.monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    project.write_suite(floor=0.0)  # random weights score ~0: only the machinery is under test
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", model, "--model-path", str(path), "--uiground-max-new-tokens", "12",
        "--uiground-cache", "off", "--uiground-report", report, "--benchmark-disable", "-p", "no:cacheprovider",
        *args,
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    records = [json.loads(x) for x in (project.root / report / "samples.jsonl").read_text().splitlines()]
    return {"records": {r["id"]: r for r in records}, "summary": project.summary(report), "stdout": result.stdout}


@pytest.mark.parametrize("model", sorted(FAMILIES))
def test_tiny_model_runs_a_suite(project: Project, tiny_models: dict[str, Path], model: str,
                                 xdist: list[str]) -> None:
    out = run_model(project, model, tiny_models[FAMILIES[model]], "out", *xdist)
    records = out["records"]
    assert len(records) == len(project.ids())
    for r in records.values():
        assert r["error"] is None, r["error"]
        assert r["prediction"]["latency_ms"] > 0
        # random weights: whatever came out went through the family parser, so every
        # record is either a parsed point or a counted format error
        assert r["prediction"]["point"] is not None or r["score"]["format_error"], r
    summary = out["summary"]
    fp = summary["model_fingerprint"]
    assert fp["model"] == model and fp["dtype"] == "float32" and fp["device_type"] == "cpu"
    assert fp["weights"] and fp["weights"][0][0] == "model.safetensors"
    assert fp["generation"] == {"max_new_tokens": 12, "do_sample": False, "num_beams": 1}
    metric = summary["metrics"]["grounding_accuracy"]
    assert metric["format_errors"] == sum(r["score"]["format_error"] for r in records.values())


@pytest.mark.parametrize("model", ["uitars", "tinyclick"])
def test_batched_outputs_equal_batch_one(project: Project, tiny_models: dict[str, Path], model: str) -> None:
    one = run_model(project, model, tiny_models[FAMILIES[model]], "b1", "--uiground-batch-size", "1")["records"]
    four = run_model(project, model, tiny_models[FAMILIES[model]], "b4", "--uiground-batch-size", "4")["records"]
    assert {k: r["prediction"]["raw"] for k, r in one.items()} == {k: r["prediction"]["raw"] for k, r in four.items()}
    assert len({r["prediction"]["raw"] for r in one.values()}) > 1, "outputs should differ between samples"


def test_generation_cut_off_is_a_counted_format_error(project: Project, tiny_models: dict[str, Path]) -> None:
    project.monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    project.write_suite(floor=0.0)
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "uground", "--model-path", str(tiny_models["qwen2_vl"]),
        "--uiground-max-new-tokens", "1",
        "--uiground-cache", "off", "--uiground-report", "cut", "--benchmark-disable", "-p", "no:cacheprovider")
    assert result.ret == 0
    records = [json.loads(x) for x in (project.root / "cut" / "samples.jsonl").read_text().splitlines()]
    cut = [r for r in records if "cut off at --uiground-max-new-tokens 1" in r["prediction"]["raw"]]
    assert cut and all(r["score"]["format_error"] for r in cut)


def test_bad_model_path_is_named(project: Project, tmp_path: Path) -> None:
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "uground", "--model-path", str(tmp_path / "nope"), "-p", "no:cacheprovider")
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"*--model-path '{tmp_path / 'nope'}' does not exist*"])


def test_uitars_converts_with_the_size_the_processor_used(tiny_models: dict[str, Path]) -> None:
    from PIL import Image

    from pytest_uiground.geometry import Box
    from pytest_uiground.image import ImageRef
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.qwen import create_uitars
    from pytest_uiground.sample import Sample, Target

    model = create_uitars(ModelOptions(name="uitars", path=str(tiny_models["qwen2_5_vl"]), max_new_tokens=4))
    image = Image.new("RGB", (1920, 1080), "white")
    sample = Sample("s", ImageRef.from_source("white", lambda: image), "click OK", "point",
                    Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    inputs = model.encode([model.prompt(sample)], [image])
    (size,) = model.input_sizes(inputs, [image])
    grid = inputs["image_grid_thw"][0].tolist()
    assert size == (grid[2] * 14, grid[1] * 14) and size != (1920, 1080)
    w, h = size
    # the centre of the model's own input image must map to the centre of the original
    pred = model.to_prediction(sample, image, f"Action: click(start_box='({w // 2},{h // 2})')", size, False)
    assert pred.point is not None and not pred.format_error
    assert pred.point.x == pytest.approx((w // 2) / w) and pred.point.y == pytest.approx((h // 2) / h)
    # the same pixels read against the original size would be a different (wrong) point
    assert abs(pred.point.x - (w // 2) / 1920) > 0.05


def test_cropping_wraps_a_real_adapter_and_maps_its_answers(tiny_models: dict[str, Path]) -> None:
    """A real (tiny, random) UI-TARS through the screenseeker wrapper: every call is a real
    generate on a real crop; the answers that parse are mapped back into the screen."""
    from PIL import Image

    from pytest_uiground.geometry import Box, Point
    from pytest_uiground.image import ImageRef
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.cropping import CroppingModel
    from pytest_uiground.models.qwen import create_uitars
    from pytest_uiground.sample import Sample, Target

    inner = create_uitars(ModelOptions(name="uitars", path=str(tiny_models["qwen2_5_vl"]), max_new_tokens=8))
    image = Image.new("RGB", (640, 400), "white")
    samples = [Sample(f"d{i}", ImageRef.from_source(f"img{i}", lambda: image), "the Save button", "detect",
                      Target(box=Box(0.4, 0.4, 0.6, 0.6)), click=Point(0.5, 0.5)) for i in range(2)]
    model = CroppingModel(inner, "screenseeker", depth=2)
    preds = model.predict(samples)
    assert len(preds) == 2
    for pred in preds:
        assert pred.error is None and pred.attempts is not None and 1 <= pred.attempts <= 1 + 4 + 2
        if pred.point is not None:
            assert 0.0 <= pred.point.x <= 1.0 and 0.0 <= pred.point.y <= 1.0
    assert model.fingerprint()["cropping"] == "screenseeker"
    assert len(model.log) == sum(p.attempts or 0 for p in preds)
