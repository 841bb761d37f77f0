"""A small Bench2Drive-VL dataset in the layout the reference evaluator reads, for parity tests.

Layout (Thinklab-SJTU/Bench2Drive-VL, ``B2DVL_Adapter/eval_dataset.py``:
``B2DVLEvalDataset`` and ``b2dvl_dataset.py``; ``carla_vqa_generator.py`` writes the VQA
files as ``<outgraph>/<scenario>/<frame>.json``)::

    <vqa>/<scenario>/<frame:05d>.json                    one frame: key_object_infos, QA, extra_flags, image_paths
    <b2d>/<scenario>/camera/rgb_front/<frame:05d>.jpg    the front camera (the other five with all_cameras=True)
    <b2d>/<scenario>/anno/<frame:05d>.json.gz            Bench2Drive annotation: bounding_boxes with the
                                                         ego_vehicle record (speed, location, rotation, extent,
                                                         world2ego), other vehicles / walkers

Scenario folders must contain "_" (the reference skips others); the scenario *type* used by
``stats.make_stats`` is the name up to the first "_". The VQA files hold objects in the
published form ``Detailed_description(<tag>)`` with tags like ``<c14785<CAM_FRONT,800.0,513.9>>``.

The world is simple so every number can be worked out by hand: the ego drives along +x at
a constant speed from x = 0 (yaw 0, so world2ego is a pure translation); a parked car
stands in the ego's lane at x = 30 m; a pedestrian waits at the roadside (y = 8 m).
Annotations are written for every frame from 0 to the last VQA frame + 45, so a Q42
answer up to 4.5 s ahead finds its files.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CAMERAS = ("rgb_front", "rgb_front_left", "rgb_front_right", "rgb_back", "rgb_back_left", "rgb_back_right")
CAMERA_TAGS = ("CAM_FRONT", "CAM_FRONT_LEFT", "CAM_FRONT_RIGHT", "CAM_BACK", "CAM_BACK_LEFT", "CAM_BACK_RIGHT")

# Key objects, keyed by their published tags.
T_SIGN = "<c14757<CAM_FRONT,1095.6,496.6>>"
T_CAR = "<c14785<CAM_FRONT,800.0,513.9>>"
T_PED = "<c14790<CAM_FRONT,300.2,520.0><CAM_FRONT_LEFT,1500.1,530.0>>"
T_NAVY = "<c14795<CAM_FRONT,400.0,480.0>>"

EGO_EXTENT = [2.45, 1.05, 0.75]
CAR_ID, CAR_X, CAR_EXTENT = 14785, 30.0, [2.3, 1.0, 0.8]
PED_ID, PED_XY, PED_EXTENT = 14790, (20.0, 8.0), [0.3, 0.3, 0.9]
NAVY_ID, NAVY_XY = 14795, (60.0, 3.5)


def key_object_infos() -> dict[str, dict[str, Any]]:
    """``key_object_infos`` as ``carla_vqa_generator.py: generate_object_key_value`` writes it."""
    def info(oid: int, cat: str, visual: str, detailed: str, bbox: list[list[float]], role: bool, danger: bool,
             position: list[float], distance: float) -> dict[str, Any]:
        return {"id": oid, "Category": cat, "Status": None, "Visual_description": visual,
                "Detailed_description": detailed, "2d_bbox": {"CAM_FRONT": bbox}, "3d_bbox": {}, "is_role": role,
                "is_dangerous": danger, "obj_dict": None, "position": position, "distance": distance,
                "speed": position}
    return {
        T_SIGN: info(14757, "Traffic element", "construction warning sign", "the construction warning sign",
                     [[1080.0, 470.0], [1111.2, 523.2]], True, False, [25.0, 3.0], 25.2),
        T_CAR: info(CAR_ID, "Vehicle", "black car", "the black car that is to the front of the ego vehicle",
                    [[760.0, 480.0], [840.0, 547.8]], False, True, [30.0, 0.0], 30.0),
        T_PED: info(PED_ID, "Pedestrian", "pedestrian", "the pedestrian that is to the front left of the ego vehicle",
                    [[290.0, 500.0], [310.4, 540.0]], False, False, [20.0, 8.0], 21.5),
        T_NAVY: info(NAVY_ID, "Vehicle", "navy car", "the navy car that is to the front left of the ego vehicle",
                     [[380.0, 470.0], [420.0, 490.0]], False, False, [60.0, 3.5], 60.1),
    }


def _desc(tag: str) -> str:
    return f"{key_object_infos()[tag]['Detailed_description']}({tag})"


def _qa(q: str, a: str, qid: int, tags: Sequence[str] = ()) -> dict[str, Any]:
    # carla_vqa_generator.py: the per-question record (Q, A, C, qid, con_up, con_down, cluster, layer, object_tags)
    return {"Q": q, "A": a, "C": None, "qid": qid, "con_up": -1, "con_down": -1, "cluster": 0, "layer": 0,
            "object_tags": list(tags)}


def ego_x(frame: int, speed: float) -> float:
    return speed * frame / 10.0


def gt_waypoints(frame: int, speed: float) -> dict[str, list[float]]:
    """Q42's ground truth: the ego's own future positions in its frame, one every 0.5 s."""
    return {f"{k * 0.5:.1f}s": [round(ego_x(frame + 5 * k, speed) - ego_x(frame, speed), 2), 0.0]
            for k in range(1, 9)}


def qa_doc(frame: int, speed: float) -> dict[str, list[dict[str, Any]]]:
    """The published ``QA`` of one frame: {perception, prediction, planning, behaviour}."""
    sign, car, ped, navy = _desc(T_SIGN), _desc(T_CAR), _desc(T_PED), _desc(T_NAVY)
    q19 = f"{sign}, {car}, {ped}, {navy}."
    q19 = q19[0].upper() + q19[1:]
    return {
        "perception": [
            _qa("What are the important objects in the scene? List them from most to least important.", q19, 19,
                [T_SIGN, T_CAR, T_PED, T_NAVY]),
            _qa("What is the current speed limit?", "The speed limit is 30 km/h.", 7),
            _qa("Is there any traffic sign ahead? What does it mean?",
                f"Yes, {sign} means there is construction ahead.", 15, [T_SIGN]),
        ],
        "prediction": [
            _qa("What are the rough moving speed and moving direction of the important vehicles?",
                f"{car[0].upper()}{car[1:]} is not moving. {navy[0].upper()}{navy[1:]} is driving at a normal speed "
                "in the opposite direction of the ego vehicle, going straight.", 24, [T_CAR, T_NAVY]),
            _qa("Identify important vehicles that may overlap with the ego vehicle's path, and explain the reasons.",
                f"{car[0].upper()}{car[1:]}, because it has stopped right to the front of the ego vehicle.", 28,
                [T_CAR]),
        ],
        "planning": [
            _qa("Does the ego vehicle need to brake? Why?",
                f"Yes, the ego vehicle should brake because of {car}.", 8, [T_CAR]),
            _qa("From which side can the ego vehicle change lanes, and how many lanes?",
                "The ego vehicle can change to the left by one lane.", 31),
            _qa("How many lanes can the vehicle to the front change to?",
                "It can change to the left by one lane.", 30),
            _qa("What should the ego vehicle do next?",
                "The ego vehicle should change to the left lane to circumvent the parked car, and it should "
                "decelerate because the target lane is occupied.", 43),
        ],
        "behaviour": [
            _qa("Provide your planned trajectory for the ego vehicle using waypoints in the ego vehicle's coordinate "
                "system. Generate one waypoint every 0.5 seconds.", json.dumps(gt_waypoints(frame, speed)), 42),
            _qa("Provide the appropriate behavior for the ego vehicle, which consists of two keys: the Direction key "
                "and the Speed key.", "CHANGE_LANE_LEFT, DECELERATE", 50),
        ],
    }


def frame_doc(scenario: str, frame: int, speed: float, b2d_name: str = "images") -> dict[str, Any]:
    """One published frame file (``carla_vqa_generator.py``: tick_data)."""
    front = f"{b2d_name}/{scenario}/camera/rgb_front/{frame:05d}.jpg"
    return {
        "key_object_infos": key_object_infos(),
        "QA": qa_doc(frame, speed),
        "extra_flags": {"is_trivial_case": False, "waiting_for_red_light": False, "ego_speed": speed,
                        "change_lane_flag": True, "change_lane_gt": "CHANGE_LANE_LEFT", "speed_cmd": "DECELERATE",
                        "direction_cmd": "CHANGE_LANE_LEFT", "speed_change_gt": "DECELERATE"},
        "image_paths": {tag: front.replace("front", cam.removeprefix("rgb_")) if cam != "rgb_front" else front
                        for tag, cam in zip(CAMERA_TAGS, CAMERAS, strict=True)},
    }


def _box(cls: str, oid: int, loc: Sequence[float], ext: Sequence[float], ego_loc: Sequence[float],
         **extra: Any) -> dict[str, Any]:
    dist = ((loc[0] - ego_loc[0]) ** 2 + (loc[1] - ego_loc[1]) ** 2) ** 0.5
    return {"class": cls, "id": oid, "base_type": "car" if cls == "vehicle" else cls, "location": list(loc),
            "rotation": [0.0, 0.0, 0.0], "extent": list(ext), "distance": round(dist, 3), "speed": 0.0,
            "world_cord": [list(loc)], **extra}


def anno_doc(frame: int, speed: float, top_level_speed: float | None = None, with_ego: bool = True) -> dict[str, Any]:
    """A Bench2Drive ``anno`` record: top-level ``speed`` (the same value unless
    ``top_level_speed`` says otherwise) and ``bounding_boxes`` with the ego record."""
    x = ego_x(frame, speed)
    ego_loc = [x, 0.0, 0.0]
    boxes: list[dict[str, Any]] = []
    if with_ego:
        boxes.append({"class": "ego_vehicle", "id": 1, "location": ego_loc, "rotation": [0.0, 0.0, 0.0],
                      "extent": list(EGO_EXTENT), "speed": speed, "distance": 0.0, "world_cord": [ego_loc],
                      "world2ego": [[1.0, 0.0, 0.0, -x], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0],
                                    [0.0, 0.0, 0.0, 1.0]]})
    boxes.append(_box("vehicle", CAR_ID, [CAR_X, 0.0, 0.0], CAR_EXTENT, ego_loc, state="static"))
    boxes.append(_box("walker", PED_ID, [*PED_XY, 0.0], PED_EXTENT, ego_loc))
    boxes.append(_box("vehicle", NAVY_ID, [*NAVY_XY, 0.0], CAR_EXTENT, ego_loc))
    boxes.append(_box("traffic_sign", 14757, [25.0, 3.0, 0.0], [0.5, 0.5, 1.0], ego_loc))
    return {"x": x, "y": 0.0, "theta": 0.0, "speed": speed if top_level_speed is None else top_level_speed,
            "bounding_boxes": boxes}


@dataclass
class Written:
    vqa_root: Path
    b2d_root: Path
    frames: list[tuple[str, int]] = field(default_factory=list)


#: (scenario folder, ego speed m/s, VQA frames). Types: "ParkedObstacle" (two routes) and "HazardAtSideLane".
SCENARIOS: tuple[tuple[str, float, tuple[int, ...]], ...] = (
    ("ParkedObstacle_Town12_Route1300_Weather0", 5.0, (5, 10)),
    ("ParkedObstacle_Town12_Route1301_Weather1", 0.2, (5,)),
    ("HazardAtSideLane_Town12_Route1310_Weather3", 5.0, (10,)),
)


def _jpeg(path: Path, shade: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (160, 90), (60 + shade, 90, 120)).save(path, format="JPEG", quality=80)


def write_dataset(root: Path, *, vqa_name: str = "vqa", b2d_name: str = "images",
                  scenarios: Sequence[tuple[str, float, Sequence[int]]] = SCENARIOS, all_cameras: bool = False,
                  top_level_speed: Mapping[tuple[str, int], float] | None = None,
                  docs: Mapping[tuple[str, int], Any] | None = None,
                  no_ego: Sequence[tuple[str, int]] = ()) -> Written:
    """Write the dataset under ``root/<vqa_name>`` and ``root/<b2d_name>`` (the project's
    loader defaults are "vqa" and "images"; the reference takes the two folders from its
    INFERENCE_RESULT_DIR and B2D_DIR settings).

    ``docs[(scenario, frame)]`` replaces a frame's JSON (a string is written verbatim);
    ``top_level_speed[(scenario, frame)]`` gives the anno's top-level ``speed`` a value other
    than the ego record's; ``no_ego`` lists annotations written without the ego record.
    ``all_cameras`` writes all six cameras (the reference's inference dataset requires them).
    """
    out = Written(root / vqa_name, root / b2d_name)
    for scenario, speed, frames in scenarios:
        for frame in frames:
            doc = (docs or {}).get((scenario, frame), frame_doc(scenario, frame, speed, b2d_name))
            vqa = out.vqa_root / scenario / f"{frame:05d}.json"
            vqa.parent.mkdir(parents=True, exist_ok=True)
            vqa.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=4), encoding="utf-8")
            for cam in CAMERAS if all_cameras else CAMERAS[:1]:
                _jpeg(out.b2d_root / scenario / "camera" / cam / f"{frame:05d}.jpg", frame)
            out.frames.append((scenario, frame))
        for f in range(0, max(frames) + 46):
            anno = out.b2d_root / scenario / "anno" / f"{f:05d}.json.gz"
            anno.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(anno, "wt", encoding="utf-8") as fh:
                json.dump(anno_doc(f, speed, (top_level_speed or {}).get((scenario, f)),
                                   with_ego=(scenario, f) not in no_ego), fh)
    return out


def inference_record(doc: Mapping[str, Any], scenario: str, frame: int,
                     answers: Mapping[int, Any]) -> dict[str, Any]:
    """What the reference's inference step writes for a frame and its evaluator reads
    (``inference_workers.py: ask_single_frame``): every question under QA["Category"],
    with ``actual_gt`` (= A) and ``VLM_answer``; only the qids in ``answers`` are kept."""
    items = []
    for cat in doc["QA"].values():
        for qa in cat:
            if qa["qid"] in answers:
                items.append(dict(qa, actual_gt=qa["A"], VLM_answer=answers[qa["qid"]]))
    return {"scenario": scenario, "frame_number": frame, "key_object_infos": doc["key_object_infos"],
            "QA": {"Category": items}, "extra_flags": doc.get("extra_flags", {}), "Cameras": {}}
