"""``molmo``: Molmo-7B-D, answering ``<point x="NN.N" y="NN.N">`` in percent of the image.

Its pointing request is Molmo's native "Point to ..."; it is read with the AutomotiveUI
card's scorer (:func:`read_percent`), which :mod:`.elam` shares (ELAM-7B is a Molmo fine-tune).
"""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt
from pytest_uiground.models.families.reading import Coords, ParseContext
from pytest_uiground.record.geometry import Point, clip_point

# The card's regex, verbatim: a decimal point is REQUIRED (``x="61"`` is a miss).
CARD_POINT_RE = re.compile(r'<point x="(?P<x>\d+\.\d+)" y="(?P<y>\d+\.\d+)"')
# Extensions (strict_card=False only): Molmo's multi-point form and integer percents.
_MOLMO_MULTI_RE = re.compile(r'\bx1="(\d+(?:\.\d+)?)"\s+y1="(\d+(?:\.\d+)?)"')
_MOLMO_INT_RE = re.compile(r'<point\s+x="(\d+(?:\.\d+)?)"\s+y="(\d+(?:\.\d+)?)"')

CARD = "AutomotiveUI card (ELAM), preprocess_prompt_elam"
ELAM_VERDICT = Prompt(
    user="Evaluate this statement about the image:\n'{instruction}'\nThink step by step, conclude whether the "
         "evaluation is 'PASSED' or 'FAILED' and point to the UI element that corresponds to this evaluation.",
    source=f"{CARD} for 'Expected Result' rows (verbatim)",
)


def read_percent(text: str, ctx: ParseContext) -> Coords:
    """Molmo/ELAM percent 0..100, read exactly as the AutomotiveUI card script does.

    Card: first ``<point x="NN.N" y="NN.N"``, divided by 100, clipped to [0, 1]; no
    range check (the card clips instead). With ``strict_card=False`` the multi-point
    form ``x1=".." y1=".."`` and integer percents are also read, only after the card
    regex fails; the card itself would count those outputs as misses.
    """
    m = CARD_POINT_RE.search(text)
    if m:
        return Coords(point=clip_point(Point(float(m.group("x")) / 100, float(m.group("y")) / 100)))
    if not ctx.strict_card:
        hits = [h for rx in (_MOLMO_MULTI_RE, _MOLMO_INT_RE) if (h := rx.search(text))]
        if hits:
            h = min(hits, key=lambda h: h.start())
            return Coords(point=clip_point(Point(float(h.group(1)) / 100, float(h.group(2)) / 100)))
    return Coords(error='no <point x="NN.N" y="NN.N"> found (the card\'s regex requires a decimal point)')


FAMILY = Family(
    name="molmo",
    frame="percent",
    prompts={
        # The card does not say which prompt its Molmo-7B-D row used; to compare with that
        # row, prompt Molmo with the elam family's point prompt instead (a suite override).
        "point": Prompt(user="Point to {instruction}", source="Molmo's native pointing request ('Point to ...')"),
        "verdict": ELAM_VERDICT,
    },
    read=read_percent,
    generation=Generation(2048, "the ELAM card's limit (ELAM-7B is a Molmo-7B-D fine-tune): step-by-step "
                                "verdicts need it"),
    sources=("allenai/molmo model card", CARD),
)
