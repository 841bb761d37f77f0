"""From the family's reading of the calibration answers to a verdict on the coordinate contract.

Why hypotheses rather than one free fit: a wrong frame is not one linear map across images of
different sizes (pixels of a resized 720x1600 screen and of a 5120x2880 one scale differently),
so the probe undoes the family's reading (the number the model wrote, ``v = p x D_family``),
reads ``v`` again in every frame a model might have answered in, with and without x and y
swapped, and with other ``max_pixels`` for pixel families, and counts the targets each reading
hits. The family's own reading hitting (nearly) all targets is the identity; another reading
hitting them names the mistake; none hitting them with answers that do not follow the targets
means the model does not look at the image.

A per-axis least-squares fit (truth = scale x read + offset) over every answer the family read is
recorded beside the verdict, for the person reading the report.

Why a pass needs more than the hit count (issue 34): a server resizing with 2.6 or 4 MP in front
of ``qwen-vl`` missed only the two large screens of the first calibration set, within the misses a
pass allows, and passed with x = 0.918 x read + 0.084. Now (1) five of the thirteen screens are
large (:mod:`.calibration`), so such a server misses more than a pass allows; (2) for a pixel
family, a pass needs no other ``max_pixels`` to hit more targets than the family's own (the misses
are then a resize, not a model's slips); (3) the fit over the targets hit must be the identity
(:data:`SCALE_TOLERANCE`). The fit that decides is over the hits, not every answer, so the one or
two wild misses a pass allows do not decide it (one such miss moves an all-answer fit by up to 0.3
in scale); the recorded all-answer fit then shows them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_uiground.models import families
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample

PASS_SHARE = 0.8
"""A reading is "the" reading when it hits at least this share of the answered targets (a
calibrated but imperfect model may miss one or two of thirteen). The misses must not be a pattern
another reading explains: a server limit that hits more targets than the family's fails the probe
even when the family's reading hits this share."""
RESIZE_MARGIN = 2
"""How many more targets another ``max_pixels`` must hit than a family's reading that hits enough to
pass, for the probe to name the server's resize instead (see ``resized`` in :func:`diagnose`)."""
SCALE_TOLERANCE = 0.04
OFFSET_TOLERANCE = 0.025
"""How far the mapping fitted over the targets the family's reading hits may be from the identity
(|scale - 1|, |offset|, per axis) for a pass. A correct setup answered exactly fits within 0.001 of
it: its only error is the resize rounding (an integer pixel of a resized side of at least 555 px,
under 0.001 of the side, and the resampled target's centre moving by under a pixel); measured
1.0003..1.0005 and |offset| <= 0.0003 for every pixel family. The rest is the model's own aim: the
hit rule takes a click anywhere on a target (half-sides 0.011..0.02 of an axis), and thirteen
clicks spread evenly over their squares give the fit a standard deviation of 0.0095 in scale and
0.006 in offset (y, the shorter side; simulated over 1,000 draws): the tolerances are four of them,
so a well-aimed model does not fail by chance. A server limit off the family's shows in the hits
and in the competing limit's reading first (see :func:`diagnose`); this rule bounds what the hits
cannot see, a bias smaller than a target that is the same on every screen."""
SLACK = 0.01
"""Normalized distance beyond the target's half-side still counted as a hit (rounding of 0..1000)."""
FRAME_WORDS = {"norm1000": "0..1000", "norm1": "0..1", "pixels-resized": "pixels of the resized image",
               "pixels-original": "pixels of the original image", "percent": "percent (0..100)",
               "loc-bins": "0..1000 location bins"}
CANDIDATE_FRAMES = ("norm1000", "norm1", "pixels-resized", "pixels-original", "percent")
SAME_READING = {"loc-bins": "norm1000"}
"""Frames whose numbers read the same: a family in the key's frame answering in the value's is
answering in its own frame (Florence-2 ``<loc_N>`` bins are 0..1000), so that candidate is not
tried, and the family's own frame with x and y swapped is named as such, not as the other frame."""
SERVER_MAX_PIXELS = families.QWEN25_MAX_PIXELS
"""The Qwen2.5-VL processor default ``max_pixels`` (the ``qwen-vl`` family's): the resize a "pixels
of the resized image" reading uses for a family without its own rule, since a relative-frame
model answering in pixels most likely sits behind such a server."""
#: max_pixels tried for a server that resizes otherwise than the family assumes, in 28x28 patches
#: (Qwen2-VL/2.5-VL); the estimate from the answers themselves is tried too.
MAX_PIXELS_PATCHES = (256, 320, 400, 512, 640, 768, 1024, 1280, 1600, 2048, 2560, 3072, 4096, 5120, 6400, 8192,
                      10240, 12800, 16384, 20480, 32768)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
Size = tuple[int, int]


@dataclass(frozen=True)
class Observation:
    """One calibration answer: the truth, the family's reading and the number the model wrote."""

    screen: str
    size: Size  # the image the model was sent
    truth: tuple[float, float]  # the target's centre, normalized
    half: tuple[float, float]  # the target's half-side, normalized
    raw: str
    read: tuple[float, float] | None  # the family's reading, normalized
    written: tuple[float, float] | None  # the numbers the model wrote (the reading undone)
    failed: bool = False  # no answer at all: the request failed (``raw`` holds the error)


@dataclass(frozen=True)
class ProbeResult:
    family: str
    frame: str
    passed: bool
    diagnosis: str
    hits: int
    answered: int
    requests: int
    mapping: dict[str, dict[str, float | None]]
    reading: dict[str, Any] = field(default_factory=dict)
    observations: tuple[Observation, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The verdict as it goes into the fingerprint, summary.json and the report."""
        return {"verdict": "pass" if self.passed else "fail", "diagnosis": self.diagnosis, "family": self.family,
                "frame": self.frame, "hits": self.hits, "answered": self.answered, "requests": self.requests,
                "mapping": self.mapping, "best_reading": self.reading,
                "samples": [{"screen": o.screen, "size": list(o.size), "truth": [round(v, 4) for v in o.truth],
                             "read": [round(v, 4) for v in o.read] if o.read else None, "raw": o.raw[:200]}
                            for o in self.observations]}


class FamilyView:
    """What the probe needs of a family: its frame and the divisor of each axis per image."""

    def __init__(self, name: str, input_size: Callable[[Size], Size] | None = None,
                 max_pixels: int | None = None) -> None:
        self.family = families.get(name)
        self.name, self.frame = name, self.family.frame
        resize = self.family.resize
        self.factor = resize.factor if resize is not None else 28
        self.min_pixels = resize.min_pixels if resize is not None else 4 * 28 * 28
        self.max_pixels = max_pixels if max_pixels is not None else (resize.max_pixels if resize else None)
        self._input_size = input_size or self.family.input_size
        self.client_resize = self.family.client_resize
        self.family_max_pixels = resize.max_pixels if resize is not None else None

    def sent_size(self, size: Size) -> Size:
        """The size of the image the server receives: resized by the family's rule where its official
        client resizes before sending (the OpenAI client does so too), else as it is."""
        return self.family.input_size(size) if self.client_resize else size

    def divisor(self, frame: str, size: Size, max_pixels: int | None = None) -> tuple[float, float]:
        """The numbers a reading in ``frame`` divides by for an image of ``size``. ``max_pixels``: the
        server's processor resizes *the image it received* (:meth:`sent_size`, already resized for a
        client-resizing family) with that limit; pixels of the resized image for a family without a
        resize rule are of the Qwen2.5-VL default resize (:data:`SERVER_MAX_PIXELS`)."""
        if frame in ("norm1000", "loc-bins"):
            return 1000.0, 1000.0
        if frame == "norm1":
            return 1.0, 1.0
        if frame == "percent":
            return 100.0, 100.0
        if frame == "pixels-original":
            return float(size[0]), float(size[1])
        if max_pixels is None and self.family.resize is None:
            max_pixels = SERVER_MAX_PIXELS
        if max_pixels is not None:
            sent = self.sent_size(size)
            h, w = families.smart_resize(sent[1], sent[0], factor=self.factor, min_pixels=self.min_pixels,
                                         max_pixels=max_pixels)
            return float(w), float(h)
        w, h = self._input_size(size)
        return float(w), float(h)


def observe(view: FamilyView, samples: Sequence[Sample], predictions: Sequence[Prediction]) -> list[Observation]:
    """Pair each calibration sample with the family's reading and the numbers behind it."""
    out = []
    for s, p in zip(samples, predictions, strict=True):
        box = s.target.box
        assert box is not None
        size = s.image.dimensions()
        read = (p.point.x, p.point.y) if p.point is not None else None
        written: tuple[float, float] | None = None
        if read is not None:
            dx, dy = view.divisor(view.frame, size)
            # rounded: the reading undone must give back the same number for the same answer (a model
            # that writes one fixed point must count as one distinct point, not as float noise)
            written = (round(read[0] * dx, 3), round(read[1] * dy, 3))
        else:  # the family could not read it (a value beyond its range): the first two numbers written
            nums = [float(v) for v in _NUMBER.findall(p.raw or "")]
            written = (nums[0], nums[1]) if len(nums) >= 2 else None
        out.append(Observation(str(s.meta.get("screen", s.id)), size, ((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2),
                               ((box.x1 - box.x0) / 2, (box.y1 - box.y0) / 2), p.raw or p.error or "", read, written,
                               failed=bool(p.error) and not p.raw))
    return out


def _reads(view: FamilyView, o: Observation, frame: str, swapped: bool,
           max_pixels: int | None = None) -> tuple[float, float] | None:
    if o.written is None:
        return None
    vx, vy = (o.written[1], o.written[0]) if swapped else o.written
    dx, dy = view.divisor(frame, o.size, max_pixels)
    return vx / dx, vy / dy


def _hit(o: Observation, xy: tuple[float, float] | None) -> bool:
    return xy is not None and abs(xy[0] - o.truth[0]) <= o.half[0] + SLACK and \
        abs(xy[1] - o.truth[1]) <= o.half[1] + SLACK


def _distance(o: Observation) -> float:
    """How far the family's reading of one answer is from its target's centre (normalized, per-axis sum)."""
    return abs(o.read[0] - o.truth[0]) + abs(o.read[1] - o.truth[1]) if o.read is not None else math.inf


def hits(view: FamilyView, obs: Sequence[Observation], frame: str, swapped: bool = False,
         max_pixels: int | None = None) -> int:
    return sum(_hit(o, _reads(view, o, frame, swapped, max_pixels)) for o in obs)


def _error(view: FamilyView, obs: Sequence[Observation], max_pixels: int) -> float:
    """The mean distance from the truth of the pixel readings with ``max_pixels``: the tie-breaker
    between limits that hit as many targets (several neighbouring limits round alike on small screens)."""
    errs = [abs(xy[0] - o.truth[0]) + abs(xy[1] - o.truth[1]) for o in obs
            if (xy := _reads(view, o, "pixels-resized", False, max_pixels)) is not None]
    return sum(errs) / len(errs) if errs else math.inf


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float | None]:
    """ys = scale x xs + offset by least squares, with R^2; None where undetermined."""
    n = len(xs)
    if n < 2:
        return {"scale": None, "offset": None, "r2": None}
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0:
        return {"scale": None, "offset": None, "r2": 0.0}
    scale = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    offset = my - scale * mx
    resid = sum((y - (scale * x + offset)) ** 2 for x, y in zip(xs, ys, strict=True))
    r2 = 1 - resid / syy if syy > 0 else None
    return {"scale": round(scale, 4), "offset": round(offset, 4), "r2": round(r2, 4) if r2 is not None else None}


def identity(mapping: dict[str, dict[str, float | None]]) -> bool:
    """Whether the fitted mapping is the identity within :data:`SCALE_TOLERANCE` and
    :data:`OFFSET_TOLERANCE` on both axes (an undetermined fit is not)."""
    for axis in ("x", "y"):
        scale, offset = mapping[axis]["scale"], mapping[axis]["offset"]
        if scale is None or offset is None or abs(scale - 1) > SCALE_TOLERANCE or abs(offset) > OFFSET_TOLERANCE:
            return False
    return True


def _families_reading(frame: str) -> str:
    names = [n for n in families.names() if families.get(n).frame == frame]
    return f" (families that read {FRAME_WORDS[frame]}: {', '.join(names)})" if names else ""


def _max_pixels_guess(view: FamilyView, obs: Sequence[Observation]) -> tuple[int, int] | None:
    """The max_pixels that best explains pixel answers, and its hits; None when it explains nothing more."""
    tried: set[int] = {k * view.factor * view.factor for k in MAX_PIXELS_PATCHES}
    for o in obs:  # the area the answers imply: written pixels over the true position, per axis
        if o.written is not None and min(o.truth) > 0.05:
            area = (o.written[0] / o.truth[0]) * (o.written[1] / o.truth[1])
            if area > 0:
                tried.add(math.ceil(area / view.factor ** 2) * view.factor ** 2)
    best: tuple[int, int, float] | None = None
    for n in sorted(tried):
        if n == view.max_pixels or n < view.min_pixels:
            continue
        k, err = hits(view, obs, "pixels-resized", max_pixels=n), _error(view, obs, n)
        if best is None or k > best[1] or (k == best[1] and err < best[2]):
            best = (n, k, err)
    return best[:2] if best is not None else None


def _resized_again(view: FamilyView, n: int, tally: str) -> str:
    """The diagnosis for a family whose client resizes (Holo1.5, GTA1): its client already sends the
    image at the family's size, so a server limit cannot be "assumed" otherwise by the family; what the
    answers show is that the server's processor shrinks that image *again* (its ``max_pixels`` below the
    family's), and the model then sees a smaller image than the one the family was measured with (a
    prompt that states the size, as GTA1's does, then names the wrong one). The fix that restores the
    official setup is the server's limit; ``UIGROUND_OPENAI_MAX_PIXELS`` only reads the answers in the
    server's frame, so it comes second."""
    family_max = view.family_max_pixels
    return (f"the server resizes the image again: the client sends it resized as the {view.name} family's "
            f"official client does (max_pixels {family_max}), and the server's processor shrinks it to "
            f"max_pixels ≈ {n}, so the model sees a smaller image than the family was measured with "
            f"{tally}; raise the server's max_pixels to at least {family_max} (vLLM: --mm-processor-kwargs "
            f"'{{\"max_pixels\": {family_max}}}'), or, to score it as served, set UIGROUND_OPENAI_MAX_PIXELS={n}")


def diagnose(view: FamilyView, obs: Sequence[Observation], requests: int) -> ProbeResult:
    """The verdict on the family's reading of the calibration answers (see the module docstring)."""
    answered = [o for o in obs if o.written is not None]
    need = max(1, math.ceil(PASS_SHARE * len(obs)))
    read = [o for o in obs if o.read is not None]
    mapping = {"x": linear_fit([o.read[0] for o in read if o.read], [o.truth[0] for o in read]),
               "y": linear_fit([o.read[1] for o in read if o.read], [o.truth[1] for o in read])}
    own = hits(view, obs, view.frame)
    on_target = [o for o in read if _hit(o, o.read)]
    fitted = identity({"x": linear_fit([o.read[0] for o in on_target if o.read], [o.truth[0] for o in on_target]),
                       "y": linear_fit([o.read[1] for o in on_target if o.read], [o.truth[1] for o in on_target])})
    guess = _max_pixels_guess(view, obs) if view.frame == "pixels-resized" and view.max_pixels is not None else None
    # another server limit explains the answers better; beside a family's reading that hits enough, by two
    # targets or more (one can be a click on a target's edge that a neighbouring limit happens to move in)
    resized = guess is not None and guess[1] >= need and guess[1] >= own + (1 if own < need else RESIZE_MARGIN)

    def result(passed: bool, hits: int, reading: dict[str, Any], diagnosis: str) -> ProbeResult:
        return ProbeResult(family=view.name, frame=view.frame, passed=passed, diagnosis=diagnosis, hits=hits,
                           answered=len(answered), requests=requests, mapping=mapping, reading=reading,
                           observations=tuple(obs))

    if own >= need and fitted and not resized:
        return result(True, own, {"frame": view.frame, "swapped": False},
                      f"the family's reading ({FRAME_WORDS[view.frame]}) hits {own} of {len(obs)} calibration targets")
    failed = [o for o in obs if o.failed]
    if len(failed) > len(obs) - need:  # too few answers left to pass: the server, not the frame, is the problem
        return result(False, own, {}, (
            f"the model could not be asked: {len(failed)} of {len(obs)} calibration requests failed (e.g. "
            f"{failed[0].raw[:160]!r}); check the server address, key and served model name, then probe again"))
    if len(answered) < need:
        example = next((o.raw for o in obs if o.written is None), "")
        return result(False, own, {}, (
            f"only {len(answered)} of {len(obs)} calibration answers hold a point (e.g. {example[:120]!r}): the "
            f"model does not answer in the form the {view.name} family reads; check --uiground-parser"))
    frames = [f for f in dict.fromkeys((view.frame, *CANDIDATE_FRAMES)) if f != SAME_READING.get(view.frame)]
    scored = sorted(((hits(view, obs, f, sw), f, sw) for f in frames for sw in (False, True)
                     if (f, sw) != (view.frame, False)), key=lambda t: -t[0])
    k, frame, swapped = scored[0]
    if guess is not None and resized and guess[1] > k:
        n = guess[0]
        tally = f"(that reading hits {guess[1]} of {len(obs)} targets, the family's own {own})"
        if view.client_resize:
            return result(False, guess[1], {"frame": "pixels-resized", "max_pixels": n},
                          _resized_again(view, n, tally))
        return result(False, guess[1], {"frame": "pixels-resized", "max_pixels": n}, (
            f"the server resizes with max_pixels ≈ {n} (the family assumes {view.max_pixels}): set "
            f"UIGROUND_OPENAI_MAX_PIXELS={n} {tally}"))
    if k >= need and k > own:  # (the family's own reading hitting enough but not fitting: only a better one)
        if frame == view.frame and swapped:
            why = f"x and y look swapped: the answers are (y, x) in {FRAME_WORDS[frame]}"
        else:
            why = (f"answers look like {FRAME_WORDS[frame]}{' with x and y swapped' if swapped else ''} but the "
                   f"family reads {FRAME_WORDS[view.frame]}{_families_reading(frame)}")
        return result(False, k, {"frame": frame, "swapped": swapped},
                      f"{why} (that reading hits {k} of {len(obs)} targets, the family's own {own})")
    if own >= need and not fitted:  # hits enough and no other reading does better, but not the identity
        far = sorted(read, key=lambda o: -_distance(o))[:3]
        return result(False, own, {}, (
            f"the family's reading hits {own} of {len(obs)} calibration targets but the mapping fitted over them "
            f"is not the identity (truth = scale x read + offset, all answers: x {mapping['x']}, y {mapping['y']}; "
            f"a correct setup fits within {SCALE_TOLERANCE} of scale 1 and {OFFSET_TOLERANCE} of offset 0); "
            "farthest from their "
            f"targets: {', '.join(f'{o.screen} {o.size[0]}x{o.size[1]}' for o in far)}"))
    xs = [o.written[0] for o in answered if o.written]
    ys = [o.written[1] for o in answered if o.written]
    fx = linear_fit([o.truth[0] for o in answered], xs)
    fy = linear_fit([o.truth[1] for o in answered], ys)
    follows = [f["r2"] is not None and f["r2"] >= 0.5 and (f["scale"] or 0) > 0 for f in (fx, fy)]
    if not any(follows):
        distinct = len({o.written for o in answered})
        return result(False, own, {}, (
            f"the answers ignore the image: {distinct} distinct point(s) for {len(answered)} targets spread over "
            f"the screen, following neither axis (R² {fx['r2']}, {fy['r2']}); is the image reaching the model "
            "(a text-only endpoint, a dropped image part)?"))
    return result(False, own, {}, (
        f"the answers follow the targets but in no frame the probe knows: the family's reading hits {own} of "
        f"{len(obs)}; fitted truth = scale x read + offset: x {mapping['x']}, y {mapping['y']}"))
