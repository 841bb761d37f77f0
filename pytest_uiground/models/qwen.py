"""Qwen-VL family adapters: UGround-V1 (Qwen2-VL), UI-TARS-1.5 (Qwen2.5-VL), generic Qwen-VL.

They share the processor and the generation loop (:class:`HFVisionModel`) and differ
in prompt and coordinate convention: UGround answers in 0..1000, UI-TARS and
Qwen2.5-VL in absolute pixels of the resized image (read from ``image_grid_thw``,
never from a guessed default), Qwen3-VL in 0..1000 again.
"""

from __future__ import annotations

from typing import ClassVar

from .base import ModelOptions
from .hf import HFVisionModel


class UGround(HFVisionModel):
    name = "uground"
    family = "uground"
    default_hub_id = "osunlp/UGround-V1-7B"


class UITars(HFVisionModel):
    name = "uitars"
    family = "uitars"
    default_hub_id = "ByteDance-Seed/UI-TARS-1.5-7B"


class QwenVL(HFVisionModel):
    """Any Qwen-VL checkpoint with a generic grounding prompt; the convention follows the architecture."""

    name = "qwen-vl"
    family = "qwen-vl"
    default_hub_id = "Qwen/Qwen2.5-VL-7B-Instruct"
    FAMILY_BY_TYPE: ClassVar[dict[str, str]] = {"qwen2_5_vl": "qwen-vl", "qwen3_vl": "qwen3-vl", "qwen2_vl": "uground"}

    def choose_family(self) -> str:
        model_type = getattr(self.model.config, "model_type", "")
        return self.FAMILY_BY_TYPE.get(model_type, "qwen-vl")


def create_uground(options: ModelOptions) -> UGround:
    return UGround(options)


def create_uitars(options: ModelOptions) -> UITars:
    return UITars(options)


def create_qwen_vl(options: ModelOptions) -> QwenVL:
    return QwenVL(options)
