"""Perturbed samples: each suite sample × each perturbation, derived at collection, transformed when run.

A perturbed sample is a :class:`~pytest_uiground.record.sample.Sample` of its own: id
``<id>@<spec>`` (``syn-0-00012-03@scale:0.75``), the original's metadata plus ``perturb=<spec>``,
its target mapped exactly (:mod:`.transforms`). So it is its own pytest test, its own baseline
entry and counts in its own ``perturb=<spec>`` slice, gated like any slice, with no new machinery
in the gate. Its image is a :class:`PerturbedImage`: the original reference and the perturbation,
applied only when the model loads it (collection never decodes, every xdist worker collects
again), never stored in the suite; its ``content_key`` is the original's plus the spec, so the
prediction cache keys on the perturbed pixels.

What is perturbed: ``point`` samples (boxes, polygons, refusals). Other task kinds (a verdict's
box, a detection's box) have no polygon form and are not derived; an invalid sample fails once,
as itself. A geometric perturbation that moves a target (mostly) out of the view (a zoom's crop, a
translation) leaves the sample out and counts it (:attr:`Derived.left_out`): a click outside the
screen cannot be asked for. A target at least :data:`MIN_VISIBLE` visible keeps its visible part.

An instruction variant (``alt:N``, :data:`~pytest_uiground.perturb.transforms.TEXTUAL`) keeps the
original image reference and the target and asks the sample's own N-th ``instruction_alts`` (written
by people, never generated: a paraphrase or another language); a sample without one is left out and
counted like a target out of view. ``alt`` alone asks every wording a sample has, each as ``alt:N``,
so the ``perturb=alt:N`` slices read the same position of every sample's list (keep the languages in
the same order on every line when one position is one language).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_uiground.perturb.transforms import (
    Matrix,
    Perturbation,
    axis_aligned,
    clip_to_view,
    forward,
    polygon_area,
)
from pytest_uiground.record.geometry import Box, Point
from pytest_uiground.record.image import ImageError, ImageRef
from pytest_uiground.record.sample import PERTURB_KEY, Sample, Target

if TYPE_CHECKING:
    from PIL import Image

#: the fraction of a target's area that must stay in view for its perturbed sample to be asked
MIN_VISIBLE = 0.5
#: the pixel frame of a box that became a quadrilateral, when the image's size is not declared:
#: scoring reads normalized answers in any frame, and the report scales the frame to the image
NOMINAL_FRAME = (10_000, 10_000)
SEP = "@"
#: perturbed screens kept per process (their samples run one after another: the look-ahead keeps a screen together)
RECENT_SCREENS = 2
_RECENT: OrderedDict[str, Image.Image] = OrderedDict()
_RECENT_LOCK = threading.Lock()


@dataclass(frozen=True)
class PerturbedImage(ImageRef):
    """An image reference that is another one with a perturbation applied, when loaded."""

    base: ImageRef | None = field(default=None, compare=False)
    perturbation: Perturbation | None = None

    def _parts(self) -> tuple[ImageRef, Perturbation]:
        assert self.base is not None and self.perturbation is not None
        return self.base, self.perturbation

    def load(self) -> Image.Image:
        """The perturbed pixels; the last few screens' are kept (a screen's samples share one transform,
        which costs up to 0.4 s on a 7-megapixel screenshot) and each caller gets its own copy."""
        base, p = self._parts()
        with _RECENT_LOCK:
            kept = _RECENT.get(self.key)
            if kept is not None:
                _RECENT.move_to_end(self.key)
                return kept.copy()
        img = base.load()
        try:
            out = p.apply(img, base.key)
        except (OSError, ValueError) as exc:
            raise ImageError(f"image {self.key!r}: perturbation {p.spec!r} failed ({exc})") from exc
        with _RECENT_LOCK:
            _RECENT[self.key] = out
            while len(_RECENT) > RECENT_SCREENS:
                _RECENT.popitem(last=False)
        return out.copy()

    def dimensions(self) -> tuple[int, int]:
        base, p = self._parts()
        return p.out_size(*base.dimensions())

    def content_key(self) -> str:
        base, p = self._parts()
        return f"{base.content_key()}{SEP}{p.spec}"


def perturbed_image(base: ImageRef, p: Perturbation) -> PerturbedImage:
    size = p.out_size(*base.size) if base.size is not None else None
    return PerturbedImage(key=f"{base.key}{SEP}{p.spec}", size=size, base=base, perturbation=p)


def original_id(sample_id: str) -> str:
    """The unperturbed sample's id of a perturbed one's (``a@scale:0.5`` → ``a``); itself otherwise."""
    return sample_id.partition(SEP)[0]


@dataclass
class Derived:
    """What :func:`derive` made: the perturbed samples and, per spec, the ids left out (target out of view,
    a task kind with no perturbable target, an image whose size could not be read)."""

    samples: list[Sample] = field(default_factory=list)
    left_out: dict[str, list[str]] = field(default_factory=dict)


def matrix_for(sample: Sample, p: Perturbation) -> Matrix:
    """The normalized map of ``p`` for this sample's image (reads the image header only when the map
    depends on its size: letterbox and pad)."""
    size = sample.image.dimensions() if p.needs_size else None
    return p.matrix(size, sample.image.key)


def map_target(target: Target, m: Matrix) -> Target | None:
    """The target in the perturbed image, or None when less than :data:`MIN_VISIBLE` of it stays in view."""
    if target.refusal or (target.box is None and target.polygon is None):
        return target
    if target.polygon is not None and target.frame is not None:
        fw, fh = target.frame
        pts = [(target.polygon[i] / fw, target.polygon[i + 1] / fh) for i in range(0, len(target.polygon), 2)]
        frame = target.frame
    else:
        assert target.box is not None
        b = target.box
        pts = [(b.x0, b.y0), (b.x1, b.y0), (b.x1, b.y1), (b.x0, b.y1)]
        frame = NOMINAL_FRAME
    mapped = [forward(m, x, y) for x, y in pts]
    seen = clip_to_view(mapped)
    whole = polygon_area(mapped)
    if len(seen) < 3 or whole <= 0 or polygon_area(seen) < MIN_VISIBLE * whole:
        return None
    xs, ys = [x for x, _ in seen], [y for _, y in seen]
    bounds = Box(max(0.0, min(xs)), max(0.0, min(ys)), min(1.0, max(xs)), min(1.0, max(ys)))
    if target.polygon is None and axis_aligned(m):
        return Target(box=bounds)
    flat = tuple(c for x, y in seen for c in (x * frame[0], y * frame[1]))
    return Target(box=bounds, polygon=flat, frame=frame)


def derive_one(sample: Sample, p: Perturbation) -> Sample | None:
    """``sample`` under ``p``, or None when it cannot be asked (see the module docstring)."""
    if sample.invalid is not None or sample.task != "point":
        return None
    if p.textual:
        return _with_alt(sample, p)
    target, click = sample.target, sample.click
    if p.geometric:
        m = matrix_for(sample, p)
        mapped = map_target(target, m)
        if mapped is None:
            return None
        target = mapped
        if click is not None:
            x, y = forward(m, *click)
            if not (0 <= x <= 1 and 0 <= y <= 1):
                return None
            click = Point(x, y)
    return Sample(id=f"{sample.id}{SEP}{p.spec}", image=perturbed_image(sample.image, p),
                  instruction=sample.instruction, task=sample.task, target=target,
                  meta={**sample.meta, PERTURB_KEY: p.spec}, click=click, context=sample.context)


def _with_alt(sample: Sample, p: Perturbation) -> Sample | None:
    """The sample asked in its N-th other wording (``alt:N``), the image and target its own; None without one."""
    n = int(p.args[0]) if p.args else 0
    if not 1 <= n <= len(sample.instruction_alts):
        return None
    return Sample(id=f"{sample.id}{SEP}{p.spec}", image=sample.image, instruction=sample.instruction_alts[n - 1],
                  task=sample.task, target=sample.target, meta={**sample.meta, PERTURB_KEY: p.spec},
                  click=sample.click, context=sample.context)


def each_alt(sample: Sample) -> list[Perturbation]:
    """``alt`` for one sample: ``alt:1`` … ``alt:K`` for its K other wordings."""
    return [Perturbation(f"alt:{n}", "alt", (float(n),)) for n in range(1, len(sample.instruction_alts) + 1)]


def derive(samples: Sequence[Sample], perturbations: Iterable[Perturbation]) -> Derived:
    """Every sample under every perturbation, perturbation by perturbation (a screen's variants stay
    together for the look-ahead of per-screen models). ``alt`` alone is each sample's every ``alt:N``;
    a variant asked twice (``alt`` and ``alt:1``) is derived once."""
    out = Derived()
    made: set[str] = set()
    for p in perturbations:
        for s in samples:
            asked = each_alt(s) if p.textual and not p.args else [p]
            try:
                ds = [derive_one(s, q) for q in asked]
            except ImageError:
                ds = [None]  # letterbox / pad could not read the size: the original fails on its own
            if not ds or any(d is None for d in ds):
                out.left_out.setdefault(p.spec, []).append(s.id)
            for d in ds:
                if d is not None and d.id not in made:
                    made.add(d.id)
                    out.samples.append(d)
    return out
