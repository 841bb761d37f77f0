"""The 2026 families as local transformers adapters, on tiny models of their architectures.

Holo1.5 and GTA1 are Qwen2.5-VL fine-tunes; GUI-Owl-1.5, UI-Venus-1.5 and MAI-UI are Qwen3-VL
ones (as is Qwen3-VL itself, run by ``--model qwen-vl``). Each adapter must feed the model the
family's system text and image placement, resize where the official code resizes first (the
processor then keeps that size, so ``image_grid_thw`` is the size the answers are in), apply the
family's generation settings, and read an answer with the family's rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pytest_uiground.models.base import ModelOptions
from pytest_uiground.models.families.parts import IMAGE_SLOT
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target

pytestmark = pytest.mark.slow


def build_qwen3_vl(path: Path) -> Path:
    """A tiny ``Qwen3VLForConditionalGeneration`` + ``Qwen3VLProcessor``: patch 16, merge 2 (sizes snap to 32),
    two vision blocks with one deepstack layer, the shared tiny Qwen tokenizer and chat template."""
    import tinymodels as tm
    import torch
    from transformers import Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    tokenizer = tm._qwen_tokenizer()
    budget = {"shortest_edge": 4 * 32 * 32, "longest_edge": 256 * 32 * 32}
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(size=budget, patch_size=16, merge_size=2),
        tokenizer=tokenizer, video_processor=Qwen3VLVideoProcessor(size=budget, patch_size=16, merge_size=2),
        chat_template=tm._QWEN_CHAT_TEMPLATE)
    text = tm._qwen_text_config(tokenizer)
    text["head_dim"] = 16
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [2, 3, 3],
                               "mrope_interleaved": True}
    ids = tokenizer.convert_tokens_to_ids
    config = Qwen3VLConfig(
        text_config=text,
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 64,
                       "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
                       "num_position_embeddings": 64, "deepstack_visual_indexes": [0]},
        image_token_id=ids("<|image_pad|>"), video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"), vision_end_token_id=ids("<|vision_end|>"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Qwen3VLForConditionalGeneration(config).eval()
    tm._redraw_weights(model, std=0.5)
    model.generation_config = tm._qwen_generation_config(tokenizer)
    return tm._save(model, processor, path)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    for module in ("torch", "transformers", "torchvision"):
        pytest.importorskip(module, reason="local models need the [hf] extra (pip install 'pytest-uiground[hf]')")
    import tinymodels

    root = tmp_path_factory.mktemp("tiny-family-models")
    return {"qwen2_5_vl": tinymodels.build_qwen2_5_vl(root / "q25"), "qwen3_vl": build_qwen3_vl(root / "q3")}


@pytest.fixture(scope="module")
def screen(tmp_path_factory: pytest.TempPathFactory) -> ImageRef:
    path = tmp_path_factory.mktemp("screen") / "screen.png"
    Image.new("RGB", (300, 200), (200, 120, 40)).save(path)
    return ImageRef.from_path(path)


# model -> (architecture, size the model sees for a 300x200 screenshot, worked out by hand, generation settings)
# Holo/GTA1 (factor 28): 300/28 = 10.7 -> 308, 200/28 = 7.1 -> 196. Qwen3-VL families (factor 32): 9.4 -> 288,
# 6.25 -> 192 (UI-Venus has no resize of its own: the tiny processor's budget keeps 288x192 as well).
CASES: dict[str, tuple[str, tuple[int, int], dict[str, Any]]] = {
    "holo": ("qwen2_5_vl", (308, 196), {"max_new_tokens": 256, "do_sample": False}),
    "gta1": ("qwen2_5_vl", (308, 196), {"max_new_tokens": 32, "do_sample": False}),
    "gui-owl": ("qwen3_vl", (288, 192), {"max_new_tokens": 2048, "do_sample": False, "repetition_penalty": 1.0}),
    "ui-venus": ("qwen3_vl", (288, 192), {"max_new_tokens": 256, "do_sample": False}),
    "mai-ui": ("qwen3_vl", (288, 192), {"max_new_tokens": 256, "do_sample": False}),
    "gelato": ("qwen3_vl", (288, 192), {"max_new_tokens": 32, "do_sample": False}),
}
# A well-formed answer per family at the centre of the model input, and what it reads as.
ANSWERS = {
    "holo": '{"action": "click_absolute", "x": 154, "y": 98}',
    "gta1": "(154,98)",
    "gui-owl": '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 500]}}'
               "\n</tool_call>",
    "ui-venus": "[500,500]",
    "mai-ui": '<answer>\n{"coordinate":[500,500]}\n</answer>',
    "gelato": "(500, 500)",
}


@pytest.mark.parametrize("name", list(CASES))
def test_family_adapter_feeds_the_official_chat_and_reads_its_answer(
    name: str, tiny: dict[str, Path], screen: ImageRef
) -> None:
    from pytest_uiground.models import families
    from pytest_uiground.models.hf.qwen import create_family

    arch, input_size, generation = CASES[name]
    model = create_family(ModelOptions(name=name, path=str(tiny[arch])))
    family = families.get(name)
    sample = Sample("s1", screen, "Open the settings.", "point", Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    for key, value in generation.items():
        assert model.generation[key] == value, key
    prepared = model.prepare([sample])
    assert prepared.input_sizes == [input_size]
    chat = model.processor.tokenizer.decode(prepared.inputs["input_ids"][0])
    prompt = family.prompt("point")
    user_text = prompt.text(sample.instruction)
    if prompt.system is not None:
        system = prompt.system.replace("{width}", str(input_size[0])).replace("{height}", str(input_size[1]))
        assert f"<|im_start|>system\n{system}<|im_end|>" in chat
    user = chat[chat.index("<|im_start|>user\n"):]
    if prompt.lead:  # Gelato: its instructions, the image, then "\n" + the instruction
        before, after = user_text.split(IMAGE_SLOT)
        assert user.index(before) < user.index("<|vision_start|>") < user.index(after, user.index("<|vision_end|>"))
    else:
        image_at, text_at = user.index("<|vision_start|>"), user.index(user_text)
        assert (image_at < text_at) == prompt.image_first
    pred = model.to_prediction(sample, screen.load().size, ANSWERS[name], input_size, False)
    assert not pred.format_error and pred.point is not None
    assert pred.point.x == pytest.approx(0.5, abs=1e-3) and pred.point.y == pytest.approx(0.5, abs=1e-3)
    model.generation = {**model.generation, "max_new_tokens": 4}  # a random model: 2048 tokens of noise add nothing
    (out,) = model.generate(prepared)  # the tiny model's real generate: gibberish, but read and never an error
    assert out.error is None and out.raw


def test_qwen3_vl_checkpoints_get_the_computer_use_prompt(tiny: dict[str, Path], screen: ImageRef) -> None:
    from pytest_uiground.models.hf.qwen import create_qwen_vl

    model = create_qwen_vl(ModelOptions(name="qwen-vl", path=str(tiny["qwen3_vl"]), max_new_tokens=4))
    assert model.family == "qwen3-vl"
    sample = Sample("s1", screen, "Open the settings", "point", Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    chat = model.processor.tokenizer.decode(model.prepare([sample]).inputs["input_ids"][0])
    assert '"name": "computer_use"' in chat
    assert chat.rstrip().endswith("Open the settings<|im_end|>\n<|im_start|>assistant")
