"""``duvo-eye``: duvo-eye-1 / 1.5 (Duvo), a guided JSON ``{"x": int, "y": int}`` in 0..1000.

Why its own family: the model card (``huggingface.co/duvoai/duvo-eye-1.5``: "Output {"x": int, "y": int}
in [0, 1000], scaled to original screenshot pixels"; decoding greedy, ``enable_thinking=False``,
``max_new_tokens=64``) describes an answer that is the JSON object and nothing else (its server guides
decoding to that schema); its evaluation (``duvoai/duvo-eye-1-evals``) counts an answer that does not
parse as a miss ("parse failures"). So the whole answer must be one JSON object with integer ``x`` and
``y``; anything else is a format error, never a pair fished out of prose. It cannot abstain (the card:
"it cannot abstain when the target is absent").
"""

from __future__ import annotations

from pytest_uiground.models.families import Family, Generation, Prompt
from pytest_uiground.models.families.reading import Coords, ParseContext, brief, in_frame, loads

CARD = "huggingface.co/duvoai/duvo-eye-1.5 model card (Output, Decoding)"
EVALS = "huggingface.co/datasets/duvoai/duvo-eye-1-evals (per-sample predictions.jsonl, harness; not reachable here)"

# Project wording: the card does not print its prompt; this asks for the card's output form.
POINT_PROMPT = ('Locate the element described below on the screenshot. Answer with JSON only: {"x": int, "y": int}, '
                "the click position in [0, 1000] of the image's width and height.\nElement: {instruction}")


def read_guided_json(text: str, ctx: ParseContext) -> Coords:
    """The whole answer as one JSON object with integer ``x`` and ``y`` (booleans are not integers)."""
    try:
        value = loads(text.strip())
    except (ValueError, RecursionError):  # also an integer past int()'s 4,300 digits
        return Coords(error='not one JSON object {"x": int, "y": int} (duvo-eye answers only that; unparseable '
                            "is a miss in its evaluation)")
    if not isinstance(value, dict):
        return Coords(error=f'expected a JSON object {{"x": int, "y": int}}, got {type(value).__name__}')
    x, y = value.get("x"), value.get("y")
    if not (isinstance(x, int) and isinstance(y, int)) or isinstance(x, bool) or isinstance(y, bool):
        return Coords(error=f'expected integer "x" and "y" in 0..1000, got x={brief(x)}, y={brief(y)}')
    return in_frame(float(x), float(y), 1000.0, 1000.0, "relative 0..1000")


FAMILY = Family(
    name="duvo-eye",
    frame="norm1000",
    prompts={"point": Prompt(user=POINT_PROMPT, source=f"project wording: the card's output form ({CARD})")},
    read=read_guided_json,
    generation=Generation(64, f"{CARD}: greedy, max_new_tokens=64, enable_thinking=False"),
    sources=(CARD, EVALS),
)
