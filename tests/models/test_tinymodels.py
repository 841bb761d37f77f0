"""The tiny offline checkpoints behave like the real ones where the adapters depend on it.

These tests pin the contract the model adapters are written against: the checkpoints load offline through the
Auto classes, the real processors resize and expand image placeholders, greedy generation yields varied tokens,
and batching with the right padding side reproduces single-sample outputs exactly. If a transformers upgrade
changes any of that, these tests fail before the adapter tests do, with a clearer message.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import needs

torch = pytest.importorskip("torch", reason=needs("hf"))
pytest.importorskip("transformers", reason=needs("hf"))
pytest.importorskip("torchvision", reason="the Qwen-VL processors need torchvision (the [hf] extra)")
import tinymodels  # noqa: E402
from PIL import Image  # noqa: E402
from transformers import AutoModelForImageTextToText, AutoProcessor  # noqa: E402
from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize  # noqa: E402

QWEN_FAMILIES = ["qwen2_vl", "qwen2_5_vl"]
ALL_FAMILIES = [*QWEN_FAMILIES, "florence2"]
EXPECTED_CLASSES = {
    "qwen2_vl": ("Qwen2VLProcessor", "Qwen2VLForConditionalGeneration"),
    "qwen2_5_vl": ("Qwen2_5_VLProcessor", "Qwen2_5_VLForConditionalGeneration"),
    "florence2": ("Florence2Processor", "Florence2ForConditionalGeneration"),
}
# (width, height) of the batch images: deliberately different sizes and aspect ratios, so the Qwen rows get
# different numbers of image tokens and the batch really needs padding.
BATCH_SIZES = [(400, 300), (640, 200), (123, 456)]
BATCH_INSTRUCTIONS = ["Click on the Settings button", "tap search", "Where is the play button in the media app?"]


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, float]]:
    """Build every family once per session; the value is (directory, build seconds)."""
    out: dict[str, tuple[Path, float]] = {}
    root = tmp_path_factory.mktemp("tinymodels")
    for name, builder in tinymodels.BUILDERS.items():
        start = time.perf_counter()
        path = builder(root / name)
        out[name] = (path, time.perf_counter() - start)
    return out


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Hub offline mode plus a socket guard, so any attempted download fails loudly instead of hanging."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield


def _image(width: int, height: int, seed: int) -> Image.Image:
    """Random-noise RGB image: distinct per seed, so different rows really see different pixels."""
    pixels = np.random.RandomState(seed).randint(0, 256, (height, width, 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def _load(path: Path) -> tuple[Any, Any, float]:
    start = time.perf_counter()
    processor = AutoProcessor.from_pretrained(path)
    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    return processor, model, time.perf_counter() - start


def _qwen_prompt(processor: Any, instruction: str) -> str:
    """One user turn with one image then the instruction, rendered by the checkpoint's own chat template."""
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": instruction}]}]
    return str(processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False))


def _florence_prompt(instruction: str) -> str:
    """TinyClick's prompt format (Florence-2 has no chat template; the processor adds image tokens, BOS, EOS)."""
    return f"What to do to execute the command? {instruction.lower()}"


def _prompt(family: str, processor: Any, instruction: str) -> str:
    return _florence_prompt(instruction) if family == "florence2" else _qwen_prompt(processor, instruction)


def _new_tokens(family: str, inputs: Any, output: torch.Tensor) -> torch.Tensor:
    """Only the generated part: decoder-only models echo the prompt, Florence-2 echoes the decoder start token."""
    if family == "florence2":
        return output[:, 1:]
    return output[:, inputs["input_ids"].shape[1] :]


def _decode(family: str, processor: Any, tokens: torch.Tensor) -> list[str]:
    """Florence-2 keeps special tokens (``<loc_N>`` are special); the structural ones are stripped by hand."""
    if family == "florence2":
        texts = processor.batch_decode(tokens, skip_special_tokens=False)
        return [t.replace("</s>", "").replace("<s>", "").replace("<pad>", "") for t in texts]
    return list(processor.batch_decode(tokens, skip_special_tokens=True))


def _generate(model: Any, processor: Any, inputs: Any) -> torch.Tensor:
    with torch.no_grad():
        out: torch.Tensor = model.generate(
            **inputs, max_new_tokens=16, do_sample=False, pad_token_id=processor.tokenizer.pad_token_id
        )
    return out


def test_builders_registry() -> None:
    assert set(tinymodels.BUILDERS) == set(ALL_FAMILIES)


@pytest.mark.parametrize("family", ALL_FAMILIES)
@pytest.mark.slow
def test_offline_load_and_generate(family: str, built: dict[str, tuple[Path, float]], offline: None) -> None:
    path, build_s = built[family]
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    assert size < 5 * 1024 * 1024, f"{family} checkpoint is {size} bytes"

    processor, model, load_s = _load(path)
    assert (type(processor).__name__, type(model).__name__) == EXPECTED_CLASSES[family]
    assert model.dtype == torch.float32

    text = _prompt(family, processor, "Click on the Settings button")
    inputs = processor(text=[text], images=[_image(400, 300, seed=0)], return_tensors="pt")
    start = time.perf_counter()
    output = _generate(model, processor, inputs)
    generate_s = time.perf_counter() - start

    new = _new_tokens(family, inputs, output)
    assert 1 <= new.shape[1] <= 16
    assert len(set(new[0].tolist())) >= 3, f"degenerate output {new[0].tolist()}"
    decoded = _decode(family, processor, new)
    assert isinstance(decoded[0], str) and decoded[0]
    print(
        f"\n{family}: {size / 1e6:.2f} MB, build {build_s:.2f}s, load {load_s:.3f}s, "
        f"generate(16) {generate_s:.3f}s, output {decoded[0]!r}"
    )


@pytest.mark.parametrize("family", QWEN_FAMILIES)
def test_qwen_grid_gives_resized_size(family: str, built: dict[str, tuple[Path, float]], offline: None) -> None:
    """``image_grid_thw`` (in 14-px patches) is the size the model saw: the coordinate frame of its answers."""
    processor, _, _ = _load(built[family][0])
    inputs = processor(text=[_qwen_prompt(processor, "click")], images=[_image(400, 300, seed=0)], return_tensors="pt")
    _, grid_h, grid_w = (int(v) for v in inputs["image_grid_thw"][0])
    resized = (grid_h * 14, grid_w * 14)
    assert resized != (300, 400)
    assert resized[0] % 28 == 0 and resized[1] % 28 == 0
    budget = processor.image_processor.size
    expected = smart_resize(300, 400, factor=28, min_pixels=budget["shortest_edge"], max_pixels=budget["longest_edge"])
    assert resized == tuple(expected)
    assert resized[0] * resized[1] <= tinymodels.QWEN_MAX_PIXELS
    # One placeholder per merged 2x2 patch block.
    image_token_id = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert int((inputs["input_ids"] == image_token_id).sum()) == grid_h * grid_w // 4


def _batch_matches_singles(family: str, path: Path, padding_side: str) -> tuple[list[str], list[str]]:
    processor, model, _ = _load(path)
    texts = [_prompt(family, processor, instruction) for instruction in BATCH_INSTRUCTIONS]
    images = [_image(w, h, seed=i) for i, (w, h) in enumerate(BATCH_SIZES)]

    singles: list[str] = []
    for text, image in zip(texts, images, strict=True):
        inputs = processor(text=[text], images=[image], return_tensors="pt")
        singles.extend(_decode(family, processor, _new_tokens(family, inputs, _generate(model, processor, inputs))))

    inputs = processor(text=texts, images=images, padding=True, padding_side=padding_side, return_tensors="pt")
    mask = inputs["attention_mask"]
    pad_column = 0 if padding_side == "left" else -1
    assert int(mask[:, pad_column].min()) == 0, "the batch should actually need padding"
    batched = _decode(family, processor, _new_tokens(family, inputs, _generate(model, processor, inputs)))
    return singles, batched


@pytest.mark.parametrize("family", QWEN_FAMILIES)
@pytest.mark.slow
def test_qwen_left_padded_batch_equals_singles(family: str, built: dict[str, tuple[Path, float]]) -> None:
    singles, batched = _batch_matches_singles(family, built[family][0], "left")
    assert len(set(singles)) == 3, "the three rows should produce different outputs"
    assert batched == singles


@pytest.mark.slow
def test_florence2_right_padded_batch_equals_singles(built: dict[str, tuple[Path, float]]) -> None:
    """Florence-2 is encoder-decoder: the prompt is encoded, so right padding (its tokenizer default) is exact."""
    singles, batched = _batch_matches_singles("florence2", built["florence2"][0], "right")
    assert len(set(singles)) == 3, "the three rows should produce different outputs"
    assert batched == singles


@pytest.mark.slow
def test_florence2_left_padding_shifts_encoder_positions(built: dict[str, tuple[Path, float]]) -> None:
    """Why Florence-2 must not be left-padded: BART's learned positions count pads, so real tokens move.

    Checked on the encoder states rather than decoded text, which is the mechanism and does not depend on
    whether a random model's argmax happens to flip.
    """
    processor, model, _ = _load(built["florence2"][0])
    texts = [_florence_prompt("tap"), _florence_prompt("open the climate control menu on the screen")]
    images = [_image(200, 100, seed=0), _image(200, 100, seed=1)]
    encoder = model.get_encoder()

    def encode(padding_side: str) -> torch.Tensor:
        inputs = processor(text=texts, images=images, padding=True, padding_side=padding_side, return_tensors="pt")
        with torch.no_grad():
            embeds = model.get_input_embeddings()(inputs["input_ids"])
            features = model.model.get_image_features(inputs["pixel_values"]).pooler_output
            mask = model.model.get_placeholder_mask(inputs["input_ids"], embeds, features)
            embeds = embeds.masked_scatter(mask, features)
            states: torch.Tensor = encoder(inputs_embeds=embeds, attention_mask=inputs["attention_mask"])[0]
        real = inputs["attention_mask"][0].bool()
        return states[0][real]  # the short prompt's real tokens

    right, left = encode("right"), encode("left")
    assert right.shape == left.shape
    assert not torch.allclose(right, left, atol=1e-4)


@pytest.mark.parametrize("family", ALL_FAMILIES)
def test_build_is_deterministic(family: str, built: dict[str, tuple[Path, float]], tmp_path: Path) -> None:
    """Seeded builds: a second build has bit-identical weights, so golden outputs stay stable."""
    from safetensors.torch import load_file

    again = tinymodels.BUILDERS[family](tmp_path / family)
    first = load_file(built[family][0] / "model.safetensors")
    second = load_file(again / "model.safetensors")
    assert first.keys() == second.keys()
    assert all(torch.equal(first[k], second[k]) for k in first)
