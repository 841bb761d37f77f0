"""``gta1``: GTA1 (Salesforce / Yan98), ``(x,y)`` in pixels of its own resized image."""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt, Resize
from pytest_uiground.models.families.reading import Coords, ParseContext, in_frame, model_input_size, whole_number

README = "Yan98/GTA1@81f0c4c README.md 'Inference' (written for HelloKKMe/GTA1-7B-2507)"

# SYSTEM_PROMPT.strip(), verbatim; {height} and {width} are the resized image's (SYSTEM_PROMPT.format).
SYSTEM_PROMPT = (
    "You are an expert UI element locator. Given a GUI image and a user's element description, "
    'provide the coordinates of the specified element as a single (x,y) point. The image resolution '
    'is height {height} and width {width}. For elements with area, return the center point.\n'
    '\n'
    'Output the coordinate pair exactly:\n'
    '(x,y)'
)

# The pattern of extract_coordinates (Yan98/GTA1@81f0c4c README.md, "Inference"),
# r"\((-?\d*\.?\d+),\s*(-?\d*\.?\d+)\)", with each number written
# ``\d+(?:\.\d+)?|\.\d+``: the same strings, but ``\d*\.?\d+`` can split a run of digits between its
# two repeats every way, O(n^2) on "(" and 100 kB of digits (issue 34 item 3).
_NUMBER = r"-?(?:\d+(?:\.\d+)?|\.\d+)"
_PAIR_RE = re.compile(rf"\(({_NUMBER}),\s*({_NUMBER})\)")


def read_first_paren(text: str, ctx: ParseContext) -> Coords:
    """``extract_coordinates``: every ``(x,y)`` match converted with ``int()``, the first kept.

    ``int()`` of a decimal raises, and the official code then returns ``(0, 0)`` for the whole
    answer: so a decimal in *any* match, or no match, is a format error here. Frame: pixels of
    the resized image (``pred_x *= width / resized_width``).
    """
    matches = _PAIR_RE.findall(text)
    if not matches:
        return Coords(error="no '(x,y)' found (GTA1's extract_coordinates returns (0, 0))")
    if any(not re.fullmatch(r"-?\d+", v) for pair in matches for v in pair):
        return Coords(error="a decimal coordinate: GTA1's extract_coordinates converts every match with int(), "
                            "which fails, and returns (0, 0)")
    if any(whole_number(v) is None for pair in matches for v in pair):
        return Coords(error="a coordinate of more than 4,300 digits: GTA1's extract_coordinates converts every "
                            "match with int(), which refuses it, and returns (0, 0)")
    w, h = model_input_size(ctx, "gta1")
    x, y = (float(int(v)) for v in matches[0])
    return in_frame(x, y, float(w), float(h), f"pixels of the {w}x{h} model input")


FAMILY = Family(
    name="gta1",
    frame="pixels-resized",
    prompts={"point": Prompt(system=SYSTEM_PROMPT, user="{instruction}", image_first=True,
                             source=f"{README} (verbatim; the resized image, then the instruction)")},
    read=read_first_paren,
    generation=Generation(32, f"{README}: max_new_tokens=32, do_sample=False, bfloat16", dtype="bfloat16"),
    resize=Resize(28, 3136, 4096 * 2160, f"{README}: AutoProcessor(min_pixels=3136, max_pixels=4096*2160), "
                                         "smart_resize(factor=patch_size*merge_size=28)"),
    client_resize=True,
    input_size_known=True,
    sources=(README,),
)
