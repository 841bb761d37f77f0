"""Tiny, randomly initialised checkpoints of the real model classes, built fully offline.

The adapters in ``pytest_uiground.models`` load checkpoints with ``AutoProcessor`` and
``AutoModelForImageTextToText``. Testing them against the real multi-gigabyte weights is neither possible
offline nor affordable on CPU, so these builders write *structurally real* checkpoints instead: the same
processor, tokenizer, image-processor and model classes as the real hubs' checkpoints (so the real resize,
placeholder-expansion, chat-template and generation code paths run), but with a few hundred kilobytes of random
weights. Outputs are gibberish by design; what the tests pin down is plumbing (shapes, resized sizes, padding,
decoding), not quality.

Every builder is deterministic (``torch.manual_seed(0)`` and a fixed tokenizer corpus), so greedy outputs are
reproducible across runs and machines with the same torch build.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

# A few sentences in the register of GUI-grounding prompts and answers. The BPE learnt from them only needs
# to be byte-complete (the byte-level alphabet guarantees any string encodes) and small.
_CORPUS = [
    "Click on the Settings button in the top right corner of the screen.",
    "Tap the search field, then type the destination address.",
    "Where is the play button? Answer with the coordinates of the element.",
    "(512, 384) [[120, 45, 300, 90]] click(x=0.25, y=0.75)",
    "Open the navigation menu and select Climate control, Seat heating, Media.",
    "What to do to execute the command? click on the volume slider",
    "The temperature is 21.5 degrees; fan speed 3 of 7.",
    "Thought: the OK button is at the bottom. Action: click(start_box='(640,480)')",
]

# Qwen2-VL / Qwen2.5-VL special tokens, in the order the real tokenizer assigns them (151643 onwards there).
_QWEN_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

# The chat template shipped with Qwen2-VL-*-Instruct and Qwen2.5-VL-*-Instruct (identical for both).
_QWEN_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# Qwen image processors: the real patch 14 / merge 2 (so sizes snap to multiples of 28), but a pixel budget far
# below the real 12845056 so a CPU forward pass stays in the milliseconds. 256 merged tokens = 256*28*28 px.
QWEN_MIN_PIXELS = 4 * 28 * 28
QWEN_MAX_PIXELS = 256 * 28 * 28


def _train_bpe(vocab_size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Learn a byte-level BPE on the tiny corpus and return ``(vocab, merges)`` for a tokenizer class.

    Returning vocab and merges (rather than a finished ``Tokenizer``) lets each model's own tokenizer class
    install its real pre-tokenizer, normaliser and decoder around them.
    """
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS, trainer=trainer)
    model_state: dict[str, Any] = json.loads(tok.to_str())["model"]
    # Older tokenizers serialise merges as "left right" strings, newer ones as [left, right] pairs.
    pairs = [m.split(" ", 1) if isinstance(m, str) else m for m in model_state["merges"]]
    merges = [(str(left), str(right)) for left, right in pairs]
    vocab = {str(token): int(index) for token, index in model_state["vocab"].items()}
    return vocab, merges


def _redraw_weights(model: torch.nn.Module, std: float) -> None:
    """Re-draw every matrix/kernel of ``model`` from N(0, std), leaving biases and norm scales as initialised.

    With the library's 0.02 initialiser a 64-wide random model is nearly a constant function: greedy decoding
    repeats one token sixteen times, which would hide exactly the bugs the tests look for (wrong slicing of new
    tokens, batch rows mixed up). A wide std makes the logits depend strongly on the input, so different prompts
    and images give different, varied token streams with large logit gaps (so fp32 argmax is not tie-prone and
    batch-vs-single comparisons are meaningful).
    """
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for param in model.parameters():
            if param.dim() > 1:
                param.copy_(torch.randn(param.shape, generator=generator, dtype=param.dtype) * std)


def _qwen_tokenizer() -> Any:
    """A ``Qwen2Tokenizer`` (the class both Qwen2-VL and Qwen2.5-VL checkpoints ship) over a tiny learnt BPE.

    The special tokens are appended to the vocabulary in the real order, so ids are stable and contiguous;
    ``<|im_end|>`` is EOS and ``<|endoftext|>`` PAD, as in the -Instruct checkpoints.
    """
    from transformers import Qwen2Tokenizer

    vocab, merges = _train_bpe(400)
    for token in _QWEN_SPECIAL:
        vocab[token] = len(vocab)
    return Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,  # type: ignore[arg-type]  # annotated list[str], but the BPE model takes pairs
        unk_token=None,  # type: ignore[arg-type]  # as in the real Qwen2-VL tokenizer_config (no unk)
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=_QWEN_SPECIAL[1:],
        chat_template=_QWEN_CHAT_TEMPLATE,
    )


def _qwen_text_config(tokenizer: Any) -> dict[str, Any]:
    """Text-decoder settings shared by both Qwen families: hidden 64, 2 layers, 4 query / 2 KV heads.

    ``mrope_section`` must sum to head_dim/2 = 8 (it splits rotary frequencies between the temporal, height
    and width position streams); the real 7B models use [16, 24, 24] for head_dim 128.
    """
    ids = tokenizer.convert_tokens_to_ids
    return {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [2, 3, 3]},
        "bos_token_id": ids("<|endoftext|>"),
        "eos_token_id": ids("<|im_end|>"),
        "pad_token_id": ids("<|endoftext|>"),
    }


def _qwen_generation_config(tokenizer: Any) -> Any:
    """Greedy defaults with both end tokens as EOS and PAD set, so ``generate`` never warns or guesses."""
    from transformers import GenerationConfig

    ids = tokenizer.convert_tokens_to_ids
    return GenerationConfig(
        bos_token_id=ids("<|endoftext|>"),
        eos_token_id=[ids("<|im_end|>"), ids("<|endoftext|>")],
        pad_token_id=ids("<|endoftext|>"),
        do_sample=False,
    )


def _qwen_image_processors() -> tuple[Any, Any]:
    """Real Qwen2-VL image and video processors with a small pixel budget (see ``QWEN_MAX_PIXELS``).

    transformers 5 stores the budget as ``size={"shortest_edge": min_pixels, "longest_edge": max_pixels}``
    (pixel counts despite the names); ``min_pixels``/``max_pixels`` are accepted as constructor aliases.
    """
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    image_processor = Qwen2VLImageProcessor(min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS)
    video_processor = Qwen2VLVideoProcessor(min_pixels=QWEN_MIN_PIXELS, max_pixels=QWEN_MAX_PIXELS)
    return image_processor, video_processor


def _save(model: Any, processor: Any, path: Path) -> Path:
    """Write model and processor side by side, as a hub checkpoint lays them out."""
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


def build_qwen2_vl(path: Path) -> Path:
    """Build a tiny ``Qwen2VLForConditionalGeneration`` + ``Qwen2VLProcessor`` (the UGround-V1 family) at ``path``.

    Vision tower: one block, width 32, patch 14, merge 2, so the real 28-pixel resize grid is exercised.
    """
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor

    tokenizer = _qwen_tokenizer()
    image_processor, video_processor = _qwen_image_processors()
    processor = Qwen2VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=_QWEN_CHAT_TEMPLATE,
    )
    config = Qwen2VLConfig(
        text_config=_qwen_text_config(tokenizer),
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": 64,  # the merger projects straight into the text width
            "num_heads": 2,
            "mlp_ratio": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
        },
        # The placeholder ids the model scatters image features into must be the tokenizer's.
        image_token_id=tokenizer.convert_tokens_to_ids("<|image_pad|>"),
        video_token_id=tokenizer.convert_tokens_to_ids("<|video_pad|>"),
        vision_start_token_id=tokenizer.convert_tokens_to_ids("<|vision_start|>"),
        vision_end_token_id=tokenizer.convert_tokens_to_ids("<|vision_end|>"),
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Qwen2VLForConditionalGeneration(config).eval()
    _redraw_weights(model, std=0.5)
    model.generation_config = _qwen_generation_config(tokenizer)
    return _save(model, processor, path)


def build_qwen2_5_vl(path: Path) -> Path:
    """Build a tiny ``Qwen2_5_VLForConditionalGeneration`` + ``Qwen2_5_VLProcessor`` (UI-TARS-1.5 family).

    Vision tower: two blocks (one windowed, one full-attention, as the real model alternates them), width 32,
    patch 14, merge 2, window 112 px.
    """
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor

    tokenizer = _qwen_tokenizer()
    image_processor, video_processor = _qwen_image_processors()
    processor = Qwen2_5_VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=_QWEN_CHAT_TEMPLATE,
    )
    config = Qwen2_5_VLConfig(
        text_config=_qwen_text_config(tokenizer),
        vision_config={
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "out_hidden_size": 64,  # the merger projects straight into the text width
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
            "fullatt_block_indexes": [1],
        },
        # The placeholder ids the model scatters image features into must be the tokenizer's.
        image_token_id=tokenizer.convert_tokens_to_ids("<|image_pad|>"),
        video_token_id=tokenizer.convert_tokens_to_ids("<|video_pad|>"),
        vision_start_token_id=tokenizer.convert_tokens_to_ids("<|vision_start|>"),
        vision_end_token_id=tokenizer.convert_tokens_to_ids("<|vision_end|>"),
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Qwen2_5_VLForConditionalGeneration(config).eval()
    _redraw_weights(model, std=0.5)
    model.generation_config = _qwen_generation_config(tokenizer)
    return _save(model, processor, path)


# Florence-2 keeps its real square input: 768x768 gives the real 24*24 + 1 = 577 image tokens. With the tiny
# vision tower this costs ~0.1 s per generate on CPU, so there was no need to shrink it.
FLORENCE2_IMAGE_SIZE = 768
FLORENCE2_NUM_BEAMS = 3

# Tokens the original Florence-2 processor adds to the BART vocabulary (in this order in the real checkpoints:
# 50265 + 1024 = 51289 ids, then ``<image>``). ``<loc_0>``..``<loc_999>`` are the quantised coordinates that
# TinyClick emits; they are *special* tokens, so ``skip_special_tokens=True`` deletes them from decoded text.
_FLORENCE2_EXTRA = [
    "<od>",
    "</od>",
    "<ocr>",
    "</ocr>",
    *(f"<loc_{i}>" for i in range(1000)),
    "<cap>",
    "</cap>",
    "<ncap>",
    "</ncap>",
    "<dcap>",
    "</dcap>",
    "<grounding>",
    "</grounding>",
    "<seg>",
    "</seg>",
    "<sep>",
    "<region_cap>",
    "</region_cap>",
    "<region_to_desciption>",  # sic, as in the real vocabulary
    "</region_to_desciption>",
    "<proposal>",
    "</proposal>",
    "<poly>",
    "</poly>",
    "<and>",
]

# The parse rules ``Florence2Processor.post_process_generation`` looks up per task type; without them every
# task raises "Unsupported parse task". Mirrors the defaults of the original Florence-2 processor.
_FLORENCE2_POST_PROCESSOR_CONFIG: dict[str, dict[str, Any]] = {
    "ocr": {
        "PATTERN": r"(.+?)<loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)>",
        "AREA_THRESHOLD": 0.0,
    },
    "phrase_grounding": {"FILTER_BY_BLACK_LIST": True},
    "pure_text": {},
    "description_with_bboxes": {},
    "description_with_polygons": {},
    "polygons": {},
    "bboxes": {},
    "description_with_bboxes_or_polygons": {},
}


def _florence2_tokenizer() -> Any:
    """A BART byte-level BPE tokenizer (``BartTokenizer``, an alias of ``RobertaTokenizer`` in transformers 5).

    ``image_token`` must be a named special token: ``Florence2Processor`` reads ``tokenizer.image_token`` and
    ``tokenizer.image_token_id`` and fails without them.
    """
    from transformers import BartTokenizer

    learnt, merges = _train_bpe(400)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for token in learnt:
        vocab[token] = len(vocab)
    vocab["<mask>"] = len(vocab)
    return BartTokenizer(
        vocab=vocab,
        merges=merges,  # type: ignore[arg-type]  # annotated list[str], but the BPE model takes pairs
        extra_special_tokens=[*_FLORENCE2_EXTRA, "<image>"],
        image_token="<image>",
    )


def build_florence2(path: Path) -> Path:
    """Build a tiny native ``Florence2ForConditionalGeneration`` + ``Florence2Processor`` (TinyClick family).

    DaViT vision tower with one block per stage (widths 16/16/32/64, strides 4/2/2/2 so 768 px -> 24x24 cells)
    and a 2+2-layer BART of width 64. The image processor is the ``CLIPImageProcessor`` the real checkpoints use:
    a plain (aspect-ratio-destroying) resize to 768x768, no crop, ImageNet mean/std.
    """
    from transformers import (
        CLIPImageProcessor,
        Florence2Config,
        Florence2ForConditionalGeneration,
        Florence2Processor,
        GenerationConfig,
    )

    tokenizer = _florence2_tokenizer()
    cells = FLORENCE2_IMAGE_SIZE // 32
    image_processor = CLIPImageProcessor(
        do_resize=True,
        size={"height": FLORENCE2_IMAGE_SIZE, "width": FLORENCE2_IMAGE_SIZE},
        resample=3,  # bicubic
        do_center_crop=False,
        crop_size={"height": FLORENCE2_IMAGE_SIZE, "width": FLORENCE2_IMAGE_SIZE},
        image_mean=[0.485, 0.456, 0.406],
        image_std=[0.229, 0.224, 0.225],
        image_seq_length=cells * cells + 1,  # one pooled token plus the 2-D grid
    )
    processor = Florence2Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        post_processor_config=_FLORENCE2_POST_PROCESSOR_CONFIG,
    )
    config = Florence2Config(
        text_config={
            "model_type": "bart",
            "vocab_size": len(tokenizer),
            "d_model": 64,
            "encoder_layers": 2,
            "decoder_layers": 2,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 128,
            "decoder_ffn_dim": 128,
            "max_position_embeddings": 1024,  # 577 image tokens + prompt must fit, as in the real model
            "dropout": 0.0,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
            "decoder_start_token_id": tokenizer.eos_token_id,
            "forced_eos_token_id": tokenizer.eos_token_id,
        },
        vision_config={
            "depths": [1, 1, 1, 1],
            "embed_dim": [16, 16, 32, 64],
            "num_heads": [1, 1, 2, 4],
            "num_groups": [1, 1, 2, 4],
            "mlp_ratio": 2.0,
            "drop_path_rate": 0.0,
            "projection_dim": 64,
        },
        image_token_id=tokenizer.image_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Florence2ForConditionalGeneration(config).eval()
    _redraw_weights(model, std=0.5)
    # Beam search as TinyClick's checkpoint decodes (issue 12: 3 beams, no repeated 3-grams; Florence-2's
    # early stopping), so a plain generate(**inputs), as TinyClick's main.py calls it, runs the beam path.
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        do_sample=False,
        num_beams=FLORENCE2_NUM_BEAMS,
        no_repeat_ngram_size=3,
        early_stopping=True,
    )
    return _save(model, processor, path)


def build_qwen2_lm(path: Path) -> Path:
    """A tiny text-only ``Qwen2ForCausalLM`` with the Qwen chat template (a local judge for ``--uiground-judge hf``)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = _qwen_tokenizer()
    text = _qwen_text_config(tokenizer)
    text["rope_parameters"] = {"rope_type": "default", "rope_theta": 1000000.0}
    model = Qwen2ForCausalLM(Qwen2Config(**text))
    _redraw_weights(model, 0.5)
    model.generation_config = _qwen_generation_config(tokenizer)
    return _save(model, tokenizer, path)


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "qwen2_vl": build_qwen2_vl,
    "qwen2_5_vl": build_qwen2_5_vl,
    "florence2": build_florence2,
}
