"""Objects named in Bench2Drive-VL answers, read the way the reference reads them.

Published answers name an object as ``Detailed_description(<tag>)``, the tag nesting
one ``<CAM,x,y>`` per camera that sees it: ``the black car that is to the front of the
ego vehicle(<c14785<CAM_FRONT,800.0,513.9>>)``. The reference
(Thinklab-SJTU/Bench2Drive-VL ``B2DVL_Adapter/math_utils.py: parse_objects, clean_key``)
cuts the text at every ``(...)`` holding no parenthesis: the description is the text
since the previous match, stripped of spaces and punctuation and capitalised, and the
tag is inside the parentheses. A description seen again is numbered (``"... 2"``), which
is how two objects with the same wording reach the judge as two different names.

Kept on purpose (the judge was calibrated on these names): in running prose the
description also holds the words before it since the previous object, e.g. ``"Is
stopped. The navy car"``; the judge must echo the names exactly to match them.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

#: The reference's pattern: text up to "(", then a parenthesised run with no parentheses.
OBJECT_REF = re.compile(r"([^(]+?)\(([^()]+?)\)")
_STRIP = string.punctuation + " "

#: prompt_utils.py: MISINTERPRET_COLORS, colours that VLMs often name differently.
MISREAD_COLOURS: Mapping[str, tuple[str, ...]] = {
    "navy": ("blue",), "olive": ("orange", "yellow"), "maroon": ("red",), "silver": ("white",),
}


def clean_name(text: str) -> str:
    """math_utils.py: clean_key: trim spaces/punctuation at both ends, capitalise the first letter."""
    name = text.strip().strip(_STRIP)
    return name[:1].upper() + name[1:]


def parse_objects(text: str) -> dict[str, str]:
    """Name → tag for every object reference in ``text``, in order of mention.

    A name seen before is numbered from 2 (the first keeps no number), so the keys are
    distinct and a later duplicate never overwrites an earlier object.
    """
    seen: dict[str, int] = {}
    out: dict[str, str] = {}
    for m in OBJECT_REF.finditer(text):
        name = clean_name(m.group(1))
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name} {seen[name]}"
        out[name] = m.group(2).strip()
    return out


def colour_hint(text: str) -> str:
    """prompt_utils.py: check_misinterpret_color; the alternatives print as a Python list
    (``'['blue']'``), as the reference formats them."""
    low = text.lower()
    parts = "".join(f"Color '{c}' might be mistaken for '{list(alts)}'. "
                    for c, alts in MISREAD_COLOURS.items() if c in low)
    return f"Tolerable mistakes: {parts}" if parts else ""


def focus_text(detailed_description: str, tag: str) -> str:
    """evaluator.py: listed_eval's focus: the description and the tag glued together, and
    the colour hint in parentheses when a misread colour occurs in them."""
    focus = detailed_description + tag
    hint = colour_hint(focus)
    return f"{focus} ({hint})" if hint else focus
