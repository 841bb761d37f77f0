"""Generated Bench2Drive-VL frames in the published layout, for tests and demos.

The real data is large and needs a download; tests need a few frames whose every
field is known. :func:`write_frames` writes what the reference reads
(Thinklab-SJTU/Bench2Drive-VL ``B2DVL_Adapter/eval_dataset.py``)::

    vqa/<Type>_<Town>_<Route>_<Weather>/<frame:05d>.json     key_object_infos, QA, extra_flags
    images/<route>/camera/rgb_front/<frame:05d>.jpg           the front camera
    images/<route>/anno/<frame:05d>.json.gz                   bounding_boxes with the ego_vehicle record

Objects are written as the published answers write them,
``Detailed_description(<c101<CAM_FRONT,800.0,450.0>>)``. The ego drives along +x at a
constant speed (yaw 0, so ``world2ego`` is a translation); a red sedan stands 25 m ahead.
Annotations exist for every frame up to the last VQA frame + 45, so a Q42 answer up to
4.5 s ahead finds its files.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

EGO_EXTENT = [2.45, 1.05, 0.75]
SEDAN_X = 25.0


def _obj(oid: int, category: str, visual: str, detailed: str, role: bool, danger: bool,
         distance: float) -> dict[str, Any]:
    return {"id": oid, "Category": category, "Status": None, "Visual_description": visual,
            "Detailed_description": detailed, "2d_bbox": {"CAM_FRONT": [[640.0, 300.0], [960.0, 600.0]]},
            "is_role": role, "is_dangerous": danger, "position": [distance, 0.0], "distance": distance}


T1 = "<c101<CAM_FRONT,800.0,450.0>>"
T2 = "<c102<CAM_FRONT,300.0,500.0><CAM_FRONT_LEFT,1500.0,520.0>>"
T3 = "<c103<CAM_FRONT,1200.0,400.0>>"
OBJECTS: dict[str, dict[str, Any]] = {
    T1: _obj(101, "Vehicle", "red sedan", "the red sedan that is to the front of the ego vehicle", True, False,
             SEDAN_X),
    T2: _obj(102, "Pedestrian", "pedestrian", "the pedestrian that is to the front left of the ego vehicle", False,
             True, 8.5),
    T3: _obj(103, "Traffic element", "traffic light", "the traffic light that is to the front of the ego vehicle",
             False, False, 30.3),
}


def ref(tag: str, capital: bool = False) -> str:
    """``Detailed_description(<tag>)`` as the published answers write an object."""
    text = f"{OBJECTS[tag]['Detailed_description']}({tag})"
    return text[0].upper() + text[1:] if capital else text


def _qa(q: str, a: str, qid: int, tags: list[str] | None = None) -> dict[str, Any]:
    return {"Q": q, "A": a, "C": None, "qid": qid, "con_up": -1, "con_down": -1, "cluster": 0, "layer": 0,
            "object_tags": tags or []}


def qa_doc(speed: float) -> dict[str, list[dict[str, Any]]]:
    waypoints = {f"{k * 0.5:.1f}s": [round(speed * 0.5 * k, 2), 0.0] for k in range(1, 5)}
    return {
        "perception": [
            _qa("What is the current speed limit?", "The speed limit is 30 km/h.", 7),
            _qa("What are the important objects in the scene? List them in order of importance.",
                f"{ref(T1, True)}, {ref(T2)}, {ref(T3)}.", 19, [T1, T2, T3]),
        ],
        "prediction": [
            _qa("What are the rough moving speed and moving direction of the important vehicles?",
                f"{ref(T1, True)} is slowing down. {ref(T2, True)} is crossing from the left.", 24, [T1, T2]),
            _qa("Identify important vehicles that may overlap with the ego vehicle's path.",
                f"{ref(T2, True)}, because it is crossing.", 28, [T2]),
        ],
        "planning": [
            _qa("Does the ego vehicle need to brake? Why?", f"Yes, the ego vehicle should brake because of {ref(T2)}.",
                8, [T2]),
            _qa("What should the ego vehicle do next?",
                "The ego vehicle should keep following its lane and decelerate because of the pedestrian.", 43),
            _qa("Provide your planned trajectory for the ego vehicle using waypoints, one every 0.5 seconds.",
                json.dumps(waypoints), 42),
        ],
        "behaviour": [
            _qa("Provide the appropriate behavior for the ego vehicle: the Direction key and the Speed key.",
                "GO_STRAIGHT, KEEP", 50),
            _qa("Is the ego vehicle changing lanes?", "No, it keeps its lane.", 12),
        ],
    }


def frame_doc(qa: Mapping[str, Any] | None = None, objects: Mapping[str, Any] | None = None,
              speed: float = 3.0) -> dict[str, Any]:
    return {"key_object_infos": json.loads(json.dumps(objects if objects is not None else OBJECTS)),
            "QA": json.loads(json.dumps(qa if qa is not None else qa_doc(speed))),
            "extra_flags": {"is_trivial_case": False, "ego_speed": speed}}


def anno_doc(frame: int, speed: float, with_ego: bool = True) -> dict[str, Any]:
    x = speed * frame / 10.0
    boxes: list[dict[str, Any]] = []
    if with_ego:
        boxes.append({"class": "ego_vehicle", "id": 1, "location": [x, 0.0, 0.0], "rotation": [0.0, 0.0, 0.0],
                      "extent": list(EGO_EXTENT), "speed": speed, "distance": 0.0,
                      "world2ego": [[1.0, 0.0, 0.0, -x], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0],
                                    [0.0, 0.0, 0.0, 1.0]]})
    boxes.append({"class": "vehicle", "id": 101, "location": [x + SEDAN_X, 0.0, 0.0], "rotation": [0.0, 0.0, 0.0],
                  "extent": [2.3, 1.0, 0.8], "distance": SEDAN_X, "speed": speed, "world_cord": []})
    return {"x": x, "y": 0.0, "speed": speed, "bounding_boxes": boxes}


def _image(path: Path, shade: int) -> None:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (320, 180), (90 + shade, 110, 130))
    draw = ImageDraw.Draw(img)
    draw.rectangle((128, 80, 192, 140), fill=(200, 30, 30))  # the red sedan
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="JPEG", quality=85)


def write_frames(root: Path, *, scenarios: int = 2, frames: int = 2, speed: float = 3.0,
                 docs: Mapping[tuple[int, int], Any] | None = None) -> Path:
    """Write the layout under ``root`` and return ``root``.

    ``docs[(scenario, frame)]`` replaces one frame's JSON document (a dict, or a string
    written verbatim to produce a broken file). Frame 0 of each route has the ego
    stopped (0.2 m/s in its ego record), the others ``speed``.
    """
    for s in range(scenarios):
        route = f"ParkingExit_Town12_Route{1300 + s}_Weather{s}"
        for f in range(frames):
            name = f"{f * 5:05d}"
            doc = (docs or {}).get((s, f), frame_doc(speed=speed))
            vqa = root / "vqa" / route / f"{name}.json"
            vqa.parent.mkdir(parents=True, exist_ok=True)
            vqa.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1), encoding="utf-8")
            _image(root / "images" / route / "camera" / "rgb_front" / f"{name}.jpg", 10 * f)
        for n in range((frames - 1) * 5 + 46):
            anno = root / "images" / route / "anno" / f"{n:05d}.json.gz"
            anno.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(anno, "wt", encoding="utf-8") as fh:
                json.dump(anno_doc(n, 0.2 if n == 0 else speed), fh)
    return root
