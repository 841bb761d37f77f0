"""Q42: drive the answer's waypoints through the recorded future and score them (no judge).

Reference: Thinklab-SJTU/Bench2Drive-VL @5896a851 ``B2DVL_Adapter/offline_simulation.py:
simulate_action, check_scene_overlap`` and ``math_utils.py`` (``transform_to_world_coordinates``,
``calculate_yaw``, ``get_mean_angle``, ``calculate_rectangle_corners``,
``is_intersecting_and_iou``). The answer is a JSON object ``{"0.5s": [x, y], ...}`` of
points in the ego frame. Each point is placed in the world with the current ego
record's ``world2ego``, given a heading, and the ego's box is checked against every
vehicle and walker of the annotation ``int(t · 10)`` frames ahead. Score =
100 · (0.6 · 0.5^(distinct objects hit) + 0.4 · efficiency), efficiency being how far
the farthest-in-time point goes relative to where the ego really went.

Annotations are read by a callable so the loader's error messages (file, record,
field) reach the sample that needs them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FRAME_RATE = 10
COLLISION_PENALTY = 0.5
COLLISION_MARGIN = 0.1  # added to every half extent
COLLISION_RANGE = 60.0  # only boxes whose own "distance" is below this
SAME_SPOT = 0.1  # a step this short keeps the previous heading
STILL = 1.0  # the real ego moved this little: efficiency 1
COLLISION_SHARE, EFFICIENCY_SHARE = 0.6, 0.4
BAD_JSON = "JSON has incorrect format."

EgoOf = Callable[[int], Mapping[str, Any]]  # frame -> the ego_vehicle record
BoxesOf = Callable[[int], Sequence[Mapping[str, Any]]]  # frame -> bounding_boxes


@dataclass
class Trajectory:
    score: float
    collided: list[Any] = field(default_factory=list)
    collision: float = 1.0
    efficiency: float = 1.0
    reason: str = ""


def read_waypoints(answer: str) -> dict[str, Any] | None:
    """io_utils.py: clean_json_string then json.loads: a leading "```json" and a trailing
    "```" are dropped, nothing else; None when the rest is not JSON."""
    text = answer[7:] if answer.startswith("```json") else answer
    text = text[:-3] if text.endswith("```") else text
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _inverse_apply(matrix: Sequence[Sequence[float]], x: float, y: float) -> tuple[float, float]:
    import numpy as np

    p = np.linalg.solve(np.asarray(matrix, dtype=float), np.array([x, y, 0.0, 1.0]))
    return float(p[0]), float(p[1])


def heading(a: Sequence[float], b: Sequence[float]) -> float:
    deg = math.degrees(math.atan2(b[1] - a[1], b[0] - a[0]))
    return deg + 360.0 if deg < 0 else deg


def mean_heading(a1: float, a2: float) -> float:
    """get_mean_angle: a2 shifted by -360, -180, 0 or +180 (whichever is closest to a1), averaged
    with a1; so driving back along the same line counts as the same heading."""
    a1, a2 = a1 % 360, a2 % 360
    near = min((a2 - 360, a2 - 180, a2, a2 + 180), key=lambda c: abs(c - a1))
    return (a1 + near) / 2


def corners(cx: float, cy: float, yaw_deg: float, hx: float, hy: float) -> list[tuple[float, float]]:
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    return [(cx + dx * c - dy * s, cy + dx * s + dy * c) for dx, dy in ((-hx, hy), (hx, hy), (hx, -hy), (-hx, -hy))]


def overlap(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> bool:
    """Two convex boxes share at least a point (touching counts, as a non-empty shapely
    intersection does): no edge normal of either separates them."""
    for poly in (a, b):
        for (x1, y1), (x2, y2) in zip(poly, [*poly[1:], poly[0]], strict=True):
            nx, ny = y2 - y1, x1 - x2
            pa = [nx * x + ny * y for x, y in a]
            pb = [nx * x + ny * y for x, y in b]
            if max(pa) < min(pb) or max(pb) < min(pa):
                return False
    return True


def _hits(xy: Sequence[float], yaw: float, extent: Sequence[float], boxes: Sequence[Mapping[str, Any]],
          where: str) -> list[Mapping[str, Any]]:
    ego = corners(xy[0], xy[1], yaw, extent[0] + COLLISION_MARGIN, extent[1] + COLLISION_MARGIN)
    out = []
    for box in boxes:
        if box.get("class") not in ("vehicle", "walker"):
            continue
        try:
            if box["distance"] >= COLLISION_RANGE:
                continue
            loc, ext, yaw_b = box["location"], box["extent"], box["rotation"][2]
            other = corners(loc[0], loc[1], yaw_b, ext[0] + COLLISION_MARGIN, ext[1] + COLLISION_MARGIN)
        except (KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"{where}: bounding box {box.get('id')!r} has no usable field {exc}") from None
        if overlap(ego, other):
            out.append(box)
    return out


def simulate(answer: str, frame: int, ego_of: EgoOf, boxes_of: BoxesOf) -> Trajectory:
    """The Q42 score of ``answer`` at ``frame``; ValueError (naming the waypoint) when the
    answer's points need an annotation that is missing or malformed."""
    wps = read_waypoints(answer)
    if wps is None:
        return Trajectory(0.0, reason=BAD_JSON)
    ego = ego_of(frame)
    here = ego["location"]
    points: list[tuple[int, tuple[float, float]]] = [(frame, (float(here[0]), float(here[1])))]
    far_df, far_xy = 0, points[0][1]
    for key, rel in wps.items():
        try:
            dt = float(key[:-1])
            x, y = float(rel[0]), float(rel[1])
            if len(rel) != 2:
                raise ValueError("not [x, y]")
        except (ValueError, TypeError, IndexError, KeyError):
            # The reference crashes here; a waypoint that cannot be read is a wrong answer.
            return Trajectory(0.0, reason=f"waypoint {key!r}: {rel!r} is not [x, y] under a '<seconds>s' key")
        df = int(dt * FRAME_RATE)
        xy = _inverse_apply(ego["world2ego"], x, y)
        if df > far_df:
            far_df, far_xy = df, xy
        points.append((frame + df, xy))
    hit: dict[Any, Mapping[str, Any]] = {}
    yaw = float(ego["rotation"][2])
    for i in range(1, len(points)):
        prev, cur = points[i - 1][1], points[i][1]
        if math.dist(prev, cur) > SAME_SPOT:
            into = heading(prev, cur)
            out = heading(cur, points[i + 1][1]) if i + 1 < len(points) else into
            yaw = mean_heading(into, out)
        for box in _hits(cur, yaw, ego["extent"], boxes_of(points[i][0]), f"frame {points[i][0]}"):
            hit.setdefault(box.get("id"), box)
    collision = COLLISION_PENALTY ** len(hit)
    real = ego_of(frame + far_df)["location"]
    gt_dist = math.dist((here[0], here[1]), (real[0], real[1]))
    pred_dist = math.dist((here[0], here[1]), far_xy)
    efficiency = min(1.0, pred_dist / gt_dist) if gt_dist > STILL else 1.0
    score = 100.0 * (COLLISION_SHARE * collision + EFFICIENCY_SHARE * efficiency)
    return Trajectory(score, list(hit), collision, efficiency)
