r"""MMBench-GUI's own readers of model outputs, for the suites' ``[models.<name>]`` overrides.

The reference (open-compass/MMBench-GUI at 896ddf1d) scores a model's raw text with the
``parse_function`` its config names, not with the model family's usual parser. Replaying
published outputs through the family parsers would give other numbers, so the L1 and L2
suites name these functions in ``suite.toml`` (``[models.<name>] parser = ...``).

* :func:`parse_option`, :func:`parse_l1` -- ``utils/misc.py: parser_answers_into_option``
  (what ``models/local_uitars.py: parse_understanding_response`` and the benchmark's default
  both call), for every model: six case-insensitive patterns tried in order. One reference
  bug is fixed (see suites/mmbench_gui/README.md): its fourth pattern makes the delimiter
  optional, so any line starting with a word beginning with A-F ("Based on", "Clicking",
  "answer is D") is read as that letter; here the letter must not be the first letter of a
  word (``^[ \t]*([A-F])\b``), which is what the pattern's comment ("the first letter in a
  row: A. or A:") describes. Nothing else changes: "A or B" is still A, "E is the best
  choice" still E, letters inside ``<think>`` still count.
* :func:`smart_resize`, :func:`parse_uitars` -- ``models/local_uitars.py:
  parse_grounding_response`` + ``uitars_postprocess`` (configs/config_local_uitars.json):
  every run of digits in the whole text must number exactly two, else the output is a
  format error ("Error format"); x and y are divided by the smart-resized width and height
  of the image (factor 28, min 100·28², max 16384·28², the module's constants). The point is
  never clipped: a click beyond the model input is a plain miss, which is what the
  reference intended (its evaluator divides such a point by the image size a second time,
  a bug listed in the README).
"""

from __future__ import annotations

import math
import re

from pytest_uiground.models.families import ParseContext, Parsed
from pytest_uiground.record.geometry import Point

# utils/misc.py: parser_answers_into_option, in its order; pattern 4 as intended (see above).
OPTION_PATTERNS = (
    r"\b([A-F])[\.:](?!\w)",  # "A."  "b:"
    r"\bOption\s+([A-F])\b",  # "Option B"
    r"\bAnswer\s*[:：]?\s*([A-F])\b",  # "Answer: C", full-width colon too
    r"^[ \t]*([A-F])\b",  # a line led by the letter "A" ("A.", "A:", "A) x"), not by a word "Based"
    r"[\'\"]([A-F])[\'\"]",  # 'A' or "B"
    r"\b([A-F])\b(?!\s+\w)",  # a lone letter not followed by a word
)
#: The reference's pattern 4, kept to show (and test) what the fix changes.
REFERENCE_PATTERN_4 = r"^[ \t]*([A-F])[\.:]?"
_OPTION_RES = tuple(re.compile(p, re.IGNORECASE | re.MULTILINE) for p in OPTION_PATTERNS)


def parse_option(text: str) -> str | None:
    """The chosen letter (upper case), or None: the first pattern with any match wins,
    and within it the leftmost match. ``<think>`` text is read like any other, as the
    reference does."""
    for rx in _OPTION_RES:
        m = rx.search(text)
        if m:
            return m.group(1).upper()
    return None


def parse_l1(text: str, task: str, ctx: ParseContext) -> Parsed:
    """Override parser for the L1 suite (every model): :func:`parse_option` for option tasks.

    The reference has no format-error count in L1; a None parse is a miss there, and it is
    counted as a format error here (reported, never changing the accuracy).
    """
    if task != "option":
        raise ValueError(f"the MMBench-GUI L1 parser reads option answers, not {task!r} tasks")
    letter = parse_option(text)
    return Parsed(option=letter, format_error=letter is None,
                  note="" if letter else "no option letter A-F found (MMBench-GUI parser_answers_into_option)")


# -- L2: UI-TARS ----------------------------------------------------------------------------------
IMAGE_FACTOR = 28
MIN_PIXELS = 100 * 28 * 28
MAX_PIXELS = 16384 * 28 * 28
MAX_RATIO = 200


def smart_resize(height: int, width: int, factor: int = IMAGE_FACTOR, min_pixels: int = MIN_PIXELS,
                 max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """models/local_uitars.py ``smart_resize`` -> (height, width): Python ``round`` (halves to
    even) with ``max(factor, .)`` on the first rounding only; an area above ``max_pixels``
    floors both sides, one below ``min_pixels`` ceils them."""
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(f"absolute aspect ratio must be smaller than {MAX_RATIO}, got {height}x{width}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


_DIGITS = re.compile(r"\d+")


def parse_uitars(text: str, task: str, ctx: ParseContext) -> Parsed:
    """Override parser for UI-TARS in the L2 suite (see the module docstring).

    ``ctx.image_size`` is the screenshot's (width, height), the record's ``image_size`` the
    reference reads; ``ctx.model_input_size`` is not used, because the reference divides by
    its own smart_resize whatever size the processor really used.
    """
    if task != "point":
        raise ValueError(f"the MMBench-GUI UI-TARS parser reads point answers, not {task!r} tasks")
    runs = _DIGITS.findall(text)
    if len(runs) != 2:
        why = "empty output" if not text.strip() else (
            f"{len(runs)} runs of digits in the output; MMBench-GUI's UI-TARS parser needs exactly 2")
        return Parsed(format_error=True, note=why)
    width, height = ctx.image_size
    new_h, new_w = smart_resize(height, width)
    return Parsed(point=Point(int(runs[0]) / new_w, int(runs[1]) / new_h))
