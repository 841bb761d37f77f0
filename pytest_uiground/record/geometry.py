"""Coordinates: the one internal convention and the conversions into it.

Every box inside the project is normalized ``(x0, y0, x1, y1)`` in 0..1 of the
original image and every point is normalized ``(x, y)``. Loaders convert their
dataset's convention into this form and model adapters convert their outputs into
it, so scoring never has to guess a scale (the most common cause of near-zero
scores in peer harnesses).
"""

from __future__ import annotations

from typing import NamedTuple


class Point(NamedTuple):
    """A normalized point; (0, 0) is the top-left corner of the image."""

    x: float
    y: float


class Box(NamedTuple):
    """A normalized box ``[x0, y0, x1, y1]`` with x0 <= x1 and y0 <= y1."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return max(0.0, self.width) * max(0.0, self.height)

    @property
    def center(self) -> Point:
        return Point((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def contains(self, point: Point) -> bool:
        """Point in box with inclusive edges, as every reference scorer does."""
        return self.x0 <= point.x <= self.x1 and self.y0 <= point.y <= self.y1

    def to_pixels(self, width: int, height: int) -> tuple[float, float, float, float]:
        return (self.x0 * width, self.y0 * height, self.x1 * width, self.y1 * height)


def make_box(values: object, *, what: str = "box") -> Box:
    """Validate four numbers as a normalized box, naming ``what`` on error."""
    try:
        x0, y0, x1, y1 = (float(v) for v in values)  # type: ignore[attr-defined]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: expected four numbers [x0, y0, x1, y1], got {values!r}") from exc
    if not (0.0 <= x0 <= x1 <= 1.0 and 0.0 <= y0 <= y1 <= 1.0):
        raise ValueError(
            f"{what}: {values!r} is not a normalized [x0, y0, x1, y1] box "
            "(need 0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1)"
        )
    return Box(x0, y0, x1, y1)


def box_from_pixels_xyxy(x0: float, y0: float, x1: float, y1: float, width: int, height: int) -> Box:
    return Box(x0 / width, y0 / height, x1 / width, y1 / height)


def box_from_pixels_xywh(x: float, y: float, w: float, h: float, width: int, height: int) -> Box:
    return box_from_pixels_xyxy(x, y, x + w, y + h, width, height)


def point_in_polygon(x: float, y: float, polygon: tuple[float, ...] | list[float]) -> bool:
    """Even-odd ray casting over a flat ``[x0, y0, x1, y1, ...]`` vertex list, in its own units.

    The rule of OSWorld-G's official scorer (``evaluation/eval.py: GroundingEval._eval``,
    inner ``_is_point_in_polygon``, as preserved in the public copies cited in
    ``suites/osworld_g/README.md``), written here from that rule: walk the edges (i, j = i-1,
    wrapping), and an edge toggles "inside" when it straddles the ray's height with the
    lower end inclusive (``(yi > y) != (yj > y)``) and the point lies strictly left of the
    edge's x at that height. Consequences the suite relies on: a point inside the bounding
    box but outside a concave polygon is out; on a left or top edge it is in, on a right or
    bottom edge out; a horizontal edge never toggles (so no division by zero). Evaluate it
    in the polygon's pixel frame: the division is not scale-invariant at the edges.
    """
    n = len(polygon) // 2
    inside = False
    j = n - 1
    for i in range(n):
        xi, yi = polygon[2 * i], polygon[2 * i + 1]
        xj, yj = polygon[2 * j], polygon[2 * j + 1]
        if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
            inside = not inside
        j = i
    return inside


def to_frame(value: float, size: int) -> float:
    """A normalized coordinate back in a pixel frame of ``size``, exact for whole pixels.

    Parsers that read a benchmark's whole-pixel click store ``X / size``; multiplying back
    can land one ulp off ``X`` (``1 / 49 * 49 != 1``), which would flip the verdict of a click
    exactly on a polygon edge. A product within 1e-9 px of a whole pixel is that pixel.
    """
    v = value * size
    r = round(v)
    return float(r) if abs(v - r) <= 1e-9 else v


def clip_point(point: Point) -> Point:
    """Clip to [0, 1] as the AutomotiveUI card script does before the hit test."""
    return Point(min(1.0, max(0.0, point.x)), min(1.0, max(0.0, point.y)))


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes; 0.0 when both have no area."""
    ix0, iy0 = max(a.x0, b.x0), max(a.y0, b.y0)
    ix1, iy1 = min(a.x1, b.x1), min(a.y1, b.y1)
    inter = max(0.0, ix1 - ix0) * max(0.0, iy1 - iy0)
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


#: Element size buckets by the longer side in pixels (see :func:`size_bucket`), smallest first.
SIZE_BUCKETS: tuple[str, ...] = ("lt32", "32to100", "gt100")

def size_bucket(width_px: float, height_px: float) -> str:
    """The one size rule: bucket by ``max(width, height)`` of the element box in pixels.

    The longer side decides because a wide-but-thin button is as easy to hit along its
    length as a square one; "small" targets are those that are small in both directions.
    The names are filename-safe because they end up in slice and baseline file names.
    """
    side = max(width_px, height_px)
    if side < 32:
        return "lt32"
    if side <= 100:
        return "32to100"
    return "gt100"
