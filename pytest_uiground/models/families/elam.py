"""``elam``: ELAM-7B (Molmo-7B-D fine-tune), prompted and read as the AutomotiveUI card does."""

from __future__ import annotations

from pytest_uiground.models.families import Family, Generation, Prompt
from pytest_uiground.models.families.molmo import CARD, ELAM_VERDICT, read_percent

FAMILY = Family(
    name="elam",
    frame="percent",
    prompts={
        "point": Prompt(user="Identify and point to the UI element that corresponds to this test action:\n"
                             "{instruction}", source=f"{CARD} for 'Test Action' rows (verbatim)"),
        "verdict": ELAM_VERDICT,
    },
    read=read_percent,
    generation=Generation(2048, "ELAM card: GenerationConfig(max_new_tokens=2048, stop_strings='<|endoftext|>')"),
    sources=(CARD,),
)
