"""``gelato``: Gelato-30B-A3B (mlfoundations), a Qwen3-VL MoE fine-tune answering ``(x, y)`` in 0..1000.

Everything here follows mlfoundations/Gelato@1f83dad ``evaluation/run_grounding_eval.py``
(``evaluate_batch``, ``parse_click_from_response``, the ``gelato`` and ``gelato-refusal`` prompt
modes) and ``evaluation/README.md`` (the runs behind the published figures):

* **Prompt** (user message only, no system text): the instructions, ``"\\n\\n"``, the image, then
  ``"\\n" + instruction`` as a second text part. Mode ``gelato-refusal`` (variant ``refusal`` here)
  adds ``"\\nIf you cannot find the element, please respond with 'refusal'."`` to the instructions.
* **Reading**: ``"refusal" in response.lower()`` is a refusal (the script checks it first when
  refusals are included; a refusal on a sample whose element is present is a miss, not a format
  error). Else the *first* ``(x, y)`` of whole numbers, ``r'\\((\\d+),\\s*(\\d+)\\)'`` (a decimal or
  a negative number does not match), in 0..1000 of the original image: the click is
  ``x / 1000 * width`` pixels, a float, **never truncated to whole pixels** (reading Gelato with the
  ``qwen3-vl`` OSWorld-G reader, which truncates with ``int()``, changes 5 verdicts of its published
  run). No match: a format error (the script's "No valid click action found in response").
  The script also runs the refusal check only with ``--include-refusal``; an answer with both
  "refusal" and a pair is a refusal here, as in that mode (the published refusal-free run has none).
* **Resize**: the client resizes with qwen-vl-utils' ``smart_resize(factor=32, max_pixels)``
  (``image_factor = 32`` for ``qwen3``; min_pixels its default 4 x 32 x 32) with LANCZOS, then the
  processor keeps that size (``do_resize=False``); ``max_pixels`` 10,000,000 as the README's runs
  (``--max-pixels 10000000``; the script's default is 4,000,000).
* **Generation**: greedy, ``max_new_tokens=32``, bfloat16.
"""

from __future__ import annotations

import re

from pytest_uiground.models.families import Coords, Family, Generation, ParseContext, Prompt, Resize
from pytest_uiground.models.families.reading import in_frame, whole_number

SCRIPT = "mlfoundations/Gelato@1f83dad evaluation/run_grounding_eval.py"
README = "mlfoundations/Gelato@1f83dad evaluation/README.md"

# evaluate_batch, prompt_mode 'gelato' (verbatim).
INSTRUCTIONS = (
    "You are an expert UI element locator. Given a GUI image and a user's element description, provide the "
    "coordinates of the specified element as a single (x,y) point. For elements with area, return the center "
    "point.\n\nOutput the coordinate pair exactly:\n(x,y)"
)
# prompt_mode 'gelato-refusal' appends this (verbatim).
REFUSAL_SENTENCE = "\nIf you cannot find the element, please respond with 'refusal'."

_PAIR = re.compile(r"\((\d+),\s*(\d+)\)")  # parse_click_from_response, verbatim


def read(text: str, ctx: ParseContext) -> Coords:
    """``evaluate_batch``'s reading (module docstring): 'refusal' anywhere, else the first ``(x, y)``."""
    if "refusal" in text.lower():
        return Coords(refused=True, note="'refusal' in the answer (Gelato's refusal form)")
    m = _PAIR.search(text)
    if m is None:
        return Coords(error="no '(x, y)' of whole numbers (run_grounding_eval.py: 'No valid click action found in "
                            "response')")
    x, y = whole_number(m.group(1)), whole_number(m.group(2))
    if x is None or y is None:
        return Coords(error="a coordinate of more than 4,300 digits: the script's int() refuses it")
    return in_frame(float(x), float(y), 1000.0, 1000.0, "relative 0..1000")


def _prompt(instructions: str, source: str) -> Prompt:
    return Prompt(lead=instructions + "\n\n", user="\n{instruction}", source=source)


FAMILY = Family(
    name="gelato",
    frame="norm1000",
    prompts={"point": _prompt(INSTRUCTIONS, f"{SCRIPT} evaluate_batch, prompt_mode 'gelato' (verbatim: text, "
                                            "image, '\\n' + instruction)")},
    variants={"refusal": {"point": _prompt(INSTRUCTIONS + REFUSAL_SENTENCE,
                                           f"{SCRIPT} evaluate_batch, prompt_mode 'gelato-refusal' (verbatim)")}},
    read=read,
    refusal="any answer containing 'refusal' (case-insensitive), as the gelato-refusal prompt asks",
    generation=Generation(32, f"{SCRIPT}: max_new_tokens=32, do_sample=False, num_beams=1, bfloat16",
                          dtype="bfloat16"),
    resize=Resize(32, 4 * 32 * 32, 10_000_000, f"{SCRIPT}: smart_resize(factor=image_factor=32 for qwen3, "
                  f"max_pixels) with LANCZOS, processor do_resize=False; {README}: --max-pixels 10000000",
                  resample="lanczos"),
    client_resize=True,
    input_size_known=True,
    sources=(SCRIPT, README),
)
