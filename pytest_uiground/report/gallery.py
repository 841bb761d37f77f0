"""The "samples to look at" section of ``report.html``: one card per regressed,
errored or wrong sample, with its screenshot and what the model did.

A reviewer deciding whether a drop is real wants to *see* the samples: the
ground-truth box, where the model clicked and its raw output. Drawing thumbnails is
the one part of the page that needs PIL and the dataset's images, so it lives here,
apart from the numbers (:mod:`pytest_uiground.report.html`). PIL is imported inside
the functions that draw. Raw model output is untrusted text and always escaped.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_uiground.geometry import Box
from pytest_uiground.prediction import Prediction
from pytest_uiground.results import SampleResult

from .markup import esc, img_tag, is_number

if TYPE_CHECKING:
    from PIL import Image

    from pytest_uiground.sample import Sample

Lookup = Callable[[str], "Sample | None"]

THUMB_WIDTH = 480
THUMB_MAX_HEIGHT = 720
GALLERY_LIMIT = 30
RAW_LIMIT = 600
PNG_BUDGET = 200_000  # bytes; a larger (photographic) thumbnail is sent as JPEG if that is smaller
TRUTH_RGB = (0, 255, 0)
PREDICTION_RGB = (255, 0, 0)
CLICK_RGB = (0, 96, 255)
WRONG_OUTCOMES = frozenset({"known-failure", "wrong-no-baseline", "wrong-updating"})


def gallery_rank(record: SampleResult) -> int | None:
    """0 regression, 1 error, 2 wrong; None for a sample that needs no look."""
    outcome = record.outcome
    if outcome == "regression":
        return 0
    if outcome == "error" or record.error is not None:
        return 1
    if outcome in WRONG_OUTCOMES:
        return 2
    if not outcome:  # a record without an outcome: judge it by its score
        return None if record.right else 2
    return None


def gallery_records(records: Iterable[SampleResult], limit: int = GALLERY_LIMIT) -> list[SampleResult]:
    ranked = [(rank, r.id, r) for r in records if (rank := gallery_rank(r)) is not None]
    ranked.sort(key=lambda t: (t[0], t[1]))
    return [r for _, _, r in ranked[:limit]]


def _finite(values: Sequence[float]) -> bool:
    return all(is_number(v) for v in values)


def draw_overlay(img: Image.Image, sample: Sample | None, prediction: Prediction | None) -> None:
    """Ground truth box in green, predicted box or point in red, the input click in blue (in place)."""
    from PIL import ImageDraw

    w, h = img.size
    draw = ImageDraw.Draw(img)
    truth = sample.target.box if sample is not None else None
    if truth is not None:
        draw.rectangle((truth.x0 * w, truth.y0 * h, truth.x1 * w, truth.y1 * h), outline=TRUTH_RGB, width=3)
    if sample is not None and sample.click is not None:
        cx, cy = sample.click.x * w, sample.click.y * h
        draw.ellipse([cx - 4, cy - 4, cx + 4, cy + 4], fill=CLICK_RGB)
    if prediction is None:
        return
    box = prediction.box
    if box is not None and _finite(box):
        draw.rectangle((box.x0 * w, box.y0 * h, max(box.x0, box.x1) * w, max(box.y0, box.y1) * h),
                       outline=PREDICTION_RGB, width=2)
    point = prediction.point
    if point is not None and _finite(point):
        px, py = min(max(point.x, 0.0), 1.0) * (w - 1), min(max(point.y, 0.0), 1.0) * (h - 1)
        draw.line([px - 9, py, px + 9, py], fill=PREDICTION_RGB, width=2)
        draw.line([px, py - 9, px, py + 9], fill=PREDICTION_RGB, width=2)
        draw.ellipse([px - 6, py - 6, px + 6, py + 6], outline=PREDICTION_RGB, width=2)


def encode_thumbnail(img: Image.Image) -> str:
    """PNG (exact colours); JPEG instead when a photographic PNG would be large and JPEG is smaller."""
    png = io.BytesIO()
    img.save(png, format="PNG", optimize=True)
    data, mime = png.getvalue(), "image/png"
    if len(data) > PNG_BUDGET:
        jpg = io.BytesIO()
        img.save(jpg, format="JPEG", quality=85)
        if jpg.tell() < len(data):
            data, mime = jpg.getvalue(), "image/jpeg"
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def thumbnail(sample: Sample, prediction: Prediction | None) -> str:
    """The screenshot, at most ``THUMB_WIDTH`` wide, with the overlay drawn at that size."""
    img = sample.image.load().copy()
    img.thumbnail((THUMB_WIDTH, THUMB_MAX_HEIGHT))
    img = img if img.mode == "RGB" else img.convert("RGB")
    draw_overlay(img, sample, prediction)
    return encode_thumbnail(img)


def _prediction_text(pred: Prediction | None) -> str:
    parsed: dict[str, Any] = {} if pred is None else {
        "point": pred.point, "box": pred.box, "verdict": pred.verdict, "option": pred.option, "answer": pred.answer}
    shown = {k: v for k, v in parsed.items() if v is not None}
    return json.dumps(shown) if shown else "nothing parsed"


def card(record: SampleResult, lookup: Lookup | None) -> str:
    sid = record.id
    sample = lookup(sid) if lookup is not None else None
    picture, note = "", ""
    if sample is not None:
        try:
            picture = img_tag(thumbnail(sample, record.prediction), sid, cls="thumb", extra=f' data-id="{esc(sid)}"')
        except Exception as exc:  # any loader failure: the card still shows the text
            note = f"image unavailable: {type(exc).__name__}: {exc}"
    else:
        note = "image unavailable: the sample is not in the loaded suite"
    outcome = record.outcome or "wrong"
    truth = sample.target.box if sample is not None else None
    lines = [f'<b>{esc(sid)}</b> <span class="tag {esc(outcome)}">{esc(outcome)}</span>',
             f"<div>instruction: {esc(sample.instruction if sample is not None else '-')}</div>",
             f"<div>target box: {esc(_box_text(truth))}</div>",
             f"<div>prediction: {esc(_prediction_text(record.prediction))}"
             f"{' (format error)' if record.format_error else ''}</div>"]
    lines.append(f"<div>raw output:</div><pre>{esc(_clip(record.raw))}</pre>")
    if record.error:
        lines.append(f"<div>error:</div><pre>{esc(_clip(record.error))}</pre>")
    if note:
        lines.append(f'<div class="note">{esc(note)}</div>')
    cls = "card" if picture else "card text"
    return f'<figure class="{cls}" id="sample-{esc(sid)}">{picture}<figcaption>{"".join(lines)}</figcaption></figure>'


def _box_text(box: Box | None) -> str:
    return "[" + ", ".join(f"{v:.3f}" for v in box) + "]" if box is not None else "-"


def _clip(text: str) -> str:
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + f" ... (+{len(text) - RAW_LIMIT} characters)"


def gallery(records: Sequence[SampleResult], lookup: Lookup | None, limit: int = GALLERY_LIMIT) -> str:
    chosen = gallery_records(records, limit)
    total = sum(gallery_rank(r) is not None for r in records)
    if not chosen:
        return '<p class="note">no regressed, errored or wrong samples</p>'
    legend = ('<p class="legend"><span style="color:#0a0">&#9632; ground truth</span>'
              '<span style="color:#d00">&#9632; prediction</span><span style="color:#06f">&#9632; input click</span>'
              f"<span>showing {len(chosen)} of {total}: regressions first, then errors, then wrong answers</span></p>")
    return legend + '<div class="gallery">' + "\n".join(card(r, lookup) for r in chosen) + "</div>"
