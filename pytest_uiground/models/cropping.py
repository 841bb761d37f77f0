"""Cropping strategies: zoom into the screen where the model itself says to look.

Small targets (< 32 px) are where grounders fail, and zooming helps them. A strategy
wraps any model: it asks the model on the whole screen, crops a region around the
model's own answer, enlarges it, asks again, and maps the answer back to the screen.
Every call counts as an attempt (the detection suite's ``attempts`` metric).

The rule that matters: **cropping is driven only by the model's own outputs.** The
wrapped model never sees the ground truth (each sample it gets has an empty target),
and regions are computed from predictions alone. OpenAdapt's "ScreenSeekeR" cropped
around the ground-truth click, which leaks the answer; this module cannot.

Strategies (``--uiground-cropping``):

* ``none``: one call on the full screen.
* ``fixed``: a 3 x 3 grid of overlapping half-size tiles. The full-screen answer
  picks the tile whose centre is nearest to it; the model is asked again on that tile.
  If the full screen gives no answer, the tiles are tried in order until one does.
* ``screenseeker``: a recursive search in the spirit of ScreenSeekeR (ScreenSpot-Pro):
  the model's answer proposes a region, the region is cropped and zoomed, the model
  is asked again inside it, up to ``--uiground-cropping-depth`` levels (default 3), each level
  half the size of the one before; it stops early when the answer stops moving. With
  no answer on the full screen, it searches the four quadrants in order.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_uiground.models.base import DelegatingAdapter, ModelAdapter
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample, Target

STRATEGIES = ("none", "fixed", "screenseeker")
MAX_ZOOM = 4.0
#: ScreenSeekeR stops when the refined point moves less than this (fraction of the screen).
CONVERGED = 0.01
FULL = Box(0.0, 0.0, 1.0, 1.0)
LOG_LIMIT = 10_000


def fixed_tiles() -> list[Box]:
    """The ``fixed`` strategy's 3 x 3 grid of half-size tiles (centres at 1/4, 1/2, 3/4)."""
    return [Box(cx - 0.25, cy - 0.25, cx + 0.25, cy + 0.25) for cy in (0.25, 0.5, 0.75) for cx in (0.25, 0.5, 0.75)]


def quadrants() -> list[Box]:
    return [Box(0.0, 0.0, 0.5, 0.5), Box(0.5, 0.0, 1.0, 0.5), Box(0.0, 0.5, 0.5, 1.0), Box(0.5, 0.5, 1.0, 1.0)]


def window(center: Point, size: float, inside: Box) -> Box:
    """A square-in-relative-units window of side ``size`` (a fraction of the screen)
    centred on ``center``, shifted to lie inside ``inside``."""
    w = min(size, inside.x1 - inside.x0)
    h = min(size, inside.y1 - inside.y0)
    x0 = min(max(center.x - w / 2, inside.x0), inside.x1 - w)
    y0 = min(max(center.y - h / 2, inside.y0), inside.y1 - h)
    return Box(x0, y0, x0 + w, y0 + h)


def to_crop(p: Point, region: Box) -> Point | None:
    """A screen point in the crop's own 0..1 coordinates, or None when outside it."""
    if not region.contains(p):
        return None
    return Point((p.x - region.x0) / (region.x1 - region.x0), (p.y - region.y0) / (region.y1 - region.y0))


def from_crop(pred: Prediction, region: Box) -> Prediction:
    """Map a prediction made on a crop back to screen coordinates."""
    w, h = region.x1 - region.x0, region.y1 - region.y0

    def pt(p: Point) -> Point:
        return Point(region.x0 + p.x * w, region.y0 + p.y * h)

    box = None
    if pred.box is not None:
        box = Box(region.x0 + pred.box.x0 * w, region.y0 + pred.box.y0 * h,
                  region.x0 + pred.box.x1 * w, region.y0 + pred.box.y1 * h)
    return replace(pred, point=pt(pred.point) if pred.point is not None else None, box=box)


def crop_ref(ref: ImageRef, region: Box) -> ImageRef:
    """The region of ``ref``, enlarged by up to :data:`MAX_ZOOM` (decoded only when used)."""
    key = f"{ref.key}#crop{[round(v, 6) for v in region]}"

    def source() -> Any:
        img = ref.load()
        width, height = img.size
        px = (round(region.x0 * width), round(region.y0 * height), round(region.x1 * width), round(region.y1 * height))
        crop = img.crop(px)
        zoom = min(MAX_ZOOM, 1.0 / max(region.x1 - region.x0, region.y1 - region.y0))
        size = (max(1, round(crop.width * zoom)), max(1, round(crop.height * zoom)))
        from PIL import Image

        return crop.resize(size, Image.Resampling.BICUBIC)

    return ImageRef.from_source(key, source)


def blind(sample: Sample, region: Box = FULL) -> Sample:
    """What the wrapped model sees: the (cropped) screen, the instruction and the click,
    never the target or the metadata."""
    click = to_crop(sample.click, region) if sample.click is not None else None
    image = sample.image if region == FULL else crop_ref(sample.image, region)
    return Sample(id=sample.id, image=image, instruction=sample.instruction, task=sample.task, target=Target(),
                  click=click)


def answer_point(pred: Prediction) -> Point | None:
    if pred.error is not None:
        return None
    if pred.point is not None:
        return pred.point
    return pred.box.center if pred.box is not None else None


@dataclass
class _Search:
    """One sample's search state while the batch advances in lock-step."""

    sample: Sample
    best: Prediction | None = None  # the latest answer, in screen coordinates
    last: Prediction | None = None  # the answer of the latest call, if it gave one
    error: str | None = None
    region: Box = FULL
    queue: list[Box] = field(default_factory=list)  # regions to try while nothing was found
    size: float = 1.0
    level: int = 0  # zoom levels used after the first answer
    attempts: int = 0
    done: bool = False


class CroppingModel(DelegatingAdapter):
    """Wraps a model with a cropping strategy; otherwise behaves as that model."""

    def __init__(self, inner: Any, strategy: str, depth: int = 3) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"--uiground-cropping {strategy!r} is unknown; use one of {', '.join(STRATEGIES)}")
        if depth < 1:
            raise ValueError(f"--uiground-cropping-depth {depth} must be 1 or more")
        super().__init__(inner)
        self.strategy, self.depth = strategy, depth
        # (sample id, region) of the latest model calls: what was cropped (bounded for long runs).
        self.log: deque[tuple[str, Box]] = deque(maxlen=LOG_LIMIT)

    def fingerprint(self) -> dict[str, Any]:
        return {**self.inner.fingerprint(), "cropping": self.strategy, "cropping_depth": self.depth}

    def cache_key(self, sample: Sample) -> dict[str, Any] | None:
        """The wrapped model's key for what it is shown (never the ground truth), plus the strategy."""
        inner = self.inner.cache_key(blind(sample))
        return None if inner is None else {**inner, "cropping": self.strategy, "cropping_depth": self.depth}

    def predict(self, samples: Sequence[Sample]) -> list[Prediction]:
        t0 = time.perf_counter()
        states = [_Search(s) for s in samples]
        live = states
        while live:
            self._step(live)
            for st in live:
                self._advance(st)
            live = [st for st in live if not st.done]
        per = (time.perf_counter() - t0) * 1000 / max(1, len(samples))
        out = []
        for st in states:
            if st.best is not None:
                pred = st.best
            elif st.error is not None:
                pred = Prediction(error=st.error)
            else:
                pred = Prediction(raw="no answer on the screen or any crop")
            out.append(replace(pred, attempts=st.attempts, latency_ms=per))
        return out

    def _step(self, states: Sequence[_Search]) -> None:
        """One model call per live sample, on its current region."""
        batch = [blind(st.sample, st.region) for st in states]
        try:
            preds = self.inner.predict(batch)
        except Exception as exc:  # a failed call is an empty answer for each sample in it
            preds = [Prediction.failed(exc) for _ in batch]
        for st, pred in zip(states, preds, strict=True):
            st.attempts += 1
            self.log.append((st.sample.id, st.region))
            st.last = from_crop(pred, st.region) if answer_point(pred) is not None else None
            if pred.error is not None and st.best is None:
                st.error = pred.error

    def _advance(self, st: _Search) -> None:
        found = st.last
        first_call = st.attempts == 1
        if self.strategy == "none":
            st.best, st.done = found, True
            return
        if st.best is None:  # looking for a first answer: the screen, then tiles or quadrants
            if found is None:
                if first_call:
                    st.queue = fixed_tiles() if self.strategy == "fixed" else quadrants()
                if st.queue:
                    st.region = st.queue.pop(0)
                else:
                    st.done = True
                return
            st.best = found
            if not first_call:  # found on a tile or quadrant: that was a zoom level already
                st.level, st.size = 1, st.region.x1 - st.region.x0
                if self.strategy == "fixed" or st.level >= self.depth:
                    st.done = True
                    return
            self._zoom(st, found)
            return
        if found is None:  # the zoomed view lost the target: keep the wider answer
            st.done = True
            return
        before, after = answer_point(st.best), answer_point(found)
        st.best = found
        if self.strategy == "fixed" or st.level >= self.depth or before is None or after is None \
                or math.dist(before, after) < CONVERGED:
            st.done = True
            return
        self._zoom(st, found)

    def _zoom(self, st: _Search, found: Prediction) -> None:
        """The next region, from the model's answer only."""
        p = answer_point(found)
        assert p is not None
        st.level += 1
        if self.strategy == "fixed":
            st.region = min(fixed_tiles(), key=lambda t: math.dist(t.center, p))
        else:
            st.size = 0.5 if st.size >= 1.0 else st.size / 2
            st.region = window(p, st.size, FULL)


def wrap(model: ModelAdapter, strategy: str, depth: int) -> ModelAdapter:
    """``--uiground-cropping``: the model itself for ``none``, else the wrapper."""
    if strategy == "none":
        return model
    return CroppingModel(model, strategy, depth)

