"""Shared reading helpers: what every family's parser needs besides its own answer form.

A family module (:mod:`pytest_uiground.models.families`) supplies only a *reader*, text →
:class:`Coords` in its own frame; the records here (:class:`ParseContext`, :class:`Parsed`),
the number/shape finders, the frame conversion and the verdict/option rules are shared, so
the same output form is read the same way by every family that uses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pytest_uiground.record import jsontext
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.jsontext import MAX_DEPTH

TINYCLICK_LOC_OFFSET = 0.0
"""TinyClick's own post-processing dequantizes ``<loc_N>`` as ``N / 1000`` (then floors to a
pixel): the default, because published TinyClick numbers came from that code."""
FLORENCE2_LOC_OFFSET = 0.5
"""transformers' Florence-2 post-processor uses the bin centre ``(N + 0.5) / 1000``; passing it
reads other Florence-2 models' ``<loc_N>`` runs (boxes included) instead of TinyClick's rule."""

LOC_BINS = 1000
TOLERANCE = 1.0  # units of the family's own scale accepted beyond the edges (rounding)


@dataclass(frozen=True)
class ParseContext:
    """What a parser needs to know about the image besides the text.

    ``model_input_size`` is the (width, height) the processor actually fed the model
    (Qwen2.5-VL: ``image_grid_thw[1:] * 14`` read as (w, h)). Absolute-pixel families
    need it; its defaults differ between transformers, qwen-vl-utils and UI-TARS, so it
    is never guessed. ``strict_card`` and ``loc_offset`` are the two reader switches a
    suite may set (the ELAM card's regex only; TinyClick's vs Florence-2's bin rule).
    """

    image_size: tuple[int, int]
    model_input_size: tuple[int, int] | None = None
    strict_card: bool = True
    loc_offset: float = TINYCLICK_LOC_OFFSET


@dataclass(frozen=True)
class Parsed:
    """A parse result in the internal convention; ``note`` says why a format error (or, on a
    readable answer, what was unusual about it, e.g. a point beyond the image)."""

    point: Point | None = None
    box: Box | None = None
    verdict: str | None = None
    option: str | None = None
    answer: str | None = None
    format_error: bool = False
    note: str = ""
    refused: bool = False


@dataclass(frozen=True)
class Coords:
    """A reader's result: a point (and box), or the family's refusal, or why neither."""

    point: Point | None = None
    box: Box | None = None
    error: str = ""
    refused: bool = False
    note: str = ""


# --- numbers and shapes ------------------------------------------------------------

NUM = r"-?\d+(?:\.\d+)?"
# A 2- or 4-number tuple in () or [] (Qwen2-VL, UI-TARS, plain answers).
_TUPLE = rf"[\(\[]\s*{NUM}\s*,\s*{NUM}(?:\s*,\s*{NUM}\s*,\s*{NUM})?\s*[\)\]]"
# Optionally followed by a second tuple: Qwen2-VL's "(x1,y1),(x2,y2)" box. The separator is
# written ``\s*(?:,\s*)?`` rather than ``\s*,?\s*`` (the same strings): with two ``\s*`` side by
# side a tuple followed by 100 kB of spaces was split every possible way, O(n^2) (issue 34 item 3).
_TUPLE_PAIR_RE = re.compile(rf"({_TUPLE})(?:\s*(?:,\s*)?({_TUPLE}))?")
_POINT_TAG_RE = re.compile(rf"<point>\s*({NUM})[\s,]+({NUM})\s*</point>")
_BBOX_TAG_RE = re.compile(rf"<bbox>\s*({NUM})[\s,]+({NUM})[\s,]+({NUM})[\s,]+({NUM})\s*</bbox>")
_JSON_KEY_RE = re.compile(r"\"(?:bbox_2d|point_2d)\"\s*:\s*\[([^\[\]]*)\]")
_NUM_RE = re.compile(NUM)


MAX_JSON_DEPTH = MAX_DEPTH
"""Deeper JSON is refused before parsing: how deep ``json.loads`` goes before raising RecursionError
depends on the Python version (3.11 raises on 5,000 nested lists, 3.12 parses them), and an answer's
reading must not. The package's one bound (:mod:`pytest_uiground.record.jsontext`), files included."""


def loads(text: str) -> Any:
    """``json.loads``, refusing nesting deeper than :data:`MAX_JSON_DEPTH` with ``RecursionError`` on every
    Python (:func:`pytest_uiground.record.jsontext.loads`: a linear scan of the brackets outside strings first)."""
    return jsontext.loads(text)


def whole_number(digits: str) -> int | None:
    """``int(digits)``, or None where Python refuses it: more digits than
    ``sys.get_int_max_str_digits()`` (4,300 by default) raise ValueError, which a reader must turn
    into a format error naming it, never let escape as the sample's error (issue 34 item 6)."""
    try:
        return int(digits)
    except ValueError:
        return None


def brief(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for notes about answers that may be megabytes."""
    text = repr(value) if not isinstance(value, str) or len(value) <= limit * 4 else repr(value[:limit * 4])
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def numbers(text: str) -> list[float]:
    return [float(v) for v in _NUM_RE.findall(text)]


def first_shape(text: str) -> list[float] | None:
    """The first point (2 numbers) or box (4 numbers) in any bracket/tag form.

    Earliest in the text wins ("several points: the first one wins"); a pair of
    2-tuples is one box.
    """
    found: list[tuple[int, list[float]]] = []
    m = _TUPLE_PAIR_RE.search(text)
    if m:
        first = numbers(m.group(1))
        if len(first) == 2 and m.group(2) and len(second := numbers(m.group(2))) == 2:
            first = first + second
        found.append((m.start(), first))
    for rx in (_POINT_TAG_RE, _BBOX_TAG_RE):
        if t := rx.search(text):
            found.append((t.start(), [float(g) for g in t.groups()]))
    return min(found, key=lambda f: f[0])[1] if found else None


def first_qwen_json(text: str) -> list[float] | None:
    """The first well-formed ``"bbox_2d"``/``"point_2d"`` value, read without json.loads.

    A regex rather than a JSON parser keeps truncated generations (no closing fence or
    brace) readable.
    """
    for m in _JSON_KEY_RE.finditer(text):
        values = numbers(m.group(1))
        if len(values) in (2, 4):
            return values
    return None


def to_coords(values: list[float], sx: float, sy: float, scale: str) -> Coords:
    """Scale a point or box by (sx, sy) into the internal convention.

    Values within :data:`TOLERANCE` of the edges are clipped (rounding); a value further out
    stays where it is, beyond 0..1, with a note naming it and the likely frame mix-up: the
    benchmarks' scorers count such a point as a plain miss on a box, not as a format error
    (and OSWorld-G reads a point with both coordinates negative as its refusal).
    """
    notes, norm = [], []
    for i, v in enumerate(values):
        limit = sx if i % 2 == 0 else sy
        axis = "x" if i % 2 == 0 else "y"
        if v < -TOLERANCE:
            notes.append(f"negative {axis}={v:g} is outside {scale}")
            norm.append(v / limit)
        elif v > limit + TOLERANCE:
            notes.append(f"{axis}={v:g} is beyond {limit:g}: {mixup_hint(scale)}")
            norm.append(v / limit)
        else:
            norm.append(min(1.0, max(0.0, v / limit)))
    note = "; ".join(notes)
    if len(norm) == 2:
        return Coords(point=Point(norm[0], norm[1]), note=note)
    x0, x1 = sorted((norm[0], norm[2]))
    y0, y1 = sorted((norm[1], norm[3]))
    box = Box(x0, y0, x1, y1)
    return Coords(point=box.center, box=box, note=note)


def mixup_hint(scale: str) -> str:
    if scale == "relative 0..1000":
        return "this family answers in relative 0..1000; the value looks like absolute pixels (convention mix-up?)"
    if scale == "loc bins":
        return "Florence-2 <loc_N> tokens have 1000 bins (0..999)"
    return (
        f"this family answers in {scale}; the value looks like original-image pixels, "
        "or ParseContext.model_input_size is not the size the processor used"
    )


def model_input_size(ctx: ParseContext, family: str = "") -> tuple[int, int]:
    """The size an absolute-pixel family's answer is relative to; never guessed."""
    if ctx.model_input_size is None:
        who = f"{family!r} reads" if family else "absolute-pixel families (uitars, qwen-vl) read"
        raise ValueError(
            f"ParseContext.model_input_size is required: {who} pixels of the resized image; "
            "pass the size the processor fed the model (image_grid_thw[1:] * 14 as (w, h)); "
            "it is never guessed because resize defaults differ between libraries"
        )
    w, h = ctx.model_input_size
    if w <= 0 or h <= 0:
        raise ValueError(f"ParseContext.model_input_size must be positive, got {ctx.model_input_size!r}")
    return w, h


# --- verdicts, options ------------------------------------------------------------


def parse_verdict(text: str) -> str | None:
    """The card's rule for every family: case-sensitive, failure keywords first.

    "FAILED" or "is not met" anywhere → failed; else "PASSED" or "is met" → passed;
    else None. Plain substring tests, as in the card ("This method" contains "is met").
    """
    if "FAILED" in text or "is not met" in text:
        return "failed"
    if "PASSED" in text or "is met" in text:
        return "passed"
    return None
_LETTER = r"([A-F])(?![A-Za-z0-9])"
_BOXED_RE = re.compile(rf"\\boxed\{{\s*\(?{_LETTER}")
_STATEMENT_RES = (
    # "the answer is C", "Answer: (C)", "**Final answer:** C", "correct option is B"
    # Written so that no two neighbouring repeats can take the same character: the plain form
    # ``[\s:\-\*]* (option\s*)? [\(\[\*"']* \s*`` (the same strings) tried every split of a run of
    # spaces or asterisks between its three repeats, O(n^2) per "answer" (270 s on 100 kB, issue 34
    # item 3). After the keyword's run, the quote/bracket run must start with a character that run
    # cannot take; after "option" it may start with any of its characters.
    re.compile(
        r"(?i:\b(?:final\s+answer|correct\s+answer|answer|correct\s+option|correct\s+choice))"
        r"[\s:\-\*]*(?:(?i:is|would\s+be|should\s+be)[\s:\-\*]*)?"
        r"(?:(?i:option|choice)\s*(?:[\(\[\*\"'][\(\[\*\"']*\s*)?|(?:[\(\[\"'][\(\[\*\"']*\s*)?)"
        rf"{_LETTER}"
    ),
    # "C is correct", "(C) is the right answer"
    re.compile(rf"[\(\[]?\b{_LETTER}[\)\]]?\.?\s+(?i:is\s+(?:the\s+)?(?:correct|right|best))"),
)
# A line that is only a letter, or starts with a letter and a delimiter ("C.", "C:",
# "C)", "(C)"). The delimiter is required: MMBench-GUI's ``^[ \t]*([A-F])[\.:]?``
# makes it optional and so reads "Based on ..." as B.
_LINE_RE = re.compile(
    r"^[ \t]*(?:[\(\[]([A-F])[\)\]]|([A-F])[\.:\)])(?=\s|$)|^[ \t]*([A-F])[ \t]*$", re.MULTILINE
)
_PAREN_RE = re.compile(r"\(([A-F])\)")


def parse_option(text: str) -> tuple[str | None, str]:
    """The chosen letter A–F and, when none, why.

    Explicit answer statements win and the *last* one counts (models restate and
    correct themselves): ``\\boxed{C}`` first, then "answer is C"/"Answer: C". Only
    without any statement are letter-led lines and "(C)" read; if those name more
    than one letter the output is ambiguous (e.g. an echoed option list) and is a
    format error rather than a guess.
    """
    for tier in ((_BOXED_RE,), _STATEMENT_RES):
        hits = [(m.start(), m.group(1)) for rx in tier for m in rx.finditer(text)]
        if hits:
            return max(hits)[1], ""
    letters = [next(g for g in m.groups() if g) for m in _LINE_RE.finditer(text)]
    letters += _PAREN_RE.findall(text)
    distinct = sorted(set(letters))
    if len(distinct) == 1:
        return distinct[0], ""
    if distinct:
        return None, f"ambiguous option: letters {', '.join(distinct)} and no answer statement"
    return None, "no option letter A-F found"




# --- answers in a frame, tool calls -------------------------------------------------


def in_frame(x: float, y: float, sx: float, sy: float, frame: str) -> Coords:
    """A point from numbers in a frame of ``sx`` x ``sy`` units, never clipped or refused.

    A point beyond the image or the model input stays a point (every benchmark scorer
    counts it as a plain miss on a box, and OSWorld-G reads a negative point as its
    refusal); the note says which coordinate was out and the likely frame mix-up.
    """
    notes = []
    for axis, v, limit in (("x", x, sx), ("y", y, sy)):
        if v < -TOLERANCE:
            notes.append(f"{axis}={v:g} is negative ({frame})")
        elif v > limit + TOLERANCE:
            notes.append(f"{axis}={v:g} is beyond {limit:g} ({frame})")
    return Coords(point=Point(x / sx, y / sy), note="; ".join(notes))


_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def tool_calls(text: str) -> list[dict[str, object] | None]:
    """Every ``<tool_call>`` block's JSON object in order (``None`` for one that is not valid
    JSON, e.g. cut off); the Qwen chat templates' function-call form."""

    out: list[dict[str, object] | None] = []
    for m in _TOOL_CALL_RE.finditer(text):
        try:
            value = loads(m.group(1).strip())
        except (ValueError, RecursionError):  # RecursionError: nested past the interpreter's limit
            value = None
        out.append(value if isinstance(value, dict) else None)
    return out


def is_terminate(call: dict[str, object] | None) -> bool:
    """A ``computer_use`` call whose action is ``terminate``: the tool's "I cannot do this"."""
    if call is None:
        return False
    args = call.get("arguments")
    return isinstance(args, dict) and args.get("action") == "terminate"
