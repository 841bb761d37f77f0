"""Prediction: what a model said about one sample, already in the internal convention.

Adapters fill the parsed fields (normalized ``point``/``box``, ``verdict``,
``option``, ``answer``) and always keep the ``raw`` text, so a report can show
exactly what the model produced. ``format_error`` marks output the parser could
not read: it is scored as wrong *and* counted, never silently folded into misses.
``refused`` marks an explicit "the element is not there" answer in the family's own
refusal form (UI-Venus ``[-1, -1]``, a ``terminate`` tool call): it has no point, is no
format error, and is right only on a sample whose target is a refusal.
The JSON form is the one the prediction cache, ``samples.jsonl`` and the reports
share, read and written by :mod:`pytest_uiground.record.codec`. A prediction read back from
a file that outlives the run (a baseline's answer, a prediction cache entry) goes through
:func:`stored`, which checks every field by type and range (issue 38).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_uiground.record import codec
from pytest_uiground.record.codec import json_field
from pytest_uiground.record.geometry import Box, Point


@dataclass(slots=True)
class Prediction:
    point: Point | None = None
    box: Box | None = None
    verdict: str | None = None
    option: str | None = None
    answer: str | None = None
    raw: str = ""
    latency_ms: float = field(default=0.0, metadata=json_field(digits=3))
    error: str | None = None
    format_error: bool = False
    attempts: int | None = None  # model calls a search strategy made (detection with cropping)
    refused: bool = False  # the model declined: the element is not on the screen
    # the parser's reason: why a format error, or what was odd (a point beyond the image); absent when empty
    note: str = field(default="", metadata=json_field(omit="empty"))
    # several --uiground-api-base: the endpoint that answered, the name it answered as, the endpoints the
    # request left after a connection failure (models/openai/endpoints.py); absent otherwise
    route: dict[str, Any] = field(default_factory=dict, metadata=json_field(omit="empty"))

    @classmethod
    def failed(cls, exc: BaseException, latency_ms: float = 0.0) -> Prediction:
        """The prediction of a sample whose model call raised: the sample's error, named by the
        exception's type and message (one wording wherever a call can fail: the adapters, the
        cropping search, the request window and the prepare/generate pipeline)."""
        return cls(error=error_text(exc), latency_ms=latency_ms)

    def to_json(self) -> dict[str, Any]:
        return codec.to_json(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Prediction:
        return codec.from_json(cls, data)


COORD_LIMIT = 1e6
"""The largest coordinate a stored answer may hold. A point beyond the image stays a point (the parsers
keep one in a mixed-up frame, e.g. 1500 px read as 0..1: 1500), but no frame mix-up reaches a million
image widths: a larger number in a stored answer is damage (1e300 or 1e400 read as infinity)."""

TEXTS = ("verdict", "option", "answer", "raw", "error", "note")
"""The string fields, whose length a stored answer bounds."""


def problem(pred: Prediction, *, text_chars: int) -> codec.FieldError | None:
    """What is out of range in ``pred`` for a stored answer (the first field found), or None: a coordinate
    beyond :data:`COORD_LIMIT` (or not finite), a negative latency or attempt count, a text longer
    than ``text_chars``."""
    for name in ("point", "box"):
        v = getattr(pred, name)
        if v is not None and not all(math.isfinite(c) and abs(c) <= COORD_LIMIT for c in v):
            return codec.FieldError(name, f"{list(v)!r} has a coordinate that is not a finite number within "
                                          f"±{COORD_LIMIT:g}")
    if not math.isfinite(pred.latency_ms) or pred.latency_ms < 0:
        return codec.FieldError("latency_ms", f"{pred.latency_ms!r} is not a finite number >= 0")
    if pred.attempts is not None and pred.attempts < 0:
        return codec.FieldError("attempts", f"{pred.attempts!r} is negative")
    for name in TEXTS:
        text = getattr(pred, name)
        if text is not None and len(text) > text_chars:
            return codec.FieldError(name, f"{len(text)} characters, more than the {text_chars} kept")
    return None


def stored(data: Mapping[str, Any], *, text_chars: int) -> Prediction:
    """A prediction read back from a file that outlives the run, every field checked by type
    (:func:`codec.from_json` with ``strict``) and range (:func:`problem`); raises
    :class:`~pytest_uiground.record.codec.FieldError` naming the first damaged field."""
    pred = codec.from_json(Prediction, data, strict=True)
    why = problem(pred, text_chars=text_chars)
    if why is not None:
        raise why
    return pred


def error_text(exc: BaseException) -> str:
    """``TypeName: message``, the one wording of a failure on a record."""
    return f"{type(exc).__name__}: {exc}"


def finite(pred: Prediction) -> Prediction:
    """``pred``, or a format error in its place when its point or box has a NaN or infinite
    coordinate (a custom adapter dividing by zero): such a number is no answer, would score as a
    silent miss, and is not standard JSON (``samples.jsonl`` and the reports must stay parseable)."""
    bad = [name for name in ("point", "box")
           if (v := getattr(pred, name)) is not None and not all(math.isfinite(c) for c in v)]
    if not bad:
        return pred
    what = ", ".join(f"{name} {list(getattr(pred, name))}" for name in bad)
    raw = pred.raw or f"(the adapter returned {what})"
    return replace(pred, point=None, box=None, raw=raw, format_error=True,
                   )
