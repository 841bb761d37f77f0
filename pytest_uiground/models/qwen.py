"""Qwen-VL family adapters: UGround-V1 (Qwen2-VL), UI-TARS-1.5 (Qwen2.5-VL), generic Qwen-VL.

They share the processor and the generation loop (:class:`HFVisionModel`) and differ
in prompt and coordinate convention: UGround answers in 0..1000, UI-TARS and
Qwen2.5-VL in absolute pixels of the resized image (read from ``image_grid_thw``,
never from a guessed default), Qwen3-VL in 0..1000 again.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pytest_uiground.models.base import ModelOptions
from pytest_uiground.models.families.uitars import UITARS_MAX_PIXELS, UITARS_MIN_PIXELS
from pytest_uiground.models.hf import HFVisionModel

#: the extra these models need, and the modules it brings (checked at start-up: options.missing_extra)
EXTRA = ("hf", ("torch", "torchvision", "transformers"))


class UGround(HFVisionModel):
    """UGround-V1 as its authors ran it (OSU-NLP-Group/UGround ``grounding/``).

    float16 on a GPU: ``grounding/README.md`` ("we use float16 instead of bfloat16 for more
    stable decoding") and ``vllm serve ... --dtype float16``. Greedy with no repetition
    penalty: the serve script asks vLLM 0.6.1 for ``temperature=0`` and vLLM's
    ``SamplingParams`` default ``repetition_penalty=1.0``, whereas ``generate`` would merge in
    whatever penalty the checkpoint's generation_config carries; so 1.0 is passed explicitly.
    """

    name = "uground"
    family = "uground"
    default_hub_id = "osunlp/UGround-V1-7B"
    default_dtype = "float16"
    dtype_source = "OSU-NLP-Group/UGround grounding/README.md: float16 (vllm serve --dtype float16)"
    generation_defaults: ClassVar[dict[str, Any]] = {"do_sample": False, "num_beams": 1, "repetition_penalty": 1.0}
    generation_source = ("OSU-NLP-Group/UGround grounding/uground_qwen2vl_serve.py: temperature=0 on vLLM 0.6.1 "
                         "(SamplingParams repetition_penalty=1.0)")


class UITars(HFVisionModel):
    """UI-TARS-1.5 with its own resize limits.

    The image is resized with UI-TARS' ``smart_resize`` limits (:data:`UITARS_MIN_PIXELS`,
    :data:`UITARS_MAX_PIXELS`) rather than the checkpoint processor's, because UI-TARS'
    parser converts its pixel answers back with those constants (MMBench-GUI
    ``local_uitars.py`` passes them to ``process_vision_info`` for the same reason). The
    processor's ``size`` is set to them, so ``image_grid_thw`` (which the parser divides by)
    is the size the official code divides by. Generation: greedy, the checkpoint's other
    settings as MMBench-GUI's ``model.generate(**inputs, max_new_tokens=...)`` leaves them.
    """

    name = "uitars"
    family = "uitars"
    default_hub_id = "ByteDance-Seed/UI-TARS-1.5-7B"
    dtype_source = "MMBench-GUI models/base.py: torch_dtype='auto' (the checkpoint's bfloat16)"
    generation_source = "MMBench-GUI models/local_uitars.py: generate(**inputs, max_new_tokens) (greedy)"

    def load_processor(self) -> Any:
        processor = super().load_processor()
        # transformers 5 keeps the pixel budget as size={"shortest_edge": min, "longest_edge": max}
        image_processor = processor.image_processor
        image_processor.size = {"shortest_edge": UITARS_MIN_PIXELS, "longest_edge": UITARS_MAX_PIXELS}
        for attr, value in (("min_pixels", UITARS_MIN_PIXELS), ("max_pixels", UITARS_MAX_PIXELS)):
            if getattr(image_processor, attr, None) is not None:  # transformers 4.x reads these
                setattr(image_processor, attr, value)
        return processor


class QwenVL(HFVisionModel):
    """Any Qwen-VL checkpoint with a generic grounding prompt; the convention follows the architecture."""

    name = "qwen-vl"
    family = "qwen-vl"
    default_hub_id = "Qwen/Qwen2.5-VL-7B-Instruct"
    FAMILY_BY_TYPE: ClassVar[dict[str, str]] = {"qwen2_5_vl": "qwen-vl", "qwen3_vl": "qwen3-vl", "qwen2_vl": "uground"}

    def choose_family(self) -> str:
        model_type = getattr(self.config, "model_type", "")
        return self.FAMILY_BY_TYPE.get(model_type, "qwen-vl")


def create_uground(options: ModelOptions) -> UGround:
    return UGround(options)


def create_uitars(options: ModelOptions) -> UITars:
    return UITars(options)


def create_qwen_vl(options: ModelOptions) -> QwenVL:
    return QwenVL(options)
