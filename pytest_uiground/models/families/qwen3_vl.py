"""``qwen3-vl``: Qwen3-VL, answering in relative 0..1000 (plain answers)."""

from __future__ import annotations

from pytest_uiground.models.families import Family, Generation
from pytest_uiground.models.families.qwen_vl import POINT, VERDICT
from pytest_uiground.models.families.uground import read_norm1000

FAMILY = Family(
    name="qwen3-vl",
    frame="norm1000",
    prompts={"point": POINT, "verdict": VERDICT},
    read=read_norm1000,
    generation=Generation(256, "project: as qwen-vl"),
    sources=("Qwen3-VL README (0..1000 relative coordinates)",),
)
