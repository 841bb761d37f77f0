"""Native model adapters on tiny random models of the real classes, built offline.

Each family runs the real path: ``from_pretrained`` → processor → ``generate`` →
decode → the family's parser, inside a pytest run of a suite, with and without
xdist, and batched outputs must equal batch-1 outputs.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from conftest import Project, needs

pytest.importorskip("torchvision", reason=needs("hf"))

pytestmark = pytest.mark.slow

FAMILIES = {  # --model name → tiny model builder
    "uground": "qwen2_vl",
    "uitars": "qwen2_5_vl",
    "qwen-vl": "qwen2_5_vl",
    "tinyclick": "florence2",
}


# What each adapter passes to generate besides the answer length, per the model's official code (see
# pytest_uiground/models/hf/qwen.py and florence.py for the citations): greedy for the Qwen families, no repetition
# penalty for UGround (vLLM's temperature 0), nothing at all for TinyClick (its checkpoint's generation_config).
EXPLICIT: dict[str, dict[str, object]] = {
    "uground": {"do_sample": False, "num_beams": 1, "repetition_penalty": 1.0},
    "uitars": {"do_sample": False, "num_beams": 1},
    "qwen-vl": {"do_sample": False, "num_beams": 1},
    "tinyclick": {},
}
# The dtype each loads in on a GPU (README "Models": UGround's README says float16, TinyClick's main.py float32);
# off a GPU every one loads in float32.
GPU_DTYPE = {"uground": "float16", "uitars": "bfloat16", "qwen-vl": "bfloat16", "tinyclick": "float32"}
# The official answer lengths: UI-TARS README_deploy.md max_tokens=400; TinyClick's main.py passes none.
OFFICIAL_MAX_NEW_TOKENS = {"uground": 256, "uitars": 400, "qwen-vl": 256, "tinyclick": None}


def run_model(project: Project, model: str, path: Path, report: str, *args: str) -> dict:  # type: ignore[type-arg]
    project.monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    project.write_suite(floor=0.0)  # random weights score ~0: only the machinery is under test
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", model, "--model-path", str(path), "--uiground-max-new-tokens", "12",
        "--uiground-cache", "off", "--uiground-report", report, "--benchmark-disable", "-p", "no:cacheprovider",
        "--snapshot-update", *args,  # records the baseline a suite needs (it fails closed without one)
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
    gpu = _cuda()  # --uiground-device auto: a GPU where there is one (the lent machine), else the CPU
    assert fp["model"] == model and fp["device_type"] == ("cuda" if gpu else "cpu")
    assert fp["dtype"] == (GPU_DTYPE[model] if gpu else "float32")
    assert fp["weights"] and fp["weights"][0][0] == "model.safetensors"
    assert fp["generation"] == {"max_new_tokens": 12, **EXPLICIT[model]}
    assert fp["sources"]["max_new_tokens"] == "--uiground-max-new-tokens"
    metric = summary["metrics"]["grounding_accuracy"]
    assert metric["format_errors"] == sum(r["score"]["format_error"] for r in records.values())


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.parametrize("model", ["uitars", "tinyclick"])
def test_batched_outputs_equal_batch_one(project: Project, tiny_models: dict[str, Path], model: str) -> None:
    """The batching logic (padding side, attention masks, which output belongs to which sample) on the
    CPU, where these tiny models have answered alike batched and alone on every run: on the lent H200 the tiny random
    Florence-2 in float32 answered 2 of 12 samples differently batched (the same first tokens, then a
    near-tie of random weights resolved the other way; read as the GPU's batch-shape-dependent
    kernels, e.g. PyTorch's default TF32 convolutions, not proven there), while the Qwen models
    matched in bfloat16."""
    cpu = ("--uiground-device", "cpu")
    one = run_model(project, model, tiny_models[FAMILIES[model]], "b1", "--uiground-batch-size", "1", *cpu)["records"]
    four = run_model(project, model, tiny_models[FAMILIES[model]], "b4", "--uiground-batch-size", "4", *cpu)["records"]
    assert {k: r["prediction"]["raw"] for k, r in one.items()} == {k: r["prediction"]["raw"] for k, r in four.items()}
    assert len({r["prediction"]["raw"] for r in one.values()}) > 1, "outputs should differ between samples"


def test_generation_cut_off_is_a_counted_format_error(project: Project, tiny_models: dict[str, Path]) -> None:
    project.monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    project.write_suite(floor=0.0)
    args = ("suites/mini", "--model", "uground", "--model-path", str(tiny_models["qwen2_vl"]),
            "--uiground-max-new-tokens", "1", "--uiground-cache", "off", "--benchmark-disable",
            "-p", "no:cacheprovider")
    assert project.pytester.runpytest_subprocess(*args, "--snapshot-update").ret == 0
    result = project.pytester.runpytest_subprocess(*args, "--uiground-report", "cut")
    assert result.ret == 0
    records = [json.loads(x) for x in (project.root / "cut" / "samples.jsonl").read_text().splitlines()]
    cut = [r for r in records if "cut off at --uiground-max-new-tokens 1" in r["prediction"]["raw"]]
    assert cut and all(r["score"]["format_error"] for r in cut)


@pytest.mark.parametrize("model", ["uitars", "tinyclick"])
def test_weights_load_on_the_first_prediction_only(tiny_models: dict[str, Path], model: str) -> None:
    """Building the adapter reads the processor and the config; the weights wait for the
    first prediction, so a rerun answered from the prediction cache never loads them. The
    fingerprint (the cache directory's name) is the same before and after loading."""
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.registry import MODEL_GROUP, known
    from pytest_uiground.registry import import_object as load

    factory = load(known(MODEL_GROUP)[model], what="model")
    adapter = factory(ModelOptions(name=model, path=str(tiny_models[FAMILIES[model]]), max_new_tokens=4))
    sample = _one_sample()
    before, key = adapter.fingerprint(), adapter.cache_key(sample)
    assert adapter._model is None and adapter.deferred_load_s() is None
    adapter.warm_up()  # what the harness calls while the first batch is prepared
    assert adapter._model is not None and adapter.deferred_load_s() > 0
    loaded = adapter._model
    (pred,) = adapter.predict([sample])
    assert pred.error is None and adapter._model is loaded, "loaded once"
    adapter._fingerprint = None  # computed again, now from a loaded model
    assert adapter.fingerprint() == before and adapter.cache_key(sample) == key
    if model == "uitars":  # what the checkpoint merges into generate, read without the weights
        assert before["generation_config"] == {k: v for k, v in adapter.model.generation_config.to_diff_dict().items()
                                               if k != "transformers_version"}


def test_a_failed_weights_load_fails_each_sample_without_loading_again(tiny_models: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    import shutil

    from pytest_uiground.models.base import ModelLoadError, ModelOptions
    from pytest_uiground.models.hf.qwen import create_uground

    broken = tmp_path / "broken"
    shutil.copytree(tiny_models["qwen2_vl"], broken)
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    adapter = create_uground(ModelOptions(name="uground", path=str(broken)))  # processor and config are fine
    calls = []
    real = adapter.load_model

    def counting() -> object:
        calls.append(1)
        return real()

    adapter.load_model = counting  # type: ignore[method-assign]
    adapter.warm_up()  # the harness's early load: the failure is kept for generate, not raised here
    for _ in range(2):
        with pytest.raises(ModelLoadError, match="could not load"):
            adapter.predict([_one_sample()])
    assert calls == [1]


def test_bad_model_path_is_named(project: Project, tmp_path: Path) -> None:
    result = project.pytester.runpytest_subprocess(
        "suites/mini", "--model", "uground", "--model-path", str(tmp_path / "nope"), "-p", "no:cacheprovider")
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"*--model-path '{tmp_path / 'nope'}' does not exist*"])


def test_uitars_converts_with_the_size_the_processor_used(tiny_models: dict[str, Path]) -> None:
    from PIL import Image

    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf.qwen import create_uitars
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target

    model = create_uitars(ModelOptions(name="uitars", path=str(tiny_models["qwen2_5_vl"]), max_new_tokens=4))
    image = Image.new("RGB", (1920, 1080), "white")
    sample = Sample("s", ImageRef.from_source("white", lambda: image), "click OK", "point",
                    Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    inputs = model.encode([model.prompt(sample)], [image])
    (size,) = model.input_sizes(inputs, [image])
    grid = inputs["image_grid_thw"][0].tolist()
    # UI-TARS' smart_resize limits, not the tiny checkpoint's 256*28*28 budget: 1080/28 and 1920/28 rounded
    assert size == (grid[2] * 14, grid[1] * 14) == (69 * 28, 39 * 28)
    w, h = size
    # the centre of the model's own input image must map to the centre of the original
    pred = model.to_prediction(sample, image, f"Action: click(point='<point>{w // 2} {h // 2}</point>')", size, False)
    assert pred.point is not None and not pred.format_error
    assert pred.point.x == pytest.approx((w // 2) / w) and pred.point.y == pytest.approx((h // 2) / h)
    # the same pixels read against the original size would be a different (wrong) point
    assert abs(pred.point.x - (w // 2) / 2000) > 0.01


def test_a_screen_shared_by_a_batch_is_decoded_once(tiny_models: dict[str, Path]) -> None:
    """Two instructions on one screen in one batch: one decode, and the same answers as one by one."""
    from PIL import Image

    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf.qwen import create_uitars
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target

    loads: list[str] = []

    def screen(name: str, colour: str) -> ImageRef:
        def load() -> Image.Image:
            loads.append(name)
            return Image.new("RGB", (320, 200), colour)
        return ImageRef.from_source(name, load)

    a, b = screen("a", "white"), screen("b", "navy")
    batch = [Sample(f"s{i}", ref, f"click item {i}", "point", Target(box=Box(0.1, 0.1, 0.2, 0.2)))
             for i, ref in enumerate([a, b, a, a])]
    model = create_uitars(ModelOptions(name="uitars", path=str(tiny_models["qwen2_5_vl"]), max_new_tokens=6))
    together = model.predict(batch)
    assert sorted(loads) == ["a", "b"]
    alone = [model.predict([s])[0] for s in batch]
    assert [p.raw for p in together] == [p.raw for p in alone]
    assert [p.point for p in together] == [p.point for p in alone]


@pytest.mark.parametrize("wh", [(200, 150), (100, 80), (800, 600), (3000, 40)])
def test_uitars_resize_equals_ui_tars_constants_natively_and_over_http(tiny_models: dict[str, Path],
                                                                      wh: tuple[int, int]) -> None:
    """UI-TARS codes/ui_tars/action_parser.py: MIN_PIXELS = 100*28*28, MAX_PIXELS = 16384*28*28; the native
    processor and the OpenAI client's assumed server resize must both use them (small images are upscaled)."""
    from PIL import Image

    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf.qwen import create_uitars
    from pytest_uiground.models.openai.wire import resize_rule_from_env

    model = create_uitars(ModelOptions(name="uitars", path=str(tiny_models["qwen2_5_vl"])))
    image = Image.new("RGB", wh, "white")
    (native,) = model.input_sizes(model.encode(["x"], [image]), [image])
    rule = resize_rule_from_env({}, parser="uitars")
    assert (rule.min_pixels, rule.max_pixels) == (100 * 28 * 28, 16384 * 28 * 28)
    assert native == rule.input_size(wh)
    assert native[0] * native[1] >= 100 * 28 * 28
    if wh == (200, 150):
        assert native == (336, 252)  # by hand: 150x200 scaled by sqrt(78400/30000), ceiled to 28s
    assert resize_rule_from_env({}, parser="qwen-vl").min_pixels == 4 * 28 * 28


def _capture_generate(adapter: object) -> list[dict[str, object]]:
    """Record the non-tensor keyword arguments of every generate call, then run the real one."""
    calls: list[dict[str, object]] = []
    model = adapter.model  # type: ignore[attr-defined]
    original = model.generate

    def generate(**kwargs: object) -> object:
        calls.append({k: v for k, v in kwargs.items() if not hasattr(v, "shape")})
        return original(**kwargs)

    model.generate = generate
    return calls


def _one_sample(width: int = 200, height: int = 150) -> object:
    import numpy as np
    from PIL import Image

    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target

    pixels = np.random.RandomState(0).randint(0, 256, (height, width, 3), dtype=np.uint8)
    image = Image.fromarray(pixels)
    return Sample("s", ImageRef.from_source("noise", lambda: image), "  Click the SAVE button ", "point",
                  Target(box=Box(0.4, 0.4, 0.6, 0.6)))


@pytest.mark.parametrize("model", sorted(FAMILIES))
def test_official_generation_settings_reach_generate(tiny_models: dict[str, Path], model: str) -> None:
    """Without --uiground-max-new-tokens/--uiground-dtype each adapter applies its model's official settings."""
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.registry import MODEL_GROUP, known
    from pytest_uiground.registry import import_object as load

    factory = load(known(MODEL_GROUP)[model], what="model")
    adapter = factory(ModelOptions(name=model, path=str(tiny_models[FAMILIES[model]])))
    calls = _capture_generate(adapter)
    (pred,) = adapter.predict([_one_sample()])
    assert pred.error is None
    want = dict(EXPLICIT[model])
    if OFFICIAL_MAX_NEW_TOKENS[model] is not None:
        want["max_new_tokens"] = OFFICIAL_MAX_NEW_TOKENS[model]
    assert calls == [{**want, "pad_token_id": adapter.processor.tokenizer.pad_token_id}]
    fp = adapter.fingerprint()
    assert fp["generation"] == want and fp["dtype"] == "float32"  # official dtypes apply on a GPU only
    assert fp["sources"]["dtype"] == "not on a GPU: float32"
    assert "--uiground" not in fp["sources"]["max_new_tokens"]
    assert "generation_config" in fp  # what the checkpoint merges into generate


def test_given_limit_replaces_the_official_one(tiny_models: dict[str, Path]) -> None:
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf.florence import create_tinyclick
    from pytest_uiground.models.hf.qwen import create_uground

    for adapter in (create_uground(ModelOptions(name="uground", path=str(tiny_models["qwen2_vl"]), max_new_tokens=3)),
                    create_tinyclick(ModelOptions(name="tinyclick", path=str(tiny_models["florence2"]),
                                                  max_new_tokens=3, dtype="float32"))):
        calls = _capture_generate(adapter)
        adapter.predict([_one_sample()])
        assert calls[0]["max_new_tokens"] == 3
        assert adapter.fingerprint()["sources"]["max_new_tokens"] == "--uiground-max-new-tokens"
    assert adapter.fingerprint()["sources"]["dtype"] == "--uiground-dtype"


def test_tinyclick_equals_its_main_py(tiny_models: dict[str, Path]) -> None:
    """SamsungLabs/TinyClick main.py: processor(images, text=stripped lower-cased prompt), generate(**inputs) with
    the checkpoint's settings (this tiny one: 3 beams, no repeated 3-grams), batch_decode with special tokens.
    The adapter's raw text is that decode without the decoder start token; its point is postprocess's pixel."""
    import tinymodels
    import torch

    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf.florence import create_tinyclick

    adapter = create_tinyclick(ModelOptions(name="tinyclick", path=str(tiny_models["florence2"])))
    assert adapter.model.generation_config.num_beams == tinymodels.FLORENCE2_NUM_BEAMS
    sample = _one_sample(320, 200)
    image = sample.image.load()  # type: ignore[attr-defined]
    text = ("What to do to execute the command? " + "  Click the SAVE button ".strip()).lower()
    inputs = adapter.processor(images=image, text=text, return_tensors="pt", do_resize=True)
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using the model-agnostic default `max_length`")
        official = adapter.processor.batch_decode(adapter.model.generate(**inputs), skip_special_tokens=False)[0]
    (pred,) = adapter.predict([sample])
    assert official.startswith("</s>") and "</s>" + pred.raw == official


def test_resolve_dtype_uses_the_official_dtype_on_a_gpu_only() -> None:
    from pytest_uiground.models.hf.loading import resolve_dtype
    from pytest_uiground.options import OPTIONS

    assert resolve_dtype(None, "cuda:0", "float16") == "float16"  # UGround's README
    assert resolve_dtype(None, "cuda", "auto") == "bfloat16"
    assert resolve_dtype(None, "cpu", "float16") == "float32"
    assert resolve_dtype("bfloat16", "cpu", "float16") == "bfloat16"  # given wins
    assert resolve_dtype("auto", "cuda:1", "float16") == "bfloat16"
    defaults = {o.flag: o.default for o in OPTIONS}
    assert defaults["--uiground-dtype"] is None and defaults["--uiground-max-new-tokens"] is None


def test_openai_client_uses_the_family_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.openai.client import create

    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")

    def client(parser: str, **kw: object) -> object:
        return create(ModelOptions(name="openai", api_base="http://127.0.0.1:9/v1", served_model="m", parser=parser,
                                   **kw))  # type: ignore[arg-type]

    uitars = client("uitars")
    assert uitars.generation["max_tokens"] == 400  # type: ignore[attr-defined]
    assert uitars.resize.min_pixels == 100 * 28 * 28  # type: ignore[attr-defined]
    assert "UI-TARS" in uitars.fingerprint()["resize"]["source"]  # type: ignore[attr-defined]
    assert client("elam").generation["max_tokens"] == 2048  # type: ignore[attr-defined]
    assert client("tinyclick").generation["max_tokens"] == 256  # type: ignore[attr-defined]
    assert client("uitars", max_new_tokens=7).generation["max_tokens"] == 7  # type: ignore[attr-defined]
    monkeypatch.setenv("UIGROUND_OPENAI_MIN_PIXELS", "3136")
    assert client("uitars").resize.min_pixels == 3136  # type: ignore[attr-defined]


def test_cropping_wraps_a_real_adapter_and_maps_its_answers(tiny_models: dict[str, Path]) -> None:
    """A real (tiny, random) UI-TARS through the screenseeker wrapper: every call is a real
    generate on a real crop; the answers that parse are mapped back into the screen."""
    from PIL import Image

    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.cropping import CroppingModel
    from pytest_uiground.models.hf.qwen import create_uitars
    from pytest_uiground.record.geometry import Box, Point
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target

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


@pytest.mark.parametrize("name", ["elam", "molmo"])
def test_molmo_family_generates_2048_tokens_as_the_elam_card(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """ELAM card: GenerationConfig(max_new_tokens=2048, stop_strings="<|endoftext|>"); 256 cut step-by-step
    verdicts before their point. (Molmo's remote code cannot load on this transformers, so loading is stubbed.)"""
    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf import molmo

    monkeypatch.setattr(molmo, "check_transformers", lambda version: False)
    monkeypatch.setattr(molmo.Molmo, "_load", lambda self: (None, None))
    create = molmo.create_elam if name == "elam" else molmo.create_molmo
    model = create(ModelOptions(name=name))
    assert model.generation == {"max_new_tokens": 2048, "stop_strings": "<|endoftext|>", "do_sample": False}
    assert create(ModelOptions(name=name, max_new_tokens=64)).generation["max_new_tokens"] == 64


def test_molmo_prepares_in_the_background_on_a_processor_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Molmo/ELAM: the card's processor.process is the CPU half (run by the harness's background
    thread, on a copy of the processor: generate_from_batch reads the tokenizer throughout), the
    card's generate_from_batch the device half; predictions equal predict's, one sample at a time.
    (The remote code cannot load on this transformers, so processor and model are stand-ins.)"""
    import threading

    import torch
    from PIL import Image

    from pytest_uiground.models.base import ModelOptions
    from pytest_uiground.models.hf import molmo
    from pytest_uiground.record.geometry import Box
    from pytest_uiground.record.image import ImageRef
    from pytest_uiground.record.sample import Sample, Target
    from pytest_uiground.run.pipeline import Overlap

    calls: list[tuple[int, str, str, tuple[int, int]]] = []

    class Tokenizer:
        def decode(self, ids: torch.Tensor, skip_special_tokens: bool) -> str:
            x = 10 * int(ids[0])  # the first new token: which sample it was
            return f'<point x="{x}.5" y="40.0" alt="t">t</point>'

    class Processor:
        def __init__(self) -> None:
            self.tokenizer = Tokenizer()

        def process(self, images: list[Image.Image], text: str) -> dict[str, torch.Tensor]:
            calls.append((id(self), threading.current_thread().name, text, images[0].size))
            n = int(text.split("item ")[1].split()[0])
            return {"input_ids": torch.tensor([1, 2, n]), "images": torch.zeros(2, 3)}

    class Net:
        def generate_from_batch(self, batch: dict[str, torch.Tensor], config: object,
                                tokenizer: object) -> torch.Tensor:
            assert batch["input_ids"].shape == (1, 3) and batch["images"].shape == (1, 2, 3)
            return torch.cat([batch["input_ids"], batch["input_ids"][:, 2:] + 1], dim=1)

    monkeypatch.setattr(molmo, "check_transformers", lambda version: False)
    monkeypatch.setattr(molmo.Molmo, "_load", lambda self: (Processor(), Net()))
    model = molmo.create_elam(ModelOptions(name="elam"))
    assert model.prepares
    ss = [Sample(f"s{i}", ImageRef.from_source(f"img{i}", lambda i=i: Image.new("RGB", (100 + i, 80), "white")),
                 f"item {i} button", "point", Target(box=Box(0.1, 0.1, 0.2, 0.2))) for i in range(5)]
    direct = model.predict(ss)
    xs = [p.point.x if p.point else None for p in direct]
    assert xs == pytest.approx([(10 * (i + 1) + 0.5) / 100 for i in range(5)])
    calls.clear()
    pipe, got = Overlap(model), {}
    try:
        for i, s in enumerate(ss):
            if s.id not in got:
                after = ss[i + 1:]
                got.update((t.id, p) for t, p in pipe.predictions(
                    s, lambda n, skip, after=after: [t for t in after if t.id not in got and t.id not in skip][:n],
                    2, list))
    finally:
        pipe.close()
    assert [got[s.id].raw for s in ss] == [p.raw for p in direct]
    assert {thread.split("_")[0] for _, thread, _, _ in calls} == {"uiground-prepare"}
    assert {proc for proc, *_ in calls} == {id(model._prep_copy)} != {id(model.processor)}
    assert [size for *_, size in calls] == [(100 + i, 80) for i in range(5)]
