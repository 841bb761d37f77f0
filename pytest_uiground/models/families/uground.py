"""``uground``: UGround-V1 (Qwen2-VL), answering ``(x, y)`` in relative 0..1000."""

from __future__ import annotations

from pytest_uiground.models.families import Family, Generation, Prompt
from pytest_uiground.models.families.reading import Coords, ParseContext, first_qwen_json, first_shape, to_coords

SERVE = "OSU-NLP-Group/UGround grounding/uground_qwen2vl_serve.py: format_openai_template"
EVALUATE = "Evaluate this statement about the screenshot:\n'{instruction}'\nConclude whether the evaluation is " \
           "'PASSED' or 'FAILED'"


def read_norm1000(text: str, ctx: ParseContext) -> Coords:
    """Qwen2-VL/UGround and Qwen3-VL plain answers: the first ``point_2d``/``bbox_2d`` JSON
    value, else the first ``(x, y)``/``[x, y]`` (or box) anywhere; relative 0..1000."""
    values = first_qwen_json(text) or first_shape(text)
    if values is None:
        return Coords(error="no coordinates found; expected (x, y) or a box in relative 0..1000")
    return to_coords(values, 1000.0, 1000.0, "relative 0..1000")


FAMILY = Family(
    name="uground",
    frame="norm1000",
    prompts={
        # Verbatim with its leading newline (an f-string that opens with one): a token between
        # <|vision_end|> and the text. It does not state the 0..1000 range: UGround answers in
        # it by training.
        "point": Prompt(
            user="\nYour task is to help the user identify the precise coordinates (x, y) of a specific "
                 "area/element/object on the screen based on a description.\n\n"
                 "- Your response should aim to point to the center or a representative point within the described "
                 "area/element/object as accurately as possible.\n"
                 "- If the description is unclear or ambiguous, infer the most relevant area or element based on "
                 "its likely context or purpose.\n"
                 "- Your answer should be a single string (x, y) corresponding to the point of the interest.\n\n"
                 "Description: {instruction}\n\nAnswer:",
            source=f"{SERVE} (verbatim; the API mode whose scores the UGround README reports)"),
        "verdict": Prompt(
            user=EVALUATE + ", then give the precise coordinates of the UI element that corresponds to this "
                            "evaluation as a single string (x, y).",
            source="project wording: the verdict, then a point in UGround's own '(x, y)' answer form"),
    },
    read=read_norm1000,
    generation=Generation(
        256, "project: UGround's uground_qwen2vl_serve.py sets no max_tokens; its '(x, y)' answer needs ~10 tokens",
        dtype="float16", decoding={"do_sample": False, "num_beams": 1, "repetition_penalty": 1.0}),
    sources=(SERVE, "OSU-NLP-Group/UGround grounding/README.md (float16)"),
)
