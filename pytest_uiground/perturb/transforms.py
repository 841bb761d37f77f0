"""The perturbations: image operations (Pillow and numpy) with the exact map of coordinates through them.

Why exact: a robustness figure is only worth something if the perturbed sample's ground truth is
exactly where the element went. Every geometric perturbation is one 3×3 matrix on normalized
coordinates (``(x / width, y / height)`` of the original to the same of the perturbed image), and
the image operation is built from that same matrix, so the target, the image and the inverse map
of an answer (did the answer move with the element?) cannot disagree. Axis-aligned maps (scale,
zoom, translate, letterbox, pad) keep a box a box; a homography (``perspective``) turns it into a
quadrilateral, scored by the polygon rule the suites already use
(:func:`pytest_uiground.record.geometry.point_in_polygon`). Photometric perturbations leave every
coordinate where it was.

Spelling (``--uiground-perturb`` and ``suite.toml [perturb]``), one spec per variant:

``scale:F``            the screenshot resized by F (targets unchanged in normalized terms)
``zoom:F[@X,Y]``       content zoomed by F in the same viewport about the normalized centre X,Y
                       (default 0.5,0.5): F > 1 crops, F < 1 pads
``translate:DX,DY``    content shifted by DX, DY (fractions of the width and height)
``letterbox:WxH``      fitted into a W×H screen, bars on the short sides (another head unit)
``pad:WxH``            padded, unscaled, to the aspect ratio W:H
``perspective:E``      the screen photographed: each corner moved inwards by up to E of the size
                       (seeded per image), a homography
``invert``, ``grayscale``, ``contrast:F``, ``brightness:F``, ``jpeg:Q``, ``blur:S``
                       night-mode approximation, no colour, glare, compression, defocus
``alt:N``, ``alt``     the instruction replaced by the N-th (1-based) of the sample's own
                       ``instruction_alts`` (paraphrases, other languages), or by each of them;
                       the image and the target unchanged, a sample without that wording left out

Random parts (the perspective corners) are seeded by the spec and the image's key (hashlib, not
``hash``), the same on every machine and every xdist worker.
"""

from __future__ import annotations

import hashlib
import io
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from PIL import Image

Matrix = np.ndarray  # 3×3 float, normalized input (x, y, 1) → normalized output (homogeneous)

#: kind → (number of arguments, what they are), for the parser and its messages
KINDS: dict[str, tuple[str, str]] = {
    "scale": ("F", "a factor > 0, e.g. scale:0.75"),
    "zoom": ("F[@X,Y]", "a factor > 0 and an optional normalized centre, e.g. zoom:1.5 or zoom:2@0.25,0.5"),
    "translate": ("DX,DY", "fractions of the width and height in -1..1, e.g. translate:0.1,-0.05"),
    "letterbox": ("WxH", "a screen size in pixels, e.g. letterbox:1920x720"),
    "pad": ("WxH", "an aspect ratio as a size, e.g. pad:16x9"),
    "perspective": ("E", "a corner displacement in 0..0.25 of the size, e.g. perspective:0.05"),
    "invert": ("", "no argument"),
    "grayscale": ("", "no argument"),
    "contrast": ("F", "a factor >= 0 (1 = unchanged), e.g. contrast:0.5"),
    "brightness": ("F", "a factor >= 0 (1 = unchanged), e.g. brightness:1.6"),
    "jpeg": ("Q", "a JPEG quality in 1..95, e.g. jpeg:30"),
    "blur": ("S", "a Gaussian radius in pixels > 0, e.g. blur:1.5"),
    "alt": ("[N]", "the N-th of a sample's instruction_alts, N >= 1, or each of them: alt:1 or alt"),
}
GEOMETRIC = frozenset({"scale", "zoom", "translate", "letterbox", "pad", "perspective"})
#: the perturbations of the instruction, not of the image (the sample's own ``instruction_alts``)
TEXTUAL = frozenset({"alt"})
_SIZE = re.compile(r"^(\d+)x(\d+)$")
_MAX_SCALE = 8.0


class PerturbSpecError(ValueError):
    """A perturbation spec that cannot be read; the message names it, what was expected and an example."""


@dataclass(frozen=True)
class Perturbation:
    """One perturbation, parsed: ``spec`` is its canonical spelling (the id suffix, the slice value)."""

    spec: str
    kind: str
    args: tuple[float, ...] = ()

    @property
    def geometric(self) -> bool:
        return self.kind in GEOMETRIC

    @property
    def textual(self) -> bool:
        """Whether it replaces the instruction (and leaves the image as it is)."""
        return self.kind in TEXTUAL

    @property
    def needs_size(self) -> bool:
        """Whether the map depends on the image's size (a fixed output size or aspect)."""
        return self.kind in ("letterbox", "pad")

    # -- geometry -------------------------------------------------------------------------------

    def out_size(self, width: int, height: int) -> tuple[int, int]:
        """The perturbed image's size in pixels."""
        if self.kind == "scale":
            return max(1, round(width * self.args[0])), max(1, round(height * self.args[0]))
        if self.kind == "letterbox":
            return int(self.args[0]), int(self.args[1])
        if self.kind == "pad":
            return _pad_canvas(width, height, self.args[0], self.args[1])
        return width, height

    def matrix(self, size: tuple[int, int] | None, key: str) -> Matrix:
        """The normalized map of this perturbation for an image of ``size`` (needed only when
        :attr:`needs_size`) and ``key`` (the seed of a random part)."""
        k, a = self.kind, self.args
        if k == "zoom":
            f, cx, cy = a
            return np.array([[f, 0, 0.5 - f * cx], [0, f, 0.5 - f * cy], [0, 0, 1]], dtype=float)
        if k == "translate":
            return np.array([[1, 0, a[0]], [0, 1, a[1]], [0, 0, 1]], dtype=float)
        if k in ("letterbox", "pad"):
            if size is None:
                raise ValueError(f"perturbation {self.spec!r} needs the image size")
            w, h = size
            ox, oy, cw, ch = self.placement(w, h)
            big_w, big_h = self.out_size(w, h)
            return np.array([[cw / big_w, 0, ox / big_w], [0, ch / big_h, oy / big_h], [0, 0, 1]], dtype=float)
        if k == "perspective":
            return _homography(_unit_square(), _corners(a[0], f"{self.spec}|{key}"))
        return np.eye(3)

    def placement(self, width: int, height: int) -> tuple[int, int, int, int]:
        """letterbox / pad: where the original lands on the canvas: offset x, y and its size."""
        big_w, big_h = self.out_size(width, height)
        if self.kind == "letterbox":
            s = min(big_w / width, big_h / height)
            cw, ch = max(1, round(width * s)), max(1, round(height * s))
        else:
            cw, ch = width, height
        return (big_w - cw) // 2, (big_h - ch) // 2, cw, ch

    # -- pixels ---------------------------------------------------------------------------------

    def apply(self, img: Image.Image, key: str) -> Image.Image:
        """The perturbed image (RGB); deterministic for (image, ``key``)."""
        from PIL import Image, ImageEnhance, ImageFilter, ImageOps

        k, a = self.kind, self.args
        w, h = img.size
        if k == "scale":
            return img.resize(self.out_size(w, h), Image.Resampling.BICUBIC)
        if k in ("letterbox", "pad"):
            ox, oy, cw, ch = self.placement(w, h)
            canvas = Image.new("RGB", self.out_size(w, h), (0, 0, 0))
            canvas.paste(img if (cw, ch) == (w, h) else img.resize((cw, ch), Image.Resampling.BICUBIC), (ox, oy))
            return canvas
        if k in ("zoom", "translate", "perspective"):
            m = self.matrix((w, h), key)
            px = np.diag([w, h, 1.0]) @ m @ np.diag([1 / w, 1 / h, 1.0])  # pixel map, same size in and out
            inv = np.linalg.inv(px)
            inv = inv / inv[2, 2]
            fill = (0, 0, 0) if k == "perspective" else _corner_colour(img)
            if k == "perspective":
                data = tuple(float(v) for v in inv.flatten()[:8])
                return img.transform((w, h), Image.Transform.PERSPECTIVE, data, Image.Resampling.BICUBIC,
                                     fillcolor=fill)
            return img.transform((w, h), Image.Transform.AFFINE, tuple(float(v) for v in inv[:2].flatten()),
                                 Image.Resampling.BICUBIC, fillcolor=fill)
        if k == "invert":
            return ImageOps.invert(img.convert("RGB"))
        if k == "grayscale":
            return img.convert("L").convert("RGB")
        if k == "contrast":
            return ImageEnhance.Contrast(img).enhance(a[0])
        if k == "brightness":
            return ImageEnhance.Brightness(img).enhance(a[0])
        if k == "jpeg":
            buf = io.BytesIO()
            img.convert("RGB").save(buf, format="JPEG", quality=int(a[0]))
            buf.seek(0)
            with Image.open(buf) as out:
                return out.convert("RGB")
        if k == "blur":
            return img.filter(ImageFilter.GaussianBlur(a[0]))
        if k == "alt":
            return img.copy()
        raise AssertionError(k)


def _pad_canvas(width: int, height: int, aw: float, ah: float) -> tuple[int, int]:
    if width / height < aw / ah:  # too narrow: widen
        return max(width, round(height * aw / ah)), height
    return width, max(height, round(width * ah / aw))


def _corner_colour(img: Image.Image) -> tuple[int, ...]:
    px = img.convert("RGB").getpixel((0, 0))
    return tuple(px) if isinstance(px, tuple) else (int(px or 0),) * 3


def _unit_square() -> list[tuple[float, float]]:
    return [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


def _corners(eps: float, seed_text: str) -> list[tuple[float, float]]:
    """The photographed screen's corners: each unit-square corner moved inwards by a seeded
    fraction of ``eps`` in x and in y (never outwards: nothing leaves the view)."""
    seed = int.from_bytes(hashlib.blake2b(seed_text.encode(), digest_size=8).digest(), "big")
    rng = random.Random(seed)
    out = []
    for x, y in _unit_square():
        dx, dy = eps * rng.uniform(0.2, 1.0), eps * rng.uniform(0.2, 1.0)
        out.append((x + dx if x == 0 else x - dx, y + dy if y == 0 else y - dy))
    return out


def _homography(src: Sequence[tuple[float, float]], dst: Sequence[tuple[float, float]]) -> Matrix:
    """The 3×3 matrix taking four points to four points (the direct linear solve, h33 = 1)."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(src, dst, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs += [u, v]
    h = np.linalg.solve(np.array(rows, dtype=float), np.array(rhs, dtype=float))
    return np.append(h, 1.0).reshape(3, 3)


# -- coordinates through a matrix ------------------------------------------------------------------


def forward(m: Matrix, x: float, y: float) -> tuple[float, float]:
    """A normalized point of the original in the perturbed image (normalized)."""
    u, v, w = m @ np.array([x, y, 1.0])
    return float(u / w), float(v / w)


def inverse(m: Matrix, x: float, y: float) -> tuple[float, float]:
    """A normalized point of the perturbed image back in the original (an answer mapped back)."""
    return forward(np.linalg.inv(m), x, y)


def axis_aligned(m: Matrix) -> bool:
    """Whether the map keeps a box a box (no shear, rotation or projection)."""
    return bool(m[0, 1] == 0 and m[1, 0] == 0 and m[2, 0] == 0 and m[2, 1] == 0)


def polygon_area(points: Sequence[tuple[float, float]]) -> float:
    """The shoelace area (absolute)."""
    n = len(points)
    s = sum(points[i][0] * points[(i + 1) % n][1] - points[(i + 1) % n][0] * points[i][1] for i in range(n))
    return abs(s) / 2


def clip_to_view(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The part of a polygon inside the unit square (Sutherland–Hodgman; the square is convex)."""
    out = list(points)
    for axis, bound, keep_below in ((0, 0.0, False), (0, 1.0, True), (1, 0.0, False), (1, 1.0, True)):
        if not out:
            break
        clipped: list[tuple[float, float]] = []
        for i, cur in enumerate(out):
            prev = out[i - 1]
            if _inside(cur, axis, bound, keep_below):
                if not _inside(prev, axis, bound, keep_below):
                    clipped.append(_cross(prev, cur, axis, bound))
                clipped.append(cur)
            elif _inside(prev, axis, bound, keep_below):
                clipped.append(_cross(prev, cur, axis, bound))
        out = clipped
    return out


def _inside(p: tuple[float, float], axis: int, bound: float, keep_below: bool) -> bool:
    return p[axis] <= bound if keep_below else p[axis] >= bound


def _cross(p: tuple[float, float], q: tuple[float, float], axis: int, bound: float) -> tuple[float, float]:
    t = (bound - p[axis]) / (q[axis] - p[axis])
    x, y = p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])
    return (bound, y) if axis == 0 else (x, bound)


# -- the parser -------------------------------------------------------------------------------------


def parse(text: str) -> Perturbation:
    """One spec (``scale:0.75``) into a :class:`Perturbation` with its canonical spelling, or a
    :class:`PerturbSpecError` naming the spec, what was expected and an example."""
    raw = text.strip()
    kind, _, arg = raw.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise PerturbSpecError(f"unknown perturbation {raw!r}; known: {', '.join(sorted(KINDS))} "
                               "(e.g. scale:0.75,invert,jpeg:30)")
    shape, example = KINDS[kind]

    def bad(why: str = "") -> PerturbSpecError:
        return PerturbSpecError(f"perturbation {raw!r}: expected {kind}:{shape}, {example}{'; ' + why if why else ''}"
                                if shape else f"perturbation {raw!r}: {kind} takes {example}")

    if not shape:
        if arg:
            raise bad()
        return Perturbation(kind, kind)
    if kind == "alt":
        if not arg.strip():
            return Perturbation(kind, kind)
        if not arg.strip().isdigit() or int(arg) < 1:
            raise bad()
        return Perturbation(f"alt:{int(arg)}", kind, (float(int(arg)),))
    try:
        if kind in ("letterbox", "pad"):
            m = _SIZE.match(arg.strip())
            if not m or min(int(m[1]), int(m[2])) < 1:
                raise bad()
            w, h = int(m[1]), int(m[2])
            return Perturbation(f"{kind}:{w}x{h}", kind, (float(w), float(h)))
        if kind == "zoom":
            factor, _, centre = arg.partition("@")
            f = float(factor)
            cx, cy = (float(v) for v in centre.split(",")) if centre else (0.5, 0.5)
            if not (0 < f <= _MAX_SCALE and 0 <= cx <= 1 and 0 <= cy <= 1):
                raise bad()
            spec = f"zoom:{_num(f)}" + (f"@{_num(cx)},{_num(cy)}" if (cx, cy) != (0.5, 0.5) else "")
            return Perturbation(spec, kind, (f, cx, cy))
        if kind == "translate":
            dx, dy = (float(v) for v in arg.split(","))
            if not (-1 < dx < 1 and -1 < dy < 1):
                raise bad()
            return Perturbation(f"translate:{_num(dx)},{_num(dy)}", kind, (dx, dy))
        v = float(arg)
    except ValueError:
        raise bad() from None
    ok = {"scale": 0 < v <= _MAX_SCALE, "perspective": 0 < v <= 0.25, "contrast": 0 <= v <= 10,
          "brightness": 0 <= v <= 10, "jpeg": 1 <= v <= 95 and v == int(v), "blur": 0 < v <= 50}[kind]
    if not ok or not math.isfinite(v):
        raise bad("out of range")
    return Perturbation(f"{kind}:{_num(v)}", kind, (v,))


def _num(v: float) -> str:
    return f"{v:g}"


def parse_list(text: str) -> tuple[Perturbation, ...]:
    """``scale:0.75,invert,jpeg:30``: comma-separated specs (a comma inside ``translate:DX,DY`` or a
    zoom centre belongs to its spec: a piece that does not start with a known kind joins the previous
    one). Duplicates are dropped, the order kept."""
    pieces: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if pieces and piece.partition(":")[0].lower() not in KINDS:
            pieces[-1] += "," + piece
        else:
            pieces.append(piece)
    out: dict[str, Perturbation] = {}
    for piece in pieces:
        p = parse(piece)
        out.setdefault(p.spec, p)
    return tuple(out.values())
