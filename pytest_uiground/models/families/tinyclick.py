"""``tinyclick``: TinyClick (Florence-2), ``click<loc_x><loc_y>`` in 1000 bins of the image."""

from __future__ import annotations

import re

from pytest_uiground.models.families import Family, Generation, Prompt
from pytest_uiground.models.families.reading import (
    LOC_BINS,
    TINYCLICK_LOC_OFFSET,
    Coords,
    ParseContext,
    mixup_hint,
    to_coords,
    whole_number,
)
from pytest_uiground.record.geometry import Point, clip_point

# SamsungLabs/TinyClick tinyclick_utils.py ``postprocess``: its two patterns, verbatim.
TINYCLICK_ACTION_RE = re.compile(r"</s><s>(<[^>]+>|[^<\s]+)\s*([^<]*?)(<loc_\d+>.*)")
TINYCLICK_POINT_RE = re.compile(r"<loc_(\d+)><loc_(\d+)>")
_LOC_RUN_RE = re.compile(r"(?:<loc_\d+>\s*)+")
_ACTION_HEAD_RE = re.compile(r"<[^>]+>|[^<\s]+")
_LOC_TOKEN_RE = re.compile(r"<loc_\d+>")
_START = "</s><s>"


def tinyclick_action(text: str) -> str | None:
    """The action :data:`TINYCLICK_ACTION_RE` would capture (its group 1), found in linear time.

    The pattern's ``[^<\\s]+`` and lazy ``[^<]*?`` can split one run of text every way before
    failing, O(n^2): 87 s on a 100 kB answer (issue 34 item 3). What it matches is simpler: at
    some ``</s><s>``, a tag or a run of non-space, non-``<`` characters (taken whole: a shorter
    run leaves the same text before the next ``<``), and the first ``<`` after it starts a
    ``<loc_N>`` token; the leftmost ``</s><s>`` where that holds wins, as with ``re.search``.
    ``tests/models/test_reader_scaling.py`` checks it against the pattern on generated texts.
    """
    start = text.find(_START)
    while start >= 0:
        head = _ACTION_HEAD_RE.match(text, start + len(_START))
        if head is not None:
            after = text.find("<", head.end())
            if after >= 0 and _LOC_TOKEN_RE.match(text, after):
                return head.group(0)
        start = text.find(_START, start + 1)
    return None


def read_tinyclick(text: str, ctx: ParseContext) -> Coords:
    """TinyClick's own ``postprocess`` (SamsungLabs/TinyClick ``tinyclick_utils.py``).

    The action right after ``</s><s>`` must be ``click``; the click point is the *first*
    adjacent ``<loc_x><loc_y>`` pair anywhere (for a 4-token box, its first corner),
    floored to a pixel of the original image: ``int(x / 1000 * W)``. Where that code
    returns ``(0, 0)`` (no match, another action) this is a format error with the reason,
    a miss either way. The adapter's text starts with ``<s>`` (the decoder start ``</s>``
    is not decoded); replayed outputs may lack both, so the missing prefix is restored
    before matching. A non-zero ``ctx.loc_offset`` selects :func:`read_florence2` instead.
    """
    if ctx.loc_offset != TINYCLICK_LOC_OFFSET:
        return read_florence2(text, ctx)
    if not text.startswith("</s><s>"):
        text = ("</s>" if text.startswith("<s>") else "</s><s>") + text
    action = tinyclick_action(text)  # TINYCLICK_ACTION_RE.search(text).group(1), in linear time
    if action is None:
        return Coords(error="no '<action> ... <loc_N>' output (TinyClick's postprocess: action None, (0, 0))")
    if action != "click":
        return Coords(error=f"action {action!r} is not 'click' (TinyClick's postprocess scores only "
                            "clicks: (0, 0))")
    pair = TINYCLICK_POINT_RE.search(text)
    if pair is None:
        return Coords(error="no adjacent <loc_x><loc_y> pair (TinyClick's postprocess: (0, 0))")
    bx, by = whole_number(pair.group(1)), whole_number(pair.group(2))
    if bx is None or by is None:  # TinyClick's int() raises on it: no click
        return Coords(error="a <loc_N> with more than 4,300 digits (int() refuses it; TinyClick's postprocess fails)")
    w, h = ctx.image_size
    px, py = int(bx / LOC_BINS * w), int(by / LOC_BINS * h)  # TinyClick's pixel, as it computes it
    if max(bx, by) > LOC_BINS:  # the last bin is 999; 1000 is within the rounding tolerance
        # TinyClick's code computes a pixel beyond the image: a point there, a miss on any box
        return Coords(point=Point(px / w, py / h),
                      note=f"<loc_{max(bx, by)}> is beyond the 1000 bins: {mixup_hint('loc bins')}")
    return Coords(point=clip_point(Point(px / w, py / h)))


def read_florence2(text: str, ctx: ParseContext) -> Coords:
    """Other Florence-2 models: the first run of adjacent ``<loc_N>`` tokens, 2 a point, 4 a box
    (its centre), dequantized as ``(N + loc_offset) / 1000`` (transformers' post-processor: 0.5)."""
    m = _LOC_RUN_RE.search(text)
    if m is None:
        return Coords(error="no <loc_N> tokens found")
    found = [whole_number(v) for v in re.findall(r"<loc_(\d+)>", m.group(0))]
    bins = [b for b in found if b is not None]
    if len(bins) < len(found):
        return Coords(error="a <loc_N> with more than 4,300 digits (int() refuses it)")
    if len(bins) not in (2, 4):
        return Coords(error=f"{len(bins)} adjacent <loc_N> tokens: expected 2 (point) or 4 (box)")
    if max(bins) > LOC_BINS:
        return Coords(error=f"<loc_{max(bins)}> is beyond the 1000 bins: {mixup_hint('loc bins')}")
    values = [(b + ctx.loc_offset) * 1000.0 / LOC_BINS for b in bins]
    return to_coords(values, 1000.0, 1000.0, "loc bins")


# TinyClick has this one prompt for every task; for a verdict row it grounds the statement (as
# the AutomotiveUI card's TinyClick row did) and cannot give a verdict: a format error.
_PROMPT = Prompt(user="What to do to execute the command? {instruction}", strip=True, lowercase=True,
                 source="SamsungLabs/TinyClick tinyclick_utils.py prepare_inputs (verbatim: the command stripped, "
                        "appended and everything lowercased)")

FAMILY = Family(
    name="tinyclick",
    frame="loc-bins",
    prompts={task: _PROMPT for task in ("point", "verdict", "option", "answer", "vqa")},
    read=read_tinyclick,
    generation=Generation(None, "SamsungLabs/TinyClick main.py: model.generate(**inputs) with no settings, so "
                                "the checkpoint's generation_config applies"),
    sources=("SamsungLabs/TinyClick tinyclick_utils.py", "SamsungLabs/TinyClick main.py"),
)
