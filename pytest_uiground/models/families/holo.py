"""``holo``: Holo1.5 (H Company), a JSON ``click_absolute`` in pixels of its resized image."""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt, Resize, reading
from pytest_uiground.models.families.reading import (
    Coords,
    ParseContext,
    brief,
    in_frame,
    model_input_size,
    whole_number,
)

COOKBOOK = "hcompai/hai-cookbook@2ba8961 holo1_5/holo_1_5_quickstart.ipynb (get_chat_messages)"

# get_chat_messages: the prompt with str(ClickAbsoluteAction.model_json_schema()) (pydantic >= 2.10's
# form, checked against pydantic 2.14), "\n", then the task; verbatim. No system message.
LOCALIZATION_PROMPT = (
    'Localize an element on the GUI image according to the provided target and output a click '
    'position.\n'
    "     * You must output a valid JSON following the format: {'description': 'Click at absolute "
    "coordinates.', 'properties': {'action': {'const': 'click_absolute', 'default': 'click_absolute', "
    "'title': 'Action', 'type': 'string'}, 'x': {'description': 'The x coordinate, number "
    "of pixels from the left edge.', 'title': 'X', 'type': 'integer'}, 'y': {'description': "
    "'The y coordinate, number of pixels from the top edge.', 'title': 'Y', 'type': 'integer'}}, "
    "'required': ['x', 'y'], 'title': 'ClickAbsoluteAction', 'type': 'object'}\n"
    '     Your target is:\n'
    '{instruction}'
)


# pydantic-core's lax str -> int (checked against pydantic 2.14): surrounding Unicode White_Space
# trimmed (Rust's str::trim; not Python's str.strip, which also drops \x1c-\x1f), a sign, ASCII digits
# with single underscores between them, and an optional fraction of zeros only ("947.0").
_JSON_STR_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
                   + "\u2028\u2029\u202f\u205f\u3000")
_LAX_INT_STR = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*(?:\.0+)?")


def _integer(value: object) -> int | None:
    """pydantic's lax ``int`` for JSON input (what ``model_validate_json`` accepts): an int, a
    bool (true is 1), a finite float with no fraction, a string of :data:`_LAX_INT_STR`."""
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip(_JSON_STR_SPACE)
        if _LAX_INT_STR.fullmatch(text):
            return whole_number(text.split(".")[0])  # None past Python's 4,300 digits
    return None


def read_click_absolute(text: str, ctx: ParseContext) -> Coords:
    """``ClickAbsoluteAction.model_validate_json(text)`` (the cookbook's reading), rule by rule.

    The whole text must be one JSON object (a code fence or a sentence around it fails) with
    integer ``x`` and ``y``; ``action``, when present, must be ``"click_absolute"``. The point
    is in pixels of the image as resized for the model: ``(x / resized_w, y / resized_h)``.
    """
    w, h = model_input_size(ctx, "holo")
    try:
        data = reading.loads(text)
    except ValueError:
        return Coords(error="not a JSON object (ClickAbsoluteAction.model_validate_json fails)")
    except RecursionError:
        return Coords(error="JSON nested too deeply to parse (json.loads raises RecursionError; "
                            "ClickAbsoluteAction.model_validate_json fails on it too)")
    if not isinstance(data, dict):
        return Coords(error=f"a JSON {type(data).__name__}, not an object (ClickAbsoluteAction fails)")
    if data.get("action", "click_absolute") != "click_absolute":
        return Coords(error=f"action {data.get('action')!r} is not 'click_absolute'")
    x, y = _integer(data.get("x")), _integer(data.get("y"))
    if x is None or y is None:
        return Coords(error=f"x={brief(data.get('x'))}, y={brief(data.get('y'))}: ClickAbsoluteAction needs integers "
                            "(of at most 4,300 digits, Python's limit for int())")
    return in_frame(float(x), float(y), float(w), float(h), f"pixels of the {w}x{h} model input")


FAMILY = Family(
    name="holo",
    frame="pixels-resized",
    prompts={"point": Prompt(user=LOCALIZATION_PROMPT, image_first=True, source=f"{COOKBOOK} (verbatim)")},
    read=read_click_absolute,
    generation=Generation(256, f"{COOKBOOK}: generate(max_new_tokens=256) (greedy); the API cookbook: temperature 0"),
    # The quickstart resizes with the processor's own limits; the ScreenSpot-Pro leaderboard wrapper
    # (likaixin2000/ScreenSpot-Pro-GUI-Grounding models/holo1_5.py, "to mimick what will be on
    # Huggingface") gives them as 3136 .. 2560*1440. Only images above ~3.7 MP depend on it.
    resize=Resize(28, 3136, 2560 * 1440, "likaixin2000/ScreenSpot-Pro-GUI-Grounding models/holo1_5.py "
                                         "Holo1_5Parameters (factor 28, min 3136, max 2560*1440)",
                  resample="lanczos"),
    client_resize=True,
    input_size_known=True,
    sources=(COOKBOOK, "hcompai/hai-cookbook holo1_5/openai_client/invoke_localization.ipynb"),
)
