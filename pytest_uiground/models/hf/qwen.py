"""Every local checkpoint built on Qwen-VL: UGround-V1 (Qwen2-VL), UI-TARS-1.5 (Qwen2.5-VL),
generic Qwen-VL, and the 2026 families on Qwen2.5-VL and Qwen3-VL (GUI-Owl-1.5, UI-Venus-1.5,
Holo1.5, MAI-UI, GTA1).

They share the processor and the generation loop (:class:`~.vision.HFVisionModel`) and differ
in prompt and coordinate convention: UGround answers in 0..1000, UI-TARS and
Qwen2.5-VL in absolute pixels of the resized image (read from ``image_grid_thw``,
never from a guessed default), Qwen3-VL in 0..1000 again. The processor is set up in one
place (:meth:`QwenModel.load_processor`): where the official code resizes with its own pixel
budget, the processor is given that budget (:meth:`QwenModel.pixel_budget`).

One class, :class:`FamilyModel`, serves the 2026 families: ``--model NAME`` picks the family (its
prompt, system text, image placement, resize, reading, dtype and generation settings), so the
adapter adds only what loading needs. Where the official code resizes the image itself before the
processor (GTA1, Holo1.5, MAI-UI, GUI-Owl-1.5), the processor's pixel limits are set to the
family's rule too, so it keeps that size and ``image_grid_thw`` (which pixel answers are divided
by) is the size the official code divides by. OpenCUA is not here: its checkpoints need remote
code with Kimi-VL's tokenizer, not a transformers architecture.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.families.uitars import UITARS_MAX_PIXELS, UITARS_MIN_PIXELS
from pytest_uiground.models.hf.vision import HFVisionModel

#: the extra these models need, and the modules it brings (checked at start-up: options.missing_extra)
EXTRA = ("hf", ("torch", "torchvision", "transformers"))


class QwenModel(HFVisionModel):
    """A Qwen-VL-architecture checkpoint: the one place its processor's pixel budget is set."""

    def pixel_budget(self) -> tuple[int, int] | None:
        """``(min_pixels, max_pixels)`` the processor must resize within, where the official
        code sets its own; None keeps the checkpoint's."""
        return None

    def load_processor(self) -> Any:
        processor = super().load_processor()
        budget = self.pixel_budget()
        if budget is not None:
            min_pixels, max_pixels = budget
            image_processor = processor.image_processor
            # transformers 5 keeps the pixel budget as size={"shortest_edge": min, "longest_edge": max}
            image_processor.size = {"shortest_edge": min_pixels, "longest_edge": max_pixels}
            for attr, value in (("min_pixels", min_pixels), ("max_pixels", max_pixels)):
                if getattr(image_processor, attr, None) is not None:  # transformers 4.x reads these
                    setattr(image_processor, attr, value)
        return processor


class UGround(QwenModel):
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


class UITars(QwenModel):
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

    def pixel_budget(self) -> tuple[int, int] | None:
        return UITARS_MIN_PIXELS, UITARS_MAX_PIXELS


class QwenVL(QwenModel):
    """Any Qwen-VL checkpoint with a generic grounding prompt; the convention follows the architecture."""

    name = "qwen-vl"
    family = "qwen-vl"
    default_hub_id = "Qwen/Qwen2.5-VL-7B-Instruct"
    FAMILY_BY_TYPE: ClassVar[dict[str, str]] = {"qwen2_5_vl": "qwen-vl", "qwen3_vl": "qwen3-vl", "qwen2_vl": "uground"}

    def choose_family(self) -> str:
        model_type = getattr(self.config, "model_type", "")
        return self.FAMILY_BY_TYPE.get(model_type, "qwen-vl")


DEFAULT_HUB_IDS: dict[str, str] = {
    "gui-owl": "mPLUG/GUI-Owl-1.5-8B-Instruct",
    "ui-venus": "inclusionAI/UI-Venus-1.5-8B",
    "holo": "Hcompany/Holo1.5-7B",
    "mai-ui": "Tongyi-MAI/MAI-UI-8B",
    "gta1": "Salesforce/GTA1-7B",
    "gelato": "mlfoundations/Gelato-30B-A3B",
}
"""The checkpoint each 2026 family's README names first at its size class (override with --model-path)."""


class FamilyModel(QwenModel):
    """A transformers image-text-to-text checkpoint run with one family's official settings."""

    FAMILIES: ClassVar[tuple[str, ...]] = tuple(DEFAULT_HUB_IDS)

    def __init__(self, options: ModelOptions) -> None:
        if options.name not in DEFAULT_HUB_IDS:
            raise ModelLoadError(f"--model {options.name!r} has no local adapter here; local families: "
                                 f"{', '.join(DEFAULT_HUB_IDS)}")
        family = families.get(options.name)
        self.name = self.family = options.name
        self.default_hub_id = DEFAULT_HUB_IDS[options.name]
        self.default_dtype = family.generation.dtype
        self.dtype_source = family.generation.source
        self.generation_source = family.generation.source
        super().__init__(options)

    def generation_settings(self, max_new_tokens: int | None) -> dict[str, Any]:
        """The family's official decoding settings, and its answer length unless given."""
        settings = super().generation_settings(max_new_tokens)
        settings.update(families.get(self.family).generation.decoding)
        return settings

    def pixel_budget(self) -> tuple[int, int] | None:
        """The family's resize rule where its official code resizes before the processor: the
        processor must keep the size the family resized to."""
        family = families.get(self.family)
        rule = family.resize if family.client_resize else None
        return (rule.min_pixels, rule.max_pixels) if rule is not None else None


def create_uground(options: ModelOptions) -> UGround:
    return UGround(options)


def create_uitars(options: ModelOptions) -> UITars:
    return UITars(options)


def create_qwen_vl(options: ModelOptions) -> QwenVL:
    return QwenVL(options)


def create_family(options: ModelOptions) -> FamilyModel:
    """The 2026 families' factory: ``--model gui-owl``, ``ui-venus``, ``holo``, ``mai-ui``, ``gta1``, ``gelato``."""
    return FamilyModel(options)
