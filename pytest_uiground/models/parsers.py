"""Parsers: one model family's raw text → the internal convention (normalized 0..1).

Every family speaks its own coordinate dialect (Molmo percent, Qwen2-VL 0..1000,
Qwen2.5-VL smart-resized pixels, Florence-2 ``<loc_N>`` bins); each family's frame and
official reading live in its own module under :mod:`pytest_uiground.models.families`, and
the scale is *never* guessed from the value range. This module is the stable entry point
(:func:`parse`, :func:`to_prediction`) that suites, adapters and user code call.

The ELAM/Molmo parser reproduces the AutomotiveUI card's scorer exactly by default
(``strict_card=True``); every deviation from a reference scorer is a keyword that the
suite sets explicitly.
"""

from __future__ import annotations

from dataclasses import replace

from pytest_uiground.models import families
from pytest_uiground.models.families.molmo import CARD_POINT_RE
from pytest_uiground.models.families.reading import (
    FLORENCE2_LOC_OFFSET,
    TINYCLICK_LOC_OFFSET,
    ParseContext,
    Parsed,
    parse_option,
    parse_verdict,
)
from pytest_uiground.models.families.tinyclick import TINYCLICK_ACTION_RE, TINYCLICK_POINT_RE
from pytest_uiground.record.prediction import Prediction

FAMILIES: tuple[str, ...] = tuple(families.names())
"""The registered family names (entry-point group ``pytest_uiground.families``)."""

__all__ = ["CARD_POINT_RE", "FAMILIES", "FLORENCE2_LOC_OFFSET", "TINYCLICK_ACTION_RE", "TINYCLICK_LOC_OFFSET",
           "TINYCLICK_POINT_RE", "ParseContext", "Parsed", "parse", "parse_option", "parse_verdict", "to_prediction"]


def parse(
    family: str,
    text: str,
    task: str,
    ctx: ParseContext,
    *,
    strict_card: bool = True,
    loc_offset: float = TINYCLICK_LOC_OFFSET,
) -> Parsed:
    """Parse ``text`` from a ``family`` model (a name, or ``package.module:ATTR``) for a ``task`` kind.

    Raises ValueError for an unknown family or task, and for an absolute-pixel family
    asked for coordinates without ``ctx.model_input_size``. Unreadable model output is
    never an exception: it is ``format_error=True`` with a ``note``.
    """
    fam = families.get(family)
    if (strict_card, loc_offset) != (ctx.strict_card, ctx.loc_offset):
        ctx = replace(ctx, strict_card=strict_card, loc_offset=loc_offset)
    return fam.parse(text, task, ctx)


def to_prediction(parsed: Parsed, raw: str, *, latency_ms: float = 0.0) -> Prediction:
    """The prediction an adapter returns for a parsed output (raw text kept for reports)."""
    return Prediction(point=parsed.point, box=parsed.box, verdict=parsed.verdict, option=parsed.option,
                      answer=parsed.answer, raw=raw, format_error=parsed.format_error, latency_ms=latency_ms,
                      refused=parsed.refused, note=parsed.note)
