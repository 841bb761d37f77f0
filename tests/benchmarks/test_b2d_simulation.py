"""pytest_uiground.benchmarks.bench2drive_vl.simulation: Q42 waypoints driven through the recorded future."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from pytest_uiground.benchmarks.bench2drive_vl import simulation as sim

IDENTITY = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]


def _ego(x: float, world2ego: Sequence[Sequence[float]] = IDENTITY) -> dict[str, Any]:
    return {"location": [x, 0.0, 0.0], "rotation": [0.0, 0.0, 0.0], "extent": [2.0, 1.0, 0.8],
            "world2ego": world2ego}


def _car(box_id: str, x: float, y: float, *, cls: str = "vehicle", distance: float = 10.0) -> dict[str, Any]:
    return {"id": box_id, "class": cls, "location": [x, y, 0.0], "rotation": [0.0, 0.0, 0.0],
            "extent": [2.0, 1.0, 0.8], "distance": distance}


def _world(speed: float, boxes: Mapping[int, Sequence[Mapping[str, Any]]] | None = None) -> tuple[Any, Any]:
    """The ego drives along +x at ``speed`` m/s from the origin; ``boxes`` per frame."""
    return (lambda f: _ego(speed * f / sim.FRAME_RATE)), (lambda f: list((boxes or {}).get(f, [])))


def _answer(points: Mapping[str, Sequence[float]]) -> str:
    return json.dumps({k: list(v) for k, v in points.items()})


def test_read_waypoints_drops_only_a_json_fence() -> None:
    assert sim.read_waypoints('```json{"0.5s": [1, 2]}```') == {"0.5s": [1, 2]}
    assert sim.read_waypoints('{"1.0s": [3, 0]}') == {"1.0s": [3, 0]}
    assert sim.read_waypoints('```{"1.0s": [3, 0]}```') is None  # only "```json" is dropped at the start
    assert sim.read_waypoints("[1, 2]") is None and sim.read_waypoints("go straight") is None


def test_headings_and_their_mean() -> None:
    assert sim.heading((0, 0), (1, 0)) == 0.0
    assert sim.heading((0, 0), (0, 1)) == pytest.approx(90.0)
    assert sim.heading((0, 0), (0, -1)) == pytest.approx(270.0)  # never negative
    assert sim.mean_heading(0.0, 180.0) == 0.0  # driving back along the line is the same heading
    assert sim.mean_heading(10.0, 350.0) == pytest.approx(0.0)  # a2 - 360 is nearest: across north
    # the documented shifts are -360, -180, 0 and +180 only (as the reference's get_mean_angle): from 350,
    # the nearest of -350, -170, 10, 190 is 190, so the mean is 270, not 0 (the reference's quirk, kept)
    assert sim.mean_heading(350.0, 10.0) == pytest.approx(270.0)
    assert sim.mean_heading(10.0, 30.0) == pytest.approx(20.0)


def test_boxes_overlap_when_they_share_a_point() -> None:
    a = sim.corners(0.0, 0.0, 0.0, 1.0, 1.0)
    assert sorted(a) == [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)]
    assert sim.overlap(a, sim.corners(2.0, 0.0, 0.0, 1.0, 1.0))  # touching edges
    assert not sim.overlap(a, sim.corners(2.01, 0.0, 0.0, 1.0, 1.0))
    assert sim.overlap(a, sim.corners(2.3, 0.0, 45.0, 1.0, 1.0))  # a rotated corner reaches in
    assert not sim.overlap(a, sim.corners(2.5, 0.0, 45.0, 1.0, 1.0))


def test_following_the_recorded_path_without_hitting_anything_scores_100() -> None:
    ego_of, boxes_of = _world(10.0)
    got = sim.simulate(_answer({"0.5s": [5, 0], "1.0s": [10, 0]}), 0, ego_of, boxes_of)
    assert (got.score, got.collision, got.efficiency, got.collided) == (100.0, 1.0, 1.0, [])


def test_efficiency_is_the_share_of_the_real_distance_of_the_farthest_point() -> None:
    ego_of, boxes_of = _world(10.0)
    got = sim.simulate(_answer({"1.0s": [5, 0], "0.5s": [1, 0]}), 0, ego_of, boxes_of)
    assert got.efficiency == pytest.approx(0.5)  # the 1.0 s point, not the last one written
    assert got.score == pytest.approx(100 * (0.6 + 0.4 * 0.5))
    still_of, _ = _world(0.5)  # the real ego moved under a metre: any answer is efficient
    assert sim.simulate(_answer({"1.0s": [0.1, 0]}), 0, still_of, boxes_of).efficiency == 1.0


def test_each_distinct_object_hit_halves_the_collision_share() -> None:
    car, walker = _car("car", 10.0, 0.0), _car("walker", 5.0, 0.5, cls="walker")
    boxes = {5: [walker], 10: [car, _car("sign", 10.0, 0.0, cls="traffic_sign"),
                               _car("far", 10.0, 0.0, distance=sim.COLLISION_RANGE)]}
    ego_of, boxes_of = _world(10.0, boxes)
    got = sim.simulate(_answer({"0.5s": [5, 0], "1.0s": [10, 0]}), 0, ego_of, boxes_of)
    assert sorted(got.collided) == ["car", "walker"]  # ids; not the sign, not the far car
    assert got.collision == 0.25 and got.score == pytest.approx(100 * (0.6 * 0.25 + 0.4))
    # the same car hit at two waypoints counts once
    ego_of, boxes_of = _world(10.0, {5: [car], 10: [car]})
    got = sim.simulate(_answer({"0.5s": [10, 0], "1.0s": [10, 0]}), 0, ego_of, boxes_of)
    assert got.collision == 0.5


def test_waypoints_are_placed_in_the_world_through_world2ego() -> None:
    # The ego stands at world (100, 0) facing +x: world2ego translates by -100.
    shifted = [[1.0, 0.0, 0.0, -100.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]

    def ego_of(f: int) -> dict[str, Any]:
        return _ego(100.0 + f, shifted)

    def boxes_of(f: int) -> list[dict[str, Any]]:
        return [_car("car", 110.0, 0.0)] if f == 10 else []

    got = sim.simulate(_answer({"1.0s": [10, 0]}), 0, ego_of, boxes_of)
    assert got.collided == ["car"]
    assert sim.simulate(_answer({"1.0s": [10, 20]}), 0, ego_of, boxes_of).collided == []


def test_unreadable_answers_score_zero_with_the_reason() -> None:
    ego_of, boxes_of = _world(10.0)
    got = sim.simulate("drive on", 0, ego_of, boxes_of)
    assert (got.score, got.reason) == (0.0, sim.BAD_JSON)
    for bad in ('{"1.0s": [1, 2, 3]}', '{"soon": [1, 2]}', '{"1.0s": "ahead"}'):
        got = sim.simulate(bad, 0, ego_of, boxes_of)
        assert got.score == 0.0 and got.reason.startswith("waypoint '") and "is not [x, y]" in got.reason


def test_a_malformed_bounding_box_names_the_frame_and_the_box() -> None:
    broken = {"id": "car-7", "class": "vehicle", "distance": 5.0, "location": [1.0, 0.0, 0.0]}
    ego_of, boxes_of = _world(10.0, {10: [broken]})
    with pytest.raises(ValueError, match=r"frame 10: bounding box 'car-7' has no usable field 'extent'"):
        sim.simulate(_answer({"1.0s": [10, 0]}), 0, ego_of, boxes_of)
