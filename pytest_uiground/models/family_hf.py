"""Local Hugging Face adapters for the 2026 families built on Qwen2.5-VL and Qwen3-VL.

One class serves them all: ``--model NAME`` picks the family (its prompt, system text, image
placement, resize, reading, dtype and generation settings), so the adapter adds only what
loading needs. Where the official code resizes the image itself before the processor (GTA1,
Holo1.5, MAI-UI, GUI-Owl-1.5), the processor's pixel limits are set to the family's rule too,
so it keeps that size and ``image_grid_thw`` (which pixel answers are divided by) is the size
the official code divides by. OpenCUA is not here: its checkpoints need remote code with
Kimi-VL's tokenizer, not a transformers architecture.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pytest_uiground.models import families
from pytest_uiground.models.base import ModelLoadError, ModelOptions
from pytest_uiground.models.hf import HFVisionModel

DEFAULT_HUB_IDS: dict[str, str] = {
    "gui-owl": "mPLUG/GUI-Owl-1.5-8B-Instruct",
    "ui-venus": "inclusionAI/UI-Venus-1.5-8B",
    "holo": "Hcompany/Holo1.5-7B",
    "mai-ui": "Tongyi-MAI/MAI-UI-8B",
    "gta1": "Salesforce/GTA1-7B",
}
"""The checkpoint each family's README names first at its size class (override with --model-path)."""


class FamilyModel(HFVisionModel):
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

    def load_processor(self) -> Any:
        processor = super().load_processor()
        family = families.get(self.family)
        rule = family.resize if family.client_resize else None
        if rule is not None:  # the processor must keep the size the family resized to
            image_processor = processor.image_processor
            image_processor.size = {"shortest_edge": rule.min_pixels, "longest_edge": rule.max_pixels}
            for attr, value in (("min_pixels", rule.min_pixels), ("max_pixels", rule.max_pixels)):
                if getattr(image_processor, attr, None) is not None:  # transformers 4.x reads these
                    setattr(image_processor, attr, value)
        return processor


def create(options: ModelOptions) -> FamilyModel:
    return FamilyModel(options)
