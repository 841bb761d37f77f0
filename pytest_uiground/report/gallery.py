"""The pictures of the sample browser: one screenshot per screen and one zoomed crop per sample.

On a 1080p screenshot a thumbnail makes the target a speck, so every sample gets a
small crop of the *original* pixels around the ground truth and the prediction, with
both drawn (green truth, red prediction, blue input click, purple: the baseline's answer on a
sample whose outcome changed). The crop is the sample
table's thumbnail and the detail view's zoom; it is also written to
``report_files/crops/`` so ``compare`` can show flipped samples without the dataset.
The full screenshot is stored once per screen (samples often share one), downscaled,
and the detail view draws each sample's marks over it in the browser (SVG), so a
screen with six targets costs one image, not six.

Small runs embed every image as a ``data:`` URI (one file to mail or attach); large
ones (see :data:`INLINE_MAX_SAMPLES`) write the screens and crops beside the page
under ``report_files/`` and load them lazily, keeping the HTML a few megabytes at
5,000 samples. PIL is imported inside the functions that draw.
"""

from __future__ import annotations

import base64
import hashlib
import io
import math
import os
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_uiground.record.geometry import Box
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.report.markup import is_number

if TYPE_CHECKING:
    from PIL import Image, ImageDraw

    from pytest_uiground.record.sample import Sample

Lookup = Callable[[str], "Sample | None"]

SCREEN_MAX = (1280, 1600)  # the detail view's screenshot, at most this size
CROP_SIZE = 320  # the crop's longer side, in pixels
CROP_MIN_PX = 64  # the smallest region cropped from the original, in its pixels (a 5x zoom at CROP_SIZE)
NEAR = 3.0  # a prediction within this many target extents (at least CROP_MIN_PX) of the target shares its crop
CROP_PAD = 0.6  # padding around truth and prediction, as a share of their extent
INLINE_MAX_SAMPLES = 600  # above this, images are files beside the page
DRAWN_MAX = 24
"""Beside-the-page reports draw the crops of at most this many samples (the first a person looks
at: regressions, errors, wrong answers) and link every screenshot to the dataset's file; the page
draws the other crops from that file when a sample is opened. On the 2-core machine measured
(perf/bench_replay_report.py, 1,581 ScreenSpot-Pro-sized screens) a drawn crop costs ~0.22 s
(0.15 s decoding the screenshot, 0.07 s the crop) and a downscaled copy of the screen as much
as decoding, hence the link; 24 crops keep the report within 2x of the replay it reports."""
PROGRESS_EVERY = 5.0  # seconds between the progress lines while a report is written
FILES_DIR = "report_files"
TRUTH_RGB = (0, 200, 0)
PREDICTION_RGB = (230, 0, 0)
CLICK_RGB = (0, 96, 255)
BEFORE_RGB = (150, 40, 230)  # the baseline's answer, on a regressed, unstable or fixed sample
Rect = tuple[float, float, float, float]


def _finite(values: tuple[float, ...]) -> bool:
    return all(is_number(v) for v in values)


def safe_name(sample_id: str) -> str:
    """A file name for a sample id: readable, and unique through a short hash of the id."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", sample_id)[:80].strip(".") or "sample"
    return f"{stem}-{hashlib.sha256(sample_id.encode()).hexdigest()[:8]}"


def crop_name(sample_id: str) -> str:
    return f"{FILES_DIR}/crops/{safe_name(sample_id)}.png"


@dataclass
class Images:
    """Where the page's images go: inline ``data:`` URIs, or files under ``root/report_files``.

    Crops are always also written as files when ``root`` is set, for ``compare``.
    """

    root: Path | None
    inline: bool
    written: int = 0
    bytes_out: int = field(default=0)
    progress: Callable[[str], None] | None = None
    _last: float = field(default_factory=time.monotonic)
    _start: float = field(default_factory=time.monotonic)

    def tick(self, done: int, total: int, drawn: int) -> None:
        """A progress line every :data:`PROGRESS_EVERY` seconds and one at the end, so a long
        report never looks like a hang after the run's 100 %."""
        if self.progress is None:
            return
        now = time.monotonic()
        if done < total and now - self._last < PROGRESS_EVERY:
            return
        self._last = now
        state = "written" if done == total else "writing"
        self.progress(f"uiground: report {state}: {done}/{total} samples, {drawn} with pictures drawn "
                      f"({total - drawn} drawn by the page from the dataset's files), {now - self._start:.1f} s")

    def put(self, rel: str, data: bytes, mime: str, keep_file: bool = False) -> str:
        self.bytes_out += len(data)
        if self.root is not None and (keep_file or not self.inline):
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            self.written += 1
        if self.inline or self.root is None:
            return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
        return rel


def file_src(path: Path, root: Path | None) -> str:
    """The page's link to a dataset file: relative to the page's folder (the report and the
    dataset can move together), an absolute ``file:`` URI where no relative path exists."""
    target = path.resolve()
    if root is not None:
        try:
            return urllib.parse.quote(Path(os.path.relpath(target, root.resolve())).as_posix())
        except ValueError:  # another drive (Windows)
            pass
    return target.as_uri()


def encode(img: Image.Image, prefer_png: bool) -> tuple[bytes, str]:
    """PNG for exact colours when it is small; JPEG otherwise (photographic screenshots)."""
    img = img if img.mode == "RGB" else img.convert("RGB")
    if prefer_png:
        png = io.BytesIO()
        img.save(png, format="PNG")
        if png.tell() <= 24_000:
            return png.getvalue(), "image/png"
    jpg = io.BytesIO()
    img.save(jpg, format="JPEG", quality=80)
    return jpg.getvalue(), "image/jpeg"


def screen(img: Image.Image) -> tuple[bytes, str, tuple[int, int]]:
    """The screenshot for the detail view, downscaled; the marks are drawn by the browser."""
    small = img.copy()
    small.thumbnail(SCREEN_MAX)
    data, mime = encode(small, prefer_png=False)
    return data, mime, small.size


def _extent(sample: Sample | None, prediction: Prediction | None, width: int = 1, height: int = 1,
            before: Prediction | None = None) -> Rect | None:
    """The normalised rectangle to zoom into: the ground-truth box, with the predicted box or point when it
    is near the target. A prediction across the screen would make the crop the whole screen, and a
    few-pixel target would stay a few pixels: the crop then shows the target, and the full screenshot
    beside it shows where the model clicked."""
    xs: list[float] = []
    ys: list[float] = []
    box = sample.target.box if sample is not None else None
    if box is not None and _finite(tuple(box)):
        xs += [box.x0, box.x1]
        ys += [box.y0, box.y1]
    truth = (xs[0], ys[0], xs[1], ys[1]) if xs else None
    for pred in (prediction, before):
        if pred is None or (truth is not None and not _near(pred, truth, width, height)):
            continue
        if pred.box is not None and _finite(tuple(pred.box)):
            xs += [pred.box.x0, pred.box.x1]
            ys += [pred.box.y0, pred.box.y1]
        if pred.point is not None and _finite(tuple(pred.point)):
            xs.append(pred.point.x)
            ys.append(pred.point.y)
    if not xs:
        return None
    xs = [min(max(x, 0.0), 1.0) for x in xs]
    ys = [min(max(y, 0.0), 1.0) for y in ys]
    return (min(xs), min(ys), max(xs), max(ys))


def _near(prediction: Prediction, truth: Rect, width: int, height: int) -> bool:
    """Whether the predicted point or box lies within ``NEAR`` target extents of the target (in pixels)."""
    x0, y0, x1, y1 = truth[0] * width, truth[1] * height, truth[2] * width, truth[3] * height
    reach = NEAR * max(x1 - x0, y1 - y0, CROP_MIN_PX)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    marks = ([(prediction.point.x, prediction.point.y)] if prediction.point is not None else []) + (
        [(prediction.box.x0, prediction.box.y0), (prediction.box.x1, prediction.box.y1)]
        if prediction.box is not None else [])
    return all(abs(x * width - cx) <= reach and abs(y * height - cy) <= reach for x, y in marks
               if math.isfinite(x) and math.isfinite(y))


def crop_rect(sample: Sample | None, prediction: Prediction | None, width: int, height: int,
              before: Prediction | None = None) -> Rect:
    """The pixel region to zoom into: truth and prediction (and the baseline's answer) with padding, at
    least ``CROP_MIN_PX`` a side."""
    ext = _extent(sample, prediction, width, height, before)
    if ext is None:
        return (0.0, 0.0, float(width), float(height))
    x0, y0, x1, y1 = ext[0] * width, ext[1] * height, ext[2] * width, ext[3] * height
    pad = CROP_PAD * max(x1 - x0, y1 - y0) / 2 + 12
    x0, y0, x1, y1 = x0 - pad, y0 - pad, x1 + pad, y1 + pad
    for lo, hi, limit in ((0, 2, width), (1, 3, height)):
        side = [x0, y0, x1, y1]
        grow = max(0.0, min(CROP_MIN_PX, limit) - (side[hi] - side[lo])) / 2
        a, b = side[lo] - grow, side[hi] + grow
        shift = max(0.0, -a) - max(0.0, b - limit)
        a, b = max(0.0, a + shift), min(float(limit), b + shift)
        if lo == 0:
            x0, x1 = a, b
        else:
            y0, y1 = a, b
    return (x0, y0, x1, y1)


def draw_marks(draw: ImageDraw.ImageDraw, to_px: Callable[[float, float], tuple[float, float]],
               sample: Sample | None, prediction: Prediction | None, size: int,
               before: Prediction | None = None) -> None:
    """Truth box (or polygon) in green, predicted box and point in red, the input click in blue, the
    baseline's answer in purple (drawn first, so this run's answer stays on top where they meet)."""
    box = sample.target.box if sample is not None else None
    poly, frame = (sample.target.polygon, sample.target.frame) if sample is not None else (None, None)
    if poly is not None and frame is not None:  # the polygon itself, not its bounding box (OSWorld-G)
        draw.polygon([to_px(poly[i] / frame[0], poly[i + 1] / frame[1]) for i in range(0, len(poly) - 1, 2)],
                     outline=TRUTH_RGB, width=3)
    elif box is not None:
        draw.rectangle((*to_px(box.x0, box.y0), *to_px(box.x1, box.y1)), outline=TRUTH_RGB, width=3)
    if sample is not None and sample.click is not None and sample.task == "detect":
        cx, cy = to_px(sample.click.x, sample.click.y)
        draw.ellipse([cx - 4, cy - 4, cx + 4, cy + 4], fill=CLICK_RGB)
    if before is not None:
        _draw_answer(draw, to_px, before, size, BEFORE_RGB)
    if prediction is not None:
        _draw_answer(draw, to_px, prediction, size, PREDICTION_RGB)


def _draw_answer(draw: ImageDraw.ImageDraw, to_px: Callable[[float, float], tuple[float, float]],
                 prediction: Prediction, size: int, rgb: tuple[int, int, int]) -> None:
    pbox = prediction.box
    if pbox is not None and _finite(tuple(pbox)):
        ax, ay = to_px(pbox.x0, pbox.y0)
        bx, by = to_px(pbox.x1, pbox.y1)
        draw.rectangle((min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)), outline=rgb, width=2)
    point = prediction.point
    if point is not None and _finite(tuple(point)):
        px, py = to_px(min(max(point.x, 0.0), 1.0), min(max(point.y, 0.0), 1.0))
        draw.line([px - size, py, px + size, py], fill=rgb, width=2)
        draw.line([px, py - size, px, py + size], fill=rgb, width=2)
        draw.ellipse([px - 6, py - 6, px + 6, py + 6], outline=rgb, width=2)


def crop(img: Image.Image, sample: Sample | None, prediction: Prediction | None,
         before: Prediction | None = None) -> tuple[bytes, str, Rect]:
    """The zoomed crop with the marks drawn; returns the image and the region (normalised)."""
    from PIL import Image as PILImage
    from PIL import ImageDraw

    w, h = img.size
    x0, y0, x1, y1 = crop_rect(sample, prediction, w, h, before)
    region = img.crop((round(x0), round(y0), max(round(x1), round(x0) + 1), max(round(y1), round(y0) + 1)))
    scale = CROP_SIZE / max(region.size)
    out = region.resize((max(1, round(region.width * scale)), max(1, round(region.height * scale))),
                        PILImage.Resampling.LANCZOS if scale < 1 else PILImage.Resampling.NEAREST)
    out = out if out.mode == "RGB" else out.convert("RGB")

    def to_px(x: float, y: float) -> tuple[float, float]:
        return ((x * w - x0) * scale, (y * h - y0) * scale)

    draw_marks(ImageDraw.Draw(out), to_px, sample, prediction, 9, before)
    data, mime = encode(out, prefer_png=True)
    return data, mime, (x0 / w, y0 / h, x1 / w, y1 / h)


def box_list(box: Box | None) -> list[float] | None:
    return [round(v, 5) for v in box] if box is not None and _finite(tuple(box)) else None
