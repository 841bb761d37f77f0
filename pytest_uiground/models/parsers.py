"""Parsers: one model family's raw text → the internal convention (normalized 0..1).

Every family speaks its own coordinate dialect (Molmo percent, Qwen2-VL 0..1000,
Qwen2.5-VL smart-resized pixels, Florence-2 ``<loc_N>`` bins). Mixing them up is the
most common cause of near-zero scores in peer harnesses, so each family's scale is
fixed here and *never* guessed from the value range: a value outside the family's
range is a format error whose note names the likely mix-up, not a silent rescale.

The ELAM/Molmo parser reproduces the AutomotiveUI card's scorer exactly by default
(``strict_card=True``); every deviation from a reference scorer is a keyword that the
suite sets explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pytest_uiground.record.geometry import Box, Point, clip_point
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import TASK_KINDS

FAMILIES: tuple[str, ...] = ("elam", "molmo", "uitars", "uground", "qwen-vl", "qwen3-vl", "tinyclick")

TINYCLICK_LOC_OFFSET = 0.0
"""TinyClick's own post-processing dequantizes ``<loc_N>`` as ``N / 1000`` (then floors to a
pixel): the default, because published TinyClick numbers came from that code."""
FLORENCE2_LOC_OFFSET = 0.5
"""transformers' Florence-2 post-processor uses the bin centre ``(N + 0.5) / 1000``; passing it
reads other Florence-2 models' ``<loc_N>`` runs (boxes included) instead of TinyClick's rule."""

_LOC_BINS = 1000
_TOLERANCE = 1.0  # units of the family's own scale accepted beyond the edges (rounding)


@dataclass(frozen=True)
class ParseContext:
    """What a parser needs to know about the image besides the text.

    ``model_input_size`` is the (width, height) the processor actually fed the model
    (Qwen2.5-VL: ``image_grid_thw[1:] * 14`` read as (w, h)). Absolute-pixel families
    need it; its defaults differ between transformers, qwen-vl-utils and UI-TARS, so it
    is never guessed.
    """

    image_size: tuple[int, int]
    model_input_size: tuple[int, int] | None = None


@dataclass(frozen=True)
class Parsed:
    """A parse result in the internal convention; ``note`` says why a format error."""

    point: Point | None = None
    box: Box | None = None
    verdict: str | None = None
    option: str | None = None
    answer: str | None = None
    format_error: bool = False
    note: str = ""
    refused: bool = False  # an explicit "not on the screen" answer in the family's refusal form


@dataclass(frozen=True)
class _Coords:
    point: Point | None = None
    box: Box | None = None
    error: str = ""


# --- numbers and shapes ------------------------------------------------------------

_NUM = r"-?\d+(?:\.\d+)?"
# A 2- or 4-number tuple in () or [] (Qwen2-VL, UI-TARS, plain answers).
_TUPLE = rf"[\(\[]\s*{_NUM}\s*,\s*{_NUM}(?:\s*,\s*{_NUM}\s*,\s*{_NUM})?\s*[\)\]]"
# Optionally followed by a second tuple: Qwen2-VL's "(x1,y1),(x2,y2)" box.
_TUPLE_PAIR_RE = re.compile(rf"({_TUPLE})(?:\s*,?\s*({_TUPLE}))?")
_POINT_TAG_RE = re.compile(rf"<point>\s*({_NUM})[\s,]+({_NUM})\s*</point>")
_BBOX_TAG_RE = re.compile(rf"<bbox>\s*({_NUM})[\s,]+({_NUM})[\s,]+({_NUM})[\s,]+({_NUM})\s*</bbox>")
_JSON_KEY_RE = re.compile(r"\"(?:bbox_2d|point_2d)\"\s*:\s*\[([^\[\]]*)\]")
_NUM_RE = re.compile(_NUM)

# The card's regex, verbatim: a decimal point is REQUIRED (``x="61"`` is a miss).
CARD_POINT_RE = re.compile(r'<point x="(?P<x>\d+\.\d+)" y="(?P<y>\d+\.\d+)"')
# Extensions (strict_card=False only): Molmo's multi-point form and integer percents.
_MOLMO_MULTI_RE = re.compile(r'\bx1="(\d+(?:\.\d+)?)"\s+y1="(\d+(?:\.\d+)?)"')
_MOLMO_INT_RE = re.compile(r'<point\s+x="(\d+(?:\.\d+)?)"\s+y="(\d+(?:\.\d+)?)"')
_LOC_RUN_RE = re.compile(r"(?:<loc_\d+>\s*)+")


def _numbers(text: str) -> list[float]:
    return [float(v) for v in _NUM_RE.findall(text)]


def _first_shape(text: str) -> list[float] | None:
    """The first point (2 numbers) or box (4 numbers) in any bracket/tag form.

    Earliest in the text wins ("several points: the first one wins"); a pair of
    2-tuples is one box.
    """
    found: list[tuple[int, list[float]]] = []
    m = _TUPLE_PAIR_RE.search(text)
    if m:
        first = _numbers(m.group(1))
        if len(first) == 2 and m.group(2) and len(second := _numbers(m.group(2))) == 2:
            first = first + second
        found.append((m.start(), first))
    for rx in (_POINT_TAG_RE, _BBOX_TAG_RE):
        if t := rx.search(text):
            found.append((t.start(), [float(g) for g in t.groups()]))
    return min(found, key=lambda f: f[0])[1] if found else None


def _to_coords(values: list[float], sx: float, sy: float, scale: str) -> _Coords:
    """Scale a point or box by (sx, sy), refusing values outside the family's range."""
    for i, v in enumerate(values):
        limit = sx if i % 2 == 0 else sy
        axis = "x" if i % 2 == 0 else "y"
        if v < -_TOLERANCE:
            return _Coords(error=f"negative {axis}={v:g} is outside {scale}")
        if v > limit + _TOLERANCE:
            return _Coords(error=f"{axis}={v:g} is beyond {limit:g}: {_mixup_hint(scale)}")
    norm = [min(1.0, max(0.0, v / (sx if i % 2 == 0 else sy))) for i, v in enumerate(values)]
    if len(norm) == 2:
        return _Coords(point=Point(norm[0], norm[1]))
    x0, x1 = sorted((norm[0], norm[2]))
    y0, y1 = sorted((norm[1], norm[3]))
    box = Box(x0, y0, x1, y1)
    return _Coords(point=box.center, box=box)


def _mixup_hint(scale: str) -> str:
    if scale == "relative 0..1000":
        return "this family answers in relative 0..1000; the value looks like absolute pixels (convention mix-up?)"
    if scale == "loc bins":
        return "Florence-2 <loc_N> tokens have 1000 bins (0..999)"
    return (
        f"this family answers in {scale}; the value looks like original-image pixels, "
        "or ParseContext.model_input_size is not the size the processor used"
    )


# --- coordinate parsers per family --------------------------------------------------


def _coords_molmo(text: str, ctx: ParseContext, *, strict_card: bool, loc_offset: float) -> _Coords:
    """Molmo/ELAM percent 0..100, read exactly as the AutomotiveUI card script does.

    Card: first ``<point x="NN.N" y="NN.N"``, divided by 100, clipped to [0, 1]; no
    range check (the card clips instead). With ``strict_card=False`` the multi-point
    form ``x1=".." y1=".."`` and integer percents are also read, only after the card
    regex fails; the card itself would count those outputs as misses.
    """
    m = CARD_POINT_RE.search(text)
    if m:
        return _Coords(point=clip_point(Point(float(m.group("x")) / 100, float(m.group("y")) / 100)))
    if not strict_card:
        hits = [h for rx in (_MOLMO_MULTI_RE, _MOLMO_INT_RE) if (h := rx.search(text))]
        if hits:
            h = min(hits, key=lambda h: h.start())
            return _Coords(point=clip_point(Point(float(h.group(1)) / 100, float(h.group(2)) / 100)))
    return _Coords(error='no <point x="NN.N" y="NN.N"> found (the card\'s regex requires a decimal point)')


def _coords_relative(text: str, ctx: ParseContext, *, strict_card: bool, loc_offset: float) -> _Coords:
    """Qwen2-VL/UGround and Qwen3-VL: relative 0..1000, ``/1000`` on both axes."""
    values = _first_qwen_json(text) or _first_shape(text)
    if values is None:
        return _Coords(error="no coordinates found; expected (x, y) or a box in relative 0..1000")
    return _to_coords(values, 1000.0, 1000.0, "relative 0..1000")


def _coords_pixels(text: str, ctx: ParseContext, *, strict_card: bool, loc_offset: float) -> _Coords:
    """Qwen2.5-VL and UI-TARS-1.5: absolute pixels of the smart-resized model input.

    UI-TARS writes ``Thought: ... Action: click(...)``; like its own parser we read
    the last ``Action:`` part so numbers in the thought are never taken for a click.
    """
    w, h = _model_input_size(ctx)
    if (cut := text.rfind("Action:")) >= 0:
        text = text[cut:]
    values = _first_qwen_json(text) or _first_shape(text)
    if values is None:
        return _Coords(error=f"no coordinates found; expected pixels of the {w}x{h} model input")
    coords = _to_coords(values, float(w), float(h), f"absolute pixels of the {w}x{h} model input")
    ow, oh = ctx.image_size
    fits_original = all(v <= (ow if i % 2 == 0 else oh) + _TOLERANCE for i, v in enumerate(values))
    if coords.error and min(values) >= -_TOLERANCE and fits_original:
        coords = _Coords(error=f"{coords.error} (every value fits the original {ow}x{oh} image)")
    return coords


# SamsungLabs/TinyClick tinyclick_utils.py ``postprocess``: its two patterns, verbatim.
TINYCLICK_ACTION_RE = re.compile(r"</s><s>(<[^>]+>|[^<\s]+)\s*([^<]*?)(<loc_\d+>.*)")
TINYCLICK_POINT_RE = re.compile(r"<loc_(\d+)><loc_(\d+)>")


def _coords_tinyclick(text: str, ctx: ParseContext, *, strict_card: bool, loc_offset: float) -> _Coords:
    """TinyClick's own ``postprocess`` (SamsungLabs/TinyClick ``tinyclick_utils.py``).

    The action right after ``</s><s>`` must be ``click``; the click point is the *first*
    adjacent ``<loc_x><loc_y>`` pair anywhere (for a 4-token box, its first corner),
    floored to a pixel of the original image: ``int(x / 1000 * W)``. Where that code
    returns ``(0, 0)`` (no match, another action) this is a format error with the reason,
    a miss either way. The adapter's text starts with ``<s>`` (the decoder start ``</s>``
    is not decoded); replayed outputs may lack both, so the missing prefix is restored
    before matching. A non-zero ``loc_offset`` selects :func:`_coords_florence2` instead.
    """
    if loc_offset != TINYCLICK_LOC_OFFSET:
        return _coords_florence2(text, ctx, strict_card=strict_card, loc_offset=loc_offset)
    if not text.startswith("</s><s>"):
        text = ("</s>" if text.startswith("<s>") else "</s><s>") + text
    m = TINYCLICK_ACTION_RE.search(text)
    if m is None:
        return _Coords(error="no '<action> ... <loc_N>' output (TinyClick's postprocess: action None, (0, 0))")
    if m.group(1) != "click":
        return _Coords(error=f"action {m.group(1)!r} is not 'click' (TinyClick's postprocess scores only "
                             "clicks: (0, 0))")
    pair = TINYCLICK_POINT_RE.search(text)
    if pair is None:
        return _Coords(error="no adjacent <loc_x><loc_y> pair (TinyClick's postprocess: (0, 0))")
    bx, by = int(pair.group(1)), int(pair.group(2))
    if max(bx, by) > _LOC_BINS:  # the last bin is 999; 1000 is within the rounding tolerance
        return _Coords(error=f"<loc_{max(bx, by)}> is beyond the 1000 bins: {_mixup_hint('loc bins')}")
    w, h = ctx.image_size
    px, py = int(bx / _LOC_BINS * w), int(by / _LOC_BINS * h)  # TinyClick's pixel, as it computes it
    return _Coords(point=clip_point(Point(px / w, py / h)))


def _coords_florence2(text: str, ctx: ParseContext, *, strict_card: bool, loc_offset: float) -> _Coords:
    """Other Florence-2 models: the first run of adjacent ``<loc_N>`` tokens, 2 a point, 4 a box
    (its centre), dequantized as ``(N + loc_offset) / 1000`` (transformers' post-processor: 0.5)."""
    m = _LOC_RUN_RE.search(text)
    if m is None:
        return _Coords(error="no <loc_N> tokens found")
    bins = [int(v) for v in re.findall(r"<loc_(\d+)>", m.group(0))]
    if len(bins) not in (2, 4):
        return _Coords(error=f"{len(bins)} adjacent <loc_N> tokens: expected 2 (point) or 4 (box)")
    if max(bins) > _LOC_BINS:
        return _Coords(error=f"<loc_{max(bins)}> is beyond the 1000 bins: {_mixup_hint('loc bins')}")
    values = [(b + loc_offset) * 1000.0 / _LOC_BINS for b in bins]
    return _to_coords(values, 1000.0, 1000.0, "loc bins")


def _first_qwen_json(text: str) -> list[float] | None:
    """The first well-formed ``"bbox_2d"``/``"point_2d"`` value, read without json.loads.

    A regex rather than a JSON parser keeps truncated generations (no closing fence or
    brace) readable.
    """
    for m in _JSON_KEY_RE.finditer(text):
        values = _numbers(m.group(1))
        if len(values) in (2, 4):
            return values
    return None


def _model_input_size(ctx: ParseContext) -> tuple[int, int]:
    if ctx.model_input_size is None:
        raise ValueError(
            "ParseContext.model_input_size is required for absolute-pixel families (uitars, qwen-vl): "
            "pass the size the processor fed the model (image_grid_thw[1:] * 14 as (w, h)); "
            "it is never guessed because resize defaults differ between libraries"
        )
    w, h = ctx.model_input_size
    if w <= 0 or h <= 0:
        raise ValueError(f"ParseContext.model_input_size must be positive, got {ctx.model_input_size!r}")
    return w, h


_CoordParser = Callable[..., _Coords]
_COORDS: dict[str, _CoordParser] = {
    "elam": _coords_molmo,
    "molmo": _coords_molmo,
    "uitars": _coords_pixels,
    "uground": _coords_relative,
    "qwen-vl": _coords_pixels,
    "qwen3-vl": _coords_relative,
    "tinyclick": _coords_tinyclick,
}


# --- verdicts, options, answers -----------------------------------------------------


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
    re.compile(
        r"(?i:\b(?:final\s+answer|correct\s+answer|answer|correct\s+option|correct\s+choice))"
        r"[\s:\-\*]*(?:(?i:is|would\s+be|should\s+be)[\s:\-\*]*)?(?:(?i:option|choice)\s*)?"
        rf"[\(\[\*\"']*\s*{_LETTER}"
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


# --- dispatch -----------------------------------------------------------------------


def parse(
    family: str,
    text: str,
    task: str,
    ctx: ParseContext,
    *,
    strict_card: bool = True,
    loc_offset: float = TINYCLICK_LOC_OFFSET,
) -> Parsed:
    """Parse ``text`` from a ``family`` model for a ``task`` kind.

    Raises ValueError for an unknown family or task, and for an absolute-pixel family
    asked for coordinates without ``ctx.model_input_size``. Unreadable model output is
    never an exception: it is ``format_error=True`` with a ``note``.
    """
    coords_of = _COORDS.get(family)
    if coords_of is None:
        raise ValueError(f"unknown model family {family!r}; known: {', '.join(FAMILIES)}")
    if task not in TASK_KINDS:
        raise ValueError(f"unknown task kind {task!r}; known: {', '.join(TASK_KINDS)}")
    if task in ("answer", "vqa"):
        answer = text.strip()
        return Parsed(answer=answer or None, format_error=not answer, note="" if answer else "empty output")
    if task == "option":
        option, why = parse_option(text)
        return Parsed(option=option, format_error=option is None, note=why)
    coords: _Coords = coords_of(text, ctx, strict_card=strict_card, loc_offset=loc_offset)
    if task == "detect":  # a box if the model gave one, else its point
        found = coords.point is not None or coords.box is not None
        note = "empty output" if not text.strip() else coords.error
        return Parsed(point=coords.point, box=coords.box, format_error=not found, note=note)
    if task == "point":
        note = "empty output" if not text.strip() else coords.error
        return Parsed(point=coords.point, box=coords.box, format_error=coords.point is None, note=note)
    verdict = parse_verdict(text)
    notes = [] if verdict else ["no verdict: none of FAILED / is not met / PASSED / is met (case-sensitive)"]
    if coords.error:
        notes.append(f"point: {coords.error}")
    return Parsed(point=coords.point, box=coords.box, verdict=verdict, format_error=verdict is None,
                  note="; ".join(notes))


def to_prediction(parsed: Parsed, raw: str, *, latency_ms: float = 0.0) -> Prediction:
    """The prediction an adapter returns for a parsed output (raw text kept for reports)."""
    return Prediction(point=parsed.point, box=parsed.box, verdict=parsed.verdict, option=parsed.option,
                      answer=parsed.answer, raw=raw, format_error=parsed.format_error, latency_ms=latency_ms,
                      refused=parsed.refused)
